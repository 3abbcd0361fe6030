"""Figures, tables and sentences of the Approximations page: the three GELU forms, their error, and what PyTorch
computes.

Streamlit-free: arrays in, Plotly figures, narrow tables (columns that fit a phone) and sentences with their
numbers out.  Figures are built on the theme's fast path (plain dicts, no plotly validation: tests validate with
``go.Figure(fig.to_dict())``).
Error axes are logarithmic and cut at ``ERROR_FLOOR``: smaller errors, and the
exact zeros a log axis cannot show (drawn as gaps), run off the bottom of the
chart, and the page's caption says so.  No text is written inside an error chart
(on a phone every spot holds a curve or a gridline): the 100 % line is named by
its tick, torch's cliff in the legend.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

import numpy as np
import plotly.graph_objects as go

import gelu_core
from gelu_core import APPROXIMATE, gelu
from gelu_core.activations import GATES
from gelu_core.analysis import approximation_error, worst_error
from ui import plain
from ui.code_export import Values, fill, number, settings, source
from ui.controls import LESSON_FORM, Control, PageControls
from ui.format import count, fixed, percent, power_of_ten, sci
from ui.i18n import N_, SOURCE, _, current, form_name, memo
from ui.lesson import Question
from ui.theme import COLORS, NEUTRAL, QuickFigure, base_layout, line_trace, marker_trace, plain_spec, quick_figure

# ---------------------------------------------------------------- the controls (each bound to the URL)

APPROXIMATIONS_VIEWS = ("Three forms", "What PyTorch computes")
DTYPES = ("float32", "bfloat16", "float16")

CONTROLS = PageControls("approximations", (
    Control("tabs", "approximations_view", "View", APPROXIMATIONS_VIEWS[0], dict(options=APPROXIMATIONS_VIEWS)),
    Control("slider", "approximations_range", N_("Range of x"), (-6.0, 6.0),
            dict(min_value=-12.0, max_value=12.0, step=0.5,
                 help=N_("Stretch it to -12 to see the tails, where relative error grows."))),
    LESSON_FORM,  # the tab "What PyTorch computes" shows PyTorch's exact form for sigmoid, which it lacks
    Control("multiselect", "approximations_fw_dtypes", N_("Number formats"), ["float32", "bfloat16"],
            dict(options=DTYPES)),
    Control("slider", "approximations_fw_range", N_("Range of x"), (-12.0, 4.0),
            dict(min_value=-12.0, max_value=12.0, step=0.5)),
), renamed={**{f"approx_{name}": f"approximations_{name}"  # an older link's keys start "approx_"
               for name in ("view", "range", "fw_dtypes", "fw_range")},
            "approx_fw_form": LESSON_FORM.key, "approximations_fw_form": LESSON_FORM.key})  # and name the form here


# ---------------------------------------------------------------- the question (predict, then check)

def _truth(form: str) -> tuple[str, str]:
    from gelu_core.analysis import worst_error

    _where, worst = worst_error("tanh")
    right = CHOICES[0] if worst > 0.01 else CHOICES[1] if worst > 1e-4 else CHOICES[2]
    return right, _("The tanh form is at most {error} away from exact GELU, anywhere on the number line.").format(
        error=sci(worst))


CHOICES = (N_("more than 0.01"), N_("between 0.0001 and 0.01"), N_("less than 0.0001"))


QUESTION = Question(
    N_("How far is the tanh form from exact GELU, at worst?"),
    CHOICES, _truth,
    hides="the three forms' chart, their errors and what PyTorch computes")


def torch_form(form: str) -> str:
    """PyTorch's ``approximate=`` for the lesson's form: its own "none" or "tanh"; the sigmoid form, which PyTorch
    lacks, as its exact one.

    >>> torch_form("tanh"), torch_form("sigmoid")
    ('tanh', 'none')
    """
    return form if form in ("none", "tanh") else "none"


FORM_KEYS = {"none": "gelu", "tanh": "gelu_tanh", "sigmoid": "gelu_sigmoid"}  # approximate -> palette key
FORM_LABELS = {"none": N_("exact  x·Φ(x)"), "tanh": N_("tanh form"), "sigmoid": N_("sigmoid form")}
ERROR_FLOOR = 1e-12
# Points per curve: about one per pixel of a desktop chart's width, smooth to the eye (801, twice as many, made a
# move of the range cost the browser 1.6x Plotly's own floor for three charts, 401 makes it 1.45x).
POINTS = 401
TABLE_X = (-12.0, -8.0, -6.0, -5.5, -5.0, -3.0, -1.0, 1.0, 3.0)  # the digit tables' inputs: exact in every dtype

# Number formats are not functions: each gets a colour of its own, none of the three GELU forms' colours.
DTYPE_COLORS = {"float32": COLORS["sigmoid"], "bfloat16": COLORS["tanh"], "float16": COLORS["silu"]}
# Far left every dtype's error is 100 %, one line on another: a dash each, so the lower ones show through.
DTYPE_DASHES = {"float32": "solid", "bfloat16": "dash", "float16": "dot"}


class FrameworkRun(Protocol):
    """What the framework builders read from ``gelu_core.frameworks.FrameworkGELU``."""

    dtype: str
    x: np.ndarray
    exact: np.ndarray
    torch_value: np.ndarray
    ours: np.ndarray
    torch_rel_error: np.ndarray
    ours_rel_error: np.ndarray


def _positive(y) -> np.ndarray:
    """float64 copy with non-positive and non-finite values as NaN: a gap on a log axis, not a dive."""
    y = np.array(y, dtype=np.float64)
    y[~(np.isfinite(y) & (y > 0))] = np.nan
    return y


def _log_yaxis(layout: dict, top: float, *, percent_at_1: bool = False) -> None:
    """A log y axis from ERROR_FLOOR to above ``top``, a tick every few powers of ten, always one at 1; the tick
    at 1 reads "100 %" on a relative-error chart (its reference line then needs no label inside the chart)."""
    top = max(float(top), 10 * ERROR_FLOOR)
    lo, hi = int(np.log10(ERROR_FLOOR)), float(np.log10(top)) + 0.5
    step = next(s for s in (2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 50, 100) if (hi - lo) / s <= 7)
    powers = [k for k in range(-step * (-lo // step), int(hi) + 1, step) if k >= lo]
    text = ["100 %" if k == 0 and percent_at_1 else power_of_ten(k) if k else "1" for k in powers]
    layout["yaxis"].update(type="log", range=[lo, hi], zeroline=False, tickvals=[10.0**k for k in powers],
                           ticktext=text)


def _hline(y: float, colour: str, *, dash: str = "dot", width: float = 1) -> dict:
    return dict(type="line", xref="paper", x0=0, x1=1, yref="y", y0=y, y1=y, layer="below",
                line=dict(color=colour, width=width, dash=dash))


def _vline(x: float, colour: str) -> dict:
    return dict(type="line", yref="paper", y0=0, y1=1, xref="x", x0=x, x1=x, layer="below",
                line=dict(color=colour, width=1, dash="dot"))


def _top(arrays) -> float:
    finite = [a[np.isfinite(a)] for a in (np.asarray(a, dtype=np.float64) for a in arrays)]
    finite = [a for a in finite if a.size]
    return max((float(a.max()) for a in finite), default=ERROR_FLOOR)


def _with_axes(layout: dict, axes: Mapping[str, Mapping] | None) -> dict:
    for name, patch in (axes or {}).items():
        layout[name].update(patch)
    return layout


def forms_figure(x, values: Mapping[str, np.ndarray], *, height: int = 380,
                 axes: Mapping[str, Mapping] | None = None) -> go.Figure:
    """The exact, tanh and sigmoid GELU on one chart (``values`` maps approximate -> GELU(x)); ``axes``: the
    view (``view_axes``), laid over the axes."""
    traces = [line_trace(x, y, name=_(FORM_LABELS[a]), key=FORM_KEYS[a], hover_format=".6f")
              for a, y in values.items()]
    return quick_figure(traces, _with_axes(base_layout("x", "GELU(x)", height=height), axes))


def error_figure(
    x,
    errors: Mapping[str, np.ndarray],
    *,
    kind: str,
    worst: Mapping[str, tuple[float, float]] | None = None,
    height: int = 340,
    axes: Mapping[str, Mapping] | None = None,
) -> go.Figure:
    """|approximation − exact| (``kind="absolute"``) or that over |exact| (``"relative"``), log y.

    ``errors`` maps approximate ("tanh", "sigmoid") -> error array.  ``worst`` maps
    approximate -> (x, error) of the largest error: marked at −|x| and +|x|
    where they fall inside the plotted range (the error is even in x).  ``axes``: the view (``view_axes``), laid
    over the axes.
    """
    if kind not in ("absolute", "relative"):
        raise ValueError(f"kind must be 'absolute' or 'relative', got {kind!r}")
    x = np.asarray(x, dtype=np.float64)
    layout = base_layout("x", _("absolute error") if kind == "absolute" else _("relative error"), height=height)
    traces = [
        line_trace(x, _positive(err), name=_(FORM_LABELS[a]), key=FORM_KEYS[a], hover_format=".3e")
        for a, err in errors.items()
    ]
    lo, hi = float(x.min()), float(x.max())
    for a, (at_x, value) in (worst or {}).items():
        sides = [s * abs(at_x) for s in (-1.0, 1.0) if lo <= s * abs(at_x) <= hi]
        if sides:
            name = _("largest error, {form}").format(form=_(FORM_LABELS[a]))
            trace = marker_trace(sides, [value] * len(sides), name=name, key=FORM_KEYS[a])
            largest = _("largest, {form}").format(form=form_name(a))
            trace["hovertemplate"] = f"x = %{{x:.4f}}<br>%{{y:.3e}}<extra>{largest}</extra>"
            traces.append(trace)
    if kind == "relative":
        layout["shapes"] = [_hline(1.0, NEUTRAL)]
    _log_yaxis(layout, _top(errors.values()), percent_at_1=kind == "relative")
    return quick_figure(traces, _with_axes(layout, axes))


# ------------------------------------------------------------------ the three forms' charts, and their view

VIEW_STEP = 0.025  # the curves' spacing: 20 points to each 0.5 step of the range, 481 on the default -6 ... 6
VIEW_CHARTS = ("approximations-forms", "approximations-absolute", "approximations-relative")


def view_grid() -> np.ndarray:
    """Every x the range slider can show, at ``VIEW_STEP``: the three charts hold their curves over the slider's
    whole span, and the range sets their axes (a view), so that a drag of the range moves the view in the browser
    without new data."""
    from ui.live import grid

    o = CONTROLS["range"].options
    return grid(o["min_value"], o["max_value"], VIEW_STEP)


@memo(entry_bytes=128 * 1024)  # 62 KB measured
def _view_curves() -> tuple[np.ndarray, dict[str, np.ndarray], dict[str, tuple[np.ndarray, np.ndarray]]]:
    x = view_grid()
    x.setflags(write=False)
    return x, {a: gelu(x, a) for a in APPROXIMATE}, {a: approximation_error(x, a) for a in ("tanh", "sigmoid")}


def view_axes(name: str, lo: float, hi: float) -> dict[str, dict]:
    """The axes of chart ``name`` (one of ``VIEW_CHARTS``) for the range lo ... hi: x is the range; y holds what the
    curves do inside it (the forms: their lowest and highest value, 5 % margin; the errors: a log axis up to their
    largest, ticked as ``error_figure`` ticks); the y ends rounded (4 significant digits, a log axis's top to 3
    decimals), which keeps the live layer's table of them short."""
    x, forms, errors = _view_curves()
    inside = (x >= lo) & (x <= hi)
    if name == "approximations-forms":
        ys = np.concatenate([v[inside] for v in forms.values()])
        bottom, top = float(ys.min()), float(ys.max())
        pad = 0.05 * ((top - bottom) or 1.0)
        ends = [float(f"{bottom - pad:.4g}"), float(f"{top + pad:.4g}")]
        return {"xaxis": {"range": [lo, hi]}, "yaxis": {"range": ends}}
    kind = {"approximations-absolute": 0, "approximations-relative": 1}[name]
    layout = {"yaxis": {}}
    _log_yaxis(layout, _top(e[kind][inside] for e in errors.values()), percent_at_1=kind == 1)
    layout["yaxis"]["range"] = [layout["yaxis"]["range"][0], round(layout["yaxis"]["range"][1], 3)]
    return {"xaxis": {"range": [lo, hi]}, "yaxis": layout["yaxis"]}


