"""Builders of the Home, Curves, Gate and Derivative pages and the controls registry, without Streamlit.

References: mpmath at 50 digits for every number a builder puts on screen (compared in float64 with a
relative tolerance of 1e-13, far wider than gelu_core's 8(1 + x²) ulp bound and far tighter than any digit
shown); plotly's own validator for every figure (the builders skip it for speed).
"""

from __future__ import annotations

import base64
import math

import mpmath as mp
import numpy as np
import plotly.graph_objects as go
import pytest

import gelu_core
from ui import approximations, controls, curves, derivative, ffn, gate, home, steps
from ui.format import fixed, percent
from ui.pages import PAGES
from ui.theme import COLORS, DASHES

mp.mp.dps = 50
REL = 1e-13  # float64 result vs 50-digit reference


# ----------------------------------------------------------------- references (mpmath, 50 digits)

def phi_ref(x) -> mp.mpf:
    """Phi(x), the standard normal CDF."""
    return mp.ncdf(mp.mpf(x))


def gelu_ref(x, form: str = "exact") -> mp.mpf:
    """GELU in each form, straight from its textbook formula, with the decimal constants 0.044715 and 1.702."""
    x = mp.mpf(x)
    if form in ("exact", "none"):
        return x * mp.ncdf(x)
    if form == "tanh":
        return x * gate_ref(x, "tanh")
    return x * gate_ref(x, "sigmoid")


def gate_ref(x, form: str = "exact") -> mp.mpf:
    x = mp.mpf(x)
    if form in ("exact", "none"):
        return mp.ncdf(x)
    if form == "tanh":  # (1 + tanh u) / 2 written as 1 / (1 + exp(-2u)): no cancellation far left (x = -20)
        return 1 / (1 + mp.exp(-2 * mp.sqrt(2 / mp.pi) * (x + mp.mpf("0.044715") * x**3)))
    return 1 / (1 + mp.exp(-mp.mpf("1.702") * x))


def grad_ref(x, form: str = "exact") -> mp.mpf:
    """d/dx GELU by mpmath's numerical differentiation at 50 digits."""
    return mp.diff(lambda t: gelu_ref(t, form), mp.mpf(x))


def close(a, b, rel: float = REL, abs_: float = 1e-300) -> bool:
    return abs(float(a) - float(b)) <= rel * abs(float(b)) + abs_


def shown(value: mp.mpf, digits: int = 4) -> str:
    """How a correctly rounded value reads on screen (the ASCII minus the widgets print, no "-0.0000")."""
    text = f"{float(value):.{digits}f}"
    if float(text) == 0:
        text = text.lstrip("-")
    return text


# ----------------------------------------------------------------- plotly helpers

def arr(v) -> np.ndarray:
    """A trace's x or y as float array: plain lists (None -> nan), numpy arrays, or plotly 6's base64 typed arrays."""
    if isinstance(v, dict) and "bdata" in v:
        a = np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
        return a.reshape(v["shape"]) if "shape" in v and isinstance(v["shape"], list) else a
    return np.array([np.nan if e is None else e for e in np.ravel(np.asarray(v, dtype=object))], dtype=float)


def traces(fig) -> list[dict]:
    return fig["data"] if isinstance(fig, dict) else fig.to_dict()["data"]


def by_meta(fig, meta: str) -> list[dict]:
    return [t for t in traces(fig) if t.get("meta") == meta]


def one(fig, meta: str) -> dict:
    found = by_meta(fig, meta)
    assert len(found) == 1, f"expected one trace with meta {meta!r}, found {len(found)}"
    return found[0]


def valid(fig: go.Figure) -> None:
    """plotly's validator accepts the figure (raises ValueError on any bad property)."""
    go.Figure(fig.to_dict())


def test_arr_decodes_plotly_typed_arrays():
    """Reference: numpy's own bytes of a known array round-trip through the decoder."""
    a = np.array([1.5, -2.25, 3.0])
    encoded = {"dtype": "f8", "bdata": base64.b64encode(a.tobytes()).decode()}
    assert arr(encoded).tolist() == a.tolist()
    assert np.isnan(arr([1.0, None])[1])


