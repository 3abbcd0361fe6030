"""The home page's story: a few inputs through ReLU and GELU, as a table and one chart."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import plotly.graph_objects as go

import gelu_core
from gelu_core.activations import ACTIVATIONS, GATES
from gelu_core.shared import memo as shared_memo
from ui.code_export import Values, fill, number, settings, source
from ui.controls import LESSON_FORM, Control, PageControls
from ui.format import fixed, readable
from ui.i18n import N_, _, form_name, memo
from ui.lesson import Question
from ui.theme import NEUTRAL, base_layout, line_trace, marker_trace, quick_figure

# ---------------------------------------------------------------- the controls (each bound to the URL)

HOME_DEFAULT_INPUTS = (-2.0, -1.0, 0.0, 1.0, 2.0)  # the source's torch.tensor([-2., -1., 0., 1., 2.])

CONTROLS = PageControls("home", (*(
    Control("number_input", f"home_x{i + 1}", f"x{i + 1}", v,
            dict(min_value=-20.0, max_value=20.0, step=0.5, format="%.2f"))
    for i, v in enumerate(HOME_DEFAULT_INPUTS)), LESSON_FORM,
))
INPUTS = CONTROLS.controls[:len(HOME_DEFAULT_INPUTS)]  # the five number inputs, in order


# ---------------------------------------------------------------- the question (predict, then check)

def _truth(form: str) -> tuple[str, str]:
    y = gelu_core.gelu(-1.0, approximate=form)
    right = CHOICES[1] if -0.5 < y < 0 else CHOICES[0] if y == 0 else "something else"
    return right, _("GELU(-1) = {y} in the {form} form: small and negative. Negatives are shrunk, not erased.").format(
        y=fixed(y), form=form_name(form))


CHOICES = (N_("0, like ReLU"), N_("a small negative number"), N_("-1, unchanged"))
QUESTION = Question(
    N_("ReLU turns -1 into 0. What does GELU ({form} form) turn -1 into?"),
    CHOICES, _truth,
    hides="the five inputs' table, the chart and the sentences under it: each shows GELU(-1)")



def other_form(form: str) -> str:
    """The form the table sets beside the lesson's: exact GELU, or the tanh form when the lesson's is exact."""
    return "tanh" if form == "none" else "none"


def columns(form: str = "tanh") -> tuple[str, ...]:
    """The table's columns' titles, each GELU and gate named with its form, short for a phone, in the reader's
    language.

    >>> columns("tanh")
    ('x', 'ReLU(x)', 'gate (tanh)', 'GELU (tanh)', 'GELU (exact)')
    """
    word = form_name
    return ("x", "ReLU(x)", _("gate ({form})").format(form=word(form)), _("GELU ({form})").format(form=word(form)),
            _("GELU ({form})").format(form=word(other_form(form))))


def on_grid(x: float) -> bool:
    """Whether an input's value is one of its steps (-20 … 20 by 0.5): the live layer has a row only for those.

    >>> on_grid(-1.5), on_grid(1.25), on_grid(20.5)
    (True, False, False)
    """
    from ui.live import grid

    o = INPUTS[0].options
    return float(x) in grid(o["min_value"], o["max_value"], o["step"]).tolist()


def five_inputs_table(xs, form: str = "tanh") -> dict[str, np.ndarray]:
    """Each input through ReLU and GELU in the lesson's form, with that form's gate between them (GELU = x · gate),
    and GELU in the other form beside them (``other_form``); the keys are the columns' titles (``columns``)."""
    x = np.asarray(xs, dtype=np.float64)  # (n,)
    values = (x, gelu_core.relu(x), gelu_core.gelu_gate(x, approximate=form), gelu_core.gelu(x, approximate=form),
              gelu_core.gelu(x, approximate=other_form(form)))
    return dict(zip(columns(form), values, strict=True))


