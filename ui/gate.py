"""The Gate page: the gate curves, the bell curve whose left area is the gate, the generalised gate, and the
bouncer's sentence, judged from his cards."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence

import numpy as np
import plotly.graph_objects as go

import gelu_core
from gelu_core import normal_pdf
from gelu_core.activations import ACTIVATIONS, GATES, _gaussian_gate
from gelu_core.analysis import gaussian_gate, gelu_minimum
from ui.code_export import Values, fill, number, settings, source
from ui.controls import LESSON_FORM, Control, PageControls
from ui.describe import TABLE_SAMPLES
from ui.format import fixed, percent
from ui.i18n import N_, _, form_name, memo
from ui.lesson import Question
from ui.theme import (
    COLORS,
    NEUTRAL,
    base_layout,
    legend_name,
    line_trace,
    marker_trace,
    plain_spec,
    quick_figure,
    typed,
)

# ---------------------------------------------------------------- the controls (each bound to the URL)

CONTROLS = PageControls("gate", (
    Control("slider", "gate_x", N_("x"), 1.0, dict(min_value=-4.0, max_value=4.0, step=0.1, format="%.2f")),
    Control("slider", "gate_mu", N_("μ (where the gate is half open)"), 0.0,
            dict(min_value=-2.0, max_value=2.0, step=0.1, format="%.1f")),
    Control("slider", "gate_sigma", N_("σ (how soft the gate is)"), 1.0,
            dict(min_value=0.0, max_value=3.0, step=0.05, format="%.2f",
                 help=N_("σ = 0 is the hard step: x·gate becomes ReLU."))),
    LESSON_FORM,
))


# ---------------------------------------------------------------- the question (predict, then check)

def _truth(form: str) -> tuple[str, str]:
    g = gelu_core.gelu_gate(0.0, approximate=form)
    right = dict(zip((0.0, 0.5, 1.0), CHOICES, strict=True)).get(g, "something else")
    return right, _("The gate at 0 is {open} open ({form} form): a standard-normal sample is as likely to fall below 0 "
                    "as above it, so GELU(0) = 0 · {gate} = 0.").format(open=percent(g), form=form_name(form),
                                                                       gate=fixed(g, 1))


CHOICES = (N_("closed (0%)"), N_("half open (50%)"), N_("fully open (100%)"))
QUESTION = Question(
    N_("How open is GELU's gate at x = 0?"), CHOICES, _truth,
    hides="the bouncer's cards, the gate's readouts and its two charts: they show the gate at 0")


BOUNCER_XS = (2.0, 0.0, -3.0)  # the lesson's bouncer: card 2 is let in at ~97 %, 0 at half, -3 at ~0.1 %
GATE_RANGE = (-4.0, 4.0)


def bouncer_readouts() -> list[tuple[float, float]]:
    """(x, Phi(x)) for the lesson's three cards."""
    return [(x, gelu_core.gelu_gate(x)) for x in BOUNCER_XS]


def bouncer_words(readouts: list[tuple[float, float]]) -> str:
    r"""The sentence under the cards, from their numbers: how far the lowest card still opens the door and how far
    the highest one falls short of opening it completely.

    >>> import re; re.findall(r"-?\d+(?:\.\d+)?%?", bouncer_words(bouncer_readouts()))  # Φ(-3), Φ(2)
    ['-3', '0.13%', '2', '97.7%']
    """
    (x_lo, lo), (x_hi, hi) = min(readouts), max(readouts)
    if lo > 0 and hi < 1:
        words = (_("He never slams the door: even a card of {low} gets a sliver ({low_open}), and even {high} is not "
                   "waved through completely ({high_open}).") if lo < 0.01 else
                 _("He never slams the door: even a card of {low} gets a share ({low_open}), and even {high} is not "
                   "waved through completely ({high_open})."))
    elif lo > 0:
        words = (_("He never slams the door: even a card of {low} gets a sliver ({low_open}); {high} is waved through "
                   "completely ({high_open}).") if lo < 0.01 else
                 _("He never slams the door: even a card of {low} gets a share ({low_open}); {high} is waved through "
                   "completely ({high_open})."))
    elif hi < 1:
        words = _("A card of {low} finds the door shut ({low_open}), and even {high} is not waved through completely "
                  "({high_open}).")
    else:
        words = _("A card of {low} finds the door shut ({low_open}); {high} is waved through completely "
                  "({high_open}).")
    return words.format(low=fixed(x_lo, 0), low_open=percent(lo), high=fixed(x_hi, 0), high_open=percent(hi))


