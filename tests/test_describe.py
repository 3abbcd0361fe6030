"""ui/describe.py: each chart's name, summary and table come from the very traces it draws.

Reference: the figures' own arrays (decoded here with numpy from Plotly's typed-array spec, and compared with the
arrays the figure builders were given) and gelu_core's values at the probe; the summary's numbers are those
values through ui.format.fixed, compared as strings.
"""

from __future__ import annotations

import numpy as np
import pytest

import gelu_core
from ui import curves, derivative, gate, home
from ui.describe import as_html, describe, number, plain, values
from ui.theme import typed_array


def test_number_writes_what_the_page_writes():
    assert [number(v) for v in (-0.158808, -1.0, 0.0, -1e-9, 2.5, 1.5e-7, 2.5e6, float("nan"))] == \
        ["-0.1588", "-1", "0", "-1.000e-09", "2.5", "1.500e-07", "2.500e+06", "none"]


@pytest.mark.parametrize("array", [np.linspace(-3, 3, 7), np.arange(5, dtype=np.int64), np.zeros(3, np.float32)])
def test_values_reads_plotlys_typed_arrays(array):
    assert np.array_equal(values(typed_array(array)), array) and np.array_equal(values(list(array)), array)


def test_the_curves_summary_says_the_probe_and_each_curves_extremes():
    d = describe(curves.curves_figure(-3.0, 3.0, 100, "tanh", -1.0, [], {}))
    gelu_at = float(gelu_core.gelu(np.array([-1.0]), "tanh")[0])
    assert number(gelu_at) == "-0.1588"  # the source texts' value
    assert f"at x = -1 is {number(gelu_at)}" in d.summary and "at x = -1 is 0." in d.summary
    assert d.name == "Chart: activation(x) against x, showing ReLU, GELU (tanh, GPT-2)"
    assert "ReLU, for x from -3 to 3: lowest 0 at -3, highest 3 at 3." in d.summary


@pytest.mark.parametrize("fig", [home.overview_figure([-2.0, -1.0, 0.0, 1.0, 2.0]), gate.gate_figure(1.0),
                                 gate.bell_figure(-0.5), derivative.slopes_figure("none", 0.1),
                                 derivative.gelu_minimum_figure("tanh")], ids=["home", "gate", "bell", "slopes", "min"])
def test_every_marked_point_is_said_and_every_trace_is_tabled(fig):
    d = describe(fig)
    for trace in fig.data:
        x, y = values(trace.x), values(trace.y)
        if trace.mode == "markers" and x.size <= 6:
            for a, b in zip(x, y, strict=True):
                assert f"= {number(a)} is {number(b)}" in d.summary, (trace.name, a, b)
        if x.size:
            assert any(row[0] == " ".join(str(trace.name).split()) for row in d.rows), trace.name
    assert d.summary and d.name.startswith("Chart: ")


def test_the_minimum_is_the_drawn_curves_minimum():
    fig = derivative.gelu_minimum_figure("none")
    d = describe(fig)
    curve = next(t for t in fig.data if t.name.startswith("GELU") and t.mode == "lines")
    x, y = values(curve.x), values(curve.y)
    assert f"lowest {number(y.min())} at {number(x[np.argmin(y)])}" in d.summary


def test_the_html_escapes_and_links_the_summary():
    d = describe(curves.curves_figure(-3.0, 3.0, 10, "none", 0.5, [], {}))
    d.name += " <b>&"
    out = as_html(d, "chart name/1", announce=False)
    assert "id='gelu-chart-summary-chart-name-1'" in out and "data-announce='false'" in out
    assert "<b>&" not in out and "&lt;b&gt;&amp;" in out
    assert out.count("<tr") == len(d.rows) + 1


def test_what_a_move_changes_is_marked_for_the_live_layer_and_reads_as_the_summary():
    """The marked points' names and numbers and the labels are pieces of their own (what the live layer writes at rest:
    ``live_words``); joined, the pieces are the summary.  Reference: the gate chart at x = 1 (gelu_core's Φ(1), through
    ``number``) and its own label's text."""
    fig = gate.gate_figure(1.0)
    d = describe(fig)
    assert "".join(text for text, _said in d.pieces) == d.summary
    said = {s: text for text, s in d.pieces if s}
    assert said == {"marker:gelu:name": "Φ(1.00)",
                    "marker:gelu:0": f"at x = 1 is {number(gelu_core.gelu_gate(1.0))}",
                    "label:0": plain(fig.layout.annotations[0].text)}
    marked = [row for row, s in zip(d.rows, d.said_rows, strict=True) if s == "marker:gelu:0"]
    assert marked == [("Φ(1.00)", "1", number(gelu_core.gelu_gate(1.0)))]
    out = as_html(d, "gate", said=True)
    assert "<span data-said='marker:gelu:0'>at x = 1 is 0.8413</span>" in out
    assert out.count("<tr data-said='marker:gelu:0'>") == 1
    assert "data-said" not in as_html(d, "gate")  # a chart whose words no layer writes: none named


def test_a_chart_viewing_part_of_its_curves_says_the_part_it_shows():
    """Approximations' charts hold their curves over -12 … 12 and show the range: the summary and the table speak of
    the points inside the x axis's range (the forms' values there, gelu_core's), nothing outside it."""
    from ui import approximations

    d = describe(approximations.view_figures(-2.0, 3.5, {"tanh": (2.7, 4.7e-4)})["approximations-forms"])
    x = approximations.view_grid()
    inside = x[(x >= -2.0) & (x <= 3.5)]
    exact = gelu_core.gelu(inside)
    low = int(np.argmin(exact))
    assert (f"exact x·Φ(x), for x from -2 to 3.5: lowest {number(exact[low])} at {number(inside[low])}, highest "
            f"{number(exact[-1])} at 3.5.") in d.summary
    assert {float(row[1]) for row in d.rows} <= set(inside.tolist()) and {row[1] for row in d.rows} >= {"-2", "3.5"}
    marks = describe(approximations.view_figures(-1.0, 1.0, {"tanh": (2.7, 4.7e-4)})["approximations-absolute"])
    assert "largest error" not in marks.summary  # the worst points, at ±2.7, lie outside the view
