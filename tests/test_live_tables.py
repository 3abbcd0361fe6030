"""The live layer's tables (ui/live, ui/curves.probe_live_table): what the browser shows while a slider is dragged is
what the page itself writes after the rerun at that position.

Reference: the page's own scalar path (ui.curves.readout_texts and probe_readout, whose numbers
tests/test_page_curves.py checks against mpmath at 50 digits), at every position of the slider's grid, compared
exactly (strings equal, floats bit for bit).  The grid's positions: decimal literals (Python's float of the
shortest decimal text), what the slider and the URL hold.  tests/e2e/test_live.py checks the same in a browser.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

import gelu_core
from ui import curves
from ui.curves import CONTROLS as CURVES
from ui.describe import describe
from ui.format import fixed, readable
from ui.live import grid


def unpacked(column: list | dict) -> list:
    """A column as the layer reads it (ui.live._packed's form), position by position (None where nothing is
    written)."""
    if isinstance(column, list):
        return column
    return [None if i < 0 else column["u"][i] for i in column["i"]]


def test_the_grid_is_the_sliders_own_values():
    o = CURVES["x"].options
    xs = grid(o["min_value"], o["max_value"], o["step"])
    want = [float(f"{k / 10:.1f}") for k in range(-100, 101)]  # -10.0, -9.9, ..., 10.0 as decimal literals
    assert xs.tolist() == want and not any(np.signbit(xs[xs == 0]))


@pytest.mark.parametrize("form", gelu_core.APPROXIMATE)
def test_every_row_is_what_the_page_writes_there(form):
    lo, hi = -2.5, 4.0
    table = curves.probe_live_table(form, lo, hi)
    o = CURVES["x"].options
    xs = grid(o["min_value"], o["max_value"], o["step"]).tolist()
    assert (table["control"], table["min"], table["step"], table["count"]) == ("curves_x", -10.0, 0.1, len(xs))
    columns = {(sel, nth): col for sel, nth, col in table["texts"]}
    labels, values = (f".st-key-{curves.READOUT} [data-testid='{t}'] p" for t in ("stMetricLabel", "stMetricValue"))
    key = gelu_core.GELU_FORMS[form]
    markers = table["chart"]["traces"]
    for i, x in enumerate(xs):
        t = curves.readout_texts(x, form)
        r = curves.probe_readout(x, form)
        assert [columns[(labels, n)][i] for n in range(3)] == [t["relu_label"], t["gelu_label"], t["gate_label"]]
        assert [columns[(values, n)][i] for n in range(3)] == [t["relu"], t["gelu"], t["gate"]]
        assert markers["marker:relu"]["x"][i] == x and markers["marker:relu"]["y"][i] == r["relu"]
        assert markers[f"marker:{key}"]["y"][i] == r["gelu"] and table["chart"]["lines"]["0"][i] == x
        assert table["note"][i] == curves.outside_note(x, lo, hi)
    assert sum(n == "" for n in table["note"]) == 66  # -2.5 ... 4.0: the probes on the chart have no note
    json.dumps(table, allow_nan=False)  # plain JSON for the component


def test_the_markers_and_line_are_the_figures_own():
    """The traces and the line the table moves are the figure's (by meta and shape index), and where the table puts
    them for x is where the figure for x draws them."""
    for x in (-1.0, 2.3):
        fig = curves.curves_figure(-3.0, 3.0, 100, "tanh", x).to_plotly_json()
        table = curves.probe_live_table("tanh", -3.0, 3.0)
        i = round((x + 10) / 0.1)
        metas = {t["meta"]: t for t in fig["data"]}
        for meta, spec in table["chart"]["traces"].items():
            drawn = metas[meta]
            assert (spec["x"][i], spec["y"][i]) == (float(np.ravel(drawn["x"])[0]), float(np.ravel(drawn["y"])[0]))
        assert fig["layout"]["shapes"][0]["x0"] == table["chart"]["lines"]["0"][i] == x


@pytest.mark.parametrize("lo, hi, n", [(-3.0, 3.0, 100), (-10.0, 10.0, 2), (0.5, 1.0, 1000), (-10.0, -9.5, 7)])
def test_the_axes_do_not_move_with_the_probe(lo, hi, n):
    """Fixed ranges: x is the chosen range; y holds every curve and both markers at every probe position inside it
    (so the live markers never leave the chart), and is the same wherever the probe is."""
    ranges = set()
    for probe in (-10.0, -1.0, 0.0, 3.7, 10.0):
        layout = curves.curves_figure(lo, hi, n, "none", probe, ["silu"]).to_plotly_json()["layout"]
        assert layout["xaxis"]["range"] == [lo, hi]
        ranges.add(tuple(layout["yaxis"]["range"]))
    assert len(ranges) == 1
    bottom, top = ranges.pop()
    xs = grid(-10.0, 10.0, 0.1)
    inside = xs[(xs >= lo) & (xs <= hi)]
    dense = np.linspace(lo, hi, n)
    for y in (gelu_core.relu(inside), gelu_core.gelu(inside), gelu_core.relu(dense), gelu_core.gelu(dense),
              gelu_core.get_activation("silu")(dense)):
        assert bottom < float(np.min(y)) and float(np.max(y)) < top


@pytest.mark.parametrize("form", gelu_core.APPROXIMATE)
def test_every_slopes_row_is_what_the_page_writes_there(form):
    """Slopes' x: the sentence after its bold words, both gradients and the caption at every step."""
    from ui import derivative
    from ui.derivative import CONTROLS as DERIVATIVE

    table = derivative.gradient_live_table(form)
    o = DERIVATIVE["x"].options
    xs = grid(o["min_value"], o["max_value"], o["step"]).tolist()
    assert (table["control"], table["count"], table["chart"]["traces"]) == ("derivative_x", len(xs), {})
    (sentence, relu, gelu, caption) = table["texts"]
    assert sentence[3] == 1  # the text node after the bold words
    for i, x in enumerate(xs):
        r, g = gelu_core.relu_grad(x), gelu_core.gelu_grad(x, form)
        assert sentence[2][i] == derivative.gradient_sentence_tail(x) and f"x = {x:.2f}".replace("-0.00", "0.00") \
            in sentence[2][i]
        assert (relu[2][i], gelu[2][i], caption[2][i]) == (fixed(r), fixed(g), derivative.gradient_words(r, g))