@memo(entry_bytes=384 * 1024)  # 313 KB measured: tests/test_memo.py
def _view_specs(worst: tuple) -> dict[str, dict]:
    """The three charts' plain specs (by name) over the slider's whole span, with no view: the same at every range
    (``view_figures`` lays a range's view over each).  ``worst``: ``view_figures``' worst points, as items."""
    x, forms, errors = _view_curves()
    return {name: plain_spec(fig) for name, fig in (
        ("approximations-forms", forms_figure(x, forms)),
        ("approximations-absolute", error_figure(x, {a: e[0] for a, e in errors.items()}, kind="absolute",
                                                 worst=dict(worst))),
        ("approximations-relative", error_figure(x, {a: e[1] for a, e in errors.items()}, kind="relative")))}


def view_figures(lo: float, hi: float, worst: Mapping[str, tuple[float, float]]) -> dict[str, go.Figure]:
    """The three charts of the forms tab (by name) on the range lo ... hi: each one's spec over the whole span
    (``_view_specs``, kept; its data shared, read only) with the range's axes (``view_axes``) laid over a copy of
    its layout's."""
    figures = {}
    for name, spec in _view_specs(tuple(worst.items())).items():
        layout = dict(spec["layout"])
        for axis, patch in view_axes(name, lo, hi).items():
            layout[axis] = {**layout[axis], **patch}
        figures[name] = QuickFigure(spec={"data": spec["data"], "layout": layout})
    return figures


