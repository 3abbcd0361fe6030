"""Every page in a real browser: it loads clean, its first control moves by keyboard, the URL keeps the view.

Pages are read from ui/pages.py (the table app.py's navigation is built from), so a new page is covered
without touching this file.  The control is the page's first slider (its first number input where a page has
no slider: home, the lab); a page whose row in ui/pages.py declares no controls must draw none, and its link
is just its address.
Reference for "the same view": the control's own value (the input's value and the number drawn on the
slider's thumb) before sharing and after opening the shared URL in a fresh browser context; compared
exactly, as strings.  The teacher's view is a light desktop (1400x900); the student opens the link on a
phone (390x844) in dark mode, so every page is also checked for the theme's colours (from
.streamlit/config.toml, exact) in both schemes and for nothing sticking out sideways on a phone.
Each tab is a new page (its own Streamlit session); a test's first and second tab are in two browser contexts
kept for the file (``new_tab`` below), so that each load after the first finds the app's scripts in its
context's cache rather than downloading and compiling them again.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from harness import browser as driver
from tests.e2e.conftest import Tab
from ui.pages import PAGES as ROWS

pytestmark = pytest.mark.e2e

PAGES = driver.app_pages()
THEME = driver.theme_colors()

# No third-party request at all: the favicon is a local file (a ":material/...:" page icon would be fetched
# from Google's font CDN).  A script, font, icon or tracker from anywhere else fails the page test.
ALLOWED_HOSTS: set[str] = set()


@pytest.fixture(scope="module")
def contexts(browser):
    """contexts(nth, color_scheme, viewport) -> a browser context kept for this file, one per (nth tab of a test,
    scheme, window): a test's two tabs never share one (the second is "a fresh browser" to the first)."""
    made = {}

    def _context(nth: int, color_scheme: str, viewport: dict):
        key = (nth, color_scheme, viewport["width"], viewport["height"])
        if key not in made:
            made[key] = driver.new_context(browser, color_scheme=color_scheme, viewport=viewport)
        return made[key]

    yield _context
    for context in made.values():
        context.close()


@pytest.fixture
def new_tab(contexts, server):
    """As conftest's new_tab (a Tab, closed after the test), its page opened in one of ``contexts``."""
    pages = []

    def _new_tab(*, color_scheme: str = "light", viewport: dict | None = None) -> Tab:
        page = contexts(len(pages), color_scheme, viewport or driver.DESKTOP).new_page()
        pages.append(page)
        return Tab.of(page, server.base_url)

    yield _new_tab
    for page in pages:
        page.close()


def page_path(app_page: driver.AppPage) -> str:
    """Where a page lives: the default page at the root, the others at their url_path."""
    return "" if app_page.default else app_page.url_path


def test_navigation_lists_every_page(new_tab):
    tab = new_tab()
    tab.open()
    links = tab.page.locator("[data-testid='stSidebarNav'] a[data-testid='stSidebarNavLink']")
    paths = [urlsplit(href).path.strip("/") for href in links.evaluate_all("els => els.map(e => e.href)")]
    assert paths == [page_path(p) for p in PAGES]
    labels = [text.splitlines()[-1].strip() for text in links.all_inner_texts()]  # the icon's name comes first
    assert labels == [p.title for p in PAGES]
    tab.assert_clean()


@pytest.mark.parametrize("app_page", PAGES, ids=[p.url_path for p in PAGES])
def test_page_loads_clean_and_its_link_restores_the_view(new_tab, app_page):
    tab = new_tab()
    tab.open(page_path(app_page))
    page = tab.page
    assert urlsplit(page.url).path.strip("/") == page_path(app_page)
    assert page.locator(f"{driver.MAIN} [data-testid='stHeading']").count() >= 1, "the page drew no heading"
    tab.assert_clean()
    assert tab.third_party.hosts <= ALLOWED_HOSTS, tab.third_party.urls
    light = driver.look(page)
    want = THEME["light"]
    assert (light["background"], light["sidebar"], light["text"]) == (
        want["backgroundColor"].lower(),
        want["secondaryBackgroundColor"].lower(),
        want["textColor"].lower(),
    )

    control = driver.first_control(page)
    if ROWS[app_page.url_path].controls is None:  # nothing for a link to restore; a control would need its row
        assert control is None, f"page {app_page.url_path!r} draws a control its row in ui/pages.py does not declare"
        shared, after, q_after = page.url, None, driver.query(page.url)
    else:
        assert control is not None, f"page {app_page.url_path!r} has no slider or number input"
        before, url_before = driver.control_state(control), page.url
        driver.move(page, control)

        after = driver.control_state(control)
        assert after[0] != before[0], "the keyboard did not move the control"
        assert after[1] != before[1], "the control still shows the old value"
        q_before, q_after = driver.query(url_before), driver.query(page.url)
        assert {k: v for k, v in q_after.items() if q_before.get(k) != v}, f"the move did not reach the URL: {page.url}"
        tab.assert_clean()

        # The sidebar's "Copy link" copies the address bar as it is now, with the move in it.
        shared = driver.shared_link(page)
        assert driver.query(shared) == q_after and shared.split("?")[0] == page.url.split("?")[0], (shared, page.url)

    fresh = new_tab(color_scheme="dark", viewport=driver.PHONE)
    fresh.open(shared)
    if after is not None:
        assert driver.control_state(driver.first_control(fresh.page)) == after
    assert driver.query(fresh.page.url) == q_after
    fresh.assert_clean()
    dark = driver.look(fresh.page)
    want = THEME["dark"]
    assert (dark["background"], dark["text"]) == (want["backgroundColor"].lower(), want["textColor"].lower())
    assert dark["overflow"] <= 0, f"the page is {dark['overflow']} px wider than a phone"


def test_presenter_link_hides_the_frame_and_chosen_controls(new_tab):
    """The presenter link: no sidebar, no lesson around the page, a larger type, and the controls the teacher
    chose hidden; the view itself (the probe) still comes from the link, and survives a move of another control."""
    tab = new_tab()
    tab.open("curves?curves_x=2")
    page = tab.page
    pick = page.locator("[data-testid='stSidebar'] [data-testid='stMultiSelect']").first
    driver.choose(page, pick, "Range of x")
    page.keyboard.press("Escape")
    link = driver.shared_link(page, "Copy presenter link")
    q = driver.query(link)
    assert q["present"] == ["true"] and q["hide"] == ["curves_range"] and q["curves_x"] == ["2"]

    shown = new_tab(viewport=driver.DESKTOP)
    shown.open(link)
    p = shown.page
    assert not p.locator("[data-testid='stSidebar']").is_visible()
    assert not p.locator(".st-key-curves_range").is_visible() and p.locator(".st-key-curves_x").is_visible()
    assert not p.locator(".st-key-lesson_footer").is_visible()
    assert p.evaluate("parseFloat(getComputedStyle(document.documentElement).fontSize)") > 16
    assert driver.control_state(driver.first_control(p))[1] == "2.00"
    shown.assert_clean()


def test_the_code_for_the_view_opens_with_the_views_values(new_tab):
    tab = new_tab()
    tab.open("gate?gate_x=-2.5")
    page = tab.page
    summary = page.locator(f"{driver.MAIN} [data-testid='stExpander'] summary", has_text="Code for this view")
    driver.act(page, lambda: summary.click())
    code = page.locator(f"{driver.MAIN} [data-testid='stExpander'] [data-testid='stCode']").first.inner_text()
    assert "x = torch.tensor(-2.5" in code and "import torch" in code  # the value on screen, in the script
    tab.assert_clean()