# ----------------------------------------------------------------- controls

def test_kwargs_name_each_widgets_initial_value_argument():
    assert curves.CONTROLS["x"].kwargs()["value"] == -1.0
    assert curves.CONTROLS["more"].kwargs()["default"] == []
    assert curves.CONTROLS["form"].kwargs()["default"] == "tanh"
    assert ffn.CONTROLS["act"].kwargs()["index"] == controls.LAB_ACTIVATIONS.index("gelu_tanh")
    assert approximations.CONTROLS["view"].kwargs()["tabs"] == approximations.APPROXIMATIONS_VIEWS
    for page in (p.controls for p in PAGES.values() if p.controls):
        for c in page:
            kw = c.kwargs()
            assert kw["key"] == c.key and kw.get("bind") == ("query-params" if c.bound else None)


def test_the_table_of_pages_has_one_row_per_script_in_pages():
    """ui.pages against the folder it lists (reference: the files in pages/): a script without a row, or a row
    without a script, fails here; one page is the default, and it is Home."""
    from pathlib import Path

    from ui.pages import PAGES

    folder = Path(__file__).resolve().parent.parent / "pages"
    assert sorted(PAGES) == sorted(p.stem for p in folder.glob("*.py"))
    assert all((folder.parent / row.file).is_file() for row in PAGES.values())
    assert [row.url_path for row in PAGES.values() if row.default] == ["home"]


def test_every_key_carries_its_page_prefix_and_is_unique():
    """Every page's own control is keyed ``<page>_<name>``, each key once; the lesson's GELU form is the one
    control that several pages share, under its own key."""
    from ui.controls import LESSON_FORM

    keys = [c.key for page in (p.controls for p in PAGES.values() if p.controls) for c in page if c != LESSON_FORM]
    assert len(keys) == len(set(keys)) and LESSON_FORM.key not in keys
    for page in (p.controls for p in PAGES.values() if p.controls):
        assert all(c.key.startswith(f"{page.page}_") for c in page if c != LESSON_FORM)


def test_defaults_lie_inside_their_widgets_bounds():
    for page in (p.controls for p in PAGES.values() if p.controls):
        for c in page:
            lo, hi = c.options.get("min_value"), c.options.get("max_value")
            values = c.default if isinstance(c.default, (list, tuple)) else [c.default]
            if lo is not None and c.widget in ("slider", "number_input"):
                assert all(lo <= v <= hi for v in values), c.key
            if "options" in c.options:
                assert all(v in c.options["options"] for v in values), c.key


@pytest.mark.parametrize("control, values", [
    (curves.CONTROLS["x"], ["1.5"]), (curves.CONTROLS["x"], ["-10"]), (curves.CONTROLS["range"], ["-4", "3.5"]),
    (curves.CONTROLS["n"], ["250"]), (curves.CONTROLS["more"], ["Leaky ReLU", "SiLU"]), (curves.CONTROLS["more"], [""]),
    (curves.CONTROLS["form"], ["exact"]), (curves.CONTROLS["points"], ["1, 2"]), (steps.CONTROLS["full"], ["True"]),
    (ffn.CONTROLS["act"], ["GELU exact"]), (ffn.CONTROLS["d_model"], ["1600"]),
    (approximations.CONTROLS["view"], ["Three forms"]),
])
def test_url_values_a_control_takes(control, values):
    """Reference: what Streamlit's frontend writes into the URL for these values (seen in a real browser)."""
    assert control.url_problem(values) is None


