"""Predict, then check, in a real browser: every page asks its question before it shows what answers it.

For each page of the lesson, in a fresh session, the page as a student first meets it: none of the numbers its
reveal quotes is on the screen (the page's text and every chart's text: its labels, ticks and legend) before the
student answers; once they answer, all of them are, and the question sits above the page's first chart.  Then the
whole lesson walked by keyboard alone, in predict-first order.

References: the reveal's sentence, computed by the page's own ``QUESTION`` (gelu_core's numbers, each checked
against mpmath in tests/test_lesson.py), read in the test; its numbers are those with a decimal point, a percent sign
or digit grouping (a bare small integer such as the 1 of "x = 1" is also the question's own wording); the page's
text as Chromium lays it out (``innerText``) and every SVG text node.
"""

from __future__ import annotations

import re

import pytest

from harness import browser as driver
from ui.pages import ORDER, PAGES

pytestmark = pytest.mark.e2e

NUMBER = re.compile(r"[−-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?%?|[−-]?\d+\.\d+%?|\d+%")
SCREEN_TEXT_JS = """() => document.querySelector("[data-testid='stMain']").innerText + "\\n" +
  [...document.querySelectorAll("[data-testid='stMain'] svg text")].map((t) => t.textContent).join("\\n")"""
QUESTION = ".st-key-lesson_question"
NEXT_FOCUSED_JS = """() => !!document.activeElement.closest('.st-key-lesson_footer')
  && document.activeElement.textContent.includes('Next')"""
FIRST_CHART_TOP_JS = """() => {
  const plot = document.querySelector("[data-testid='stMain'] .js-plotly-plot");
  return plot ? plot.getBoundingClientRect().top + window.scrollY : null;
}"""


def answer_numbers(page: str) -> list[str]:
    """The numbers the page's reveal quotes that its question does not ask about."""
    question = PAGES[page].question
    right, why = question.answer("tanh")
    asked = set(NUMBER.findall(question.ask("tanh")))
    return [n for n in dict.fromkeys(NUMBER.findall(why)) if n not in asked]


def plain(text: str) -> str:
    """Text with a true minus sign written as a hyphen, as the reveal writes it."""
    return text.replace("\u2212", "-")


def test_the_reference_finds_numbers_in_every_reveal():
    for page in (p for p in PAGES if PAGES[p].question):
        assert answer_numbers(page), f"{page}'s reveal quotes no number this test could look for"


@pytest.mark.parametrize("page", [p for p in PAGES if PAGES[p].question])
def test_nothing_that_answers_the_question_shows_before_the_answer(new_tab, page):
    tab = new_tab()
    path = "" if PAGES[page].default else page
    driver.open_app(tab.page, f"{tab.base_url}/{path}", show=False)
    question = tab.page.locator(QUESTION)
    assert question.count() == 1, "the page asks no question"
    numbers = answer_numbers(page)
    before = plain(tab.page.evaluate(SCREEN_TEXT_JS))
    shown = [n for n in numbers if n in before]
    assert not shown, f"{page} shows {shown} before the student answers"
    right, _ = PAGES[page].question.answer("tanh")
    runs = driver.runs(tab.page)
    question.get_by_text(right, exact=True).click()
    driver.wait_idle(tab.page, runs)
    after = plain(tab.page.evaluate(SCREEN_TEXT_JS))
    missing = [n for n in numbers if n not in after]
    assert not missing, f"{page} does not show {missing} once answered"
    chart_top = tab.page.evaluate(FIRST_CHART_TOP_JS)
    question_top = question.bounding_box()["y"] + tab.page.evaluate("window.scrollY")
    assert chart_top is None or question_top < chart_top, f"{page}'s question sits below its first chart"
    tab.assert_clean()


@pytest.mark.parametrize("scheme, viewport", [("light", driver.DESKTOP), ("dark", driver.PHONE)], ids=["light", "dark"])
def test_every_question_is_axe_clean_before_its_answer(new_tab, scheme, viewport):
    """axe-core's WCAG 2.2 A and AA rules on each page as the lesson reaches it: its question, nothing after it."""
    from tests.e2e.test_accessibility import axe, summary_of

    tab = new_tab(color_scheme=scheme, viewport=viewport)
    found = {}
    for page in (p for p in PAGES if PAGES[p].question):
        driver.open_app(tab.page, f"{tab.base_url}/{'' if PAGES[page].default else page}", show=False)
        assert tab.page.locator(driver.SHOW_ME).count() == 1, f"{page} did not ask first"
        found[page] = summary_of(axe(tab.page))
    assert all(v == [] for v in found.values()), found


def test_a_shared_view_opens_whole_and_the_presenter_view_asks_first(new_tab):
    """A link holding a page's settings is a teacher's exact view: shown whole at once; the same link in the
    presenter view asks the room first."""
    tab = new_tab()
    driver.open_app(tab.page, f"{tab.base_url}/gate?gate_x=-1.5", show=False)
    assert tab.page.locator(driver.SHOW_ME).count() == 0
    assert "GELU(-1.50)" in plain(tab.page.evaluate(SCREEN_TEXT_JS))
    driver.open_app(tab.page, f"{tab.base_url}/gate?gate_x=-1.5&present=true", show=False)
    assert tab.page.locator(driver.SHOW_ME).count() == 1


def test_the_whole_lesson_by_keyboard_in_predict_first_order(new_tab):
    """From Home to the race with the keyboard alone: on each page Tab reaches the question before anything that
    answers it, an arrow key and Space choose an answer, and the page unfolds; then the Next link, by Tab and
    Enter, opens the next page of the lesson."""
    tab = new_tab()
    driver.open_app(tab.page, f"{tab.base_url}/?training_steps=100", show=False)
    visited = []
    for page in ORDER:
        visited.append(page)
        focused = ""
        for _ in range(80):  # Tab until the first choice of the question has the focus
            tab.page.keyboard.press("Tab")
            focused = tab.page.evaluate(
                "() => document.activeElement.closest('.st-key-lesson_question') ? 'question' : "
                "(document.activeElement.closest('.js-plotly-plot') ? 'chart' : '')")
            if focused:
                break
        assert focused == "question", f"{page}: Tab reached {focused or 'nothing'} before the question"
        if PAGES[page].question and tab.page.locator(driver.SHOW_ME).count():
            runs = driver.runs(tab.page)
            tab.page.keyboard.press("Space")  # the focused choice: the student's prediction
            driver.wait_idle(tab.page, runs)
            assert tab.page.locator(driver.SHOW_ME).count() == 0, f"{page}: the answer did not unfold the page"
        if page == ORDER[-1]:
            break
        for _ in range(400):  # Tab on to the Next link, below the page
            tab.page.keyboard.press("Tab")
            if tab.page.evaluate(NEXT_FOCUSED_JS):
                break
        runs = driver.runs(tab.page)
        tab.page.keyboard.press("Enter")
        driver.wait_idle(tab.page, runs)
        assert tab.page.url.split("?")[0].endswith("/" + ORDER[ORDER.index(page) + 1]), tab.page.url
    assert visited == list(ORDER)
    tab.assert_clean()