def forms_words(lo: float, hi: float) -> str:
    """The forms chart's caption for the range lo ... hi (``overlap_words`` on ``POINTS`` points)."""
    x = np.linspace(lo, hi, POINTS)
    return overlap_words({a: gelu(x, a) for a in APPROXIMATE})


ERRORS_CAPTION = N_("Absolute error is |approximation − exact|; relative error divides it by |exact|. Both are drawn "
                    "on a log scale that stops at 10⁻¹²: smaller errors, and exact zeros, fall below it. The error is "
                    "the same at -x and +x, so each worst point is marked on both sides.")


def errors_words(lo: float) -> str:
    """The error charts' caption for a range that starts at lo: two paragraphs' sentences, one after the other."""
    return " ".join([_(ERRORS_CAPTION), tail_words(lo, *(float(gelu(lo, a)) for a in APPROXIMATE))])


def _dotted(axes: Mapping[str, Mapping]) -> dict:
    """``view_axes`` as Plotly.relayout's keys: {"xaxis.range": ..., "yaxis.tickvals": ...}."""
    return {f"{axis}.{k}": v for axis, patch in axes.items() for k, v in patch.items()}


# Where the page writes the two captions the range moves: after the forms chart, and after the two error charts.
FORMS_CAPTION = ".st-key-approximations_forms_words [data-testid='stCaptionContainer'] p"
ERRORS_CAPTION_AT = ".st-key-approximations_errors_words [data-testid='stCaptionContainer'] p"