@memo(entry_bytes=16 * 1024)  # a few numbers; what torch or scipy leave behind on a call counts too
def gap_per_sigma() -> float:
    """With mu = 0, the largest gap between x · gate(x; 0, sigma) and ReLU is sigma times this: |GELU's minimum|."""
    return -gelu_minimum().value


def gate_label(x: float) -> str:
    """The gate chart's label for the probe at x: Φ(x) as a percentage."""
    return f"Φ({fixed(x, 2)})<br>= <b>{percent(gelu_core.gelu_gate(x))}</b>"


@memo(entry_bytes=64 * 1024)  # 33 KB measured
def _gate_curves(points: int) -> list[dict]:
    """The three gates' curves, the same at every x (in Plotly's typed-array form: the figure's spec shares them)."""
    grid = np.linspace(*GATE_RANGE, points)
    return [typed(t) for t in (
        line_trace(grid, gelu_core.gelu_gate(grid), name=_("Φ(x), exact"), key="gelu"),
        line_trace(grid, gelu_core.gelu_gate(grid, approximate="tanh"), name=_("tanh gate"), key="gelu_tanh"),
        line_trace(grid, gelu_core.gelu_gate(grid, approximate="sigmoid"), name=_("sigmoid gate"),
                   key="gelu_sigmoid"))]


def probe_name(x: float) -> str:
    """The gate chart's probe marker's name (its hover label's second box) at x.

    >>> probe_name(0.5)
    'Φ(0.50)'
    """
    return f"Φ({fixed(x, 2)})"


def gate_figure(x: float, *, points: int = 401) -> go.Figure:
    """The three gates, Phi(x), 0.5 (1 + tanh(u)) and sigmoid(1.702 x), with the probe marked on Phi.

    The probe's percentage is written in a corner no gate reaches, whatever the chart's width: top left (between
    the gridlines at 0.8 and 1) for x <= 0, bottom right (between 0 and 0.2) for x > 0, never across x = 0.  Its
    lines are aligned to the corner's side, so a text the live layer lengthens while the thumb is dragged (the
    label keeps its place until the release) grows into the plot, not out of it.
    """
    g = gelu_core.gelu_gate(x)
    traces = [*(dict(t) for t in _gate_curves(points)), marker_trace(x, g, name=probe_name(x), key="gelu")]
    layout = base_layout("x", _("gate: how open (0 to 1)"), height=360)
    layout["yaxis"].update(range=[-0.05, 1.08], dtick=0.2)
    # a fixed x range (the curves' own): the live layer moves the probe in place and nothing else may move with it
    layout["xaxis"].update(range=list(GATE_RANGE), showgrid=False)  # no vertical gridline: it would cross the label
    left = x <= 0
    layout["annotations"] = [dict(
        x=GATE_RANGE[0] + 0.1 if left else GATE_RANGE[1] - 0.1, y=0.9 if left else 0.1, xref="x", yref="y",
        xanchor="left" if left else "right", yanchor="middle", showarrow=False,
        text=gate_label(x), font=dict(size=13, color=COLORS["gelu"]), align="left" if left else "right",
    )]
    return quick_figure(traces, layout)


def bell_grid(points: int = 401) -> np.ndarray:
    """The bell curve's sample points, rounded as the slider's grid is (``ui.live.grid``): with 401 points every x
    the slider can take is one of them exactly, so the live layer shades the area left of x by taking the curve's
    own points up to x (``gate_live_table``)."""
    return np.round(np.linspace(*GATE_RANGE, points), 12) + 0.0


def area_name(x: float) -> str:
    """The bell chart's shaded area's name (what its words call it) at x.

    >>> area_name(1.0)
    'area = Φ(1.00)'
    """
    return _("area = Φ({x})").format(x=fixed(x, 2))