def on_screen(table: dict[str, np.ndarray]) -> dict[str, list[str]]:
    """The table as drawn: every cell to four decimals in the app's number format (never "-0.0000")."""
    return {name: [fixed(v) for v in column.tolist()] for name, column in table.items()}


ENTRY_BYTES = 256 * 1024  # measured: tests/test_memo.py
JOINT_BYTES = 512 * 1024
CHART = "chart_home"  # the overview chart's key (draw.frame.chart's "chart_" + the page's name)
TABLE_CELL = "[data-testid='stMain'] [data-testid='stTable'] tbody td:nth-child({}) p"  # column n (1-based), row by nth


@memo(entry_bytes=ENTRY_BYTES)
def _own_table(i: int, form: str) -> dict:
    """``input_live_table``'s part that is the i-th input's alone: its row of the table and its points on the chart."""
    from ui.live import grid, live_table

    control = CONTROLS[f"x{i + 1}"]
    xs = grid(control.options["min_value"], control.options["max_value"], control.options["step"])
    table = five_inputs_table(xs, form)
    cells = on_screen(table)
    texts = [(TABLE_CELL.format(n + 1), i, column) for n, column in enumerate(cells.values())]
    relu, tanh = table[columns(form)[1]], table[columns(form)[3]]
    traces = {"marker:relu": {"x": xs, "y": relu, "point": i},
              f"marker:{gelu_core.GELU_FORMS[form]}": {"x": xs, "y": tanh, "point": i},
              "gap": {"x": xs, "y": tanh, "segment": i, "y0": relu, "y1": tanh}}
    table = live_table({"key": control.key, **control.options}, texts=texts, chart_key=CHART, traces=traces,
                       number_input=True, settle=True)
    del table["views"]  # none of its own: the joint part's (``joint_table``) are every input's
    return table


# Which of the five inputs each key of the chart's view (``_view_of``) depends on, as the live layer picks them
# (``joint_table``): "pair", the lowest and the highest input (x's range, and the label's side and offset, which
# follow from it); "max", the highest (the y axis: it ends above the highest curve at x's right end); "low", the one
# GELU lets through most negatively (the label's place and text).
VIEW_PICKS = {"xaxis.range": "pair", "yaxis.range": "max", "yaxis.tickvals": "max", "yaxis.ticktext": "max",
              "annotations[0].visible": "low", "annotations[0].x": "low", "annotations[0].y": "low",
              "annotations[0].ax": "pair", "annotations[0].ay": "max", "annotations[0].xanchor": "pair",
              "annotations[0].text": "low"}


