"""Figure and table builders of the Approximations and Step-by-step pages, without Streamlit.

Each figure is checked the way a reader would: which traces, in which house colour, which points marked,
which axis type; and validated by plotly itself (``go.Figure(fig.to_dict())``), since the builders skip
plotly's validation for speed.  Numbers in the step table are checked against 50-digit mpmath (tolerance:
the six printed decimals must equal mpmath's rounding; full precision within 4 float64 ulps).
"""

from __future__ import annotations

import base64
from types import SimpleNamespace

import mpmath
import numpy as np
import plotly.graph_objects as go
import pytest
from mpmath import mp

from gelu_core import tanh_steps
from ui.approximations import (
    DTYPE_COLORS,
    ERROR_FLOOR,
    LIMITS,
    error_figure,
    forms_figure,
    framework_figure,
    framework_tables,
    how_far,
    limits_table,
)
from ui.format import full, six
from ui.steps import chart_range, digits_table, step_table, steps_figure
from ui.theme import COLORS, DASHES, NEUTRAL

mp.dps = 50
SOURCE_STEPS_AT_1 = ["1.000000", "1.044715", "0.797885", "0.833562", "0.682384", "0.841192", "0.841192"]


def valid(fig) -> dict:
    """The figure as plotly's validated dict (raises on any invalid property)."""
    return go.Figure(fig.to_dict()).to_dict()


def traces(fig) -> list[dict]:
    return valid(fig)["data"]


def by_meta(fig, meta: str) -> dict:
    found = [t for t in traces(fig) if t.get("meta") == meta]
    assert len(found) == 1, f"expected one trace with meta {meta!r}"
    return found[0]


def arr(v) -> np.ndarray:
    """A trace's x or y as float64: plotly 6 stores numpy arrays as base64 typed arrays ({dtype, bdata})."""
    if isinstance(v, dict) and "bdata" in v:
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"])).astype(np.float64)
    return np.asarray(v, dtype=np.float64)


def y_of(trace) -> np.ndarray:
    return arr(trace["y"])


# ---------------------------------------------------------------- approximations

def test_forms_figure_draws_the_three_forms_in_house_colours():
    x = np.linspace(-3, 3, 7)
    fig = forms_figure(x, {"none": x * 0.5, "tanh": x * 0.6, "sigmoid": x * 0.7})
    for key, scale in (("gelu", 0.5), ("gelu_tanh", 0.6), ("gelu_sigmoid", 0.7)):
        t = by_meta(fig, key)
        assert t["line"]["color"] == COLORS[key] and t["line"]["dash"] == DASHES[key]
        np.testing.assert_allclose(y_of(t), x * scale)
    layout = valid(fig)["layout"]
    assert layout["xaxis"]["title"]["text"] == "x" and layout["yaxis"]["title"]["text"] == "GELU(x)"
    assert layout["paper_bgcolor"] == "rgba(0,0,0,0)"  # the theme shows through


def test_error_figure_is_log_scaled_with_gaps_for_zeros():
    """Zeros and NaN (relative error at x = 0) become gaps; the axis starts at the floor."""
    x = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])
    err = np.array([1e-3, 1e-5, 0.0, 1e-5, np.nan])
    fig = error_figure(x, {"tanh": err}, kind="absolute")
    layout = valid(fig)["layout"]
    assert layout["yaxis"]["type"] == "log"
    assert layout["yaxis"]["range"][0] == pytest.approx(np.log10(ERROR_FLOOR))
    assert layout["yaxis"]["range"][1] > np.log10(1e-3)  # the largest error is inside the chart
    y = y_of(by_meta(fig, "gelu_tanh"))
    assert y[0] == 1e-3 and np.isnan(y[2]) and np.isnan(y[4])
    assert layout["yaxis"]["ticktext"][0] == "10⁻¹²" and layout["yaxis"]["tickvals"][0] == ERROR_FLOOR
    assert not layout.get("annotations")  # no text inside an error chart: the caption says where the axis stops