def bell_label(x: float) -> str:
    """The bell chart's label: the area left of x, Φ(x), as a percentage, on three short lines: on a phone at 200 %
    zoom the bell's plot is ~85 px wide, and "area left of -4.00" (set in 11 px there: draw/a11y.css) was cut by 8 px,
    "4.00 = 99.9968%" by 18 px; its longest line, "= 99.9968%", is ~74 px."""
    return _("area left<br>of {x}<br>= <b>{area}</b>").format(x=fixed(x, 2), area=percent(gelu_core.gelu_gate(x)))


@memo(entry_bytes=32 * 1024)  # 13 KB measured
def _bell_curve(points: int) -> dict:
    """The bell curve itself, the same at every x (typed, as ``_gate_curves``)."""
    grid = bell_grid(points)
    return typed(line_trace(grid, normal_pdf(grid), name=_("bell curve φ(x)"), key="gelu", width=2.5))


def bell_area(x: float, points: int = 401) -> np.ndarray:
    """The shaded area's points: the bell curve's sample points left of x, and x."""
    grid = bell_grid(points)
    return np.append(grid[grid < x], x) if x > GATE_RANGE[0] else np.array([GATE_RANGE[0]])


def bell_words_shape(x: float) -> int:
    """How many rows the shaded area's words have at x (0 where it is a single point, said as a marked one): the live
    layer writes the area's words at rest where this is the page's (``bell_words``); a move that changes it reruns the
    whole page."""
    n = len(bell_area(x))
    return 0 if n == 1 else min(n, TABLE_SAMPLES)


def bell_words(xs: Sequence[float]) -> list:
    """``describe``'s words of ``bell_figure`` at each x, for the live layer: the figure at the first x, its area, its
    name and its label made at each x as ``bell_figure`` makes them (the rest is the same at every x)."""
    from ui.describe import describe

    base = plain_spec(bell_figure(xs[0]))
    area, curve = base["data"]
    label = base["layout"]["annotations"][0]
    words = []
    for x in xs:
        left = bell_area(x)
        words.append(describe({"data": [{**area, "x": left, "y": normal_pdf(left), "name": area_name(x)}, curve],
                               "layout": {**base["layout"], "annotations": [{**label, "text": bell_label(x)}]}},
                              keep=False))
    return words


def bell_figure(x: float, *, points: int = 401) -> go.Figure:
    """The standard normal density with the area left of x shaded: that area is the gate Phi(x)."""
    left = bell_area(x, points)
    blue = COLORS["gelu"]
    traces = [
        dict(type="scatter", x=left, y=normal_pdf(left), mode="lines", fill="tozeroy",
             name=area_name(x),
             fillcolor=blue, line=dict(color=blue, width=0), hoverinfo="skip", meta="area"),  # opaque: 3:1 or more
             # on both themes (WCAG 1.4.11: the area is the gate's meaning; tests/test_chart_contrast.py)
        dict(_bell_curve(points)),
    ]
    layout = base_layout(_("a standard<br>normal sample"), _("density"), height=360)  # lines: ui/ffn.py
    layout["showlegend"] = False
    layout["shapes"] = [dict(type="line", x0=x, x1=x, y0=0, y1=float(normal_pdf(x)),
                             line=dict(color=blue, width=2))]
    # above the bell's peak (0.399), between the gridlines at 0.4 and 0.5, from the left edge: clear of the
    # curve and of x = 0 on any width (on a phone the text ends short of 0, seen in tests/e2e/test_labels.py)
    layout["annotations"] = [dict(
        x=GATE_RANGE[0] + 0.1, y=0.45, xref="x", yref="y", xanchor="left", yanchor="middle", showarrow=False,
        align="left", text=bell_label(x), font=dict(size=12),
    )]
    layout["xaxis"].update(range=list(GATE_RANGE), showgrid=False)
    layout["yaxis"].update(range=[0, 0.5], dtick=0.1)
    return quick_figure(traces, layout)


