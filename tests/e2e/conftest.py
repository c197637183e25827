"""End-to-end fixtures: the real service (redis-server, the three workers, the gateway)
and Debian's headless Chromium driven by Playwright.

The browser is ``/usr/bin/chromium`` (``apt-get install chromium``); Playwright's own
browser download is never used. A machine without it fails these tests, never skips them.
Screenshots go to ``$MIGHTY_SCREENSHOTS`` when it is set (``docs/screenshots`` to refresh
the README's), else to the test's temp dir.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog
from playwright.sync_api import Browser, Page, Playwright, sync_playwright

from tests.e2e.stack import running_stack

CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(autouse=True)
def plain_logging() -> None:
    structlog.reset_defaults()


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if shutil.which("redis-server") is None:
        pytest.fail("redis-server is not on the PATH: install it (make redis-server)")
    with running_stack(tmp_path_factory.mktemp("stack")) as url:
        yield url


# Module-scoped, not session-scoped: Playwright's sync API runs an asyncio loop in this
# thread while it is open, and every asyncio test after the browser tests in the same run
# would fail with "cannot be called from a running event loop".
@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="module")
def browser(playwright: Playwright) -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install -y chromium")
    launched = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
    try:
        yield launched
    finally:
        launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1200, "height": 860})
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    try:
        yield opened
    finally:
        context.close()
    assert not errors, f"the page threw: {errors}"


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    target = Path(os.environ.get("MIGHTY_SCREENSHOTS", "") or tmp_path)
    target.mkdir(parents=True, exist_ok=True)
    return target