@memo(entry_bytes=JOINT_BYTES)
def joint_table(form: str) -> dict:
    """What depends on all five inputs (the chart's view and the paragraphs under the table), for every way the five
    can stand on their grid (-20 … 20 by 0.5), as the live layer picks it: each column is indexed not by one input's
    step but by a pick among the five as they stand (the moved one where the key or the typing has it, the others at
    their fields' values), found by comparing them, never by computing a number:

    * ``views``: the chart's view (``_view_of``'s relayout keys), each key -> [its pick (``VIEW_PICKS``), its column];
      "max" and "low" index the grid step of the highest input and of the one with the lowest GELU (``gelu``, the
      lesson's form at each step: the first of the lowest in the row, as ``view_inputs``); "pair" is the lowest
      input's class of x's left end (``lo``: one per distinct end) times ``highs``, plus the highest's class of the
      right end (``hi``);
    * ``texts``: the paragraphs' text nodes (``prose_pieces``; selector, match, [pick, column], child): "neg" the most
      negative input's step + 1 (0: none is negative), "pos" the smallest positive one's;
    * ``steady``: the chart whose margins the layer holds while it sets the view, and the narrowest plot area, in px,
      it holds them on (``HELD_WIDTH``); views whose y tick labels are as wide (``tick_width``) share margins.

    The same for any inputs: made once per form and language, sent with each input's table on the page's full run
    only (a move sends none of it).  A field off the grid (a number typed between steps): the layer writes none of
    it until the rerun draws the page's own."""
    from ui.live import _column, _packed, grid

    o = INPUTS[0].options
    xs = grid(o["min_value"], o["max_value"], o["step"]).tolist()
    if any(c.options != o for c in INPUTS):
        raise ValueError("the five inputs share one grid: the layer indexes every column by its steps")
    table = five_inputs_table(xs, form)
    mine, theirs = (table[name].tolist() for name in columns(form)[3:])
    lows = sorted({min(-3.0, x - 0.5) for x in xs})
    highs = sorted({max(3.0, x + 0.5) for x in xs})
    by_pick = {"pair": [_view_of(lo, hi, xs[0], mine[0], form) for lo in lows for hi in highs],
               "max": [_view_of(-3.0, max(3.0, x + 0.5), xs[0], mine[0], form) for x in xs],
               "low": [_view_of(-3.0, 3.0, x, t, form) for x, t in zip(xs, mine, strict=True)]}
    if set(by_pick["low"][0]) != set(VIEW_PICKS):
        raise ValueError("every key of the chart's view needs its pick (VIEW_PICKS)")
    views = {key: [pick, _packed(_column([v[key] for v in by_pick[pick]]))] for key, pick in VIEW_PICKS.items()}
    # the paragraphs: the first (five pieces) names the most negative input, the second the smallest positive one
    first = [_prose_of(None, None, None, None, None, form)[:5]] + [
        _prose_of(x, t, e, None, None, form)[:5] if x < 0 else None for x, t, e in zip(xs, mine, theirs, strict=True)]
    second = [_prose_of(None, None, None, None, None, form)[5]] + [
        _prose_of(None, None, None, x, t, form)[5] if x > 0 else None for x, t in zip(xs, mine, strict=True)]
    at = f".st-key-{PROSE} p"

    def piece(n: int) -> list:
        return ["neg", _packed([None if p is None else p[n] for p in first])]

    texts = [[at, 0, piece(0), 0], [f"{at} strong", 0, piece(1)], [at, 0, piece(2), 2], [f"{at} strong", 1, piece(3)],
             [at, 0, piece(4), 4], [at, 1, ["pos", _packed(second)]]]
    return {"controls": [c.key for c in INPUTS], "gelu": mine,
            "lo": [lows.index(min(-3.0, x - 0.5)) for x in xs], "hi": [highs.index(max(3.0, x + 0.5)) for x in xs],
            "highs": len(highs), "views": {CHART: views}, "texts": texts, "steady": {CHART: HELD_WIDTH}}


def input_live_json(i: int, form: str = "tanh") -> bytes:
    """``input_live_table`` as the layer receives it: its JSON (made once, ``ui.live.as_json``)."""
    from ui.live import as_json

    return as_json(input_live_table, i, form)


def input_live_table(i: int, form: str = "tanh") -> dict:
    """The live layer's table for the i-th input (0-based): at every step of its grid (-20 … 20 by 0.5) the cells
    of its row of the table (``on_screen`` of ``five_inputs_table``, the page's own), its two markers and the dotted
    stub between them on the chart (``overview_figure``'s); and, the same for each input, what depends on all five
    (``joint_table``): the chart's view and label (``overview_view``) and the paragraphs (``prose_pieces``).  None of
    it depends on the inputs' values: the page sends it once, not at each move."""
    return {**_own_table(i, form), "joint": joint_table(form)}