@memo(entry_bytes=1024 * 1024)  # 744 KB measured
def range_live_table() -> dict:
    """The live layer's table for the range slider: at every pair of its thumbs' positions (lo before hi, at least
    a step apart; the others hold still until the release shows the page's note), the three charts' axes as
    ``view_axes`` gives them and the two captions as the page writes them."""
    from ui.live import grid, live_table

    o = CONTROLS["range"].options
    ends = grid(o["min_value"], o["max_value"], o["step"]).tolist()
    n = len(ends)
    views: dict[str, list] = {name: [None] * n * n for name in VIEW_CHARTS}
    forms_text: list = [None] * n * n
    errors_text: list = [None] * n * n
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    # forms_words at every pair at once: each row is np.linspace(lo, hi, POINTS), bit for bit
    rows = np.linspace([ends[i] for i, _ in pairs], [ends[j] for _, j in pairs], POINTS, axis=1)
    curves = {a: gelu(rows, a) for a in APPROXIMATE}
    tails = [errors_words(lo) for lo in ends]
    for r, (i, j) in enumerate(pairs):
        k = i * n + j
        for name in VIEW_CHARTS:
            views[name][k] = _dotted(view_axes(name, ends[i], ends[j]))
        forms_text[k], errors_text[k] = overlap_words({a: c[r] for a, c in curves.items()}), tails[i]
    # each relayout key a column of its own: the ticks repeat, the ranges do not
    columns = {name: {key: [v[key] if v else None for v in views[name]] for key in next(filter(None, views[name]))
                      if key.endswith(("range", "tickvals", "ticktext"))} for name in VIEW_CHARTS}
    return live_table({"key": CONTROLS["range"].key, **o}, thumbs=2, pack=True,
                      spoken=[_("x from {}"), _("x to {}")],
                      texts=[(FORMS_CAPTION, 0, forms_text), (ERRORS_CAPTION_AT, 0, errors_text)],
                      views={f"chart_{name}": column for name, column in columns.items()})


