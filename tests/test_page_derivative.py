"""AppTest of the Derivative page: the nudge, GELU's minimum and slope extremes, the form switch.

References: mpmath at 50 digits (mp.diff of each GELU form, findroot); readouts compared as the 4-decimal
rounding of the mpmath value.
"""

from __future__ import annotations

import mpmath as mp
import pytest

from tests.conftest import chart_spec, metrics, open_page
from tests.stacking import next_after
from tests.test_ui_explorer_pages import arr, gelu_ref, grad_ref, shown
from ui import derivative


def answer(form: str = "tanh") -> tuple[str, str]:
    """The question's right choice and a number its reveal must quote: GELU'(-2) in the lesson's form (mpmath's
    numerical derivative at 50 digits)."""
    return "small, but not 0", shown(grad_ref(-2, form))


def verb(change: float) -> str:
    """The nudge card's words, as the page promises them: GELU's slope change against ReLU's jump of 1."""
    if change < 0.05:
        return "barely moves"
    if change < 0.5:
        return "moves a little"
    return "moves, but less than ReLU's jump" if change < 1 else "moves more than ReLU's jump"

PAGE = "pages/derivative.py"


def test_the_lessons_nudge(app):
    """From -0.01 to +0.01: ReLU' 0 -> 1, GELU' 0.4920 -> 0.5080 (lesson's figures, exact form, mpmath check)."""
    at = open_page(app, PAGE, form="exact")
    assert not at.exception
    m = metrics(at)
    assert m["ReLU′ jumps"] == "0 → 1"
    assert m["GELU′ (exact) barely moves"] == f"{shown(grad_ref(-0.01))} → {shown(grad_ref(0.01))}" == "0.4920 → 0.5080"


def test_landmarks_against_mpmath(app):
    """GELU's minimum -0.1700 at -0.7518; GELU' from -0.1289 (at -sqrt 2) to 1.1289 (at sqrt 2): the exact form."""
    at = open_page(app, PAGE, form="exact")
    m = metrics(at)
    root = mp.findroot(lambda t: mp.ncdf(t) + t * mp.npdf(t), -0.75)
    assert m["GELU's minimum"] == shown(root * mp.ncdf(root)) == "-0.1700"
    r2 = mp.sqrt(2)
    assert m["Lowest slope, GELU′"] == shown(grad_ref(-r2)) == "-0.1289"
    assert m["Highest slope, GELU′"] == shown(grad_ref(r2)) == "1.1289"
    captions = " ".join(c.value for c in at.caption)
    assert "at x = -0.7518" in captions and "-1.4142 = -√2" in captions


@pytest.mark.parametrize("form, h", [("tanh", 0.1), ("sigmoid", 0.5), ("exact", 0.001), ("exact", 1.0),
                                     ("exact", 0.5), ("tanh", 0.7)])
def test_nudge_for_each_form_against_mpmath(app, form, h):
    """The card's words follow its numbers: at h = 1 the slope moves more than ReLU's jump (-0.0833 -> 1.0833)."""
    at = open_page(app, PAGE, form=form, derivative_nudge=str(h))
    m = metrics(at)
    words = verb(float(abs(grad_ref(h, form) - grad_ref(-h, form))))
    assert m[f"GELU′ ({form}) {words}"] == f"{shown(grad_ref(-h, form))} → {shown(grad_ref(h, form))}"
    key = {"exact": "gelu", "tanh": "gelu_tanh", "sigmoid": "gelu_sigmoid"}[form]
    curve = [t for t in chart_spec(at, 0)["data"] if t.get("meta") == key][0]
    assert float(arr(curve["y"])[300]) == pytest.approx(float(grad_ref(arr(curve["x"])[300], form)), rel=1e-11)
    gelu = [t for t in chart_spec(at, 1)["data"] if t.get("meta") == key][0]
    assert float(arr(gelu["y"])[100]) == pytest.approx(float(gelu_ref(arr(gelu["x"])[100], form)), rel=1e-13)


