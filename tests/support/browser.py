"""Debian's chromium driven by Playwright, for the web console's tests (never a browser
Playwright downloads: ``executable_path`` and PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM = os.environ.get("BERTH_TEST_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(os.environ.get("BERTH_TEST_ARTIFACTS")
                 or Path(__file__).resolve().parents[1] / "artifacts") / "dashboard"


def artifacts_dir() -> Path:
    """Where the console tests keep their screenshots (made on first use)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless chromium; AssertionError when it or Playwright is missing."""
    os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
    if not Path(CHROMIUM).exists():
        raise AssertionError(f"no chromium at {CHROMIUM}: apt-get install chromium "
                             f"(scripts/test.sh does)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=["--no-sandbox", "--disable-dev-shm-usage"])
        try:
            yield browser
        finally:
            browser.close()


@contextmanager
def console_page(browser: Any, url: str) -> Iterator[Any]:
    """A fresh context on the console at ``url``; what the page logged to its console,
    and its errors, are printed afterwards (pytest shows them when a test fails)."""
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    page = context.new_page()
    page.set_default_timeout(60_000)
    messages: list[str] = []
    page.on("console", lambda m: messages.append(f"console {m.type}: {m.text}"))
    page.on("pageerror", lambda e: messages.append(f"page error: {e}"))
    page.goto(f"{url}/dashboard/")
    try:
        yield page
    finally:
        for line in messages:
            print(line)
        context.close()


#: Where the pages' screenshots go when asked for: docs/web-console.md and docs/horizon.md
#: show them.
DOC_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"


def doc_images_dir() -> Path:
    """docs/images with BERTH_DOC_IMAGES=1 (to renew the pictures the docs show), else the
    artifacts folder: an ordinary run takes the same screenshots without changing tracked
    files."""
    if os.environ.get("BERTH_DOC_IMAGES") == "1":
        DOC_IMAGES.mkdir(parents=True, exist_ok=True)
        return DOC_IMAGES
    return artifacts_dir()


def doc_shot(page: Any, name: str) -> None:
    """The viewport as console-NAME.png in doc_images_dir()."""
    page.screenshot(path=str(doc_images_dir() / f"console-{name}.png"))


def log_in(page: Any, token: str = "admin") -> None:
    """Log in with a noauth token and wait until the live stream is up."""
    from playwright.sync_api import expect

    page.get_by_label("Token").fill(token)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("status").filter(has_text="Live")).to_be_visible()