@pytest.mark.parametrize("control, values, words", [
    (curves.CONTROLS["x"], ["inf"], "not between"), (curves.CONTROLS["x"], ["99"], "not between"),
    (curves.CONTROLS["x"], ["abc"], "not a number"), (curves.CONTROLS["x"], [""], "empty"),
    (curves.CONTROLS["x"], ["1", "2"], "one value"), (curves.CONTROLS["range"], ["2"], "2 values"),
    (curves.CONTROLS["n"], ["1.5"], "whole number"), (ffn.CONTROLS["d_model"], ["1e400"], "whole number"),
    (ffn.CONTROLS["seed"], ["9" * 400], "too long"),
    (ffn.CONTROLS["seed"], ["2147483648"], "not between"), (ffn.CONTROLS["seed"], ["-inf"], "whole number"),
    (curves.CONTROLS["form"], [""], "not one of"), (curves.CONTROLS["form"], ["cubic"], "not one of"),
    (curves.CONTROLS["more"], ["SiLU", "Bogus"], "not one of"), (curves.CONTROLS["more"], ["SiLU", "SiLU"], "twice"),
    (steps.CONTROLS["full"], ["maybe"], "true or false"), (curves.CONTROLS["points"], ["1" * 201], "longer"),
    (approximations.CONTROLS["view"], ["Nonsense"], "not one of"),
])
def test_url_values_a_control_refuses(control, values, words):
    assert words in control.url_problem(values)


@pytest.mark.parametrize("text, expected", [
    ("-2, -1, 0, 1, 2", [-2.0, -1.0, 0.0, 1.0, 2.0]),
    ("−0.5;1e-3  7", [-0.5, 0.001, 7.0]),
    (" 3 ", [3.0]),
])
def test_parse_points_reads_what_people_type(text, expected):
    assert controls.parse_points(text) == expected


@pytest.mark.parametrize("text, fragment", [
    ("", "Type a few numbers"),
    ("1, two, 3", "“two” is not a number"),
    ("1, nan", "too large"),
    ("1e400", "too large"),
    (", ".join(["1"] * 26), "at most 25"),
])
def test_parse_points_explains_bad_text(text, fragment):
    with pytest.raises(ValueError, match=fragment):
        controls.parse_points(text)


def test_fmt_and_percent_read_well():
    assert fixed(-0.15880800939172324) == "-0.1588"
    assert fixed(-0.00001) == "0.0000"
    assert percent(float(phi_ref(2))) == "97.7%"
    assert percent(0.5) == "50.0%"
    assert percent(float(phi_ref(-3))) == "0.13%"
    assert percent(float(phi_ref(4))) == "99.9968%"
    assert percent(1.0) == "100%"


# ----------------------------------------------------------------- home

def test_five_inputs_table_against_mpmath_and_the_source():
    """Reference: mpmath (50 digits); the source's rounded figures: tanh GELU [-0.0454, -0.1588, 0, 0.8412, 1.9546].
    Each column names its form; the lesson's form first, then the other one beside it."""
    xs = [-2.0, -1.0, 0.0, 1.0, 2.0]
    for form, other in (("tanh", "exact"), ("none", "tanh")):
        table = home.five_inputs_table(xs, form)
        word = {"none": "exact"}.get(form, form)
        assert list(table) == ["x", "ReLU(x)", f"gate ({word})", f"GELU ({word})", f"GELU ({other})"]
        for i, x in enumerate(xs):
            assert table["ReLU(x)"][i] == max(0.0, x)
            assert close(table[f"GELU ({word})"][i], gelu_ref(x, form))
            assert close(table[f"GELU ({other})"][i], gelu_ref(x, {"exact": "none"}.get(other, other)))
            # the gate beside GELU is that form's gate: the row reads GELU(x) = x · gate(x)
            assert close(table[f"gate ({word})"][i], gate_ref(x, form))
    table = home.five_inputs_table(xs, "tanh")
    assert [f"{v:.4f}" for v in table["GELU (tanh)"]] == ["-0.0454", "-0.1588", "0.0000", "0.8412", "1.9546"]
    assert [f"{v:.4f}" for v in table["GELU (exact)"]] == ["-0.0455", "-0.1587", "0.0000", "0.8413", "1.9545"]
    assert [f"{v:.4f}" for v in table["gate (tanh)"]][3:] == ["0.8412", "0.9773"]  # not Φ: 0.8413, 0.9772


@pytest.mark.parametrize("xs", [[-2.0, -1.0, 0.0, 1.0, 2.0], [-0.5, 3.0, 3.0, 4.0, 5.0], [0.0, 1.5, 2.0, 3.0, 4.0],
                                [-3.0, -2.0, -1.0, -0.5, -0.25], [-20.0, -0.25, 0.0, 1.0, 20.0]])
