"""The home page's story: a few inputs through ReLU and GELU, as a table and one chart."""

from __future__ import annotations

import math
from collections.abc import Sequence

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
SHARED_BYTES = 128 * 1024
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
                       number_input=True)
    del table["views"]  # none of its own: the shared part's (``_shared_table``) are the input's
    return table


@memo(entry_bytes=SHARED_BYTES)
def _shared_table(i: int, others: tuple[float, ...], form: str) -> dict:
    """``input_live_table``'s part that depends on all five inputs, the other four at ``others``: the paragraphs
    (``prose_pieces``) at every step of the i-th input."""
    from ui.live import grid, shared_columns

    o = CONTROLS[f"x{i + 1}"].options
    xs = grid(o["min_value"], o["max_value"], o["step"])
    mine, theirs = columns(form)[3:]
    table = five_inputs_table(xs, form)
    # gelu_core's values at the others, and at each step of this input the table's own columns
    fixed_in = five_inputs_table(others, form)
    tanh_of = dict(zip(others, fixed_in[mine].tolist(), strict=True))
    exact_of = dict(zip(others, fixed_in[theirs].tolist(), strict=True))
    # Most steps leave the view and the paragraphs as the step before left them (the x range, the lowest input and
    # the inputs the paragraphs name change at a few steps only): each is built once per distinct thing it depends on
    views_of: dict[tuple, dict] = {}
    pieces_of: dict[tuple, list[str]] = {}
    views, pieces = [], []
    step_inputs = _step_inputs(i, others, [tanh_of[v] for v in others])
    for x, t, e in zip(xs.tolist(), table[mine].tolist(), table[theirs].tolist(), strict=True):
        if x in tanh_of:  # x is one of the others: the two functions themselves, on the row as it stands
            row = [*others[:i], x, *others[i:]]
            at, (n, p) = view_inputs(row, [t if v == x else tanh_of[v] for v in row]), prose_inputs(row)
        else:
            at, (n, p) = step_inputs(x, t)
        if at not in views_of:
            views_of[at] = _view_of(*at, form)
        views.append(views_of[at])
        # the paragraphs (``prose_pieces``): the two inputs they name and GELU there (at the first in both forms)
        gelu_n, other_n = (None, None) if n is None else (t, e) if n == x else (tanh_of[n], exact_of[n])
        key = (n, gelu_n, other_n, p, None if p is None else t if p == x else tanh_of[p])
        if key not in pieces_of:
            pieces_of[key] = _prose_of(*key, form)
        pieces.append(pieces_of[key])
    at = f".st-key-{PROSE} p"
    shared = [(at, 0, [p[0] for p in pieces], 0), (f"{at} strong", 0, [p[1] for p in pieces]),
              (at, 0, [p[2] for p in pieces], 2), (f"{at} strong", 1, [p[3] for p in pieces]),
              (at, 0, [p[4] for p in pieces], 4), (at, 1, [p[5] for p in pieces])]
    # The view's margins are held while the layer sets it (no auto-margin pass: a relayout of this chart cost ~27 ms
    # a step with it), one set for each width of the y axis's tick labels, the one thing in a view that moves them
    # (overview_figure's right margin holds any x tick label at the edge), on a plot area of HELD_WIDTH or more
    width = {id(v): tick_width(v) for v in views_of.values()}  # each distinct view's once
    return shared_columns(shared, {CHART: {key: [v[key] for v in views] for key in views[0]}},
                          steady={CHART: ([width[id(v)] for v in views], HELD_WIDTH)})