def test_error_figure_marks_the_worst_point_on_both_sides_when_in_range():
    x = np.linspace(-4, 4, 81)
    worst = {"tanh": (2.7, 4.73e-4), "sigmoid": (-2.27, 2.03e-2)}  # the sign of x does not matter
    fig = error_figure(x, {"tanh": np.full(81, 1e-4), "sigmoid": np.full(81, 1e-3)}, kind="absolute", worst=worst)
    tanh = by_meta(fig, "marker:gelu_tanh")
    assert sorted(arr(tanh["x"])) == [-2.7, 2.7] and list(arr(tanh["y"])) == [4.73e-4, 4.73e-4]
    assert tanh["marker"]["color"] == COLORS["gelu_tanh"]
    sigmoid = by_meta(fig, "marker:gelu_sigmoid")
    assert sorted(arr(sigmoid["x"])) == [-2.27, 2.27] and sigmoid["marker"]["color"] == COLORS["gelu_sigmoid"]
    # only the side inside the range is marked
    half = error_figure(np.linspace(0, 3, 31), {"tanh": np.full(31, 1e-4)}, kind="absolute",
                        worst={"tanh": (2.7, 4.73e-4)})
    assert list(arr(by_meta(half, "marker:gelu_tanh")["x"])) == [2.7]
    none = error_figure(np.linspace(-1, 1, 21), {"tanh": np.full(21, 1e-4)}, kind="absolute",
                        worst={"tanh": (2.7, 4.73e-4)})
    assert not [t for t in traces(none) if str(t.get("meta", "")).startswith("marker:")]


def test_relative_error_figure_has_a_100_percent_line():
    fig = error_figure(np.linspace(-1, 1, 5), {"sigmoid": np.full(5, 0.5)}, kind="relative")
    layout = valid(fig)["layout"]
    assert any(s["y0"] == 1.0 == s["y1"] for s in layout["shapes"])
    assert layout["yaxis"]["title"]["text"] == "relative error"
    ticks = dict(zip(layout["yaxis"]["tickvals"], layout["yaxis"]["ticktext"], strict=True))
    assert ticks[1.0] == "100 %" and ticks[1e-6] == "10⁻⁶"  # the reference line named by its tick


@pytest.mark.parametrize("top", [3e-2, 1.0, 7e24])
def test_log_axis_ticks_are_powers_of_ten_at_most_seven_or_so(top):
    x = np.linspace(-1, 1, 3)
    layout = valid(error_figure(x, {"sigmoid": np.full(3, top)}, kind="absolute"))["layout"]
    vals, text = layout["yaxis"]["tickvals"], layout["yaxis"]["ticktext"]
    assert len(vals) <= 8 and vals[0] == ERROR_FLOOR and all(v <= 10 * top for v in vals)
    exponents = np.log10(vals)
    assert np.allclose(exponents, np.round(exponents)) and (top < 1 or 1.0 in vals)
    assert all(t == ("1" if v == 1.0 else f"10{t[2:]}") for v, t in zip(vals, text, strict=True))
    with pytest.raises(ValueError, match="absolute' or 'relative"):
        error_figure([0.0], {"tanh": [0.0]}, kind="squared")


def _run(dtype, x, torch_rel, ours_rel):
    x = np.asarray(x, dtype=np.float64)
    return SimpleNamespace(dtype=dtype, x=x, exact=-np.exp(x), torch_value=np.zeros_like(x), ours=-np.exp(x),
                           torch_rel_error=np.asarray(torch_rel, dtype=np.float64),
                           ours_rel_error=np.asarray(ours_rel, dtype=np.float64))


def test_framework_figure_one_trace_per_dtype_plus_ours_and_limits():
    x = np.linspace(-12, 4, 17)
    f32 = _run("float32", x, np.where(x < -5.5, 1.0, 1e-7), np.full(17, 3e-8))
    bf16 = _run("bfloat16", x, np.where(x < -5.5, 1.0, 2e-3), np.full(17, 1e-3))
    fig = framework_figure([f32, bf16], ours=f32, roundoff={"float32": 2.0**-24, "bfloat16": 2.0**-8},
                           cliff=("float32", -5.54))
    assert by_meta(fig, "torch:float32")["line"]["color"] == DTYPE_COLORS["float32"]
    assert by_meta(fig, "torch:bfloat16")["line"]["color"] == DTYPE_COLORS["bfloat16"]
    ours = by_meta(fig, "ours:float32")
    assert ours["line"]["color"] == COLORS["gelu"] and ours["line"]["dash"] == "dash"
    np.testing.assert_array_equal(y_of(by_meta(fig, "torch:float32"))[:6], np.ones(6))  # the 100 % plateau
    layout = valid(fig)["layout"]
    ys = sorted(s["y0"] for s in layout["shapes"] if s.get("yref") == "y")
    assert ys == [2.0**-24, 2.0**-8, 1.0]
    cliff = [s for s in layout["shapes"] if s.get("xref") == "x"]
    assert len(cliff) == 1 and cliff[0]["x0"] == -5.54 and cliff[0]["line"]["color"] == DTYPE_COLORS["float32"]
    assert by_meta(fig, "cliff:float32")["name"] == "float32: 0 for every x ≤ -5.54"  # named in the legend
    assert by_meta(fig, "cliff:float32")["line"]["color"] == DTYPE_COLORS["float32"]
    outside = framework_figure([f32], cliff=("float32", -20.0))
    assert not [s for s in valid(outside)["layout"]["shapes"] if s.get("xref") == "x"]