def test_home_prose_follows_the_inputs(xs):
    """The paragraph names the most negative input and the smallest positive one, with mpmath's 4-decimal values;
    a GELU too small for 4 decimals (x = -20: about -5.5e-88) in 4 significant digits, never as 0.0000 beside
    "does not erase it"."""
    text = home.prose(xs)
    words = text.replace("**", "")
    negative = [x for x in xs if x < 0]
    positive = [x for x in xs if x > 0]

    def four(v):
        return shown(v) if abs(v) >= 5e-5 else f"{float(v):.3e}"

    if negative:
        n = min(negative)
        assert f"x = {fixed(n, 2)}" in text
        assert f"**{four(gelu_ref(n, 'tanh'))}** (tanh form; the exact form {four(gelu_ref(n))})" in text
        assert "does not erase it" in text and gelu_ref(n, "tanh") != 0 and "**0.0000**" not in text
    else:
        assert "None of your inputs is negative" in words
    if positive:
        p = min(positive)
        assert f"{shown(gelu_ref(p, 'tanh'))} of {fixed(p, 2)}" in text
    else:
        assert "positive side" not in text and "None of your inputs is positive" in words


def test_overview_figure_marks_every_input_in_the_house_colours():
    xs = [-2.0, -1.0, 0.0, 1.0, 2.5]
    fig = home.overview_figure(xs)
    valid(fig)
    for key in ("relu", "gelu", "gelu_tanh"):
        t = one(fig, key)
        assert t["line"]["color"] == COLORS[key] and t["line"]["dash"] == DASHES[key]
        assert arr(t["x"]).min() <= -3 and arr(t["x"]).max() >= 3
    relu_marks, tanh_marks = by_meta(fig, "marker:relu")[0], by_meta(fig, "marker:gelu_tanh")[0]
    assert arr(relu_marks["x"]).tolist() == xs and arr(tanh_marks["x"]).tolist() == xs
    assert all(close(y, gelu_ref(x, "tanh")) for x, y in zip(xs, arr(tanh_marks["y"]), strict=True))
    assert tanh_marks["marker"]["color"] == COLORS["gelu_tanh"]
    # the most negative output is named (mpmath's value), with an arrow to its point
    note = fig.layout.annotations[0]
    assert note.text == f"GELU (tanh)<br>{shown(gelu_ref(-1, 'tanh'))}<br>ReLU 0" == "GELU (tanh)<br>-0.1588<br>ReLU 0"
    assert (note.x, note.showarrow, note.axref, note.ayref) == (-1.0, True, "x", "y")
    assert close(note.y, gelu_ref(-1, "tanh"))


@pytest.mark.parametrize("xs", [[-2.0, -1.0, 0.0, 1.0, 2.0], [-2.5, -0.25, 20.0], [-12.0, -11.5], [-0.5, 6.0],
                                [-20.0, 20.0]])
def test_overview_label_sits_under_the_dip_on_one_side_of_zero(xs):
    """The label's box starts below every curve (the lowest is GELU's dip, -0.1700 exact and tanh, mpmath) and
    never straddles x = 0: it ends left of 0 when the negative side holds a third of the chart, else starts right
    of it.  No gridline below 0 can cross it; the y range leaves a fifth of the chart under the dip."""
    fig = home.overview_figure(xs)
    note = fig.layout.annotations[0]
    lo, hi = fig.layout.xaxis.range
    bottom, top = fig.layout.yaxis.range
    dip = min(gelu_ref(mp.findroot(lambda t, f=f: grad_ref(t, f), -0.75), f) for f in ("exact", "tanh"))
    assert note.yanchor == "top" and note.ay < dip < 0 and bottom < note.ay
    if -lo >= (hi - lo) / 3:
        assert note.xanchor == "right" and note.ax < 0
    else:
        assert note.xanchor == "left" and note.ax > 0
    assert min(fig.layout.yaxis.tickvals) == 0 and not fig.layout.xaxis.showgrid
    assert (dip - bottom) >= 0.2 * (top - bottom)