def prose_pieces(xs, tanh=None, exact=None, form: str = "tanh") -> list[str]:
    """The two paragraphs under the table, about the inputs on screen, as six pieces: plain, **bold**, plain,
    **bold**, plain (the first paragraph, one message, cut at its bold marks), then the second paragraph (the same
    shape whatever the inputs and language, so the live layer can write each piece into its own text node as an
    input moves).  The first names the most negative input (ReLU erases it, GELU
    keeps a little), the second the smallest positive one (GELU passes a little less than all of it).  ``tanh`` and
    ``exact``: GELU's values at the inputs in the lesson's form and in the other (``other_form``), when the caller
    has them (gelu_core's, by input; else computed here)."""
    n, p = prose_inputs(xs)

    def tanh_at(v: float | None) -> float | None:
        return None if v is None else tanh[v] if tanh is not None else float(gelu_core.gelu(v, approximate=form))

    exact_n = None if n is None else exact[n] if exact is not None else float(
        gelu_core.gelu(n, approximate=other_form(form)))
    return _prose_of(n, tanh_at(n), exact_n, p, tanh_at(p), form)


def prose_inputs(xs) -> tuple[float | None, float | None]:
    """The two inputs the paragraphs name: the most negative and the smallest positive (None where there is none).

    >>> prose_inputs([2.0, -1.0, 0.0, -3.0, 0.5]), prose_inputs([0.0, 1.0])
    ((-3.0, 0.5), (None, 1.0))
    """
    x = [float(v) for v in xs]
    return min((v for v in x if v < 0), default=None), min((v for v in x if v > 0), default=None)


@memo(entry_bytes=4 * 1024)  # 3.9 KB measured, the memo's own keeping included: tests/test_memo.py
def _prose_of(n: float | None, gelu_n: float | None, other_n: float | None, p: float | None,
              gelu_p: float | None, form: str) -> list[str]:
    """``prose_pieces`` of the two inputs it names (``prose_inputs``) and GELU at them (at ``n`` in both forms),
    kept: the same pair comes back at many steps of many tables."""
    if n is not None:
        first = _("Look at **x = {x}**: ReLU gives exactly 0, GELU gives **{gelu}** ({form} form; the {other} form "
                  "{other_gelu}). GELU shrinks a negative input hard but does not erase it.").format(
            x=fixed(n, 2), gelu=readable(gelu_n, 4), form=form_name(form), other=form_name(other_form(form)),
            other_gelu=readable(other_n, 4))
    else:
        first = _("None of your inputs is **negative**: set one **below zero** to see ReLU erase it while GELU keeps "
                  "a little.")
    pieces = first.split("**")
    if p is not None:
        pieces.append(_("On the positive side it lets a little less than all of x through: {gelu} of {x}.").format(
            gelu=fixed(gelu_p), x=fixed(p, 2)))
    else:
        pieces.append(_("None of your inputs is positive: set one above zero to see GELU let a little less than all "
                        "of it through."))
    return pieces


def prose(xs, form: str = "tanh") -> str:
    """The paragraphs under the table (Markdown): ``prose_pieces``, the second and fourth in bold."""
    a, b, c, d, e, f = prose_pieces(xs, form=form)
    return f"{a}**{b}**{c}**{d}**{e}\n\n{f}"


PROSE = "home_prose"  # the paragraph's container: the live layer writes into its text nodes


# the curves: every 0.1 over the widest view any inputs give (-20.5 ... 20.5): 411 points, a relayout of the view
# costs Plotly about half of what 821 did (0.1 apart the chord of GELU strays 0.001 from it: 0.1 px on this chart)
CURVE_STEP, CURVE_END = 0.1, 20.5


def curve_grid() -> np.ndarray:
    """Where the curves are drawn, whatever the inputs: every 0.1 from -20.5 to 20.5 (0 among them, at
    ReLU's corner), so that the view is the axes' range over the same data and the live layer can set it as an input
    moves.

    >>> g = curve_grid(); (len(g), g[0].item(), g[205].item(), g[-1].item())
    (411, -20.5, 0.0, 20.5)
    """
    count = int(round(2 * CURVE_END / CURVE_STEP)) + 1
    return np.round(-CURVE_END + CURVE_STEP * np.arange(count), 12) + 0.0