def test_dtype_colours_stay_clear_of_the_gelu_forms():
    forms = {COLORS["gelu"], COLORS["gelu_tanh"], COLORS["gelu_sigmoid"], COLORS["relu"]}
    assert not forms & set(DTYPE_COLORS.values()) and len(set(DTYPE_COLORS.values())) == 3


def test_framework_tables_are_narrow_enough_for_a_phone():
    """x and at most two numbers per table: the truth beside gelu_core's own result, then one table per dtype."""
    f32 = _run("float32", [-1.0, 1.0], [1.0, 2e-8], [0.0, 0.0])
    f16 = _run("float16", [-1.0, 1.0], [1.0, 3e-4], [0.0, 0.0])
    tables = framework_tables([f32, f16], ours=f32)
    assert [(name, title) for name, title, _ in tables] == [
        ("truth", "The true value, and this app's float32"), ("float32", "torch float32"), ("float16", "torch float16")]
    truth, t32, t16 = (table for _, _, table in tables)
    assert list(truth) == ["x", "exact (float64)", "gelu_core float32"]
    assert list(t32) == ["x", "torch float32", "rel. error float32"] and list(t16)[1:] == ["torch float16",
                                                                                          "rel. error float16"]
    assert truth["x"] == t32["x"] == [-1.0, 1.0] and t32["rel. error float32"] == [1.0, 2e-8]
    assert truth["exact (float64)"] == (-np.exp([-1.0, 1.0])).tolist()


def test_limits_table_in_long_form():
    limits = {"float32": {"every": -5.54, "some": -5.49, "holds": -14.36, "roundoff": 2.0**-24},
              "float16": {"every": -5.54, "some": -5.54, "holds": -5.73, "roundoff": 2.0**-11}}
    table = limits_table(limits)
    assert list(table) == ["dtype", "returns 0", "x"]
    assert table["dtype"] == ["float32"] * 3 + ["float16"] * 3
    assert table["x"] == [-5.54, -5.49, -14.36, -5.54, -5.54, -5.73]
    assert table["returns 0"][:3] == [label for label, _ in LIMITS]


@pytest.mark.parametrize("approx, exact, words", [
    (-2.2e-4, -5.92e-9, "37,000 times the true value"),  # 2.2e-4 / 5.92e-9 = 37,162
    (-8.3e-11, -5.92e-9, "the true value divided by 71"),  # 5.92e-9 / 8.3e-11 = 71.3
    (-0.12, -0.1587, "24.4% too small"),  # 1 - 0.12 / 0.1587 = 0.2439
    (-0.1591, -0.1587, "0.25% too large"),  # 0.1591 / 0.1587 - 1 = 0.00252
    (-0.3, -0.1, "3.0 times the true value"),
])
def test_how_far_words_follow_the_ratio(approx, exact, words):
    assert how_far(approx, exact) == words


# ---------------------------------------------------------------- steps

def mp_steps(x: float) -> list:
    """The seven values of the source's unfolding at 50 digits (decimal 0.044715)."""
    x = mpmath.mpf(x)
    cube = x**3
    inner = x + mpmath.mpf("0.044715") * cube
    c = mp.sqrt(2 / mp.pi)
    u = c * inner
    t = mp.tanh(u)
    gate = 1 / (1 + mp.exp(-2 * u))  # = (1 + t) / 2 without cancelling
    return [cube, inner, c, u, t, gate, x * gate]


def test_step_table_at_1_is_the_source_and_mpmath():
    """x = 1: the value column is the source's seven lines, and each is mpmath's value rounded to 6 decimals."""
    table = step_table(1.0, tanh_steps(1.0))
    assert table["value"] == SOURCE_STEPS_AT_1
    assert table["value"] == [f"{float(v):.6f}" for v in mp_steps(1.0)]
    assert table["with numbers"][3] == "0.797885 × 1.044715"  # as the source writes it
    assert table["with numbers"][4] == "tanh(0.833562)"
    assert table["with numbers"][6] == "1.000000 × 0.841192"
    assert "full precision" not in table