def test_overview_names_no_point_when_no_output_is_negative():
    """The label is there but hidden (the live layer shows it when an input is moved below 0), and the words for
    screen readers do not read it."""
    from ui.describe import describe

    fig = home.overview_figure([0.0, 1.0, 2.0, 3.0, 4.0])
    assert [a.visible for a in fig.layout.annotations] == [False]
    assert "Labels on the chart" not in describe(fig).summary
    assert "Labels on the chart: GELU (tanh) -0.1588 ReLU 0." in describe(home.overview_figure([-1.0, 1.0])).summary


def test_overview_range_grows_to_hold_far_inputs():
    fig = home.overview_figure([-8.0, 0.0, 6.0])
    x = arr(one(fig, "relu")["x"])
    assert x.min() <= -8 and x.max() >= 6


# ----------------------------------------------------------------- curves

def test_curves_grid_is_torch_linspace():
    """Reference: torch.linspace(-3, 3, 100) in float64, as in the source; equal to 2 ulp of the endpoints (1.3e-15)."""
    torch = pytest.importorskip("torch")
    fig = curves.curves_figure(-3.0, 3.0, 100, "tanh", -1.0)
    x = arr(one(fig, "relu")["x"])
    ref = torch.linspace(-3, 3, 100, dtype=torch.float64).numpy()
    assert x.size == 100
    np.testing.assert_allclose(x, ref, rtol=0, atol=2 * np.spacing(3.0))


@pytest.mark.parametrize("form, key", [("none", "gelu"), ("tanh", "gelu_tanh"), ("sigmoid", "gelu_sigmoid")])
def test_curves_figure_draws_the_chosen_form_and_marks_the_probe(form, key):
    fig = curves.curves_figure(-3.0, 3.0, 50, form, 0.7)
    valid(fig)
    t = one(fig, key)
    assert t["line"]["color"] == COLORS[key]
    xs, ys = arr(t["x"]), arr(t["y"])
    for i in (0, 17, 49):
        assert close(ys[i], gelu_ref(xs[i], form))
    probe = one(fig, f"marker:{key}")
    assert arr(probe["x"]).tolist() == [0.7] and close(arr(probe["y"])[0], gelu_ref(0.7, form))
    assert arr(one(fig, "marker:relu")["y"]).tolist() == [0.7]
    assert fig.layout.shapes[0].x0 == 0.7  # the probe's guide line


def test_curves_overlays_keep_their_colours_and_parameters():
    fig = curves.curves_figure(-3.0, 3.0, 40, "none", 0.0, ["elu", "gelu", "leaky_relu", "silu"],
                               {"leaky_relu": {"negative_slope": 0.2}, "elu": {"alpha": 2.0}})
    valid(fig)
    assert len(by_meta(fig, "gelu")) == 1  # the overlay equal to the main form is not drawn twice
    leaky, elu = one(fig, "leaky_relu"), one(fig, "elu")
    assert leaky["name"] == "Leaky ReLU (a = 0.2)" and elu["name"] == "ELU (α = 2)"
    assert leaky["line"]["color"] == COLORS["leaky_relu"] and one(fig, "silu")["line"]["color"] == COLORS["silu"]
    x = arr(leaky["x"])
    np.testing.assert_allclose(arr(leaky["y"]), np.where(x > 0, x, 0.2 * x), rtol=0, atol=0)
    xe, ye = arr(elu["x"]), arr(elu["y"])
    for i in (0, 10):
        assert close(ye[i], 2 * mp.expm1(mp.mpf(xe[i])))


def test_probe_readout_against_mpmath():
    """The source: GELU(-1) ≈ -0.1588 and the gate at 1 ≈ 0.841192 (tanh form)."""
    r = curves.probe_readout(-1.0, "tanh")
    assert r["relu"] == 0.0
    assert close(r["gelu"], gelu_ref(-1, "tanh")) and f"{r['gelu']:.4f}" == "-0.1588"
    assert close(curves.probe_readout(1.0, "tanh")["gate"], gate_ref(1, "tanh"))
    assert f"{curves.probe_readout(1.0, 'tanh')['gate']:.6f}" == "0.841192"


