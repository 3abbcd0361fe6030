"""Browser-test fixtures: one `streamlit run app.py` and one headless Chromium for the whole session (under
pytest-xdist, one of each per worker, started when the worker meets its first browser test).

Where Chromium (or Playwright) is missing the browser tests are skipped, unless GELU_E2E_REQUIRED=1
(set by .ci/run), where that is a failure.
"""

from __future__ import annotations

from collections import OrderedDict
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
    """A page (its own Streamlit session), with the console errors it logged and the other hosts it asked."""

    page: object
    console: driver.ConsoleErrors
    third_party: driver.ThirdParty
    base_url: str

    @classmethod
    def of(cls, page, origin: str) -> Tab:
        """A Tab for ``page`` of the app at ``origin``, its console and other hosts' requests watched from now."""
        return cls(page, driver.ConsoleErrors(page, origin), driver.ThirdParty(page, origin), origin)

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
    """new_tab(color_scheme=..., viewport=...) -> Tab on the session's server, a page of its own (its own session) in
    the worker's kept context (``driver.kept_page``); closed after the test."""
    pages = []

    def _new_tab(*, color_scheme: str = "light", viewport: dict | None = None) -> Tab:
        page = driver.kept_page(browser, color_scheme=color_scheme, viewport=viewport)
        pages.append(page)
        return Tab.of(page, server.base_url)

    yield _new_tab
    for page in pages:
        page.close()


class SharedTabs:
    """Loaded pages shared by the tests that only read them: a page load costs Chromium's renderer 2 to 4 s of work,
    a wider window a fraction of that, so a check of a view at a greater width widens the tab that view was loaded
    in (``driver.resize`` waits until it is laid out and drawn as a load at that width would be; measured the same
    as a fresh load on every view these tests open).  Never narrower: Streamlit's data grid keeps the canvas width it
    drew at when the window narrows (Curves at 320 then 195 px), so a narrower check loads the view afresh.

    One tab per (path, colour scheme, reduced motion), per worker.  A tab is handed out again only while it is as it
    was loaded: the same URL, no script run since its first, no exception box; then with nothing focused and scrolled
    to the top.  Otherwise it is loaded afresh.  A test that changes its tab (moves a control, plants an element)
    calls ``spoil(tab)`` when done.  At most ``keep`` tabs (one per page) stay open, the least recently used closed
    first.  ``loads`` and ``reuses`` count what was saved.
    """

    def __init__(self, browser, base_url: str, keep: int = 8):
        self.browser, self.base_url, self.keep = browser, base_url, keep
        self.tabs: OrderedDict[tuple, Tab] = OrderedDict()
        self.loads = self.reuses = 0

    def get(self, path: str = "", *, color_scheme: str = "light", viewport: dict | None = None,
            reduced_motion: str | None = None, widen: bool = True) -> Tab:
        """The view's shared tab at this window size; ``widen=False``: reused only at the width it was loaded at."""
        viewport = viewport or driver.DESKTOP
        key = (path, color_scheme, reduced_motion)
        tab = self.tabs.pop(key, None)
        width = tab and tab.page.viewport_size["width"]
        if tab is not None and (viewport["width"] >= width if widen else viewport["width"] == width) \
                and self._as_loaded(tab):
            tab.page.evaluate("""() => { document.activeElement?.blur?.(); window.scrollTo(0, 0);
              document.querySelector("[data-testid='stMain']")?.scrollTo(0, 0); }""")
            driver.resize(tab.page, viewport)
            self.reuses += 1
        else:
            if tab is not None:
                tab.page.close()
            page = driver.kept_page(self.browser, color_scheme=color_scheme, viewport=viewport)
            if reduced_motion:
                page.emulate_media(reduced_motion=reduced_motion)
            tab = Tab.of(page, self.base_url)
            tab.open(path)
            tab.loaded = (page.url, driver.runs(page))
            self.loads += 1
        self.tabs[key] = tab
        while len(self.tabs) > self.keep:
            self.tabs.popitem(last=False)[1].page.close()
        return tab

    @staticmethod
    def _as_loaded(tab: Tab) -> bool:
        page = tab.page
        return (not page.is_closed() and (page.url, driver.runs(page)) == tab.loaded
                and page.locator(driver.EXCEPTION).count() == 0)

    def spoil(self, tab: Tab) -> None:
        """Close a tab a test has changed; the next test of its view loads the view afresh."""
        for key, kept in list(self.tabs.items()):
            if kept is tab:
                del self.tabs[key]
        tab.page.close()

    def close(self) -> None:
        while self.tabs:
            self.tabs.popitem()[1].page.close()


@pytest.fixture(scope="session")
def shared_tabs(browser, server):
    """shared_tabs.get(path, color_scheme=..., viewport=..., reduced_motion=...) -> a Tab loaded once per worker and
    shared by the tests that only read it (SharedTabs)."""
    tabs = SharedTabs(browser, server.base_url)
    yield tabs
    print(f"shared tabs: {tabs.loads} loads, {tabs.reuses} reuses")
    tabs.close()