def test_every_gate_row_is_what_the_page_writes_there():
    """The gate's x: the three metrics (the page's own ui.gate.readout_texts), the probe on Φ and its label at every
    step; the probe and label the table moves are the gate chart's own, as the figure for that x draws them, on
    fixed axes."""
    from ui import gate
    from ui.gate import CONTROLS as GATE

    table = gate.gate_live_table()
    o = GATE["x"].options
    xs = grid(o["min_value"], o["max_value"], o["step"]).tolist()
    assert (table["control"], table["count"], table["chart"]["key"]) == ("gate_x", len(xs), "chart_gate")
    labels, values = (f".st-key-{gate.READOUT} [data-testid='{t}'] p" for t in ("stMetricLabel", "stMetricValue"))
    columns = {(sel, nth): col for sel, nth, col in table["texts"]}
    marker = table["chart"]["traces"]["marker:gelu"]
    for i, x in enumerate(xs):
        assert [(columns[(labels, n)][i], columns[(values, n)][i]) for n in range(3)] == gate.readout_texts(x)
        assert (marker["x"][i], marker["y"][i]) == (x, gelu_core.gelu_gate(x))
    layout_ranges = set()
    for x in (-4.0, -1.3, 0.0, 4.0):
        fig = gate.gate_figure(x).to_plotly_json()
        drawn = {t["meta"]: t for t in fig["data"]}["marker:gelu"]
        i = xs.index(x)
        assert (marker["x"][i], marker["y"][i]) == (float(np.ravel(drawn["x"])[0]), float(np.ravel(drawn["y"])[0]))
        first, eq, pct = (piece[i] for piece in table["chart"]["annotations"]["0"])  # the label, as Plotly splits it
        assert fig["layout"]["annotations"][0]["text"] == f"{first}<br>{eq}<b>{pct}</b>"
        layout_ranges.add((tuple(fig["layout"]["xaxis"]["range"]), tuple(fig["layout"]["yaxis"]["range"])))
    assert layout_ranges == {((-4.0, 4.0), (-0.05, 1.08))}
    json.dumps(table, allow_nan=False)