def generalised_figure(mu: float, sigma: float, *, lo: float = -3.0, hi: float = 3.0,
                       points: int = 601) -> tuple[go.Figure, float]:
    """ReLU against x · gate(x; mu, sigma) and the gate itself; also the largest gap from ReLU on [lo, hi]."""
    grid = np.linspace(lo, hi, points)
    gate = gaussian_gate(grid, mu, sigma)
    gated = grid * gate
    relu = gelu_core.relu(grid)
    is_gelu = mu == 0 and sigma == 1
    traces = [
        line_trace(grid, relu, name="ReLU", key="relu"),
        # dashed: as σ shrinks it lies on ReLU (at σ = 0 exactly), and ReLU must still show through it
        line_trace(grid, gated, name=legend_name(_("x · gate(x; μ, σ) = GELU") if is_gelu else _("x · gate(x; μ, σ)")),
                   key="gelu", dash="dash"),
        line_trace(grid, gate, name=_("gate(x; μ, σ)"), key="gelu", width=1.5, dash="dot"),
    ]
    layout = base_layout("x", _("output"), height=360)
    layout["shapes"] = [dict(type="line", x0=mu, x1=mu, yref="paper", y0=0, y1=1,
                             line=dict(color=NEUTRAL, width=1, dash="dot"))]
    gap = float(np.max(np.abs(gated - relu)))
    return quick_figure(traces, layout), gap


READOUT = "gate_readout"  # the container of the three metrics the x slider moves
DRAWN = "gate_drawn"  # session state: what the page's last full run drew that a move can change (the gate chart's
# label's corner, x <= 0: gate_figure; the shaded area's rows: bell_words_shape)


def readout_labels(form: str) -> tuple[str, str]:
    """The gate's and GELU's metric labels in the lesson's form and the reader's language, with ``{at}`` where x
    goes.

    >>> readout_labels("none"), readout_labels("tanh")
    (('gate Φ({at})', 'GELU({at}) = x · Φ(x)'), ('gate at {at}, tanh form', 'GELU({at}), tanh form'))
    """
    if form == "none":
        return _("gate Φ({at})"), "GELU({at}) = x · Φ(x)"
    word = form_name(form)
    return (_("gate at {at}, {form} form").format(at="{at}", form=word),
            _("GELU({at}), {form} form").format(at="{at}", form=word))


def readout_texts(x: float, form: str = "none") -> list[tuple[str, str]]:
    """The three metrics under the charts at x, (label, value), as the page shows them, in the lesson's form."""
    at = fixed(x, 2)
    gate, gelu = (label.format(at=at) for label in readout_labels(form))
    return [(gate, percent(gelu_core.gelu_gate(x, approximate=form))),
            (gelu, fixed(gelu_core.gelu(x, approximate=form))),
            (f"ReLU({at})", fixed(gelu_core.relu(x)))]


@memo(entry_bytes=512 * 1024)  # 404 KB measured, the bell's words at every step included
def gate_live_table(form: str = "none") -> dict:
    """The live layer's table for the x slider: the three metrics' labels and values and the gate chart's probe on
    Φ with its label's text at every step of the slider's grid, by the page's own calls (``readout_texts``,
    gelu_gate, ``gate_label``).  The label keeps its corner until the rerun on release (either corner is clear of
    the gates and of the probe at any x).  The bell chart: its shaded area is the bell curve's own first points,
    up to the one at x (``bell_grid`` holds every step exactly: the table gives how many), its edge line rises
    there to the curve's point, and its label is ``bell_label``'s.  The charts' words: what they say of the probe, of
    the shaded area and of the labels (``ui.describe.live_words``)."""
    from ui.describe import live_words
    from ui.live import annotation_pieces, chart_spec, grid, live_table

    o = CONTROLS["x"].options
    xs = grid(o["min_value"], o["max_value"], o["step"]).tolist()
    shown = [readout_texts(x, form) for x in xs]
    labels, values = (f".st-key-{READOUT} [data-testid='{t}'] p" for t in ("stMetricLabel", "stMetricValue"))
    texts = [(sel, n, [row[n][part] for row in shown]) for n in range(3) for part, sel in enumerate((labels, values))]
    traces = {"marker:gelu": {"x": xs, "y": [gelu_core.gelu_gate(x) for x in xs], "name": list(map(probe_name, xs))}}
    gate_labels, bell_labels = [gate_label(x) for x in xs], [bell_label(x) for x in xs]
    label = list(zip(*map(annotation_pieces, gate_labels), strict=True))  # one column per piece
    bell = bell_grid().tolist()
    missing = sorted(set(xs) - set(bell))
    if missing:  # the shaded area would end short of x: the curve must be sampled at every step
        raise ValueError(f"the bell curve has no point at x = {missing[:3]}")
    bell_chart = chart_spec("chart_gate-bell", fills={"area": {"of": "gelu", "n": [bell.index(x) + 1 for x in xs],
                                                                "edge": 0, "name": list(map(area_name, xs))}},
                            annotations={0: list(zip(*map(annotation_pieces, bell_labels), strict=True))},
                            labels={0: bell_labels}, settle=True,
                            words=live_words(bell_figure(xs[0]), "gate-bell", {}, {0: bell_labels},
                                             steps=bell_words(xs)))
    words = live_words(gate_figure(xs[0], points=2), "gate", traces, {0: gate_labels})
    return live_table({"key": CONTROLS["x"].key, **o}, texts=texts, chart_key="chart_gate", traces=traces,
                      annotations={0: label}, labels={0: gate_labels}, settle=True, charts=[bell_chart], words=words)


