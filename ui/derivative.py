"""The Derivative page: GELU' against ReLU's step, GELU's minimum, the slope's extremes, the smoothness nudge, and
the sentences that quote them."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import plotly.graph_objects as go

import gelu_core
from gelu_core import activations
from gelu_core.activations import ACTIVATIONS, GATE_SLOPES, GATES
from gelu_core.analysis import MINIMUM_BRACKET, SLOPE_EXTREME_BRACKETS, Point, gelu_grad_extremes, gelu_minimum
from ui.code_export import Values, fill, number, settings, source
from ui.controls import LESSON_FORM, Control, PageControls
from ui.format import fixed, local, readable
from ui.i18n import N_, _, form_name, memo
from ui.lesson import Question
from ui.theme import NEUTRAL, base_layout, line_trace, marker_trace, quick_figure

# ---------------------------------------------------------------- the controls (each bound to the URL)

CONTROLS = PageControls("derivative", (
    LESSON_FORM,
    Control("slider", "derivative_x", N_("The unit's input x"), -2.0,
            dict(min_value=-4.0, max_value=4.0, step=0.1, format="%.2f")),
    Control("slider", "derivative_nudge", N_("Nudge h: compare the slopes at -h and +h"), 0.01,
            dict(min_value=0.001, max_value=1.0, step=0.001, format="%.3f")),
), renamed={"derivative_form": LESSON_FORM.key})  # an older link names the form per page


# ---------------------------------------------------------------- the question (predict, then check)

def _truth(form: str) -> tuple[str, str]:
    s = gelu_core.gelu_grad(-2.0, form)
    right = CHOICES[0] if s == 0 else CHOICES[1] if abs(s) < 0.5 else CHOICES[2]
    return right, _("GELU'(-2) = {slope} in the {form} form: small, but a gradient still flows back through the unit, "
                    "so its weights keep learning. ReLU'(-2) = 0: nothing flows back.").format(slope=fixed(s),
                                                                                              form=form_name(form))


CHOICES = (N_("exactly 0, like ReLU"), N_("small, but not 0"), N_("larger than 1"))


QUESTION = Question(
    N_("At x = -2 ReLU's slope is exactly 0. What is GELU's slope there ({form} form)?"),
    CHOICES, _truth,
    hides="the gradients passed back at x, the slope charts and where GELU bottoms out")


SLOPE_RANGE = (-4.0, 4.0)


class Landmarks(NamedTuple):
    """Where GELU' is zero (GELU's minimum) and where it is smallest and largest."""

    minimum: Point  # x where GELU' = 0, value GELU(x)
    steepest_down: Point  # x, GELU'(x)
    steepest_up: Point


class Nudge(NamedTuple):
    """Slopes just left and right of 0: (at -h, at +h)."""

    h: float
    relu: tuple[float, float]
    gelu: tuple[float, float]


@memo(entry_bytes=16 * 1024)  # a few numbers; what torch or scipy leave behind on a call counts too
def landmarks(approximate: str) -> Landmarks:
    """GELU's minimum and slope extremes for a form (root finding, so computed once per form)."""
    lo, hi = gelu_grad_extremes(approximate)
    return Landmarks(gelu_minimum(approximate), lo, hi)


def nudge(approximate: str, h: float) -> Nudge:
    """ReLU' and GELU' at -h and +h: ReLU's slope jumps from 0 to 1; GELU's moves by about 2h·GELU''(0)."""
    return Nudge(
        h,
        (gelu_core.relu_grad(-h), gelu_core.relu_grad(h)),
        (gelu_core.gelu_grad(-h, approximate), gelu_core.gelu_grad(h, approximate)),
    )


def nudge_words(n: Nudge) -> str:
    """How far GELU's slope moves across the nudge, judged against ReLU's jump, in words the numbers back.

    >>> nudge_words(nudge("none", 0.01)), nudge_words(nudge("none", 1.0))
    ('barely moves', "moves more than ReLU's jump")
    """
    return change_words(abs(n.gelu[1] - n.gelu[0]), n.relu[1] - n.relu[0])


# the metric's label for each of change_words' words (which the page's script prints as they are)
NUDGE_LABELS = {"barely moves": N_("GELU′ ({form}) barely moves"),
                "moves a little": N_("GELU′ ({form}) moves a little"),
                "moves, but less than ReLU's jump": N_("GELU′ ({form}) moves, but less than ReLU's jump"),
                "moves more than ReLU's jump": N_("GELU′ ({form}) moves more than ReLU's jump")}


def nudge_label(n: Nudge, form: str) -> str:
    """The metric's label for GELU′ across the nudge, in the reader's language: ``nudge_words`` in a sentence."""
    return _(NUDGE_LABELS[nudge_words(n)]).format(form=form_name(form))


