"""Browser-test fixtures: one `streamlit run app.py` and one headless Chromium for the whole session (under
pytest-xdist, one of each per worker, started when the worker meets its first browser test).

Where Chromium (or Playwright) is missing the browser tests are skipped, unless GELU_E2E_REQUIRED=1
(set by .ci/run), where that is a failure.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from harness import browser as driver
from tests.conftest import required_or_skip


def _missing(reason: str):
    required_or_skip("browser tests are", reason)


@pytest.fixture(scope="session")
def playwright_api():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("the playwright package is not installed")
    if not Path(driver.CHROMIUM).exists():
        _missing(f"no Chromium at {driver.CHROMIUM} (apt-get install -y chromium)")
    with sync_playwright() as playwright:
        yield playwright


@pytest.fixture(scope="session")
def browser(playwright_api):
    browser = driver.launch(playwright_api)
    yield browser
    browser.close()


@pytest.fixture(scope="session")
def server():
    """The app as a class would get it: `streamlit run app.py` with the repository's .streamlit/config.toml."""
    with driver.Server() as srv:
        yield srv


@dataclass
class Tab:
    """A page in its own browser context (own Streamlit session), with the console errors it logged."""

    page: object
    console: driver.ConsoleErrors
    third_party: driver.ThirdParty
    base_url: str

    def open(self, path_or_url: str = "") -> None:
        """Load a page of the app ("curves", "ffn?ffn_seed=3") or a full URL, and wait for it to be drawn."""
        url = path_or_url if "://" in path_or_url else f"{self.base_url}/{path_or_url.lstrip('/')}"
        driver.open_app(self.page, url)

    def assert_clean(self) -> None:
        """No exception box on the page and nothing in the console."""
        exceptions = self.page.locator(driver.EXCEPTION)
        assert exceptions.count() == 0, f"exception on {self.page.url}: {exceptions.all_inner_texts()}"
        assert not self.console.errors, f"console errors on {self.page.url}: {self.console.errors}"


@pytest.fixture
def new_tab(browser, server):
    """new_tab(color_scheme=..., viewport=...) -> Tab on the session's server; closed after the test."""
    contexts = []

    def _new_tab(*, color_scheme: str = "light", viewport: dict | None = None) -> Tab:
        page = driver.new_page(browser, color_scheme=color_scheme, viewport=viewport)
        contexts.append(page.context)
        origin = server.base_url
        return Tab(page, driver.ConsoleErrors(page, origin), driver.ThirdParty(page, origin), origin)

    yield _new_tab
    for context in contexts:
        context.close()