@pytest.mark.parametrize("x", [1.0, -1.0, 0.3, 2.5, -3.75, -9.5])
def test_step_table_full_precision_against_mpmath(x):
    """Every digit: each full-precision value is within 4 float64 ulps of 50-digit mpmath, and the gate and
    GELU within 4 (1 + 2|u|) ulps: exp(2u) turns u's own rounding into about 2|u| ulps (80 at x = -9.5,
    where the values are 1e-33 and 1 + tanh(u) would have cancelled to 0)."""
    table = digits_table(tanh_steps(x))
    ref = mp_steps(x)
    u = abs(float(ref[3]))
    for i, (shown, value) in enumerate(zip(table["full precision"], ref, strict=True)):
        got = float(shown.replace("−", "-"))
        ulps = 4 * (1 + 2 * u) if i >= 5 else 4
        assert abs(got - value) <= ulps * np.spacing(abs(float(value))), (x, i, shown, value)


def test_negative_operands_are_bracketed():
    table = step_table(-2.0, tanh_steps(-2.0))
    assert table["with numbers"][0] == "(-2.000000)³"
    assert table["with numbers"][1] == "-2.000000 + 0.044715 × (-8.000000)"
    assert table["with numbers"][5].startswith("0.5 × (1 + (-0.9")


def test_six_decimals_and_minus_signs():
    assert six(-0.15880800939) == "-0.158808"
    assert full(-0.1) == "-0.1" and full(2.5e-300) == "2.5e-300"
    with pytest.raises(ValueError, match="7 steps"):
        step_table(1.0, tanh_steps(1.0)[:6])


def test_steps_figure_marks_x_on_the_curve_and_the_gate():
    grid = np.linspace(-4, 4, 9)
    fig = steps_figure(1.0, grid, grid * 0.8, np.full(9, 0.8), gelu_at_x=0.841192, gate_at_x=0.841192)
    curve = by_meta(fig, "gelu_tanh")
    assert curve["line"]["color"] == COLORS["gelu_tanh"]
    gate = by_meta(fig, "gate")
    assert gate["line"]["color"] == NEUTRAL and gate["line"]["dash"] == "dot"
    assert list(by_meta(fig, "marker:gelu_tanh")["x"]) == [1.0]
    assert list(by_meta(fig, "marker:gelu_tanh")["y"]) == [0.841192]
    assert list(by_meta(fig, "marker:gate")["y"]) == [0.841192]


def test_at_x_1_the_gate_and_gelu_marks_both_show():
    """gate(1) = GELU(1) = 0.841192 (mpmath, tanh form): the two marks share a point, so they differ in shape,
    colour and size (a small filled dot inside a larger open diamond, drawn after it), and each names its value
    in the legend."""
    x = 1.0
    gate_1, gelu_1 = mp_steps(x)[5], mp_steps(x)[6]
    assert f"{float(gate_1):.6f}" == f"{float(gelu_1):.6f}" == "0.841192"
    grid = np.linspace(-4, 4, 9)
    fig = steps_figure(x, grid, grid * 0.8, np.full(9, 0.8), gelu_at_x=float(gelu_1), gate_at_x=float(gate_1))
    gate, dot = by_meta(fig, "marker:gate"), by_meta(fig, "marker:gelu_tanh")
    assert (gate["marker"]["symbol"], dot["marker"]["symbol"]) == ("diamond-open", "circle")
    assert gate["marker"]["size"] > dot["marker"]["size"] + 2 * gate["marker"]["line"]["width"]
    assert gate["marker"]["color"] != dot["marker"]["color"]
    metas = [t.get("meta") for t in traces(fig)]
    assert metas.index("marker:gate") < metas.index("marker:gelu_tanh")  # the dot on top
    assert gate["showlegend"] and dot["showlegend"]
    assert gate["name"] == "gate(x) = 0.841192" and dot["name"] == "GELU(x) = 0.841192"
    layout = valid(fig)["layout"]
    assert layout["xaxis"]["range"] == [-4.0, 4.0]
    assert layout["shapes"][0]["x0"] == 1.0  # the guide line at x


def test_chart_range_keeps_x_inside():
    assert chart_range(1.0) == (-4.0, 4.0)
    assert chart_range(-9.5) == (-10.5, 4.0) and chart_range(7.0) == (-4.0, 8.0)