# the Derivative page's script prints this function (ui/derivative.py, "the code for this view")
def change_words(change: float, jump: float) -> str:
    """How far a slope moves across the nudge, in words, judged against ReLU's jump."""
    if change < 0.05 * jump:
        return "barely moves"
    if change < 0.5 * jump:
        return "moves a little"
    if change < jump:
        return "moves, but less than ReLU's jump"
    return "moves more than ReLU's jump"


def gradient_words(relu_slope: float, gelu_slope: float) -> str:
    r"""What the two slopes at the unit's input do to a gradient of 1, judged from them.

    >>> import re; words = [gradient_words(0.0, -0.0852), gradient_words(1.0, 1.0852), gradient_words(1.0, 0.8)]
    >>> [re.findall(r"-?\d+\.\d+", w) for w in words], ["more than all" in w for w in words]
    ([['-0.0852'], ['1.0852'], ['0.8000']], [False, True, False])
    """
    if relu_slope == 0:
        if gelu_slope == 0:
            return _("Here both pass back nothing.")
        return _("ReLU passes back nothing: the weights feeding this unit get no update from this example. GELU "
                 "passes back {slope}, so they still learn.").format(slope=readable(gelu_slope, 4))  # never 0.0000
    if gelu_slope > 1:
        return _("For a positive input both pass the gradient on: ReLU all of it, GELU {slope} of it, a little more "
                 "than all.").format(slope=fixed(gelu_slope))
    return _("For a positive input both pass the gradient on: ReLU all of it, GELU {slope} of it.").format(
        slope=fixed(gelu_slope))


def negative_slope_words(approximate: str) -> str:
    r"""GELU's slope over the negative numbers, from its numbers: between its lowest value and its value at 0, and
    0 only where GELU bottoms out.

    >>> import re; re.findall(r"-?\d+\.\d+", negative_slope_words("none"))
    ['-0.1289', '0.5000', '-0.7518']
    """
    marks = landmarks(approximate)
    at_zero = gelu_core.gelu_grad(0.0, approximate)
    return _("GELU's slope there stays between {low} and {at_zero}, and is 0 at one point only: x = {x}, where GELU "
             "bottoms out.").format(low=fixed(marks.steepest_down.value), at_zero=fixed(at_zero),
                                    x=fixed(marks.minimum.x))


def extremes_words(marks: Landmarks) -> str:
    r"""What GELU's slope extremes say about the curve, with the numbers, judged from them.

    >>> import re; words = extremes_words(landmarks("none"))
    >>> re.findall(r"-?\d+\.\d+", words), "not monotone" in words
    (['-0.1289', '1.1289'], True)
    """
    lo, hi = marks.steepest_down.value, marks.steepest_up.value
    if lo < 0 and hi > 1:
        words = _("GELU′ dips below 0 (to {low}) left of the minimum, so GELU is not monotone, and overshoots 1 (up "
                  "to {high}) on the right, so for a while GELU rises faster than x itself.")
    elif lo < 0:
        words = _("GELU′ dips below 0 (to {low}) left of the minimum, so GELU is not monotone, and stays at or below "
                  "1 (highest {high}), so GELU never rises faster than x.")
    elif hi > 1:
        words = _("GELU′ stays at or above 0 (lowest {low}), so GELU never falls, and overshoots 1 (up to {high}) on "
                  "the right, so for a while GELU rises faster than x itself.")
    else:
        words = _("GELU′ stays at or above 0 (lowest {low}), so GELU never falls, and stays at or below 1 (highest "
                  "{high}), so GELU never rises faster than x.")
    return words.format(low=fixed(lo), high=fixed(hi))


def relu_step(grid: np.ndarray) -> tuple[list, list]:
    """ReLU' on the grid as two flat pieces with a gap at 0 (no vertical line where the slope is undefined)."""
    y = gelu_core.relu_grad(grid)
    cut = int(np.searchsorted(grid, 0.0, side="right"))  # grid[:cut] <= 0 < grid[cut:]
    return grid[:cut].tolist() + [None] + grid[cut:].tolist(), y[:cut].tolist() + [None] + y[cut:].tolist()


def _note(x: float, y: float, text: str, *, at: tuple[float, float], xanchor: str = "center",
          size: int = 13) -> dict:
    """A label at ``at`` (data coordinates, so it keeps its place on a phone's narrow chart) with a thin arrow to
    the point (x, y) it names."""
    return dict(x=x, y=y, xref="x", yref="y", text=text, showarrow=True, arrowhead=0, arrowwidth=1,
                arrowcolor=NEUTRAL, axref="x", ayref="y", ax=at[0], ay=at[1], xanchor=xanchor, yanchor="middle",
                font=dict(size=size))


