"""The Step-by-step page, driven through app.py with AppTest.

References: the source text's seven figures at x = 1 (exact strings), and mpmath at 50 digits for every step
at other x, for exact GELU and for the difference (tolerances: the six printed decimals equal mpmath's
rounding; the difference's 4 significant digits equal mpmath's).
"""

from __future__ import annotations

import mpmath
import pytest
from mpmath import mp

from gelu_core import tanh_steps
from tests.conftest import chart_spec, open_page
from tests.stacking import next_after

PAGE = "pages/steps.py"
SOURCE_AT_1 = ["1.000000", "1.044715", "0.797885", "0.833562", "0.682384", "0.841192", "0.841192"]

mp.dps = 50


def answer(form: str = "tanh") -> tuple[str, str]:
    """The question's right choice and a number its reveal must quote: at x = 1 the exact form is larger (mpmath's
    steps against x·Φ(x)), by about 1.5e-4, so they differ in the sixth decimal."""
    tanh_1, exact_1 = mp_steps(1.0)[-1], mp_exact(1.0)
    return ("the exact form" if exact_1 > tanh_1 else "the tanh form"), six(exact_1)


def mp_steps(x):
    x = mpmath.mpf(x)
    cube = x**3
    inner = x + mpmath.mpf("0.044715") * cube
    c = mp.sqrt(2 / mp.pi)
    u = c * inner
    gate = 1 / (1 + mp.exp(-2 * u))  # = (1 + tanh u) / 2, without cancelling
    return [cube, inner, c, u, mp.tanh(u), gate, x * gate]


def mp_exact(x):
    x = mpmath.mpf(x)
    return x * mp.erfc(-x / mp.sqrt(2)) / 2


def six(v) -> str:
    """mpmath's value rounded to 6 decimals, as the page writes it (no sign on a value that rounds to 0)."""
    text = f"{float(v):.6f}"
    return text.lstrip("-") if float(text) == 0 else text


def values(at) -> list[str]:
    return at.table[0].value["value"].tolist()


def test_x_1_reproduces_the_source(app):
    """The source's seven lines at x = 1, to six decimals; exact GELU 0.841345 and the difference -1.528e-04
    from 50-digit mpmath.  (The page opens at 2; x = 1, the book's example, is one press away.)"""
    at = open_page(app, PAGE)
    at.button(key="steps_book").click().run()
    assert values(at) == SOURCE_AT_1 == [six(v) for v in mp_steps(1.0)]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["tanh form"] == "0.841192"
    assert metrics["exact  x·Φ(x)"] == six(mp_exact(1.0)) == "0.841345"
    diff = mp_steps(1.0)[-1] - mp_exact(1.0)
    assert metrics["difference (tanh − exact)"] == f"{float(diff):.3e}" == "-1.528e-04"
    assert len(at.get("plotly_chart")) == 1


@pytest.mark.parametrize("x", ["-1", "2.5", "-3.75", "0.123456789", "-9.5", "0"])
def test_any_x_from_the_url_against_mpmath(app, x):
    at = open_page(app, PAGE, steps_x=x)
    assert at.number_input(key="steps_x").value == float(x)
    assert values(at) == [six(v) for v in mp_steps(float(x))]
    exact = mp_exact(float(x))
    shown = {m.label: m.value for m in at.metric}["exact  x·Φ(x)"]
    if exact == 0 or abs(exact) >= 5e-7:
        assert shown == six(exact)
    else:  # too small for six decimals: four significant digits (x = -9.5: -9.970e-21)
        assert shown == f"{float(exact):.3e}"


def test_the_slider_sets_x_and_redraws(app):
    at = open_page(app, PAGE)
    before = chart_spec(at, 0)
    at.slider(key="steps_pick").set_value(2.3).run()
    assert not at.exception
    assert at.number_input(key="steps_x").value == 2.3
    assert values(at) == [six(v) for v in mp_steps(2.3)]
    assert chart_spec(at, 0)["data"] != before["data"]


def test_the_exact_number_moves_the_slider_to_its_tenth(app):
    at = open_page(app, PAGE)
    before = chart_spec(at, 0)
    at.number_input(key="steps_x").set_value(-2.345678).run()
    assert not at.exception
    assert at.slider(key="steps_pick").value == -2.3
    assert values(at) == [six(v) for v in mp_steps(-2.345678)]
    assert chart_spec(at, 0)["data"] != before["data"]
    at.number_input(key="steps_x").set_value(8.5).run()  # beyond the slider: it waits at its end
    assert at.slider(key="steps_pick").value == 6.0 and values(at) == [six(v) for v in mp_steps(8.5)]


def test_url_x_puts_the_slider_in_place(app):
    at = open_page(app, PAGE, steps_x="-4.07")
    assert at.slider(key="steps_pick").value == -4.1


@pytest.mark.parametrize("bad", ["abc", "99", "nan", ""])
def test_bad_x_in_the_url_falls_back_to_the_default(app, bad):
    """Reference: the page's default, 2 (every step apart on the chart), and 50-digit mpmath's steps there."""
    at = open_page(app, PAGE, steps_x=bad, steps_pick="42")
    assert at.number_input(key="steps_x").value == 2.0
    assert at.slider(key="steps_pick").value == 2.0
    assert values(at) == [six(v) for v in mp_steps(2.0)]


def test_full_precision_toggle(app):
    """Full digits: each parses back to within 4 float64 ulps of 50-digit mpmath (x = 1, no cancellation)."""
    at = open_page(app, PAGE, steps_full="true", steps_x="1")
    assert len(at.table) == 2 and list(at.table[1].value.columns) == ["step", "full precision"]  # fits a phone
    full = at.table[1].value["full precision"].tolist()
    for shown, ref in zip(full, mp_steps(1.0), strict=True):
        got = float(shown.replace("−", "-"))
        assert abs(got - ref) <= 4 * abs(ref) * 2.0**-52
    at.toggle(key="steps_full").set_value(False).run()
    assert len(at.table) == 1 and "full precision" not in at.table[0].value.columns


def test_the_chart_follows_the_pick_slider(app):
    """Phone order: the slider (and the exact input beside it), then the chart it moves, then the readouts, the
    toggle and the steps."""
    at = open_page(app, PAGE)
    assert next_after(at, "slider:steps_pick")[:3] == ["number_input:steps_x", "plotly_chart:chart_steps",
                                                       "metric:tanh form"]


def test_the_caption_names_the_steps_it_explains(app):
    at = open_page(app, PAGE)
    captions = " ".join(c.value for c in at.caption)
    labels = [s.label for s in tanh_steps(1.0)]
    assert f"“{labels[-2]}” is the gate" in captions and f"“{labels[-1]}” multiplies" in captions
    shown = at.table[0].value
    assert list(shown.columns) == ["step", "with numbers", "value"]  # three columns: a phone's width at any x
    assert shown["step"].tolist()[-2].startswith(f"**{labels[-2]}**")


@pytest.mark.parametrize("x", ["7.5", "8", "9", "-9.5"])
def test_the_difference_keeps_its_digits_where_both_forms_are_near_x(app, x):
    """Reference: 50-digit mpmath of tanh GELU - exact GELU.  Far right both are within 1e-13 of x, so their
    difference in float64 loses every digit that matters (at x = 9 it printed 0); the page keeps all of them."""
    at = open_page(app, PAGE, steps_x=x)
    diff = mp_steps(float(x))[-1] - mp_exact(float(x))
    shown = {m.label: m.value for m in at.metric}["difference (tanh − exact)"]
    assert shown == f"{float(diff):.3e}"
