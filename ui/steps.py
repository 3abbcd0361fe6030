"""Figures and tables of the Step-by-step page: one number through the tanh formula.

Streamlit-free.  ``step_table`` writes each step the way the source text does
("0.797885 × 1.044715"), six decimals; ``digits_table`` gives every float64 digit on request.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

import numpy as np
import plotly.graph_objects as go

import gelu_core
from gelu_core import activations, analysis
from gelu_core.activations import GATES
from gelu_core.analysis import approximation_difference
from gelu_core.steps import tanh_steps
from ui.code_export import Values, fill, number, settings, source
from ui.controls import Control, PageControls
from ui.format import fixed, full, local, readable, sci, six
from ui.i18n import N_, _, form_name, memo
from ui.lesson import Question
from ui.theme import NEUTRAL, base_layout, legend_name, line_trace, marker_trace, quick_figure

# ---------------------------------------------------------------- the controls (each bound to the URL)

BOOK_X = 1.0  # the input chapter 4 of the book unfolds step by step (one click away: the page opens at 2, where
# every step, the last one included, stands apart on the chart)
STEPS_LIMIT = 10.0  # the exact input
STEPS_PICK_LIMIT = 6.0  # the slider: a coarse pick, tenths

CONTROLS = PageControls("steps", (
    Control("number_input", "steps_x", N_("Exact x"), 2.0,
            dict(min_value=-STEPS_LIMIT, max_value=STEPS_LIMIT, step=0.1, format="%.10g",
                 help=N_("Type any number from -10 to 10; the slider follows to the nearest tenth."))),
    Control("slider", "steps_pick", N_("Pick x"), 2.0,
            dict(min_value=-STEPS_PICK_LIMIT, max_value=STEPS_PICK_LIMIT, step=0.1), bound=False),
    Control("toggle", "steps_full", N_("Show every digit (float64)"), False),
))


# ---------------------------------------------------------------- the question (predict, then check)

def _truth(form: str) -> tuple[str, str]:
    t, e = gelu_core.gelu(BOOK_X, approximate="tanh"), gelu_core.gelu(BOOK_X)
    if f"{t:.6f}" == f"{e:.6f}":
        right = CHOICES[2]
    else:
        right = CHOICES[1] if e > t else CHOICES[0]
    words = _("At x = 1 the tanh form gives {tanh} and the exact form {exact}: they differ by {difference}.")
    return right, words.format(
        tanh=fixed(t, 6), exact=fixed(e, 6), difference=sci(e - t))


CHOICES = (N_("the tanh form"), N_("the exact form"), N_("they agree to 6 decimals"))
QUESTION = Question(
    N_("At x = 1, which gives the larger GELU?"), CHOICES, _truth,
    hides="the chart, the two forms' readouts and the step table: they show both forms at x")


STEPS_PICK_VIEW = STEPS_PICK_LIMIT + 1.0  # the widest view the pick slider gives: -7 ... 7


class StepLike(Protocol):
    """What ``gelu_core.steps.Step`` gives: a label, a few words, a float64 value."""

    label: str
    expression: str
    value: float


def _operand(v: float) -> str:
    """A number written after an operator: in parentheses when negative, as on paper."""
    return f"({six(v)})" if v < 0 else six(v)


def _worked(x: float, values: Sequence[float]) -> list[str]:
    """Each step with the previous results filled in, as in the source's unfolded lines."""
    cube, inner, c, u, t, gate, _gelu = values
    return [
        f"{_operand(x)}³",
        f"{six(x)} + {local('0.044715')} × {_operand(cube)}",
        "√(2 / π)",
        f"{six(c)} × {_operand(inner)}",
        f"tanh({six(u)})",
        f"{local('0.5')} × (1 + {_operand(t)})",
        f"{six(x)} × {_operand(gate)}",
    ]