def test_nudge_slider_and_form_change_the_charts(app):
    at = open_page(app, PAGE)
    before = chart_spec(at, 0)
    at.slider(key="derivative_nudge").set_value(0.3).run()
    assert not at.exception and chart_spec(at, 0) != before
    before = [chart_spec(at, 0), chart_spec(at, 1)]
    at.button_group(key="form").set_value("sigmoid").run()
    assert chart_spec(at, 0) != before[0] and chart_spec(at, 1) != before[1]


@pytest.mark.parametrize("key, bad", [("derivative_nudge", "0"), ("derivative_nudge", "2"), ("derivative_nudge", "x"),
                                      ("form", "quartic")])
def test_bad_query_values_fall_back_to_defaults(app, key, bad):
    at = open_page(app, PAGE, **{key: bad})
    assert not at.exception and not at.error
    assert at.slider(key="derivative_nudge").value == 0.01
    assert at.button_group(key="form").value == "tanh"  # the lesson's form unless the student chose another


@pytest.mark.parametrize("form", ["exact", "tanh", "sigmoid"])
def test_the_sentence_on_the_slope_extremes_follows_them(app, form):
    """It quotes GELU's lowest and highest slope (mpmath at the page's x, 4 decimals) and judges them: below 0
    means GELU falls somewhere, above 1 that it outruns x (each against mpmath's value, not the page's)."""
    at = open_page(app, PAGE, form=form)
    text = " ".join(c.value for c in at.caption)
    key = {"exact": "none"}.get(form, form)
    marks = derivative.landmarks(key)
    lo, hi = grad_ref(marks.steepest_down.x, form), grad_ref(marks.steepest_up.x, form)
    assert (f"dips below 0 (to {shown(lo)})" in text) == (lo < 0)
    assert (f"overshoots 1 (up to {shown(hi)})" in text) == (hi > 1)
    assert lo < 0 and hi > 1  # true of all three forms


def test_each_slider_sits_right_above_what_it_moves(app):
    """Phone order: the unit's x, then the gradient it passes back; the nudge, then its chart, then its cards."""
    at = open_page(app, PAGE, form="exact")
    assert next_after(at, "slider:derivative_x")[:2] == ["metric:passed back by ReLU",
                                                         "metric:passed back by GELU (exact)"]
    assert next_after(at, "slider:derivative_nudge")[:3] == ["plotly_chart:chart_slopes", "metric:ReLU′ jumps",
                                                             "metric:GELU′ (exact) barely moves"]


@pytest.mark.parametrize("form", ["exact", "tanh", "sigmoid"])
def test_the_opening_sentence_on_negative_slopes_is_true(app, form):
    """For x < 0 GELU' lies between its minimum (mpmath at the page's x) and GELU'(0) = 1/2, and changes sign once
    on [-12, 0] (mpmath on a 0.01 grid): 0 at one point only, GELU's minimum (findroot)."""
    at = open_page(app, PAGE, form=form)
    text = next(m.value for m in at.markdown if "stays between" in m.value)
    key = {"exact": "none"}.get(form, form)
    marks = derivative.landmarks(key)
    root = mp.findroot(lambda t: grad_ref(t, form), -0.75)
    assert (f"stays between {shown(grad_ref(marks.steepest_down.x, form))} and {shown(grad_ref(0, form))}, and is "
            f"0 at one point only: x = {shown(root)}") in text
    signs = [mp.sign(grad_ref(mp.mpf(i) / 100, form)) for i in range(-1200, 0, 1)]
    assert sum(a != b for a, b in zip(signs, signs[1:], strict=False)) == 1


@pytest.mark.parametrize("x", [-2.0, -0.3, 0.5, 2.0])
def test_the_gradient_sentence_follows_the_two_slopes(app, x):
    """ReLU' is 0 or 1; GELU' at x from mpmath, 4 decimals: passed back "so they still learn" for x < 0; for x > 0
    "a little more than all" exactly when GELU' > 1 (at x = 2, 1.0852)."""
    at = open_page(app, PAGE, derivative_x=str(x), form="exact")
    text = " ".join(c.value for c in at.caption)
    g = grad_ref(x)
    if x < 0:
        assert f"GELU passes back {shown(g)}, so they still learn." in text
    else:
        assert f"ReLU all of it, GELU {shown(g)} of it" in text
        assert ("a little more than all" in text) == (g > 1)