def slopes_figure(approximate: str, h: float, *, points: int = 401) -> go.Figure:
    """GELU' (one form) and ReLU' with ReLU's jump drawn open/closed at 0, landmarks and the nudge marked."""
    grid = np.linspace(*SLOPE_RANGE, points)  # holds 0 exactly, where relu'(0) = 0
    key = gelu_core.GELU_FORMS[approximate]
    form = gelu_core.form_word(approximate)
    marks = landmarks(approximate)
    n = nudge(approximate, h)
    step_x, step_y = relu_step(grid)
    traces = [
        line_trace(step_x, step_y, name="ReLU′", key="relu", hover_format=".0f"),
        line_trace(grid, gelu_core.gelu_grad(grid, approximate), name=f"GELU′ ({form})", key=key),
        marker_trace([-h, h], list(n.gelu), name=_("GELU′ at ±{h}").format(h=local(f"{h:g}")), key=key,
                     symbol="diamond", size=8),
        marker_trace([-h, h], list(n.relu), name=_("ReLU′ at ±{h}").format(h=local(f"{h:g}")), key="relu",
                     symbol="diamond", size=8),
        marker_trace(marks.minimum.x, 0.0, name="GELU′ = 0", key=key),
        marker_trace([marks.steepest_down.x, marks.steepest_up.x],
                     [marks.steepest_down.value, marks.steepest_up.value], name=_("GELU′ extremes"), key=key),
        # relu'(0) = 0 by convention (as torch autograd): closed dot at (0, 0), open circle at (0, 1); drawn last,
        # on top of the nudge markers
        marker_trace(0.0, 0.0, name=_("ReLU′(0) = 0 (convention)"), key="relu", size=11),
        marker_trace(0.0, 1.0, name=_("ReLU′ → 1 for x > 0"), key="relu", symbol="circle-open", size=11),
    ]
    layout = base_layout("x", _("slope"), height=400)
    layout["xaxis"].update(range=list(SLOPE_RANGE), showgrid=False)  # no gridline crosses a label
    layout["yaxis"].update(range=[-0.35, 1.35], dtick=0.5)
    # Each label in an empty stretch of the chart, between gridlines: left of x = 0 above GELU' (which stays
    # below 0.15 there), under the dip, over the overshoot.
    layout["annotations"] = [
        _note(marks.minimum.x, 0.0, _("GELU′ = 0<br>at x = {x}").format(x=fixed(marks.minimum.x)), at=(-2.4, 0.27)),
        _note(marks.steepest_down.x, marks.steepest_down.value, fixed(marks.steepest_down.value), at=(-3.0, -0.24)),
        _note(marks.steepest_up.x, marks.steepest_up.value, fixed(marks.steepest_up.value), at=(3.0, 1.24)),
    ]
    return quick_figure(traces, layout)


def gelu_minimum_figure(approximate: str, *, points: int = 401) -> go.Figure:
    """GELU (one form) and ReLU with GELU's lowest point marked: where its slope crosses zero."""
    grid = np.linspace(-3.0, 2.0, points)
    key = gelu_core.GELU_FORMS[approximate]
    marks = landmarks(approximate)
    traces = [
        line_trace(grid, gelu_core.relu(grid), name="ReLU", key="relu"),
        line_trace(grid, gelu_core.gelu(grid, approximate=approximate),
                   name=f"GELU ({form_name(approximate)})", key=key),
        marker_trace(marks.minimum.x, marks.minimum.value, name=_("GELU's minimum"), key=key),
    ]
    layout = base_layout("x", _("output"), height=400)
    layout["xaxis"].update(range=[-3.0, 2.0], showgrid=False)
    # no gridline below 0: the label sits under the dip, left of the minimum, clear of x = 0 and of both curves
    layout["yaxis"].update(range=[-0.7, 2.1], tickvals=[0, 0.5, 1, 1.5, 2])
    layout["annotations"] = [_note(marks.minimum.x, marks.minimum.value,
                                   _("minimum {y}<br>at x = {x}").format(y=fixed(marks.minimum.value),
                                                                         x=fixed(marks.minimum.x)),
                                   at=(-0.4, -0.45), xanchor="right", size=12)]
    return quick_figure(traces, layout)


READOUT = "derivative_readout"  # the container of the sentence, the two metrics and the caption the x slider moves


def gradient_sentence(x: float) -> str:
    """The readout's sentence at x (Markdown, one message): its bold opening, then the rest."""
    return _("**The gradient flowing back** through one unit whose input is x = {x}, when the gradient arriving from "
             "the layer above is 1:").format(x=fixed(x, 2))


def gradient_sentence_tail(x: float) -> str:
    """The readout's sentence after its bold opening, at x (the text the live layer writes as x moves)."""
    return gradient_sentence(x).split("**", 2)[2]