def _step_inputs(i: int, others: Sequence[float], tanh_others: Sequence[float]):
    """``view_inputs`` and ``prose_inputs`` of the five inputs with the i-th at x (GELU t there) and the other four at
    ``others`` (GELU ``tanh_others``), for one x after another: the others' part is found once, each step's in a few
    comparisons (the same tuples, where x is none of the others: the caller asks the two functions for those).

    >>> at = _step_inputs(0, [-1.0, 0.0, 1.0, 2.0], [-0.16, 0.0, 0.84, 1.95])
    >>> at(-2.0, -0.05), at(-0.5, -0.16)
    (((-3.0, 3.0, -1.0, -0.16), (-2.0, 1.0)), ((-3.0, 3.0, -0.5, -0.16), (-1.0, 1.0)))
    >>> at(5.0, 5.0)
    ((-3.0, 5.5, -1.0, -0.16), (-1.0, 1.0))
    """
    lowest = min(range(len(others)), key=tanh_others.__getitem__)  # the first of the others' lowest GELU
    x_low, t_low = others[lowest], tanh_others[lowest]
    x_first = i <= lowest  # x, at row place i, comes before that one (row place lowest or lowest + 1)
    least, most = min(others), max(others)
    negative = min((v for v in others if v < 0), default=None)
    positive = min((v for v in others if v > 0), default=None)

    def at(x: float, t: float) -> tuple[tuple[float, float, float, float], tuple[float | None, float | None]]:
        low = (x, t) if t < t_low or (t == t_low and x_first) else (x_low, t_low)
        n = x if x < 0 and (negative is None or x < negative) else negative
        p = x if x > 0 and (positive is None or x < positive) else positive
        return (min(-3.0, min(least, x) - 0.5), max(3.0, max(most, x) + 0.5), *low), (n, p)

    return at


def _parts(i: int, inputs, form: str) -> tuple[tuple, tuple, dict]:
    """``input_live_table``'s parts: the arguments of its own part and of its shared part, and this rerun's own
    keys (``base``, ``gen``)."""
    from ui.live import grid

    values = [float(v) for v in inputs]
    o = CONTROLS[f"x{i + 1}"].options
    steps = grid(o["min_value"], o["max_value"], o["step"]).tolist()
    own = values[i]
    return ((i, form), (i, tuple(values[:i] + values[i + 1:]), form),
            {"base": steps.index(own) if own in steps else -1, "gen": " ".join(map(repr, values))})


def input_live_json(i: int, inputs, form: str = "tanh") -> bytes:
    """``input_live_table`` as the layer receives it: the JSON of its own part and of its shared part (each made
    once, ``ui.live.as_json``) and this rerun's keys, joined into one object."""
    import json

    from ui.live import as_json

    own, shared, keys = _parts(i, inputs, form)
    return b",".join([as_json(_own_table, *own)[:-1], as_json(_shared_table, *shared)[1:-1],
                      json.dumps(keys, ensure_ascii=False, separators=(",", ":")).encode()[1:]])


def input_live_table(i: int, inputs, form: str = "tanh") -> dict:
    """The live layer's table for the i-th input (0-based), the five at ``inputs`` now: at every step of its grid
    (-20 … 20 by 0.5) the cells of its row of the table (``on_screen`` of ``five_inputs_table``, the page's own), its
    two markers and the dotted stub between them on the chart (``overview_figure``'s), and, with the other four
    inputs as they are, the paragraphs under the table, which depend on all five (``prose_pieces``).  The others'
    values change only by a rerun, which sends new tables.  With them, what depends on all five: the chart's view and
    label (``overview_view``) and the paragraphs (``prose_pieces``)."""
    own, shared, keys = _parts(i, inputs, form)
    return {**_own_table(*own), **_shared_table(*shared), **keys}


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


def code(values: Values) -> str:
    v = settings(CONTROLS, values)
    form = v["form"]
    names = {"relu": ACTIVATIONS["relu"].formula, "gate": GATES[form], "other_gate": GATES[other_form(form)]}
    titles = columns(form)
    return fill(TEMPLATE, inputs=", ".join(number(v[f"x{i}"]) for i in range(1, 6)), code=source(fixed, names=names),
                form=gelu_core.form_word(form), other=gelu_core.form_word(other_form(form)), gate_title=titles[2],
                gelu_title=titles[3], other_title=titles[4])