def test_values_table_columns_and_values():
    main, gate_, more = curves.values_tables([-2.0, 0.5], "sigmoid", ["softplus", "gelu_sigmoid"])
    assert list(main) == ["x", "ReLU(x)", "GELU(x), sigmoid"] and list(gate_) == ["x", "gate(x), sigmoid"]
    assert list(more) == ["x", "Softplus"]
    table = main | gate_ | more
    assert close(table["GELU(x), sigmoid"][0], gelu_ref(-2, "sigmoid"))
    assert close(table["gate(x), sigmoid"][1], gate_ref(0.5, "sigmoid"))
    assert close(table["Softplus"][0], mp.log1p(mp.exp(-2)))


def test_overlays_come_two_to_a_table():
    """Every overlay but the form already drawn, in registry order, two to a table beside x (a phone's width),
    after ReLU with the GELU form and the gate."""
    tables = curves.values_tables([1.0], "tanh", list(gelu_core.ACTIVATIONS))
    shown = [name for t in tables[2:] for name in list(t)[1:]]
    expected = [gelu_core.get_activation(n).short for n in gelu_core.ACTIVATIONS if n not in ("relu", "gelu_tanh")]
    assert [name.split(" (")[0] for name in shown] == expected
    assert all(list(t)[0] == "x" and len(t) <= 3 for t in tables)


# ----------------------------------------------------------------- gate

def test_normal_pdf_against_mpmath():
    for x in (-4.0, -1.0, 0.0, 0.3, 2.0):
        assert close(gelu_core.normal_pdf(x), mp.npdf(x))


def test_bouncer_readouts_are_the_lessons_numbers():
    """The lesson: ~97 % at 2, half at 0, ~0.1 % at -3. Reference: mpmath ncdf."""
    got = dict(gate.bouncer_readouts())
    assert set(got) == {2.0, 0.0, -3.0}
    for x, p in got.items():
        assert close(p, phi_ref(x))
    assert percent(got[2.0]) == "97.7%" and percent(got[-3.0]) == "0.13%"


@pytest.mark.parametrize("x", [-4.0, -1.3, 0.0, 1.0, 3.99])
def test_bell_figure_shades_exactly_the_area_left_of_x(x):
    fig = gate.bell_figure(x)
    valid(fig)
    area = one(fig, "area")
    ax, ay = arr(area["x"]), arr(area["y"])
    assert ax.max() == x or (x == -4.0 and ax.tolist() == [-4.0])
    assert area["fill"] == "tozeroy"
    # the shaded polygon's area (trapezoids on a 0.02 grid) is Phi(x) less the tail below -4, to 1e-4
    assert abs(np.sum(np.diff(ax) * (ay[1:] + ay[:-1]) / 2) - float(phi_ref(x) - phi_ref(-4))) < 1e-4
    note = fig.layout.annotations[0]
    assert percent(float(phi_ref(x))) in note.text
    # above the bell's peak phi(0) (mpmath), between the gridlines at 0.4 and 0.5
    assert (note.x, note.y, note.xanchor, fig.layout.yaxis.dtick) == (-3.9, 0.45, "left", 0.1) and mp.npdf(0) < 0.4


def test_gate_figure_draws_three_gates_in_their_colours():
    fig = gate.gate_figure(2.0)
    valid(fig)
    for key, form in (("gelu", "exact"), ("gelu_tanh", "tanh"), ("gelu_sigmoid", "sigmoid")):
        t = one(fig, key)
        assert t["line"]["color"] == COLORS[key]
        i = 250
        assert close(arr(t["y"])[i], gate_ref(arr(t["x"])[i], form))
    m = one(fig, "marker:gelu")
    assert close(arr(m["y"])[0], phi_ref(2))
    assert f"<b>{percent(float(phi_ref(2)))}</b>" in fig.layout.annotations[0].text == "Φ(2.00)<br>= <b>97.7%</b>"