def test_the_gate_table_shades_the_bell_with_the_curves_own_points_up_to_x():
    """The bell chart at each step: the layer shades the bell curve's first n points, as the server sent them; they
    must be exactly the area the page's figure for that x shades (x and y, compared exactly), ending on x itself,
    and the edge line and label the figure draws there.  Reference: ui.gate.bell_figure at every step (its area
    checked against mpmath in tests/test_ui_explorer_pages.py)."""
    from tests.test_ui_approximations_steps import arr as as_float64
    from ui import gate
    from ui.gate import CONTROLS as GATE

    table = gate.gate_live_table()
    o = GATE["x"].options
    xs = grid(o["min_value"], o["max_value"], o["step"]).tolist()
    (bell,) = table["charts"]
    assert bell["key"] == "chart_gate-bell" and set(bell["fills"]) == {"area"}
    fill = bell["fills"]["area"]
    assert (fill["of"], fill["edge"], len(fill["n"])) == ("gelu", 0, len(xs))
    for i, x in enumerate(xs):
        figure = gate.bell_figure(x)
        fig, traces = figure.to_plotly_json(), {t.meta: t for t in figure.data}
        curve_x, curve_y = (as_float64(getattr(traces["gelu"], a)) for a in ("x", "y"))
        area_x, area_y = (as_float64(getattr(traces["area"], a)) for a in ("x", "y"))
        n = fill["n"][i]
        assert curve_x[n - 1] == x and np.array_equal(curve_x[:n], area_x) and np.array_equal(curve_y[:n], area_y), x
        assert traces["area"].fill == "tozeroy" and fig["layout"]["xaxis"]["range"] == [-4.0, 4.0]
        shape = fig["layout"]["shapes"][0]
        assert (shape["x0"], shape["x1"], shape["y0"], shape["y1"]) == (x, x, 0, area_y[-1])
        first, of, eq, pct = (piece[i] for piece in bell["annotations"]["0"])  # three lines, the number bold
        assert fig["layout"]["annotations"][0]["text"] == f"{first}<br>{of}<br>{eq}<b>{pct}</b>"


def written_words(words: dict, k: int) -> tuple[dict, dict, str | None]:
    """What draw/live.js's ``settleWords`` writes at step k: the summary's named pieces, the named rows' cells, and the
    chart's name (None: left as the page drew it)."""
    pieces, rows = {}, {}
    for meta, mark in words["marks"].items():
        p, a, b = mark["point"], unpacked(mark["x"])[k], unpacked(mark["y"])[k]
        name = unpacked(mark["name"])[k] if mark["name"] is not None else None
        if name is not None:
            pieces[f"{meta}:name"] = name
        pieces[f"{meta}:{p}"] = words["said"].replace("{a}", a).replace("{b}", b)
        rows[f"{meta}:{p}"] = (name, a, b)
    for i, column in words["labels"].items():
        pieces[f"label:{i}"] = unpacked(column)[k]
    for meta, curve in words.get("curves", {}).items():
        pieces[f"{meta}:curve"] = unpacked(curve["curve"])[k]
        rows[f"{meta}:rows"] = [(unpacked(curve["name"])[k], a, b) for a, b in unpacked(curve["rows"])[k]]
    return pieces, rows, unpacked(words["names"])[k] if "names" in words else None


def _words_agree(words: dict, k: int, fig) -> None:
    pieces, rows, name = written_words(words, k)
    d = describe(fig)
    said = {s: text for text, s in d.pieces if s}
    assert {s: t for s, t in pieces.items() if s in said} == {s: said[s] for s in pieces if s in said}
    assert set(said) <= set(pieces)  # every piece the page marks, the layer writes
    table: dict = {}
    for row, s in zip(d.rows, d.said_rows, strict=True):
        if s and s.endswith(":rows"):
            table.setdefault(s, []).append(row)
        elif s:
            table[s] = row
    assert set(table) <= set(rows)
    for s, row in table.items():
        if s.endswith(":rows"):
            assert rows[s] == row
        else:
            assert tuple(c if c is not None else row[0] for c in rows[s]) == row
    assert name in (None, d.name)


@pytest.mark.parametrize("form, lo, hi", [("tanh", -3.0, 3.0), ("none", -10.0, 10.0), ("sigmoid", 0.5, 1.0)])
def test_every_curves_words_row_is_what_the_page_says_there(form, lo, hi):
    """What the layer writes into the chart's words at each step (its marked probes' names and numbers) is what the
    words of the page's figure at that x say (ui/describe.py), where the probe is in the view (elsewhere the page says
    none: a move into or out of the view reruns the whole page, tests/test_parts.py).  Reference: ``describe`` of
    curves_figure at every step, strings compared exactly."""
    table = curves.probe_live_table(form, lo, hi)
    for k, x in enumerate(table["grid"]):
        if lo <= x <= hi:
            _words_agree(table["chart"]["words"], k, curves.curves_figure(lo, hi, 10, form, x))


def test_every_gate_words_row_is_what_the_page_says_there():
    """The gate chart's words (its probe, its label) and the bell chart's (its shaded area's sentence and rows, its
    label, the chart's name) as the layer writes them at each step are those of the page's figures at that x, where
    the area's rows are as many as the page's (ui.gate.bell_words_shape; elsewhere the whole page reruns).  Reference:
    ``describe`` of gate_figure and bell_figure at every step, strings compared exactly."""
    from ui import gate

    table = gate.gate_live_table("none")
    bell = next(c for c in table["charts"] if c["key"] == "chart_gate-bell")
    for k, x in enumerate(table["grid"]):
        _words_agree(table["chart"]["words"], k, gate.gate_figure(x))
        if gate.bell_words_shape(x) == gate.bell_words_shape(0.0):
            _words_agree(bell["words"], k, gate.bell_figure(x))