def framework_figure(
    runs: Sequence[FrameworkRun],
    *,
    ours: FrameworkRun | None = None,
    roundoff: Mapping[str, float] | None = None,
    cliff: tuple[str, float] | None = None,
    height: int = 420,
) -> go.Figure:
    """Relative error of torch's GELU per dtype against float64, with gelu_core's own rounding beside it.

    ``ours``: one run whose ``ours_rel_error`` is drawn as "gelu_core <dtype>" in
    exact GELU's colour, dashed.  ``roundoff`` maps dtype -> unit roundoff, a thin
    dotted line in the dtype's colour: a correctly rounded result lies on or below
    it (for normal numbers).  ``cliff`` = (dtype, a): torch returns 0 for every
    x <= a; a dotted line at a, named in the legend, when a is inside the plotted range.
    """
    layout = base_layout("x", _("relative error vs float64"), height=height)
    traces = []
    for run in runs:
        name = f"torch {run.dtype}"
        traces.append(line_trace(run.x, _positive(run.torch_rel_error), name=name, key=run.dtype, width=1.8,
                                 dash=DTYPE_DASHES[run.dtype], hover_format=".3e"))
        traces[-1]["line"]["color"] = DTYPE_COLORS[run.dtype]
        traces[-1]["meta"] = f"torch:{run.dtype}"
    if ours is not None:
        name = f"gelu_core {ours.dtype}"
        traces.append(line_trace(ours.x, _positive(ours.ours_rel_error), name=name, key="gelu", width=1.5,
                                 dash="dash", hover_format=".3e"))
        traces[-1]["meta"] = f"ours:{ours.dtype}"
    shapes = [_hline(1.0, NEUTRAL)]
    shapes += [_hline(u, DTYPE_COLORS[d]) for d, u in (roundoff or {}).items()]
    if cliff is not None and runs:
        dtype, at = cliff
        if float(np.min(runs[0].x)) <= at <= float(np.max(runs[0].x)):
            shapes.append(_vline(at, DTYPE_COLORS[dtype]))
            # named in the legend, not beside the line: on a phone every spot beside it holds a curve or a gridline
            traces.append(dict(type="scatter", x=[None], y=[None], mode="lines", meta=f"cliff:{dtype}",
                               name=_("{dtype}: 0 for every x ≤ {x}").format(dtype=dtype, x=fixed(at, 2)),
                               hoverinfo="skip",
                               line=dict(color=DTYPE_COLORS[dtype], width=1, dash="dot")))
    layout["shapes"] = shapes
    _log_yaxis(layout, max(1.0, _top(r.torch_rel_error for r in runs)), percent_at_1=True)
    return quick_figure(traces, layout)


def framework_tables(runs: Sequence[FrameworkRun], *, ours: FrameworkRun) -> list[tuple[str, str, dict[str, list]]]:
    """A few inputs as small tables that fit a phone (x and two numbers each), as (name, title, columns): "truth",
    the float64 truth beside gelu_core's own result in ``ours.dtype``; then per dtype, named by it, torch's value
    and its relative error."""
    x = runs[0].x.tolist()
    tables = [("truth", _("The true value, and this app's {dtype}").format(dtype=ours.dtype),
               {"x": x, _("exact (float64)"): runs[0].exact.tolist(), f"gelu_core {ours.dtype}": ours.ours.tolist()})]
    for run in runs:
        tables.append((run.dtype, f"torch {run.dtype}", {
            "x": x, f"torch {run.dtype}": run.torch_value.tolist(),
            _("rel. error {dtype}").format(dtype=run.dtype): run.torch_rel_error.tolist()}))
    return tables


LIMITS = (  # (row label, key of gelu_core's limits): where an answer of 0 begins, nearest the cliff first
    (N_("torch: every x ≤"), "every"),
    (N_("torch: some x up to"), "some"),
    (N_("true GELU rounded: x ≤"), "holds"),
)


