"""Shared fixtures: a headless Chromium for browser tests (skipped, with a hint, where it is missing)."""

import os
import shutil

import pytest

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.fixture(scope="session")
def browser():
    """A Playwright browser on the machine's Chromium; no browser download is ever attempted."""
    executable = _chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        executable = None
    if executable is None:
        message = ("browser test needs Chromium and Playwright: `apt-get install chromium` and "
                   "`pip install -e .[dev]` (CI installs both)")
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    with sync_playwright() as pw:
        instance = pw.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


@pytest.fixture
def offline_page(browser):
    """A page that records console errors and every request, and lets only file:// and data: through."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.console_errors = []
    page.page_errors = []
    page.requests = []
    page.blocked = []
    page.on("console", lambda msg: msg.type == "error" and page.console_errors.append(msg.text))
    page.on("pageerror", lambda exc: page.page_errors.append(str(exc)))

    def route(r):
        url = r.request.url
        page.requests.append(url)
        if url.startswith(("file://", "data:", "blob:")):
            r.continue_()
        else:
            page.blocked.append(url)
            r.abort()

    page.route("**/*", route)
    yield page
    context.close()