@pytest.mark.parametrize("show_all", [False, True])
def test_every_steps_words_row_is_what_the_page_says_there(show_all):
    """Step by step's chart words as the layer writes them at each pick (the markers' names and numbers, and the curves'
    sentences and rows in the view, which follows x beyond -3 ... 3) are those of the page's chart at that x.
    Reference: ``describe`` of ui.steps.steps_chart at every pick, strings compared exactly."""
    from ui import steps

    table = steps.steps_live_table(show_all)
    for k, x in enumerate(table["grid"]):
        _words_agree(table["chart"]["words"], k, steps.steps_chart(x))


@pytest.mark.parametrize("show_all", [False, True])
def test_every_steps_row_is_what_the_page_writes_there(show_all):
    """Step by step's pick: the three metrics (ui.steps.metric_values) and every cell the page's step table and
    digits table (ui.steps.on_screen, step_table, digits_table) write at each step of the pick's grid (the layer
    holds still while the exact input is off that grid: tests/e2e/test_live.py)."""
    from ui import steps
    from ui.steps import CONTROLS as STEPS

    table = steps.steps_live_table(show_all)
    o = STEPS["pick"].options
    xs = grid(o["min_value"], o["max_value"], o["step"]).tolist()
    assert (table["control"], table["count"], sorted(table["chart"]["traces"])) == (
        "steps_pick", 121, ["marker:gate", "marker:gelu_tanh"])  # the chart: test_every_steps_chart_row_is_...
    assert table["exact"] == ".st-key-steps_x input"  # the page's own x: while it is off the grid, nothing is written
    values = f".st-key-{steps.READOUT} [data-testid='stMetricValue'] p"
    cell = f".st-key-{steps.READOUT} [data-testid='stTable'] tbody td:nth-child({{}}) p"
    columns = {(sel, nth): unpacked(col) for sel, nth, col in table["texts"] if sel != steps.LEGEND}
    assert len(columns) == 3 + 14 + 7 * show_all
    for i, x in enumerate(xs):
        s = gelu_core.tanh_steps(x)
        drawn = steps.on_screen(steps.step_table(x, s))
        assert [columns[(values, n)][i] for n in range(3)] == steps.metric_values(x, s)
        assert [columns[(cell.format(2), r)][i] for r in range(7)] == drawn["with numbers"]
        assert [columns[(cell.format(3), r)][i] for r in range(7)] == drawn["value"]
        if show_all:
            assert [columns[(cell.format(2), 7 + r)][i] for r in range(7)] == steps.digits_table(s)["full precision"]
    json.dumps(table, allow_nan=False)


def _steps_chart_at(table: dict, k: int) -> dict:
    """What the live layer shows of Step by step's chart at the pick's k-th step: the markers (by meta), the dotted
    line's x, the legend's third and fourth entries and the view."""
    from ui.steps import CHART, LEGEND

    chart = table["chart"]
    legend = {nth: unpacked(col)[k] for sel, nth, col, *_ in table["texts"] if sel == LEGEND}
    view = {key: unpacked(col)[k] for key, col in table["views"][CHART].items()}
    return {"markers": {m: (t["x"][k], t["y"][k]) for m, t in chart["traces"].items()},
            "line": chart["lines"]["0"][k], "legend": [legend[2], legend[3]],
            "view": [view["xaxis.range"], view["yaxis.range"]]}


def _steps_chart_drawn(spec: dict) -> dict:
    """The same, from the figure the page drew (its markers' one point, its shape, its traces' names, its axes)."""
    from ui.describe import values

    by_meta = {t.get("meta"): t for t in spec["data"]}
    markers = {m: (float(values(by_meta[m]["x"])[0]), float(values(by_meta[m]["y"])[0]))
               for m in ("marker:gate", "marker:gelu_tanh")}
    layout = spec["layout"]
    return {"markers": markers, "line": layout["shapes"][0]["x0"],
            "legend": [by_meta["marker:gate"]["name"], by_meta["marker:gelu_tanh"]["name"]],
            "view": [layout["xaxis"]["range"], layout["yaxis"]["range"]]}