def limits_table(limits: Mapping[str, Mapping[str, float]]) -> dict[str, list]:
    """Where the answer becomes 0, one row per dtype and limit (three narrow columns: dtype, which limit, x)."""
    columns = ("dtype", _("returns 0"), "x")
    table: dict[str, list] = {c: [] for c in columns}
    for dtype, values in limits.items():
        for label, key in LIMITS:
            for column, value in zip(columns, (dtype, _(label), values[key]), strict=True):
                table[column].append(value)
    return table


def cliff_words(limits: Mapping[str, Mapping[str, float]]) -> str:
    r"""How far left of torch's cliff the true GELU itself rounds to 0, per dtype, in words judged from the numbers
    (1 or more: far; less: only that much; none: torch loses nothing a perfect kernel could keep).

    >>> import re; words = cliff_words({"float32": {"every": -5.54, "holds": -14.36},
    ...                                 "float16": {"every": -5.54, "holds": -5.73}})
    >>> re.findall(r"\d+\.\d+", words), [w.split()[0] for w in re.findall(r"(?:far|only) [^;]*", words)]
    (['8.82', '0.19'], ['far', 'only'])
    """
    far = {d: v["every"] - v["holds"] for d, v in limits.items() if v["every"] - v["holds"] >= 1}
    near = {d: v["every"] - v["holds"] for d, v in limits.items() if 0 < v["every"] - v["holds"] < 1}
    none = [d for d, v in limits.items() if v["every"] - v["holds"] <= 0]
    parts = []
    if far:
        parts.append(_("for {dtypes} it lies far to the left of torch's cliff ({gaps} further)").format(
            dtypes=_and(list(far)), gaps=_and([fixed(g, 2) for g in far.values()])))
    if near:
        parts.append(_("for {dtypes} only {gaps} to the left").format(
            dtypes=_and(list(near)), gaps=_and([fixed(g, 2) for g in near.values()])))
    if none:
        parts.append(_("for {dtypes} at torch's cliff or right of it: torch loses nothing a perfect kernel could "
                       "keep").format(dtypes=_and(none)))
    if not parts:
        return ""
    words = _("{clauses}.").format(clauses=_("; ").join(parts))
    return words[:1].upper() + words[1:]


def _and(items: Sequence[str]) -> str:
    """Items as a list in the reader's language ("a, b and c"; Babel's list pattern outside English)."""
    if current() == SOURCE:
        return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
    from babel.lists import format_list

    return format_list(list(items), locale=current().replace("-", "_"))


def times(r: float) -> str:
    """A ratio far above 1, rounded as a reader says it.

    >>> times(2.54), times(37204.3), times(7.6e24)
    ('2.5', '37,000', '7.6e+24')
    """
    if r < 10:
        return fixed(r, 1)
    if r < 1e6:
        return count(round(float(plain.sig(r, 2))))  # rounded as plain digits, then shown in the reader's way
    return sci(r, 1)


def how_far(approx: float, exact: float) -> str:
    """An approximation against the true value (both of one sign): a share of it when the two are within a factor
    of 2, else a multiple or a fraction of it.

    >>> how_far(-2.2e-4, -5.9e-9), how_far(-8.3e-11, -5.9e-9), how_far(-0.1591, -0.1587), how_far(-1.6e-61, -2.1e-32)
    ('37,000 times the true value', 'the true value divided by 71', '0.25% too large', \
'the true value divided by 1.3e+29')
    """
    r = approx / exact
    if r >= 2:
        return _("{times} times the true value").format(times=times(r))
    if r > 1:
        return _("{share} too large").format(share=percent(r - 1))
    if r == 1:
        return _("exactly the true value")
    if r > 0.5:
        return _("{share} too small").format(share=percent(1 - r))
    if r > 0:
        return _("the true value divided by {times}").format(times=times(1 / r))
    return "0" if r == 0 else _("of the wrong sign")


