"""docs/links.md's example links to an exact view, opened in the browser: each keeps every parameter it sets.

Streamlit drops a URL value it cannot use (out of range, unknown option) and leaves defaults out of the
URL, so a link whose parameters all survive the page load names only valid, non-default values: the
page says what it means.  Reference: the link's own query string, compared exactly after the load.
The links are opened one after another in one tab (each a new page load: its own Streamlit session, its own
console), which spares Chromium a fresh context's download and compile of the app's scripts for each.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest

from harness import browser as driver
from tests.conftest import sweep
from tests.e2e.conftest import Tab

pytestmark = pytest.mark.e2e

DOCS_BASE = "http://localhost:8501"


def example_links() -> list[str]:
    text = (driver.ROOT / "docs" / "links.md").read_text(encoding="utf-8")
    section = text.split("\n## Examples\n", 1)[-1].split("\n## ", 1)[0]
    return re.findall(re.escape(DOCS_BASE) + r"/[^\s)`]*", section)


LINKS = example_links()


@pytest.fixture(scope="module")
def one_tab(browser, server):
    """One tab on the session's server for every link of this file."""
    page = driver.new_page(browser)
    yield Tab.of(page, server.base_url)
    page.context.close()


def test_the_page_has_example_links():
    assert len(LINKS) >= 5, "docs/links.md's section 'Examples' lost its examples"


# every link in CI; the default run opens every third (tests/test_readme_docs.py checks each link's values against
# its controls without a browser)
@pytest.mark.parametrize("link", sweep(LINKS, [urlsplit(u).path.strip("/") + "?" + urlsplit(u).query for u in LINKS],
                                       kept=range(0, len(LINKS), 3)))
def test_an_example_link_opens_that_view(one_tab, link):
    tab = one_tab
    tab.console.errors.clear()  # this link's load only
    tab.open(link.replace(DOCS_BASE, tab.base_url))
    tab.assert_clean()
    assert urlsplit(tab.page.url).path == urlsplit(link).path
    assert driver.query(tab.page.url) == driver.query(link), f"Streamlit dropped a value: {tab.page.url}"
