"""AppTest of the Gate page: the bouncer readouts, the probe, the bell curve, the generalised gate.

References: mpmath at 50 digits (ncdf, the minimum of t·Phi(t)); percentages compared with ui.controls.percent
applied to the mpmath value (so a wrong Phi shows), other readouts as the 4-decimal rounding of the mpmath value.
"""

from __future__ import annotations

import mpmath as mp
import pytest

from tests.conftest import chart_spec, metrics, open_page
from tests.stacking import next_after
from tests.test_ui_explorer_pages import arr, gelu_ref, phi_ref, shown
from ui.format import percent

PAGE = "pages/gate.py"
BELL, GATES, GENERALISED = 0, 1, 2  # chart order on the page


def answer(form: str = "tanh") -> tuple[str, str]:
    """The question's right choice and a number its reveal must quote: every form's gate at 0 is one half."""
    return "half open (50%)", "50.0%"


def test_bouncer_readouts_are_the_lessons(app):
    """The lesson: card 2 ~97 %, card 0 half, card -3 ~0.1 %; shown 97.7 %, 50.0 %, 0.13 % (mpmath ncdf)."""
    at = open_page(app, PAGE)
    assert not at.exception
    m = metrics(at)
    assert m["card 2"] == f"{percent(float(phi_ref(2)))} open" == "97.7% open"
    assert m["card 0"] == "50.0% open"
    assert m["card -3"] == f"{percent(float(phi_ref(-3)))} open" == "0.13% open"


@pytest.mark.parametrize("x", [1.0, -0.75, 2.5, -3.9])
def test_probe_readouts_against_mpmath(app, x):
    at = open_page(app, PAGE, gate_x=str(x), form="exact")  # Φ itself: the exact form's gate
    label = f"{x:.2f}"
    m = metrics(at)
    assert m[f"gate Φ({label})"] == percent(float(phi_ref(x)))
    assert m[f"GELU({label}) = x · Φ(x)"] == shown(gelu_ref(x))
    assert m[f"ReLU({label})"] == shown(max(x, 0.0))
    area = [t for t in chart_spec(at, BELL)["data"] if t.get("meta") == "area"][0]
    assert arr(area["x"]).max() == x


@pytest.mark.parametrize("key, value, charts", [
    ("gate_x", -1.5, (BELL, GATES)), ("gate_mu", 0.5, (GENERALISED,)), ("gate_sigma", 0.3, (GENERALISED,)),
])
def test_each_slider_changes_its_chart(app, key, value, charts):
    at = open_page(app, PAGE)
    before = [chart_spec(at, i) for i in charts]
    at.slider(key=key).set_value(value).run()
    assert not at.exception
    assert all(chart_spec(at, i) != b for i, b in zip(charts, before, strict=True))


@pytest.mark.parametrize("sigma", [1.0, 0.5, 0.0])
def test_gap_to_relu_closes_as_sigma_goes_to_zero(app, sigma):
    """With mu = 0 the largest gap is sigma times |min t Phi(t)| = 0.169971 sigma (mpmath; grid 0.01 -> 1e-4)."""
    at = open_page(app, PAGE, gate_sigma=str(sigma))
    t = mp.findroot(lambda s: mp.ncdf(s) + s * mp.npdf(s), -0.75)
    expected = float(-t * mp.ncdf(t)) * sigma
    shown_gap = float(metrics(at)["Largest gap between x · gate and ReLU on -3\u00a0…\u00a03"])
    assert abs(shown_gap - expected) <= 1e-4
    if sigma == 0.0:
        gated = [tr for tr in chart_spec(at, GENERALISED)["data"] if tr["name"].startswith("x · gate")][0]
        x, y = arr(gated["x"]), arr(gated["y"])
        assert (y == x * (x > 0)).all()  # the hard step: x · gate is ReLU exactly


@pytest.mark.parametrize("key, bad, default", [
    ("gate_x", "7", 1.0), ("gate_x", "one", 1.0), ("gate_sigma", "-1", 1.0), ("gate_mu", "", 0.0),
])
def test_bad_query_values_fall_back_to_defaults(app, key, bad, default):
    at = open_page(app, PAGE, **{key: bad})
    assert not at.exception and not at.error
    assert at.slider(key=key).value == default


def test_query_parameters_restore_the_view(app):
    at = open_page(app, PAGE, gate_x="-2", gate_mu="0.5", gate_sigma="0.25")
    assert (at.slider(key="gate_x").value, at.slider(key="gate_mu").value, at.slider(key="gate_sigma").value) == (
        -2.0, 0.5, 0.25)


def test_gap_help_text_is_true(app):
    """The help under the gap says it is 0.1700 · σ for μ = 0: |min t·Φ(t)| rounded to 4 decimals (mpmath)."""
    at = open_page(app, PAGE)
    t = mp.findroot(lambda s: mp.ncdf(s) + s * mp.npdf(s), -0.75)
    gap_metric = [m for m in at.metric if m.label.startswith("Largest gap")][0]
    assert f"{shown(-t * mp.ncdf(t))} · σ" in gap_metric.help


def test_the_bouncers_sentence_quotes_the_cards(app):
    """Under the cards: -3 still gets a sliver and 2 is not waved through completely, with mpmath's percentages."""
    at = open_page(app, PAGE)
    text = " ".join(c.value for c in at.caption)
    assert f"even a card of -3 gets a sliver ({percent(float(phi_ref(-3)))})" in text
    assert f"even 2 is not waved through completely ({percent(float(phi_ref(2)))})" in text


def test_the_slider_comes_right_before_the_charts_it_moves(app):
    """On a phone the columns stack in page order: the x slider, the bell curve, the gate chart, then readouts."""
    at = open_page(app, PAGE)
    assert next_after(at, "slider:gate_x")[:3] == ["plotly_chart:chart_gate-bell", "plotly_chart:chart_gate",
                                                   "metric:gate at 1.00, tanh form"]  # the lesson's form
    assert next_after(at, "slider:gate_sigma")[:1] == ["plotly_chart:chart_gate-soften"]
