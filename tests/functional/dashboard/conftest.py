"""Fixtures of the web console's tests: Debian's chromium driven by Playwright
(``support.browser``), a page on the session's ``berth serve``, and the directory that
keeps each page's screenshot."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.browser import artifacts_dir, chromium, console_page


@pytest.fixture(scope="session")
def artifacts() -> Path:
    return artifacts_dir()


@pytest.fixture(scope="session")
def browser(berth: Any) -> Iterator[Any]:
    """Asks for ``berth`` so that the browser is closed before berth's teardown runs:
    while Playwright's event loop runs in this thread, that teardown's netlink calls
    (pyroute2 on asyncio) cannot start a loop of their own."""
    with chromium() as b:
        yield b


@pytest.fixture
def page(browser: Any, berth: Any) -> Iterator[Any]:
    with console_page(browser, berth.url) as p:
        yield p