def step_table(x: float, steps: Sequence[StepLike]) -> dict[str, list[str]]:
    """Columns for the step table: what each step is, the numbers that go in, its value (6 decimals)."""
    values = [s.value for s in steps]
    if len(values) != 7:
        raise ValueError(f"expected the 7 steps of gelu_core.tanh_steps, got {len(values)}")
    return {
        "step": [s.label for s in steps],
        "what happens": [_(s.expression) for s in steps],
        "with numbers": _worked(x, values),
        "value": [six(v) for v in values],
    }


def on_screen(table: Mapping[str, list[str]]) -> dict[str, list[str]]:
    """The step table as drawn (st.table reads Markdown): each step's name over what it does, in one cell, so three
    columns fit a phone's width at any x (four did not at x = -10); the CSV keeps the four plain columns."""
    return {
        _("step"): [f"**{name}**  \n{what}" for name, what in zip(table["step"], table["what happens"], strict=True)],
        _("with numbers"): list(table["with numbers"]),
        _("value"): list(table["value"]),
    }


# gelu_core.steps.LINES's words for each step (gelu_core speaks English only), for extraction
EXPRESSIONS = (N_("x · x · x"), N_("add the cubic correction"), N_("a constant"), N_("scale"),
               N_("squash into (−1, 1)"), N_("shift into (0, 1): the gate"), N_("multiply the input by its gate"))


def digits_table(steps: Sequence[StepLike]) -> dict[str, list[str]]:
    """Every digit of each step's float64 value, beside the step's name: a table of its own, two columns, since
    a fifth column of 20-digit numbers would not fit a phone."""
    return {_("step"): [s.label for s in steps], _("full precision"): [full(s.value) for s in steps]}


CURVE_STEP = 0.02  # the curves' spacing in x (401 points over the chart's narrowest range, -4 ... 4)


def curve_grid(x: float) -> np.ndarray:
    """Where the curves are drawn: every multiple of ``CURVE_STEP`` from -7 to 7 (the view of every position of the
    pick slider, ``chart_range`` of -6 ... 6), stretched by whole steps to hold ``chart_range(x)`` too (an exact x
    beyond the pick's ends).  The view is then the axes' range over the same data, so the live layer can set it
    while the pick is dragged and show what the page draws after the rerun.

    >>> g = curve_grid(1.0).tolist(); (g[0], g[-1], len(g)), curve_grid(-9.5)[:2].tolist()
    ((-7.0, 7.0, 701), [-10.5, -10.48])
    """
    lo, hi = chart_range(x)
    widest = STEPS_PICK_VIEW
    first = min(-widest, np.floor(round(lo / CURVE_STEP, 6)) * CURVE_STEP)
    last = max(widest, np.ceil(round(hi / CURVE_STEP, 6)) * CURVE_STEP)
    count = int(round((last - first) / CURVE_STEP)) + 1
    return np.round(first + CURVE_STEP * np.arange(count), 12) + 0.0


def y_view(grid, gelu_values, gate_values, lo: float, hi: float) -> list[float]:
    """The y axis's range for the view lo ... hi: both curves' lowest and highest drawn points inside it, 5 % of
    that apart (the markers sit on the curves, x one unit inside the view), ends rounded to 4 significant digits."""
    grid = np.asarray(grid, dtype=np.float64)
    inside = (grid >= lo) & (grid <= hi)
    ys = np.concatenate([np.asarray(gelu_values, dtype=np.float64)[inside],
                         np.asarray(gate_values, dtype=np.float64)[inside]])
    ys = ys[np.isfinite(ys)]
    bottom, top = (float(ys.min()), float(ys.max())) if ys.size else (-1.0, 1.0)
    pad = 0.05 * ((top - bottom) or 1.0)
    return [float(f"{bottom - pad:.4g}"), float(f"{top + pad:.4g}")]


def marker_name(name: str, value: float) -> str:
    """A probe marker's legend entry: "gate(x) = 0.841192"."""
    return f"{name} = {readable(value)}"


