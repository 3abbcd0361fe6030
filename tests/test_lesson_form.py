"""One GELU form through the lesson: the form chosen on one page is the form of every page after it, in its
labels and in its numbers, until the student chooses another; it travels in the link.

References: mpmath at 50 digits (tests/test_ui_explorer_pages.gelu_ref, gate_ref, grad_ref: each form from its
textbook formula) for every number read off a page, to the digits the page shows; the lesson's order
(ui.pages.ORDER).  One AppTest session walks Home → Approximations, as a student's tab does.
"""

from __future__ import annotations

import pytest

from tests.conftest import ROOT, metrics, show_me
from tests.test_ui_explorer_pages import gate_ref, gelu_ref, grad_ref, shown

WORDS = {"tanh": "tanh", "none": "exact"}


def walk(form: str):
    """An AppTest session that chooses ``form`` on Home, then visits the lesson's pages with a form in order."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    at.segmented_control(key="form").set_value(form).run()
    return at


@pytest.mark.parametrize("form", ["tanh", "none"])
def test_the_form_chosen_on_home_is_the_form_of_every_page(form):
    word = WORDS[form]
    at = show_me(walk(form))
    table = at.table[0].value
    assert list(table.columns)[2:4] == [f"gate ({word})", f"GELU ({word})"]
    assert table[f"GELU ({word})"].tolist()[1] == shown(gelu_ref(-1, form))  # the second input: -1

    show_me(at.switch_page("pages/gate.py").run())
    assert at.segmented_control(key="form").value == form
    gate_label = "gate Φ(1.00)" if form == "none" else f"gate at 1.00, {word} form"
    gelu_label = "GELU(1.00) = x · Φ(x)" if form == "none" else f"GELU(1.00), {word} form"
    readouts = metrics(at)
    assert readouts[gelu_label] == shown(gelu_ref(1, form))
    assert readouts[gate_label] == f"{100 * float(gate_ref(1, form)):.1f}%"

    show_me(at.switch_page("pages/curves.py").run())
    assert at.segmented_control(key="form").value == form
    assert metrics(at)[f"GELU(-1.00), {word}"] == shown(gelu_ref(-1, form))

    show_me(at.switch_page("pages/derivative.py").run())
    assert at.segmented_control(key="form").value == form
    assert metrics(at)[f"passed back by GELU ({word})"] == shown(grad_ref(-2, form))

    at.query_params["approximations_view"] = "What PyTorch computes"
    show_me(at.switch_page("pages/approximations.py").run())
    assert at.segmented_control(key="form").value == form
    assert any(f"PyTorch's {word} GELU" in c.value for c in at.caption)


@pytest.mark.parametrize("form", ["tanh", "none"])
def test_each_question_asks_in_the_lessons_form_and_reveals_its_number(form):
    at = walk(form)
    radio = at.radio(key="quiz_home")
    assert f"({WORDS[form]} form)" in radio.label
    radio.set_value("a small negative number").run()
    assert [s.value for s in at.success if shown(gelu_ref(-1, form)) in s.value and WORDS[form] in s.value]


def test_the_form_travels_in_the_link():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params["form"] = "exact"
    at.switch_page("pages/derivative.py").run()
    assert at.segmented_control(key="form").value == "none"
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params["curves_form"] = "exact"  # an older link names the form per page
    at.switch_page("pages/curves.py").run()
    assert at.segmented_control(key="form").value == "none" and not at.exception