def overlap_words(values: Mapping[str, np.ndarray]) -> str:
    r"""Whether the three forms can be told apart on the forms chart: the largest gap between an approximation and
    exact GELU against the chart's height (1 % or less: on top of each other).

    >>> import re; x = np.linspace(-6, 6, 5); words = overlap_words({"none": x, "tanh": x + 1e-4, "sigmoid": x + 0.02})
    >>> re.findall(r"\d+\.\d+(?:e-\d+)?", words), "on top of each other" in words
    (['2.000e-02', '0.17'], True)
    """
    exact = np.asarray(values["none"], dtype=np.float64)
    gap = max(float(np.max(np.abs(np.asarray(v, dtype=np.float64) - exact))) for a, v in values.items() if a != "none")
    span = float(np.ptp(np.concatenate([np.asarray(v, dtype=np.float64) for v in values.values()]))) or 1.0
    if gap <= 0.01 * span:
        words = _("At this scale the three curves lie on top of each other (at most {gap} apart, {share} of the "
                  "chart's height); the error charts zoom in.")
    else:
        words = _("Here the forms part visibly (up to {gap} apart, {share} of the chart's height); the error charts "
                  "show by how much.")
    return words.format(gap=sci(gap), share=percent(gap / span))


def tail_words(x: float, exact: float, tanh: float, sigmoid: float) -> str:
    """The sentence on the far left of the range: the true GELU at x and what each form makes of it."""
    if x >= -1:
        return _("Stretch the range to the left to see where the forms part ways: there the true value is tiny and "
                 "small absolute errors are large relative ones.")
    return _("Far left the true value is tiny and the forms part ways: at x = {x}, the left end of the range, exact "
             "GELU is {exact}; the tanh form gives {tanh}, {tanh_far}, and the sigmoid form {sigmoid}, "
             "{sigmoid_far}.").format(x=fixed(x, 1), exact=sci(exact), tanh=sci(tanh), tanh_far=how_far(tanh, exact),
                                      sigmoid=sci(sigmoid), sigmoid_far=how_far(sigmoid, exact))


def digits_words(roundoff: Mapping[str, float]) -> str:
    r"""How many significant decimal digits each dtype keeps: -log10 of its unit roundoff, to the nearest whole.

    >>> import re; re.findall(r"(\w+) (?:keeps )?about (\d+)", digits_words({"float32": 2.0**-24, "bfloat16": 2.0**-8,
    ...                                                                  "float16": 2.0**-11}))
    [('float32', '7'), ('bfloat16', '2'), ('float16', '3')]
    """
    (d0, u0), *rest = roundoff.items()
    first = _("{dtype} keeps about {n} significant digits").format(dtype=d0, n=round(-math.log10(u0)))
    said = [_("{dtype} about {n}").format(dtype=d, n=round(-math.log10(u))) for d, u in rest]
    return _and([first, *said]) if said else first


# ---------------------------------------------------------------- what the page computes, kept for every session

@memo(entry_bytes=16 * 1024)  # a few numbers; what torch or scipy leave behind on a call counts too
def worst_points() -> dict[str, tuple[float, float]]:
    """(x, largest absolute error) of the tanh and sigmoid forms (gelu_core.analysis.worst_error)."""
    from gelu_core.analysis import worst_error

    return {a: tuple(worst_error(a)) for a in ("tanh", "sigmoid")}


@memo(entry_bytes=64 * 1024)  # POINTS inputs in its key, 3 dtypes of 5 float64 arrays: 27 KB measured
def framework_runs(x: tuple[float, ...], dtypes: tuple[str, ...], approximate: str) -> list:
    """torch's GELU at ``x`` in each dtype, beside the float64 truth (gelu_core.frameworks.framework_gelu)."""
    from gelu_core.frameworks import framework_gelu

    return [framework_gelu(np.asarray(x), d, approximate) for d in dtypes]


@memo(entry_bytes=16 * 1024)  # a few numbers; what torch or scipy leave behind on a call counts too
def dtype_limits(dtype: str, approximate: str) -> dict[str, float]:
    """Half a unit in the last place and where torch's answer becomes 0, for one dtype and form."""
    from gelu_core.frameworks import underflow_below, unit_roundoff, zero_band

    every, some = zero_band(dtype, approximate)
    return {"roundoff": unit_roundoff(dtype), "every": every, "some": some,
            "holds": underflow_below(dtype, approximate)}


@memo(entry_bytes=16 * 1024)  # a few numbers; what torch or scipy leave behind on a call counts too
def digits_kept(dtypes: tuple[str, ...]) -> str:
    """``digits_words`` of the dtypes' unit roundoffs."""
    from gelu_core.frameworks import unit_roundoff

    return digits_words({d: unit_roundoff(d) for d in dtypes})


# ---------------------------------------------------------------- the code for this view
# The Approximations script, for the tab on screen: the largest error of the tanh and sigmoid forms, or what
# PyTorch's GELU returns in each chosen dtype at the table's inputs.