@pytest.mark.parametrize("x", [-4.0, -3.0, -0.5, 0.0, 0.1, 1.0, 4.0])
def test_gate_percentage_sits_where_no_gate_reaches(x):
    """x <= 0: at the left edge, between the gridlines at 0.8 and 1.0; x > 0: at the right edge, between 0 and 0.2.
    Every gate rises and passes 0.5 at x = 0 (mpmath), so left of 0 it stays below 0.8 and right of 0 above 0.2:
    text that starts at its edge and stops short of x = 0 (seen in the browser) touches no gate."""
    fig = gate.gate_figure(x)
    note = fig.layout.annotations[0]
    assert percent(float(phi_ref(x))) in note.text and fig.layout.yaxis.dtick == 0.2
    assert all(gate_ref(0, form) == mp.mpf(0.5) for form in ("exact", "tanh", "sigmoid"))
    if x <= 0:
        assert (note.xanchor, note.y, note.yanchor) == ("left", 0.9, "middle") and note.x <= -3.8
    else:
        assert (note.xanchor, note.y, note.yanchor) == ("right", 0.1, "middle") and note.x >= 3.8


def test_gate_caption_follows_the_cards():
    """The sentence quotes each card's percentage (mpmath ncdf) and judges from it: a door that opens at all
    for -3 is never slammed; 2 short of 100 % is not waved through completely."""
    text = gate.bouncer_words(gate.bouncer_readouts())
    assert f"gets a sliver ({percent(float(phi_ref(-3)))})" in text and 0 < phi_ref(-3) < 0.01
    assert f"not waved through completely ({percent(float(phi_ref(2)))})" in text and phi_ref(2) < 1
    assert text.startswith("He never slams the door")
    assert gate.bouncer_words([(-40.0, 0.0), (40.0, 1.0)]) == ("A card of -40 finds the door shut (0%); 40 is waved "
                                                             "through completely (100%).")


def test_generalised_gate_at_standard_values_is_gelu():
    fig, gap = gate.generalised_figure(0.0, 1.0)
    valid(fig)
    t = [t for t in traces(fig) if t["name"].startswith("x · gate")][0]
    assert t["name"].endswith("= GELU")
    xs, ys = arr(t["x"]), arr(t["y"])
    for i in (0, 200, 450):
        assert close(ys[i], gelu_ref(xs[i]))
    # largest gap from ReLU is |GELU's minimum| = 0.169971 (reference: mpmath, minimum of t * Phi(t))
    t_min = mp.findroot(lambda t: mp.ncdf(t) + t * mp.npdf(t), -0.75)
    assert abs(gap - float(-t_min * mp.ncdf(t_min))) < 1e-4  # grid of 0.01 around the minimum


@pytest.mark.parametrize("sigma", [0.5, 0.25, 0.1])
def test_generalised_gap_shrinks_with_sigma(sigma):
    """With mu = 0, x Phi(x / sigma) - ReLU(x) = sigma (t Phi(t) - ReLU(t)): the gap is 0.169971 sigma."""
    _, gap = gate.generalised_figure(0.0, sigma)
    assert abs(gap - 0.16997120747990 * sigma) < 2e-4


def test_sigma_zero_gives_relu_exactly():
    fig, gap = gate.generalised_figure(0.0, 0.0)
    t = [t for t in traces(fig) if t["name"].startswith("x · gate")][0]
    xs = arr(t["x"])
    assert np.array_equal(arr(t["y"]), np.maximum(xs, 0.0)) and gap == 0.0


# ----------------------------------------------------------------- slopes