def steps_figure(
    x: float, grid, gelu_values, gate_values, *, gelu_at_x: float, gate_at_x: float, height: int = 420,
    view: tuple[float, float] | None = None,
) -> go.Figure:
    """The tanh GELU curve and its gate over ``grid``, with x marked on both, seen over ``view`` (x's range; the
    grid's ends unless given; y fixed to what the curves do there, ``y_view``, so the live layer's moved markers
    change nothing else).

    The two marks differ in colour, shape and legend entry, so both show where they meet: at x = 1 (and
    wherever GELU = gate) a small filled GELU dot sits inside the gate's open diamond.
    """
    grid = np.asarray(grid, dtype=np.float64)
    gate = line_trace(grid, gate_values, name=legend_name(_("gate = 0.5·(1 + tanh u)")), key="gate", width=2,
                      dash="dot",
                      hover_format=".6f")
    traces = [line_trace(grid, gelu_values, name=_("GELU ({form} form)").format(form=form_name("tanh")),
                         key="gelu_tanh", hover_format=".6f"), gate]
    marks = ((_("gate(x)"), "gate", gate_at_x, "diamond-open", 17), ("GELU(x)", "gelu_tanh", gelu_at_x, "circle", 9))
    for name, key, value, symbol, size in marks:  # the larger, open one first: the dot is drawn inside it
        trace = marker_trace(x, value, name=marker_name(name, value), key=key, symbol=symbol, size=size)
        # the value as the page writes it, held by the point (the live layer writes it there at rest: draw/live.js)
        trace["customdata"] = [readable(value)]
        trace["hovertemplate"] = f"x = %{{x:.6f}}<br>%{{customdata}}<extra>{name}</extra>"
        trace["showlegend"] = True
        if symbol.endswith("-open"):
            trace["marker"]["line"]["width"] = 3
        traces.append(trace)
    lo, hi = view if view is not None else (float(grid.min()), float(grid.max()))
    layout = base_layout("x", _("value"), height=height)
    layout["xaxis"]["range"] = [float(lo), float(hi)]
    layout["yaxis"]["range"] = y_view(grid, gelu_values, gate_values, lo, hi)
    layout["shapes"] = [dict(type="line", xref="x", x0=x, x1=x, yref="paper", y0=0, y1=1, layer="below",
                             line=dict(color=NEUTRAL, width=1, dash="dot"))]
    return quick_figure(traces, layout)


def steps_chart(x: float, steps: Sequence[StepLike] | None = None):
    """The chart at x (``steps``: x's ``tanh_steps``, computed when not given): the curves over every pick's view,
    seen over x's (a drag of the pick sets the view, the data stay)."""
    steps = steps if steps is not None else tanh_steps(x)
    grid = curve_grid(x)
    return steps_figure(x, grid, gelu_core.gelu(grid, "tanh"), gelu_core.gelu_gate(grid, "tanh"),
                        gelu_at_x=steps[-1].value, gate_at_x=steps[-2].value, view=chart_range(x))


def chart_range(x: float, half_width: float = 4.0) -> tuple[float, float]:
    """The x range of the chart: [-4, 4], stretched to keep x one unit inside.

    >>> chart_range(1.0), chart_range(-7.5)
    ((-4.0, 4.0), (-8.5, 4.0))
    """
    return min(-half_width, x - 1.0), max(half_width, x + 1.0)


READOUT = "steps_readout"  # the metrics and the step tables the pick slider moves


def metric_values(x: float, steps: Sequence[StepLike]) -> list[str]:
    """The three metrics' values at x: the tanh form (the last step), exact GELU, and their difference."""
    return [readable(steps[-1].value), readable(gelu_core.gelu(x)), sci(approximation_difference(x, "tanh"))]