FORMS = '''
"""GELU Explorer, Approximations: how far the tanh and sigmoid forms stray from exact GELU, at their worst."""

$imports

# GELU Explorer's own gates (gelu_core, here for float64 numpy): GELU(x) = x * gate(x) in every form
$code


def largest_error(gate):
    """(x, |x * gate(x) - x * phi(x)|) where that error peaks.  It is the same at -x and +x (GELU(x) - GELU(-x)
    = x in every form), so x >= 0 covers both sides."""
    def error(x):
        return np.abs(x * gate(x) - x * phi(x))

    grid = np.linspace($lo, $hi, $points)  # ($points,): find the peak on a grid, then refine it between its neighbours
    i = int(np.argmax(error(grid)))
    worst = minimize_scalar(lambda x: -error(x), bounds=(grid[i - 1], grid[i + 1]), method="bounded",
                            options={"xatol": 1e-12}).x
    return worst, error(worst)


for name, gate in (("tanh", tanh_gate), ("sigmoid", sigmoid_gate)):
    worst, error = largest_error(gate)
    print(f"Largest error, {name} form: {error:.2e} at x = ±{worst:.2f}")
'''

PYTORCH = '''
"""GELU Explorer, Approximations: what torch.nn.functional.gelu ($form form) returns in low precision, against the
float64 truth."""

$imports

approximate = "$approximate"  # PyTorch's name: "none" is the exact form, "tanh" GPT-2's
dtypes = [$dtypes]  # the number formats chosen on the page
# the table's inputs, each exact in every dtype: all the error below is the kernel's
x = torch.tensor([$inputs], dtype=torch.float64)  # ($count,)

# GELU Explorer's own code (gelu_core): the float64 reference, written so that nothing cancels (far left it is
# tiny, but not 0), and how it calls PyTorch's GELU
$code


exact = x * $gate(x)
table = {"x": x, "exact (float64)": exact}
for dtype in dtypes:
    name = str(dtype).removeprefix("torch.")
    value = torch_gelu(x.to(dtype), approximate).double()
    table[f"torch {name}"] = value
    table[f"rel. error {name}"] = torch.abs(value - exact) / torch.abs(exact)  # 1 where torch returns 0
if dtypes:
    ours = dtypes[0]  # this app's own result (gelu_core): the float64 truth rounded once to the dtype
    table[f"gelu_core {str(ours).removeprefix('torch.')}"] = exact.to(ours).double()

print("  ".join(f"{name:>11}" for name in table))
for row in zip(*table.values(), strict=True):
    cells = [f"{row[0]:.1f}"] + [f"{value:.4e}" for value in row[1:]]
    print("  ".join(f"{cell:>{max(11, len(name))}}" for name, cell in zip(table, cells, strict=True)))
'''


def live_tables(form: str) -> list[tuple[Callable, tuple]]:
    """The live tables a first visit at the controls' defaults draws, in the lesson's ``form``: (table, its
    arguments), each as the page hands it to ``ui.live.as_json`` (``ui.pages.make_live_tables``)."""
    del form  # the range's table holds every form
    return [(range_live_table, ())]


def code(values: Values) -> str:
    v = settings(CONTROLS, values)
    if v["view"] == APPROXIMATIONS_VIEWS[0]:
        names = {"phi": GATES["none"], "tanh_gate": GATES["tanh"], "sigmoid_gate": GATES["sigmoid"]}
        search = {k: p.default for k, p in inspect.signature(worst_error).parameters.items()}  # the page's own grid
        return fill(FORMS, lo=number(search["lo"]), hi=number(search["hi"]), points=search["points"],
                    code=source(backend="numpy", names=names))
    from gelu_core.frameworks import _torch_gelu  # torch: imported when this tab asks, as the page's

    order = [d for d in DTYPES if d in v["fw_dtypes"]]  # the page's order, whatever the order chosen
    approximate = torch_form(v["form"])
    gate = GATES[approximate]
    return fill(PYTORCH, form=gelu_core.form_word(approximate), approximate=approximate,
                dtypes=", ".join(f"torch.{d}" for d in order), inputs=", ".join(number(x) for x in TABLE_X),
                count=len(TABLE_X), gate=gate.__name__.lstrip("_"), code=source(gate, _torch_gelu))
