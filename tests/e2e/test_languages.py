"""Every page in each shipped language, in a real browser: it loads clean, ``<html lang>`` is the page's language,
the share box's link carries it, axe-core finds no WCAG A/AA violation, nothing sticks out sideways or is cut on a
German phone, GELU(-1) reads -0,1588 in German and Spanish, a number input steps by its keys, and no block of
English text is left beside the language's own.

References: the link's ``lang=`` (the language asked for) against the document element's ``lang`` and the
share box's link, exactly; the browser's own measure of each element (``scrollWidth`` against ``clientWidth``,
tests/e2e/test_fit.py's CUT_JS, 1 px); mpmath's tanh GELU(-1) = -0.158808... to four decimals, as text.
"""

from __future__ import annotations

import re

import pytest

from harness import browser as driver
from tests.conftest import across
from tests.e2e.test_accessibility import axe, summary_of
from tests.e2e.test_fit import CUT_JS

pytestmark = pytest.mark.e2e

PAGES = [p.url_path for p in driver.app_pages()]
LANGUAGES = ("de", "es", "zh-Hans")


def _view(page: str, lang: str) -> str:
    return f"{'' if page == 'home' else page}?lang={lang}"


# each page in each language; the default run takes each page once, its language in turn (tests.conftest.across)
@pytest.mark.parametrize("page, lang", across(PAGES, PAGES, LANGUAGES, LANGUAGES))
def test_a_page_speaks_its_language(new_tab, page, lang):
    tab = new_tab(viewport=driver.PHONE if lang == "de" else driver.DESKTOP)
    tab.open(_view(page, lang))
    tab.assert_clean()
    tab.page.wait_for_function("(lang) => document.documentElement.lang === lang", arg=lang)
    link = tab.page.locator(".gelu-share-url").input_value()
    assert f"lang={lang}" in link, link
    assert summary_of(axe(tab.page)) == []
    if lang == "de":  # long words on a phone: nothing cut, nothing wider than the screen
        assert tab.page.evaluate(CUT_JS) == []
        assert driver.look(tab.page)["overflow"] <= 0


@pytest.mark.parametrize("lang", ["de", "es"])
def test_gelu_of_minus_one_reads_with_a_decimal_comma(new_tab, lang):
    tab = new_tab()
    tab.open(_view("home", lang))
    cells = tab.page.locator("[data-testid='stMain'] [data-testid='stTable'] tbody tr:nth-child(2) td")
    assert cells.all_inner_texts()[3].strip() == "-0,1588"


@pytest.mark.parametrize("lang", ["de", "es"])
def test_a_number_input_steps_by_its_keys_in_a_decimal_comma_language(new_tab, lang):
    """Home's x1 stepped by ArrowUp and Enter moves to the next step of its grid, as in English (reference: the
    control's own min and step, -2 + 0.5, and the link's value); the field holds the control's own format, a dot,
    which the live layer writes as the key is pressed (a decimal comma there empties a number field)."""
    tab = new_tab()
    tab.open(_view("home", lang))
    control = driver.first_control(tab.page)
    driver.move(tab.page, control)
    assert control.input_value() == "-1.50"
    assert driver.query(tab.page.url)["home_x1"] == ["-1.5"]


# The words a page keeps in English in every language (README, "Languages"): names, the GELU forms' and a link's
# option words (a link holds them as they are written), and Material Symbols' icon names (ligatures, drawn as icons)
KEPT_ENGLISH = re.compile(
    r"GELU|ReLU|PyTorch|Explorer|GPT-2|tanh|exact|sigmoid|Seeded|File|Demo|Upload|spiral|circle|xor|gauss|"
    r"Three forms|What PyTorch computes|\b[a-z]+(_[a-z]+)+\b")
TEXT_BLOCKS_JS = """() => {
  const blocks = "[data-testid='stMain'] :is(p, li, h1, h2, h3, h4, label, summary, th, td, button, "
    + "[data-testid='stCaptionContainer']), [data-testid='stSidebar'] :is(p, li, label, summary, button, span)";
  const out = new Set();
  for (const el of document.querySelectorAll(blocks)) {
    if (el.closest(".katex, pre, code")) continue;  // formulas and code stay as they are written
    const text = (el.innerText || "").trim();
    if (text) out.add(text);
  }
  for (const el of document.querySelectorAll("[data-testid='stMain'] svg text")) out.add(el.textContent.trim());
  return [...out];
}"""


def _blocks(new_tab, page: str, lang: str) -> set[str]:
    tab = new_tab()
    tab.open(_view(page, lang))
    return set(tab.page.evaluate(TEXT_BLOCKS_JS))


@pytest.mark.parametrize("page, lang", across(PAGES, PAGES, LANGUAGES, LANGUAGES))
def test_no_block_of_english_is_left_in_another_language(new_tab, page, lang):
    """Reference: the same page in English, block by block (paragraphs, headings, labels, captions, table cells,
    buttons, the sidebar's words, chart text): a block the other language shows exactly as English does, with
    English words left once the kept ones are taken out, is an English leak (a message never extracted, or never
    translated)."""
    english = _blocks(new_tab, page, "en")
    leaks = [text for text in _blocks(new_tab, page, lang) & english
             if len(re.findall(r"[A-Za-z]{3,}", KEPT_ENGLISH.sub(" ", text))) >= 2]
    assert leaks == [], leaks