def test_every_steps_chart_row_is_the_figure_the_page_draws_there():
    """Step by step's chart follows the pick: at every step of its grid the markers, the dotted line, their legend
    entries and the view (x's range and y's) are those of the figure the page builds for that x (its own calls:
    curve_grid, chart_range, steps_figure, with tanh_steps' values); the view is -4 ... 4 while x is within 3 of
    0 and keeps x one unit inside beyond, and the curves are drawn over every view the pick gives."""
    from ui import steps
    from ui.steps import CONTROLS as STEPS

    table = steps.steps_live_table(False)
    o = STEPS["pick"].options
    xs = grid(o["min_value"], o["max_value"], o["step"]).tolist()
    assert table["chart"]["key"] == steps.CHART and set(table["views"]) == {steps.CHART}
    for k, x in enumerate(xs):
        s = gelu_core.tanh_steps(x)
        g = steps.curve_grid(x)
        fig = steps.steps_figure(x, g, gelu_core.gelu(g, "tanh"), gelu_core.gelu_gate(g, "tanh"),
                                 gelu_at_x=s[-1].value, gate_at_x=s[-2].value, view=steps.chart_range(x))
        drawn = _steps_chart_drawn(json.loads(fig.to_json()))
        assert _steps_chart_at(table, k) == drawn, x
        lo, hi = drawn["view"][0]
        assert (lo, hi) == (min(-4.0, x - 1.0), max(4.0, x + 1.0)) and g[0] <= lo and hi <= g[-1]
        assert drawn["legend"] == [f"gate(x) = {readable(s[-2].value)}", f"GELU(x) = {readable(s[-1].value)}"]
    json.dumps(table, allow_nan=False)


@pytest.mark.parametrize("x", [-6.0, -3.7, -0.8, 1.0, 3.0, 4.6, 6.0])
def test_the_steps_chart_row_is_what_a_rerun_at_that_pick_draws(app, x):
    """The reference is the page's own rerun: the pick set to x and released (AppTest), its chart against the
    table's row for x."""
    from tests.conftest import chart_spec, open_page
    from ui import steps

    at = open_page(app, "pages/steps.py")
    at.slider(key="steps_pick").set_value(x).run()
    assert not at.exception and at.number_input(key="steps_x").value == x
    k = round((x + 6.0) / 0.1)
    assert _steps_chart_at(steps.steps_live_table(False), k) == _steps_chart_drawn(chart_spec(at, 0))


def test_every_approximations_range_row_is_what_the_page_writes_there():
    """Approximations' range (two thumbs): at every pair of positions, lo before hi, the three charts' axes are
    ui.approximations.view_axes (as Plotly.relayout keys) and the two captions are the page's own forms_words and
    errors_words; a pair the page answers with a note (lo = hi; the thumbs do not cross) leaves everything as it is.
    The axes are the figures' own (view_figures), and the curves they view are gelu_core's over the slider's span."""
    from gelu_core.analysis import worst_error
    from ui import approximations as A
    from ui.approximations import CONTROLS as APPROXIMATIONS

    table = A.range_live_table()
    o = APPROXIMATIONS["range"].options
    ends = grid(o["min_value"], o["max_value"], o["step"]).tolist()
    n = len(ends)
    assert (table["control"], table["thumbs"], table["count"]) == ("approximations_range", 2, n)
    (forms_sel, _, forms_col), (errors_sel, _, errors_col) = table["texts"]
    assert (forms_sel, errors_sel) == (A.FORMS_CAPTION, A.ERRORS_CAPTION_AT)
    forms_text, errors_text = unpacked(forms_col), unpacked(errors_col)
    views = {key: {name: unpacked(col) for name, col in cols.items()} for key, cols in table["views"].items()}
    assert set(views) == {f"chart_{name}" for name in A.VIEW_CHARTS}
    worst = {a: tuple(worst_error(a)) for a in ("tanh", "sigmoid")}
    for i, lo in enumerate(ends):
        for j, hi in enumerate(ends):
            k = i * n + j
            if j <= i:
                assert forms_text[k] is errors_text[k] is None
                assert all(v is None for cols in views.values() for v in (c[k] for c in cols.values()))
                continue
            assert forms_text[k] == A.forms_words(lo, hi) and errors_text[k] == A.errors_words(lo)
            for name in A.VIEW_CHARTS:
                axes = A.view_axes(name, lo, hi)
                got = {key: col[k] for key, col in views[f"chart_{name}"].items()}
                assert got == {f"{a}.{key}": v for a, patch in axes.items() for key, v in patch.items()
                               if key in ("range", "tickvals", "ticktext")}
    for lo, hi in ((-6.0, 6.0), (-12.0, 2.0), (-1.0, -0.5), (11.5, 12.0)):
        figures = A.view_figures(lo, hi, worst)
        for name, fig in figures.items():
            layout = fig.to_plotly_json()["layout"]
            for axis, patch in A.view_axes(name, lo, hi).items():
                assert {key: layout[axis][key] for key in patch} == patch
    json.dumps(table, allow_nan=False)