@memo(entry_bytes=64 * 1024)  # 40 KB measured
def _curves(form: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """The three curves on ``curve_grid`` (ReLU, GELU in the lesson's form, GELU in the other) and the lowest of the
    two GELUs there (the dip, about -0.17, the same for every view: each holds -3 ... 3)."""
    grid = curve_grid()
    mine, other = gelu_core.gelu(grid, approximate=form), gelu_core.gelu(grid, approximate=other_form(form))
    return grid, gelu_core.relu(grid), mine, other, float(min(mine.min(), other.min()))


@memo(entry_bytes=8 * 1024)  # 3.3 KB measured: a float, and what a gelu_core call leaves behind
def _top(hi: float, form: str) -> float:
    """The highest curve at x's right end (ReLU's or GELU's in the lesson's form); one of a few dozen ends (3 ...
    20.5 by 0.5 as the inputs go), asked for at every step of every input's table."""
    return float(max(gelu_core.relu(hi), gelu_core.gelu(hi, approximate=form)))


FIGURE_SPACE = "\u2007"  # as wide as a digit
Y_TICK_END = 25  # above the highest y range any inputs give (tanh GELU at 20.5 and a twentieth to spare: 21.6)


def _short(v: float) -> float:
    """An axis end or label offset to 4 significant digits (the live layer's table of them stays short)."""
    return float(f"{v:.4g}")


def overview_view(xs, tanh_in=None, form: str = "tanh") -> dict:
    """The overview chart's view for inputs ``xs``, as ``Plotly.relayout`` keys: x's range (every input and
    -3 ... 3, half a unit to spare), y's range and ticks, and the label of the input GELU lets through most
    negatively (``annotations[0]``'s place, its arrow's end and text; hidden when no output is negative).
    ``tanh_in``: GELU in the lesson's form at the inputs, when the caller has it (gelu_core's; else computed
    here)."""
    x_in = [float(v) for v in xs]
    tanh_in = [float(v) for v in (gelu_core.gelu(np.asarray(x_in), approximate=form) if tanh_in is None
                                  else tanh_in)]
    return _view_of(*view_inputs(x_in, tanh_in), form)


def view_inputs(x_in: Sequence[float], tanh_in: Sequence[float]) -> tuple[float, float, float, float]:
    """What ``overview_view`` depends on: x's range (every input and -3 ... 3, half a unit to spare) and the input
    GELU lets through most negatively (the first of the lowest, as np.argmin) with its GELU.

    >>> view_inputs([1.0, -1.0, 5.0], [0.84, -0.16, 5.0])
    (-3.0, 5.5, -1.0, -0.16)
    """
    low = min(range(len(x_in)), key=tanh_in.__getitem__)
    return min(-3.0, min(x_in) - 0.5), max(3.0, max(x_in) + 0.5), x_in[low], tanh_in[low]


def _view_of(lo: float, hi: float, x_low: float, t_low: float, form: str) -> dict:
    """``overview_view`` of its inputs (``view_inputs``)."""
    dip = _curves(form)[4]
    y_range, ticks, tick_text, span = _y_axis(hi, form)
    view = {"xaxis.range": [lo, hi], "yaxis.range": y_range, "yaxis.tickvals": ticks, "yaxis.ticktext": tick_text}
    # the input GELU lets through most negatively, the one ReLU zeroes out completely: named under the dip, where
    # nothing is drawn at any width, on one side of x = 0 (the negative one when it holds a third of the chart, room
    # for the text on a 390 px phone), with an arrow to the point
    left = -lo >= (hi - lo) / 3
    view.update({"annotations[0].visible": t_low < 0, "annotations[0].x": x_low,
                 "annotations[0].y": t_low, "annotations[0].ax": _short((-0.02 if left else 0.02) * (hi - lo)),
                 "annotations[0].ay": _short(dip - 0.04 * span), "annotations[0].xanchor": "right" if left else "left",
                 "annotations[0].text": _label(t_low, form)})
    return view


@shared_memo(entry_bytes=4 * 1024)  # 3.4 KB measured, the memo's own keeping included: tests/test_memo.py
def _y_axis(hi: float, form: str) -> tuple[list[float], list[int], list[str], float]:
    """The y axis of the view whose x range ends at ``hi`` (its range, tick values and their labels) and the span
    from the dip to the top; one of a few dozen (``hi`` 3 ... 20.5 by 0.5 as the inputs go), kept."""
    dip, top = _curves(form)[4], _top(hi, form)
    span = top - dip
    step = next(s for s in (1, 2, 5, 10, 20) if top / s <= 6)
    # gridlines at 0 and above only; below the dip a band a fifth of the chart high holds the label
    y_range = [_short(dip - 0.3 * span), _short(top + 0.05 * span)]
    # every multiple of the step up to Y_TICK_END (Plotly draws those in the range): one list a step, so that a view
    # whose top moves within a step leaves the ticks as they are (a relayout of ticks costs twice one of ranges)
    # and each label two figures wide (a figure space before one digit): the left margin, which holds them, is the
    # same for every view, so that the live layer draws each with the margins held (no auto-margin pass: ~50 ms)
    ticks = [step * k for k in range(math.ceil(Y_TICK_END / step))]
    return y_range, ticks, [str(v).rjust(2, FIGURE_SPACE) for v in ticks], span


@memo(entry_bytes=4 * 1024)  # 3.5 KB measured, the memo's own keeping included: tests/test_memo.py
def _label(t_low: float, form: str) -> str:
    """The label under the dip: GELU's form and its value at the input it lets through most negatively, in three
    short lines (a phone at 200 % zoom has about 110 px beside the dip for them)."""
    return f"GELU ({form_name(form)})<br>{fixed(t_low)}<br>ReLU 0"


# px: the narrowest plot area whose margins the live layer holds.  Below ~150 px (a phone at 200 %) Plotly turns
# the x tick labels of some views and not of others, the bottom margin with them (measured at 195-300 px wide
# windows over 130 views: one set of margins per tick_width class from a 156 px plot area up)
HELD_WIDTH = 170


def tick_width(view: dict) -> int:
    """How many characters the widest of a view's y tick labels in range has: the chart's left margin, which Plotly
    sets to hold them, is the same for every view of that width (two for all: overview_view pads them).

    >>> tick_width(overview_view([-2.0, -1.0, 0.0, 1.0, 2.0])), tick_width(overview_view([20.0]))
    (2, 2)
    """
    top = view["yaxis.range"][1]
    return max(len(text) for v, text in zip(view["yaxis.tickvals"], view["yaxis.ticktext"], strict=True) if v <= top)


def overview_figure(xs, form: str = "tanh") -> go.Figure:
    """ReLU and GELU in the lesson's form and in the other, seen over a range that holds every input
    (``overview_view``); the inputs marked on ReLU and on GELU in the lesson's form.

    A dotted stub joins ReLU(x) to GELU(x) at each input: the part GELU keeps that ReLU throws away (or the
    part it holds back).  The input with the most negative GELU is named under the dip, where no curve goes.
    """
    x_in = np.asarray(xs, dtype=np.float64)
    grid, relu, mine, other, _dip = _curves(form)
    relu_in = gelu_core.relu(x_in)
    tanh_in = gelu_core.gelu(x_in, approximate=form)
    key, other_key = gelu_core.GELU_FORMS[form], gelu_core.GELU_FORMS[other_form(form)]
    word, other_word = form_name(form), form_name(other_form(form))

    stub_x, stub_y = [], []
    for xi, r, g in zip(x_in.tolist(), relu_in.tolist(), tanh_in.tolist(), strict=True):
        stub_x += [xi, xi, None]
        stub_y += [r, g, None]

    traces = [
        dict(type="scatter", x=stub_x, y=stub_y, mode="lines", name="ReLU − GELU", hoverinfo="skip",
             line=dict(color=NEUTRAL, width=2, dash="dot"), showlegend=False, meta="gap"),
        line_trace(grid, relu, name="ReLU", key="relu"),
        line_trace(grid, other, name=f"GELU {other_word}", key=other_key),
        line_trace(grid, mine, name=f"GELU {word}", key=key),
        marker_trace(x_in.tolist(), relu_in.tolist(), name=_("ReLU at your inputs"), key="relu", size=10),
        marker_trace(x_in.tolist(), tanh_in.tolist(), name=_("GELU {form} at your inputs").format(form=word), key=key,
                     size=10),
    ]
    view = overview_view(x_in, tanh_in, form)
    layout = base_layout("x", _("output"), height=400)
    layout["margin"]["r"] = 20  # room for an x tick label at the right edge (half of "20": Plotly's margin stays)
    # a vertical gridline would cross the label; tick labels never pass the chart's edge here (Plotly's margins hold
    # them), so Plotly need not measure each to hide those that would (5 ms of each redraw of the live view)
    layout["xaxis"].update(range=view["xaxis.range"], showgrid=False, ticklabeloverflow="allow")
    layout["yaxis"].update(range=view["yaxis.range"], tickvals=view["yaxis.tickvals"], ticktext=view["yaxis.ticktext"],
                           ticklabeloverflow="allow")
    label = {key.removeprefix("annotations[0]."): v for key, v in view.items() if key.startswith("annotations[0].")}
    layout["annotations"] = [dict(xref="x", yref="y", showarrow=True, arrowhead=0, arrowwidth=1, arrowcolor=NEUTRAL,
                                  axref="x", ayref="y", yanchor="top", align="left", font=dict(size=12), **label)]
    return quick_figure(traces, layout)


# ---------------------------------------------------------------- the code for this view
# Home's script: the five inputs through ReLU, the lesson form's gate and GELU, and GELU in the other form, as the
# table shows them.

TEMPLATE = '''
"""GELU Explorer, Home: five numbers through ReLU and GELU, as the page's table shows them."""

$imports

# GELU Explorer's own formulas (gelu_core) and number format (ui/format.py), for float64 tensors
$code


x = torch.tensor([$inputs], dtype=torch.float64)  # the five inputs on the page, (5,)
table = {
    "x": x,
    "ReLU(x)": relu(x),  # max(0, x)
    "$gate_title": gate(x),  # how open GELU's door is, 0 to 1 ($form form)
    "$gelu_title": x * gate(x),  # GELU = x * gate(x), $form form
    "$other_title": x * other_gate(x),  # the $other form, for comparison
}
print("  ".join(f"{name:>10}" for name in table))
for row in zip(*table.values(), strict=True):
    print("  ".join(f"{fixed(value):>10}" for value in row))
'''


def live_tables(form: str) -> list[tuple[Callable, tuple]]:
    """The live tables a first visit at the controls' defaults draws, in the lesson's ``form``: (table, its
    arguments), each as the page hands it to ``ui.live.as_json`` (``ui.pages.make_live_tables``)."""
    return [(input_live_table, (i, form)) for i in range(len(INPUTS))]


def code(values: Values) -> str:
    v = settings(CONTROLS, values)
    form = v["form"]
    names = {"relu": ACTIVATIONS["relu"].formula, "gate": GATES[form], "other_gate": GATES[other_form(form)]}
    titles = columns(form)
    return fill(TEMPLATE, inputs=", ".join(number(v[f"x{i}"]) for i in range(1, 6)), code=source(fixed, names=names),
                form=gelu_core.form_word(form), other=gelu_core.form_word(other_form(form)), gate_title=titles[2],
                gelu_title=titles[3], other_title=titles[4])
