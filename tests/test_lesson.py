"""The guided lesson around the pages: goals, Previous/Next from the first page to the training race, a
predict-then-reveal question per page whose answer is computed when asked, the sources, the presenter view.

References: mpmath at 50 digits for every number a reveal quotes (GELU(-1), Φ(0), GELU(3), GELU'(-2), the
tanh and exact GELU at 1, the tanh form's largest error); the lab's and the race's answers against
gelu_core.lab.run_lab and gelu_core.training.train run here; the lesson's order as ui.pages.ORDER states it.
"""

from __future__ import annotations

import mpmath as mp
import pytest

from tests.conftest import ROOT
from tests.test_ui_explorer_pages import gelu_ref, grad_ref, shown
from ui import lesson
from ui.pages import ORDER, PAGES

mp.mp.dps = 50
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


# the answer each reveal must name, and a number it must quote: from independent references
def _truths():
    from gelu_core.analysis import worst_error
    from gelu_core.training import RaceConfig, train, verdict
    from ui.training import verdict_text

    trained = train(RaceConfig())
    race = verdict(trained)
    tanh_1 = mp.mpf(1) / (1 + mp.exp(-2 * mp.sqrt(2 / mp.pi) * (1 + mp.mpf("0.044715"))))
    return {
        "home": ("a small negative number", shown(gelu_ref(-1, "tanh"))),
        "gate": ("half open (50%)", "50.0%"),
        "curves": ("almost exactly 3", shown(gelu_ref(3, "tanh"))),
        "derivative": ("small, but not 0", shown(grad_ref(-2))),
        "steps": ("the exact form", f"{float(gelu_ref(1)):.6f}" if tanh_1 < gelu_ref(1) else "?"),
        "ffn": ("about half", "to exactly 0"),
        "training": ({"relu": "ReLU", None: "they do about as well"}.get(race.leader, "GELU"),
                     verdict_text(trained, race)),
        "approximations": ("between 0.0001 and 0.01", f"{worst_error('tanh')[1]:.3e}"),
    }


@pytest.mark.parametrize("page", [p.url_path for p in PAGES.values() if p.question])  # a row may have none
def test_predict_then_reveal(page):
    """The student chooses; the page says right or not, with the truth computed when asked."""
    right, quoted = _truths()[page]
    question = PAGES[page].question
    wrong = next(c for c in question.choices if c != right)
    at = open_at(page, training_steps="100")
    radio = at.radio(key=f"quiz_{page}")
    assert radio.value is None and not [s for s in at.success if "Right." in s.value]  # nothing before a choice
    radio.set_value(wrong).run()
    assert [w.value for w in at.warning if w.value.startswith("Not quite.")]
    radio = at.radio(key=f"quiz_{page}")
    radio.set_value(right).run()
    revealed = [s.value for s in at.success if s.value.startswith("Right.")]
    assert len(revealed) == 1 and quoted in revealed[0], revealed


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
                               lambda: (calls.append(1), ("a", "because"))[1])
    assert question.reveal("a") == (True, "because") and question.reveal("b") == (False, "because")
    assert question.reveal("a") == (True, "because") and len(calls) == 1
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