def test_the_range_views_curves_gelu_core_computes_over_the_whole_span():
    """The three forms' curves: gelu_core's GELU and approximation error at every x of the view grid, -12 … 12 in
    steps of 0.025 (each 0.5 step of the range on it, so both ends of any range are drawn points); the forms chart's
    y holds every form inside the range with a margin, and each error chart's top is above its largest error there."""
    from gelu_core.analysis import approximation_error
    from ui import approximations as A
    from ui.describe import values

    x = A.view_grid()
    assert (x[0], x[-1], len(x)) == (-12.0, 12.0, 961) and set(grid(-12.0, 12.0, 0.5)) <= set(x.tolist())
    fig = A.view_figures(-2.0, 3.5, {})
    data = {t["meta"]: t for t in fig["approximations-forms"].to_plotly_json()["data"]}
    for a in gelu_core.APPROXIMATE:
        assert np.array_equal(values(data[A.FORM_KEYS[a]]["y"]), gelu_core.gelu(x, a))
    for kind, name in enumerate(("approximations-absolute", "approximations-relative")):
        lines = [t for t in fig[name].to_plotly_json()["data"] if "lines" in t["mode"]]
        for t, a in zip(lines, ("tanh", "sigmoid"), strict=True):
            err = approximation_error(x, a)[kind]
            drawn = values(t["y"])
            assert np.array_equal(np.isnan(drawn), ~(err > 0)) and np.array_equal(drawn[err > 0], err[err > 0])
    for lo, hi in ((-6.0, 6.0), (-1.0, -0.5), (-12.0, -11.5), (0.0, 12.0)):
        inside = (x >= lo) & (x <= hi)
        bottom, top = A.view_axes("approximations-forms", lo, hi)["yaxis"]["range"]
        ys = np.concatenate([gelu_core.gelu(x[inside], a) for a in gelu_core.APPROXIMATE])
        assert bottom < ys.min() and ys.max() < top
        for kind, name in enumerate(("approximations-absolute", "approximations-relative")):
            log_top = A.view_axes(name, lo, hi)["yaxis"]["range"][1]
            worst = max(np.nanmax(approximation_error(x[inside], a)[kind]) for a in ("tanh", "sigmoid"))
            assert np.log10(worst) < log_top


@pytest.mark.parametrize("i", range(5))
def test_every_home_input_row_is_what_the_page_writes_there(i):
    """Home's i-th input: at every step of its grid (-20 … 20 by 0.5) its row of the table as the page draws it
    (ui.home.on_screen of five_inputs_table with that input among the defaults), and its marker on ReLU and on tanh
    GELU and the stub between them where overview_figure draws them (the i-th point, the i-th segment)."""
    from ui import home
    from ui.describe import values
    from ui.home import CONTROLS as HOME
    from ui.home import HOME_DEFAULT_INPUTS

    table = home.input_live_table(i)
    o = HOME[f"x{i + 1}"].options
    xs = grid(o["min_value"], o["max_value"], o["step"]).tolist()
    assert (table["control"], table["count"], table["kind"], table["chart"]["key"]) == (f"home_x{i + 1}", 81,
                                                                                         "number", "chart_home")
    assert table["values"] == [f"{x:.2f}".replace("-0.00", "0.00") for x in xs]  # as the field writes them
    columns = [col for sel, nth, col in table["texts"]]
    assert all(nth == i for _, nth, _ in table["texts"])
    traces = table["chart"]["traces"]
    for k, x in enumerate(xs):
        inputs = list(HOME_DEFAULT_INPUTS)
        inputs[i] = x
        row = {name: cells[i] for name, cells in home.on_screen(home.five_inputs_table(inputs)).items()}
        assert [col[k] for col in columns] == list(row.values())
        if k % 8 == 0:  # the figure's own points, at every 8th step
            drawn = {t["meta"]: t for t in home.overview_figure(inputs).to_plotly_json()["data"]}
            for meta in ("marker:relu", "marker:gelu_tanh"):
                assert traces[meta]["point"] == i
                assert (traces[meta]["x"][k], traces[meta]["y"][k]) == (values(drawn[meta]["x"])[i],
                                                                         values(drawn[meta]["y"])[i])
            gap = traces["gap"]
            stub = drawn["gap"]["y"][3 * i:3 * i + 2]  # x, x, None per input
            assert gap["segment"] == i and [gap["y0"][k], gap["y1"][k]] == stub and drawn["gap"]["x"][3 * i] == x
    json.dumps(table, allow_nan=False)


