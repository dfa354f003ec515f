"""Fixtures of the web console's tests: Debian's chromium driven by Playwright (never a
browser Playwright downloads), a page logged in to the session's ``berth serve``, and
the directory that keeps each page's screenshot."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = os.environ.get("BERTH_TEST_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(os.environ.get("BERTH_TEST_ARTIFACTS")
                 or Path(__file__).resolve().parents[2] / "artifacts") / "dashboard"


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """Headless chromium; fails (never skips) when it or Playwright is missing."""
    os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
    if not shutil.which(CHROMIUM) and not Path(CHROMIUM).exists():
        pytest.fail(f"no chromium at {CHROMIUM}: apt-get install chromium (scripts/test.sh does)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=["--no-sandbox", "--disable-dev-shm-usage"])
        yield browser
        browser.close()


@pytest.fixture
def page(browser: Any, berth: Any) -> Iterator[Any]:
    """A fresh browser context on the console's login page; what the page logged to its
    console and its failed requests are printed if the test fails."""
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    page = context.new_page()
    page.set_default_timeout(60_000)
    messages: list[str] = []
    page.on("console", lambda m: messages.append(f"console {m.type}: {m.text}"))
    page.on("pageerror", lambda e: messages.append(f"page error: {e}"))
    page.goto(f"{berth.url}/dashboard/")
    yield page
    for line in messages:
        print(line)
    context.close()