# ---------------------------------------------------------------- the code for this view
# The Gate's script: the bouncer's cards, the gate, GELU and ReLU at x, and the generalised gate's largest gap.

TEMPLATE = '''
"""GELU Explorer, The gate: Phi(x), the chance that a standard-normal sample falls below x, and GELU = x * Phi(x)."""

$imports

# GELU Explorer's own formulas (gelu_core) and number formats (ui/format.py), for float64 tensors
$code


# The bouncer: show him a card, he opens the door by Phi(card)
for card in ($cards):
    print(f"card {fixed(card, 0)}: {percent(phi(torch.tensor(card, dtype=torch.float64)))} open")

x = torch.tensor($x, dtype=torch.float64)  # the slider
at = fixed(x, 2)
print(f"$gate_label: {percent($gate(x))}")  # the gate in the lesson's form ($form)
print(f"$gelu_label: {fixed(x * $gate(x))}")
print(f"ReLU({at}): {fixed(relu(x))}")

# Soften or harden the gate: gate(x; mu, sigma) = Phi((x - mu) / sigma); sigma = 0 is the hard step at mu
mu, sigma = $mu, $sigma
grid = torch.linspace($lo, $hi, $points, dtype=torch.float64)  # ($points,), as the page's chart
gap = torch.max(torch.abs(grid * soft_gate(grid, mu, sigma) - relu(grid)))
print(f"Largest gap between x · gate and ReLU on $lo_text … $hi_text: {fixed(gap)}")
'''


def live_tables(form: str) -> list[tuple[Callable, tuple]]:
    """The live tables a first visit at the controls' defaults draws, in the lesson's ``form``: (table, its
    arguments), each as the page hands it to ``ui.live.as_json`` (``ui.pages.make_live_tables``)."""
    return [(gate_live_table, (form,))]


def code(values: Values) -> str:
    v = settings(CONTROLS, values)
    chart = {k: p.default for k, p in inspect.signature(generalised_figure).parameters.items()}  # the chart's grid
    gate_label, gelu_label = readout_labels(v["form"])
    gates = {"phi": GATES["none"]} if v["form"] == "none" else {"phi": GATES["none"], "gate": GATES[v["form"]]}
    return fill(TEMPLATE, x=number(v["x"]), mu=number(v["mu"]), sigma=number(v["sigma"]),
                gate_label=gate_label, gelu_label=gelu_label, form=gelu_core.form_word(v["form"]), gate=list(gates)[-1],
                cards=", ".join(number(c) for c in BOUNCER_XS), lo=number(chart["lo"]), hi=number(chart["hi"]),
                points=chart["points"], lo_text=fixed(chart["lo"], 0), hi_text=fixed(chart["hi"], 0),
                code=source(fixed, percent, names={"relu": ACTIVATIONS["relu"].formula, **gates,
                                                     "soft_gate": _gaussian_gate}))