@memo(entry_bytes=128 * 1024)  # 40 KB measured
def gradient_live_table(approximate: str) -> dict:
    """The live layer's table for the x slider: the sentence, the two gradients and the caption at every step of
    the slider's grid, by the page's own calls (relu_grad, gelu_grad, fixed, gradient_words)."""
    from ui.live import grid, live_table

    o = CONTROLS["x"].options
    xs = grid(o["min_value"], o["max_value"], o["step"]).tolist()
    relu = [gelu_core.relu_grad(x) for x in xs]
    gelu = [gelu_core.gelu_grad(x, approximate) for x in xs]
    at = f".st-key-{READOUT}"
    texts = [(f"{at} [data-testid='stMarkdownContainer'] p", 0, [gradient_sentence_tail(x) for x in xs], 1),
             (f"{at} [data-testid='stMetricValue'] p", 0, [fixed(v) for v in relu]),
             (f"{at} [data-testid='stMetricValue'] p", 1, [fixed(v) for v in gelu]),
             (f"{at} [data-testid='stCaptionContainer'] p", 0,
              [gradient_words(r, g) for r, g in zip(relu, gelu, strict=True)])]
    return live_table({"key": CONTROLS["x"].key, **o}, texts=texts)


# ---------------------------------------------------------------- the code for this view
# The Derivative script: the gradient each activation passes back at x, the nudge across 0, GELU's minimum and the
# extremes of its slope (scipy's root finder and minimiser).

TEMPLATE = '''
"""GELU Explorer, Derivative: the gradient ReLU and GELU ($form form) pass back, GELU's minimum and slope extremes."""

$imports

# GELU Explorer's own formulas (gelu_core, here for float64 numpy), the page's words and number format
$code


def gelu(x):
    return gelu_of(x, gate)


def gelu_slope(x):
    return gelu_slope_of(x, gate, gate_slope)


# The chain rule at one unit: dL/dx = dL/dy * act'(x), with a gradient dL/dy = 1 arriving from above
x = $x  # the unit's input
print(f"passed back by ReLU: {fixed(1.0 * relu_grad(x))}")  # ReLU'(0) = 0, as PyTorch's autograd
print(f"passed back by GELU ($form): {fixed(1.0 * gelu_slope(x))}")

# Smoothness: the slopes just left and right of 0
h = $h  # the nudge
left, right = gelu_slope(-h), gelu_slope(h)
jump = relu_grad(h) - relu_grad(-h)  # ReLU's slope jumps from 0 to 1
print(f"ReLU′ jumps: {fixed(relu_grad(-h), 0)} → {fixed(relu_grad(h), 0)} (+{fixed(jump, 0)})")
print(f"GELU′ ($form) {change_words(abs(right - left), jump)}: {fixed(left)} → {fixed(right)} ({right - left:+.4f})")

# Where GELU bottoms out: its slope crosses 0
bottom = brentq(gelu_slope, $minimum_bracket, xtol=1e-15)
print(f"GELU's minimum: {fixed(gelu(bottom))} at x = {fixed(bottom)}")

# The slope's extremes: where GELU'' = 0 (for the exact form at -sqrt(2) and sqrt(2))
lowest = minimize_scalar(gelu_slope, bounds=$low_bounds, method="bounded", options={"xatol": 1e-12}).x
highest = minimize_scalar(lambda t: -gelu_slope(t), bounds=$high_bounds, method="bounded", options={"xatol": 1e-12}).x
print(f"Lowest slope, GELU′: {fixed(gelu_slope(lowest))} at x = {fixed(lowest)}$left_root")
print(f"Highest slope, GELU′: {fixed(gelu_slope(highest))} at x = {fixed(highest)}$right_root")
'''


def live_tables(form: str) -> list[tuple[Callable, tuple]]:
    """The live tables a first visit at the controls' defaults draws, in the lesson's ``form``: (table, its
    arguments), each as the page hands it to ``ui.live.as_json`` (``ui.pages.make_live_tables``)."""
    return [(gradient_live_table, (form,))]


def code(values: Values) -> str:
    v = settings(CONTROLS, values)
    gate, slope = GATES[v["form"]], GATE_SLOPES[v["form"]]
    exact = v["form"] == "none"
    low, high = (f"({number(a)}, {number(b)})" for a, b in SLOPE_EXTREME_BRACKETS)  # the page's own brackets
    return fill(TEMPLATE, form=gelu_core.form_word(v["form"]), x=number(v["x"]), h=number(v["nudge"]),
                minimum_bracket=", ".join(number(e) for e in MINIMUM_BRACKET), low_bounds=low, high_bounds=high,
                left_root=" = -√2" if exact else "", right_root=" = √2" if exact else "",
                code=source(change_words, fixed, backend="numpy",
                            names={"relu_grad": ACTIVATIONS["relu"].slope_formula, "gate": gate, "gate_slope": slope,
                                   "gelu_of": activations._gelu_of, "gelu_slope_of": activations._gelu_slope_of}))