def _joint_picks(joint: dict, steps: list[int]) -> dict | None:
    """The picks draw/live.js makes among the five inputs standing at these grid steps (-1: a field off the grid, no
    picks): the lowest and highest input, the first with the lowest GELU, the most negative and the smallest
    positive one (step + 1; 0 where there is none): the script's ``picks``, line for line."""
    if any(s < 0 for s in steps):
        return None
    xs = [joint_grid()[s] for s in steps]
    lo = hi = low = 0
    neg = pos = -1
    for j, s in enumerate(steps):
        lo = j if xs[j] < xs[lo] else lo
        hi = j if xs[j] > xs[hi] else hi
        low = j if joint["gelu"][s] < joint["gelu"][steps[low]] else low
        neg = j if xs[j] < 0 and (neg < 0 or xs[j] < xs[neg]) else neg
        pos = j if xs[j] > 0 and (pos < 0 or xs[j] < xs[pos]) else pos
    return {"pair": joint["lo"][steps[lo]] * joint["highs"] + joint["hi"][steps[hi]], "max": steps[hi],
            "low": steps[low], "neg": 0 if neg < 0 else steps[neg] + 1, "pos": 0 if pos < 0 else steps[pos] + 1}


def joint_grid() -> list[float]:
    from ui.home import CONTROLS as HOME

    o = HOME["x1"].options
    return grid(o["min_value"], o["max_value"], o["step"]).tolist()


def _home_shared_at(table: dict, inputs) -> dict:
    """What the live layer shows of what depends on all five inputs, the five at ``inputs`` (on the grid): the chart's
    view (its relayout keys), the class of margins it is drawn in (its y tick labels' width, ``tick_width``, which
    the script's ``tickWidth`` mirrors), and the paragraphs' text nodes (by selector, match, child)."""
    from ui import home

    joint = table["joint"]
    p = _joint_picks(joint, [joint_grid().index(x) for x in inputs])
    view = {key: unpacked(col)[p[pick]] for key, (pick, col) in joint["views"]["chart_home"].items()}
    assert joint["steady"] == {"chart_home": home.HELD_WIDTH}
    return {"view": view, "margins": home.tick_width(view),
            "prose": {(sel, nth, *child): unpacked(col)[p[pick]] for sel, nth, (pick, col), *child in joint["texts"]}}


def _home_shared_drawn(layout: dict, markdown: str) -> dict:
    """The same from what the page drew: the chart's layout read at those keys (the class: how many characters its
    highest y tick label has), and the paragraphs' Markdown split into the text nodes it renders (text, bold, text,
    bold, text; then the second paragraph)."""
    from ui import home

    def get(name):
        value = layout
        for part in name.split("."):
            m = re.fullmatch(r"(\w+)\[(\d+)\]", part)
            value = value[m[1]][int(m[2])] if m else value[part]
        return value

    first, second = markdown.split("\n\n")
    a, b, c, d, e = first.split("**")
    at = f".st-key-{home.PROSE} p"
    return {"view": {name: get(name) for name in home.overview_view([-1.0]).keys()},
            "margins": max(len(text) for v, text in zip(layout["yaxis"]["tickvals"], layout["yaxis"]["ticktext"],
                                                        strict=True) if v <= layout["yaxis"]["range"][1]),
            "prose": {(at, 0, 0): a, (f"{at} strong", 0): b, (at, 0, 2): c, (f"{at} strong", 1): d, (at, 0, 4): e,
                      (at, 1): second}}


@pytest.mark.parametrize("others", [(-2.0, -1.0, 0.0, 1.0, 2.0), (0.5, 1.0, 2.0, 3.0, 4.0),
                                    (-20.0, -0.5, 0.0, 1.0, 20.0), (-3.0, -2.0, -1.0, -0.5, -0.5)])
@pytest.mark.parametrize("i", [0, 3])
@pytest.mark.parametrize("form", ["tanh", "none"])
def test_every_home_view_and_paragraph_row_is_what_the_page_draws_there(i, others, form):
    """Home's i-th input, the other four at ``others``, in either form of the lesson: at every step of its grid the
    chart's view the layer picks from the joint table (x and y ranges, y ticks, the label's place, visibility and
    text) is overview_figure's layout for those five inputs, its margin class the width of that layout's y tick
    labels, and the paragraphs' text nodes are the page's prose for them.  The same table for every input and any
    values (the page sends it once)."""
    from ui import home

    table = home.input_live_table(i, form)
    assert table["joint"] == home.input_live_table((i + 1) % 5, form)["joint"]
    for x in joint_grid():
        inputs = [*others[:i], x, *others[i + 1:]]
        layout = json.loads(home.overview_figure(inputs, form).to_json())["layout"]
        assert _home_shared_at(table, inputs) == _home_shared_drawn(layout, home.prose(inputs, form)), x
    json.dumps(table, allow_nan=False)


