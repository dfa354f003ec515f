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


@pytest.fixture(scope="module")
def browser(berth: Any) -> Iterator[Any]:
    """One browser per module, never longer: Playwright's sync API keeps an event loop
    running in the test thread while it is open, and no later test (``asyncio.run``,
    pyroute2's netlink) could run one of its own. It asks for ``berth`` so that it is
    closed before berth's teardown too."""
    with chromium() as b:
        yield b


@pytest.fixture
def page(browser: Any, berth: Any) -> Iterator[Any]:
    with console_page(browser, berth.url) as p:
        yield p
