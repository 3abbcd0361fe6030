"""The guided lesson around the pages: goals, Previous/Next from the first page to the training race, a
predict-then-reveal question per page whose answer is computed when asked, the sources, the presenter view.

References: each page's test module's ``answer()`` for the number its reveal quotes (mpmath at 50 digits for GELU(-1),
the gate at 0, GELU(3), GELU'(-2), the tanh and exact GELU at 1, the tanh form's largest error; the lab's and the
race's by hand and by gelu_core.training.train there); the lesson's order as ui.pages.ORDER states it.
"""

from __future__ import annotations

import importlib

import pytest

from tests.conftest import ROOT
from ui import lesson
from ui.pages import ORDER, PAGES

PAGE_FILES = {p.url_path: None if p.default else p.file for p in PAGES.values()}


def open_at(page: str, **query):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    if PAGE_FILES[page]:
        at.switch_page(PAGE_FILES[page]).run()
    assert not at.exception
    return at


def links(at) -> dict[str, str]:
    """The footer's page links: label -> target url path."""
    return {link.proto.label: link.proto.page.strip("/") for link in at.get("page_link")
            if link.proto.label.startswith(("Previous", "Next"))}


def test_next_alone_leads_from_the_first_page_to_the_training_race():
    at = open_at("home", training_steps="100")
    visited = ["home"]
    while True:
        onward = [target for label, target in links(at).items() if label.startswith("Next")]
        if not onward:
            break
        target = onward[0] or "home"
        at.switch_page(PAGE_FILES[target]).run()
        assert not at.exception and not at.error
        visited.append(target)
    assert visited == list(ORDER)
    assert visited[-1] == "training"


@pytest.mark.parametrize("page", ORDER)
def test_every_lesson_page_states_its_goal_and_place(page):
    at = open_at(page, training_steps="100")
    goal = [c.value for c in at.caption if "**Goal**" in c.value]
    n = ORDER.index(page) + 1
    assert goal == [f"Step {n} of {len(ORDER)} · **Goal**: {PAGES[page].goal}"]


def test_an_aside_returns_to_where_it_branches_off():
    at = open_at("approximations")
    assert links(at) == {"Previous: Step by step": "steps"}
    assert any(c.value.startswith("Aside · **Goal**") for c in at.caption)


def reference(page: str) -> tuple[str, str]:
    """The right choice of the page's question and a number its reveal must quote, from the page's own test module
    (``tests/test_page_<page>.py``'s ``answer()``: an independent reference there, mpmath or a run by hand)."""
    module = importlib.import_module(f"tests.test_page_{page}")
    assert hasattr(module, "answer"), f"tests/test_page_{page}.py needs answer(): the reference for its question"
    return module.answer()


QUESTIONS = [p.url_path for p in PAGES.values() if p.question]  # a row may have none


@pytest.mark.parametrize("page", QUESTIONS)
def test_the_page_waits_for_a_prediction_and_keeps_it(page):
    """Arriving on the lesson's path, the student meets the question and nothing that answers it (no metric, no
    chart, no table); a wrong first answer is the prediction: "Not quite" with the computed reason, and the page
    unfolds; an answer changed afterwards is said to be changed, and the prediction stays what it was."""
    right, quoted = reference(page)
    question = PAGES[page].question
    wrong = next(c for c in question.choices if c != right)
    at = open_at(page)
    radio = at.radio(key=f"quiz_{page}")
    assert radio.value is None and not at.success and not at.warning
    assert not at.metric and not at.get("plotly_chart") and not at.table and not at.dataframe
    radio.set_value(wrong).run()
    assert [w.value for w in at.warning if w.value.startswith("Not quite.") and quoted in w.value]
    assert at.metric or at.get("plotly_chart") or at.table  # the page unfolded
    at.radio(key=f"quiz_{page}").set_value(right).run()
    assert [w.value for w in at.warning if w.value.startswith("Not quite.")]  # the prediction stays
    assert [c.value for c in at.caption if "changed your answer after the reveal" in c.value and wrong in c.value]


@pytest.mark.parametrize("page", QUESTIONS)
def test_a_right_prediction_and_show_me(page):
    """Right first: "Right." with the computed reason.  "Show me": the answer named, no prediction kept."""
    right, quoted = reference(page)
    at = open_at(page)
    at.radio(key=f"quiz_{page}").set_value(right).run()
    revealed = [s.value for s in at.success if s.value.startswith("Right.")]
    assert len(revealed) == 1 and quoted in revealed[0], revealed
    at = open_at(page)
    at.button(key=f"show_{page}").click().run()
    assert [i.value for i in at.info if i.value.startswith(f"The answer: {right}.") and quoted in i.value]


def test_an_answer_is_computed_once_per_process_and_the_race_is_the_pages():
    """The choice stays on the page, so every later rerun reveals the answer again: it must not be computed
    again (the race's answer is a whole race), and the race is the page's own default race, as the server's race
    lane trains it for the page.  References: a counter around a question's truth; the lane's default race and
    its verdict sentence (ui.training.verdict_text), which the reveal must quote."""
    from gelu_core import training
    from hosting.races import LANE
    from ui.training import verdict_text

    calls = []
    question = lesson.Question("A question only this test asks?", ("a", "b"),
                               lambda form: (calls.append(form), ("a", "because"))[1], hides="nothing")
    assert question.reveal("a") == (True, "because") and question.reveal("b") == (False, "because")
    assert question.reveal("a") == (True, "because") and calls == ["tanh"]
    assert question.reveal("a", "none") == (True, "because") and calls == ["tanh", "none"]  # one answer a form
    _, why = PAGES["training"].question.reveal("GELU")
    race = LANE.train(training.RaceConfig())
    assert verdict_text(race, training.verdict(race)) in why


def test_the_sources_are_named():
    at = open_at("home")
    text = " ".join(m.value for m in at.sidebar.markdown)
    for name in ("Hendrycks", "Gimpel", "1606.08415", "Raschka", "chapter 4", "Radford", "2019"):
        assert name in text


def test_the_presenter_view_hides_the_frame_and_the_chosen_controls():
    at = open_at("curves")
    at.query_params["present"] = "true"
    at.query_params["hide"] = ["curves_range", "not_a_key"]
    at.run()
    css = " ".join(h.proto.body for h in at.get("html") if "<style>" in h.proto.body and "font-size" in h.proto.body)
    assert "[data-testid='stSidebar']" in css and ".st-key-lesson_footer" in css and "125%" in css
    assert ".st-key-curves_range" in css and "not_a_key" not in css  # only real keys reach the CSS