@pytest.mark.parametrize("form", ["tanh", "none"])
def test_the_joint_table_picks_the_pages_view_and_paragraphs_for_any_five_inputs(form):
    """The reference: ui.home.overview_view and prose_pieces, the page's own, for 1,500 sets of five inputs on the grid
    (seeded: anywhere on it, and crowded round zero with repeats, so that the lowest, the highest and the lowest GELU
    tie) against what the layer picks from the joint table; a field off the grid gives no picks."""
    import random

    from ui import home

    table = home.input_live_table(0, form)
    xs, rng = joint_grid(), random.Random(3)
    crowded = [xs.index(v) for v in (-1.5, -1.0, -0.5, 0.0, 0.5, 1.0)]
    sets = ([[rng.randrange(len(xs)) for _ in range(5)] for _ in range(1000)]
            + [[rng.choice(crowded) for _ in range(5)] for _ in range(500)])
    for steps in sets:
        inputs = [xs[s] for s in steps]
        got = _home_shared_at(table, inputs)
        view = json.loads(json.dumps(home.overview_view(inputs, form=form)))
        assert got["view"] == view, inputs
        assert list(got["prose"].values()) == home.prose_pieces(inputs, form=form), inputs
    assert _joint_picks(table["joint"], [3, 4, -1, 5, 6]) is None


@pytest.mark.parametrize("i, x", [(0, -6.5), (1, -0.5), (1, 3.0), (4, 14.5), (2, -1.0)])
def test_the_home_row_is_what_a_rerun_at_that_input_draws(app, i, x):
    """The reference is the page's own rerun: the i-th input set to x (AppTest), its chart's layout and its
    paragraphs against the row for x of the table the page sent before, at the defaults."""
    from tests.conftest import chart_spec, show_me
    from ui import home
    from ui.home import CONTROLS as HOME
    from ui.home import HOME_DEFAULT_INPUTS

    at = show_me(app.run())
    table = home.input_live_table(i)
    at.number_input(key=HOME[f"x{i + 1}"].key).set_value(x).run()
    assert not at.exception
    markdown = next(m.value for m in at.markdown if m.value.startswith(("Look at", "None of your inputs")))
    inputs = [*HOME_DEFAULT_INPUTS[:i], x, *HOME_DEFAULT_INPUTS[i + 1:]]
    assert _home_shared_at(table, inputs) == _home_shared_drawn(chart_spec(at, 0)["layout"], markdown)


@pytest.mark.parametrize("table, args", [
    ("curves.probe_live_table", ("tanh", -2.5, 4.0)), ("derivative.gradient_live_table", ("none",)),
    ("gate.gate_live_table", ()), ("steps.steps_live_table", (True,)), ("approximations.range_live_table", ()),
])
def test_the_layer_gets_each_table_as_it_is(table, args):
    """What the layer parses (ui.live.as_json: JSON, UTF-8) is the table, every value equal (floats bit for bit:
    JSON keeps the shortest repr that reads back to the same double)."""
    import importlib

    from ui.live import as_json

    module, name = table.split(".")
    function = getattr(importlib.import_module(f"ui.{module}"), name)
    assert json.loads(as_json(function, *args).decode("utf-8")) == json.loads(json.dumps(function(*args)))


@pytest.mark.parametrize("form", ["tanh", "none"])
def test_the_layer_gets_each_home_table_as_it_is(form):
    """Home's table as the page sends it (ui.home.input_live_json) reads back as ``input_live_table``."""
    from ui import home

    for i in range(5):
        assert json.loads(home.input_live_json(i, form).decode("utf-8")) == json.loads(json.dumps(
            home.input_live_table(i, form)))


def test_a_packed_column_is_the_same_whether_its_values_are_one_object_or_equal_copies():
    """ui.live._packed keys each distinct object once; the reference is the column of equal copies (every value a
    fresh object, as json.loads gives) and the JSON it must read back as: the same distinct values, in the order of
    their first place, and -1 for None."""
    import copy

    from ui.live import _packed

    view = {"xaxis.range": [-3.0, 3.0]}
    other = {"xaxis.range": [-3.5, 3.0]}
    shared = [view] * 40 + [None] * 5 + [other] * 30 + [view] * 6
    copies = [copy.deepcopy(v) for v in shared]
    assert _packed(shared) == _packed(copies) == {"u": [view, other], "i": [0] * 40 + [-1] * 5 + [1] * 30 + [0] * 6}
    kinds = _packed([123456789, 123456789.0] * 30)["u"]  # equal in Python, two values in JSON
    assert [type(v) for v in kinds] == [int, float]
    assert _packed(["a", "b"]) == ["a", "b"]  # no shorter packed: the list itself