@memo(entry_bytes=1024 * 1024)  # 270 KB measured
def _pick_rows() -> tuple:
    """At every position of the pick slider: the metrics, the step table's "with numbers" and "value" cells, the
    digits table's cells and the steps' values, by the page's own calls."""
    from ui.live import grid

    o = CONTROLS["pick"].options
    rows = []
    for x in grid(o["min_value"], o["max_value"], o["step"]).tolist():
        steps = gelu_core.tanh_steps(x)
        table = step_table(x, steps)  # its "with numbers" and "value" are the cells on_screen draws
        rows.append((x, metric_values(x, steps), table["with numbers"], table["value"],
                     digits_table(steps)[_("full precision")], tuple(s.value for s in steps)))
    return tuple(rows)


CHART = "chart_steps"  # the chart's Streamlit key (draw.frame.chart(..., "steps"))
LEGEND = f".st-key-{CHART} .legend .traces .legendtext"  # the legend's entries, in trace order


def _pick_chart() -> dict[str, tuple]:
    """At every position of the pick slider: where the two markers and the dotted line go, their legend entries,
    and the view (``chart_range`` and ``y_view`` over the page's curves, ``curve_grid``: the same at every pick)."""
    rows = _pick_rows()
    xs = [r[0] for r in rows]
    grid = curve_grid(xs[0])
    gelu_values, gate_values = gelu_core.gelu(grid, "tanh"), gelu_core.gelu_gate(grid, "tanh")
    gate_at, gelu_at = [r[5][-2] for r in rows], [r[5][-1] for r in rows]
    views = [chart_range(x) for x in xs]
    return {"x": tuple(xs), "gate": tuple(gate_at), "gelu": tuple(gelu_at),
            "gate_name": tuple(marker_name(_("gate(x)"), v) for v in gate_at),
            "gelu_name": tuple(marker_name("GELU(x)", v) for v in gelu_at),
            "xaxis.range": tuple([float(lo), float(hi)] for lo, hi in views),
            "yaxis.range": tuple(y_view(grid, gelu_values, gate_values, lo, hi) for lo, hi in views)}


def _marker_traces() -> dict:
    """The chart's two markers at every position of the pick slider, as the live layer moves and settles them."""
    c = _pick_chart()
    return {"marker:gate": {"x": c["x"], "y": c["gate"], "name": c["gate_name"],
                            "customdata": [[readable(v)] for v in c["gate"]]},
            "marker:gelu_tanh": {"x": c["x"], "y": c["gelu"], "name": c["gelu_name"],
                                 "customdata": [[readable(v)] for v in c["gelu"]]}}


@memo(entry_bytes=512 * 1024)  # 376 KB measured
def _pick_words() -> dict:
    """The chart's words as the live layer writes them at every position of the pick slider (``ui.describe.live_words``:
    what they say of the markers, and of the curves in the view), the same with the digits table shown or not."""
    from ui.describe import describe, live_words

    xs = _pick_chart()["x"]
    return live_words(steps_chart(xs[0]), "steps", _marker_traces(),
                      steps=[describe(steps_chart(x), keep=False) for x in xs])