def test_landmarks_against_mpmath():
    """Reference: GELU' = Phi + x phi has its root at -0.751792 (minimum -0.169971); GELU'' = phi (2 - x^2) = 0
    at ±sqrt 2, where GELU' = -0.128904 and 1.128904."""
    m = derivative.landmarks("none")
    root = mp.findroot(lambda t: mp.ncdf(t) + t * mp.npdf(t), -0.75)
    assert abs(m.minimum.x - float(root)) < 1e-12 and close(m.minimum.value, root * mp.ncdf(root), rel=1e-12)
    r2 = mp.sqrt(2)
    assert close(m.steepest_down.x, -r2) and close(m.steepest_up.x, r2)
    assert close(m.steepest_down.value, mp.ncdf(-r2) - r2 * mp.npdf(r2))
    assert close(m.steepest_up.value, mp.ncdf(r2) + r2 * mp.npdf(r2))
    assert (fixed(m.minimum.x), fixed(m.minimum.value)) == ("-0.7518", "-0.1700")
    assert (fixed(m.steepest_down.value), fixed(m.steepest_up.value)) == ("-0.1289", "1.1289")


@pytest.mark.parametrize("form", ["tanh", "sigmoid"])
def test_landmarks_of_the_approximations_against_mpmath(form):
    m = derivative.landmarks(form)
    assert abs(grad_ref(m.minimum.x, form)) < 1e-12
    second = mp.diff(lambda t: gelu_ref(t, form), mp.mpf(m.steepest_up.x), 2)
    assert abs(second) < 1e-6  # bounded search to xatol 1e-12: GELU'' vanishes to the search's accuracy
    assert close(m.steepest_up.value, grad_ref(m.steepest_up.x, form), rel=1e-12)


@pytest.mark.parametrize("h", [0.01, 0.001, 0.5])
def test_nudge_against_mpmath(h):
    """The lesson's nudge: from -0.01 to +0.01 ReLU' jumps 0 -> 1, GELU' moves 0.4920 -> 0.5080."""
    n = derivative.nudge("none", h)
    assert n.relu == (0.0, 1.0)
    assert close(n.gelu[0], grad_ref(-h), rel=1e-12) and close(n.gelu[1], grad_ref(h), rel=1e-12)
    if h == 0.01:
        assert (fixed(n.gelu[0]), fixed(n.gelu[1])) == ("0.4920", "0.5080")


def test_relu_step_has_a_gap_at_zero_and_the_convention_markers():
    fig = derivative.slopes_figure("none", 0.01)
    valid(fig)
    step = one(fig, "relu")
    xs, ys = arr(step["x"]), arr(step["y"])
    gap = int(np.flatnonzero(np.isnan(xs))[0])
    assert xs[gap - 1] == 0.0 and ys[gap - 1] == 0.0  # relu'(0) = 0 sits on the left piece
    assert xs[gap + 1] > 0 and ys[gap + 1] == 1.0
    assert np.all(ys[:gap] == 0) and np.all(ys[gap + 1:] == 1)
    markers = [t for t in by_meta(fig, "marker:relu") if arr(t["x"]).tolist() == [0.0]]
    symbols = {arr(t["y"])[0]: t["marker"]["symbol"] for t in markers}
    assert symbols == {0.0: "circle", 1.0: "circle-open"}


@pytest.mark.parametrize("form, key", [("none", "gelu"), ("tanh", "gelu_tanh"), ("sigmoid", "gelu_sigmoid")])
def test_slopes_figure_draws_gelu_prime_and_marks_landmarks(form, key):
    fig = derivative.slopes_figure(form, 0.2)
    valid(fig)
    t = one(fig, key)
    assert t["line"]["color"] == COLORS[key]
    xs, ys = arr(t["x"]), arr(t["y"])
    for i in (50, 200, 333):
        assert close(ys[i], grad_ref(xs[i], form), rel=1e-11)
    nudges = [m for m in by_meta(fig, f"marker:{key}") if m["marker"]["symbol"] == "diamond"][0]
    assert arr(nudges["x"]).tolist() == [-0.2, 0.2]
    m = derivative.landmarks(form)
    marked = {tuple(arr(tr["x"]).tolist()) for tr in by_meta(fig, f"marker:{key}")}
    assert (m.minimum.x,) in marked and (m.steepest_down.x, m.steepest_up.x) in marked
    mini = derivative.gelu_minimum_figure(form)
    valid(mini)
    dot = one(mini, f"marker:{key}")
    assert arr(dot["x"]).tolist() == [m.minimum.x] and math.isclose(arr(dot["y"])[0], m.minimum.value)