@memo(entry_bytes=256 * 1024)  # 160 KB measured (the chart's words packed; made once: ``_pick_words``)
def steps_live_table(show_all: bool) -> dict:
    """The live layer's table for the pick slider: the three metrics, the cells of the step table (and of the
    digits table when it is shown) at every step of the slider's grid (the exact input keeps its value until the
    rerun on release), and the chart: its two markers and dotted line at x, their legend entries (the chart's
    third and fourth), and its view, which follows x beyond -3 ... 3 (the axes' ranges, redrawn by Plotly; the
    curves are drawn over every pick's view).  While the exact input holds a value off the pick's grid (typed, or beyond
    the slider's ends) the layer leaves the page as it is until the pick is moved.  The chart's words: what they say
    of the markers, and of the curves in the view (``ui.describe.live_words``)."""
    from ui.live import live_table

    rows = _pick_rows()
    c = _pick_chart()
    at = f".st-key-{READOUT}"
    values = f"{at} [data-testid='stMetricValue'] p"
    cell = f"{at} [data-testid='stTable'] tbody td:nth-child({{}}) p"  # one match per row, tables in page order
    texts = [(values, n, [r[1][n] for r in rows]) for n in range(3)]
    texts += [(cell.format(2), i, [r[2][i] for r in rows]) for i in range(7)]
    texts += [(cell.format(3), i, [r[3][i] for r in rows]) for i in range(7)]
    if show_all:
        texts += [(cell.format(2), 7 + i, [r[4][i] for r in rows]) for i in range(7)]
    texts += [(LEGEND, 2, c["gate_name"]), (LEGEND, 3, c["gelu_name"])]
    views = {CHART: {"xaxis.range": c["xaxis.range"], "yaxis.range": c["yaxis.range"]}}
    return live_table({"key": CONTROLS["pick"].key, **CONTROLS["pick"].options}, texts=texts, chart_key=CHART,
                      traces=_marker_traces(), lines={0: c["x"]}, views=views, pack=True, steady=[CHART],
                      settle=True, exact=f".st-key-{CONTROLS['x'].key} input", words=_pick_words())


# ---------------------------------------------------------------- the code for this view
# The Step-by-step script: one number through the tanh formula, a line per operation, and the exact form beside it.
#
# Plain Python floats and gelu_core's own code for float64 numpy, as the page computes them (the operations from
# ``gelu_core.steps._unfold``, the gates' formulas, exact GELU from ``activations._gelu_of`` and the difference from
# ``analysis._difference_at_minus``): the seven values and the three readouts come out bit for bit as the page's, so
# even the full-precision column matches.

TEMPLATE = '''
"""GELU Explorer, Step by step: x through GELU's tanh form, one operation a line, and the exact form beside it."""

$imports

# GELU Explorer's own formulas (gelu_core, here for float64 numpy) and number formats (ui/format.py)
$code


x = $x

cube, inner, constant, u, t, gate, gelu = unfold(x)  # each operation's value, as the page's table lists them

steps = {$steps
}
for label, value in steps.items():
    print(f"{label}: {six(value)}$full")$full_note

print(f"tanh form: {readable(gelu)}")
print(f"exact  x·Φ(x): {readable(float(gelu_of(x, phi)))}")  # Φ the standard normal CDF
difference = x if x == 0 else float(difference_at_minus(x, tanh_gate))  # ±0 at ±0, as x · 0
print(f"difference (tanh − exact): {sci(difference)}")
'''

NAMES = ("cube", "inner", "constant", "u", "t", "gate", "gelu")  # the script's name for each value unfold returns


def live_tables(form: str) -> list[tuple[Callable, tuple]]:
    """The live tables a first visit at the controls' defaults draws, in the lesson's ``form``: (table, its
    arguments), each as the page hands it to ``ui.live.as_json`` (``ui.pages.make_live_tables``)."""
    return [(steps_live_table, (CONTROLS["full"].default,))]


def code(values: Values) -> str:
    v = settings(CONTROLS, values)
    labels = [step.label for step in tanh_steps(0.0)]
    full = "  {value!r}" if v["full"] else ""  # "Show every digit": the float64 value in full
    note = "  # six decimals, as the page; then every digit of the float64 value" if v["full"] else ""
    names = {"unfold": gelu_core.steps._unfold, "tanh_gate": GATES["tanh"], "phi": GATES["none"],  # as the page
             "gelu_of": activations._gelu_of, "difference_at_minus": analysis._difference_at_minus}
    return fill(TEMPLATE, x=number(v["x"]), full=full, full_note=note,
                steps="".join(f'\n    "{label}": {name},' for label, name in zip(labels, NAMES, strict=True)),
                code=source(six, readable, backend="numpy", names=names))
