"""The Curves page: ReLU and one GELU form on a shared range, a probe, other activations on top, the values at
chosen points as tables a phone can show, and the opening sentence with the chosen form's numbers."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

import gelu_core
from gelu_core.activations import ACTIVATIONS, GATES
from ui.code_export import Values, fill, number, settings, source
from ui.controls import LESSON_FORM, Control, PageControls, ordered_range, param_range, parse_points, short_label
from ui.format import fixed, percent
from ui.i18n import N_, _, form_name, memo
from ui.lesson import Question
from ui.theme import NEUTRAL, base_layout, line_trace, marker_trace, quick_figure

# ---------------------------------------------------------------- the controls (each bound to the URL)

OVERLAYS = tuple(name for name in ACTIVATIONS if name != "relu")  # Curves draws ReLU always
CONTROLS = PageControls("curves", (
    Control("slider", "curves_range", N_("Range of x"), (-3.0, 3.0),
            dict(min_value=-10.0, max_value=10.0, step=0.5, format="%.1f")),
    Control("slider", "curves_n", N_("Points on each curve"), 100,
            dict(min_value=2, max_value=1000, step=1,
                 help=N_("The source draws 100 points: torch.linspace(-3, 3, 100)."))),
    Control("slider", "curves_x", N_("Probe x"), -1.0,
            dict(min_value=-10.0, max_value=10.0, step=0.1, format="%.2f")),
    LESSON_FORM,
    Control("multiselect", "curves_more", N_("Overlay other activations"), [],
            dict(options=OVERLAYS, format_func=short_label, placeholder="Sigmoid, Tanh, SiLU, ...")),
    Control("slider", "curves_slope", N_("Leaky ReLU slope a"), 0.01,
            dict(param_range("leaky_relu", "negative_slope"), step=0.01, format="%.2f")),
    Control("slider", "curves_alpha", "ELU α", 1.0,
            dict(param_range("elu", "alpha"), step=0.1, format="%.1f")),
    Control("text_input", "curves_points", N_("Values at these x"), "-2, -1, 0, 1, 2",
            dict(max_chars=200, help=N_("Numbers separated by commas, at most 25."))),
), renamed={"curves_form": LESSON_FORM.key})  # an older link names the form per page


# ---------------------------------------------------------------- the question (predict, then check)

def _truth(form: str) -> tuple[str, str]:
    y = gelu_core.gelu(3.0, approximate=form)
    right = CHOICES[1] if abs(y - 3.0) < 0.01 else CHOICES[0] if y < 3 else CHOICES[2]
    return right, _("GELU(3) = {y} in the {form} form: the gate is {open} open, so a large positive number passes "
                    "almost unchanged, as with ReLU.").format(y=fixed(y), form=form_name(form),
                                                              open=percent(gelu_core.gelu_gate(3.0, approximate=form)))


CHOICES = (N_("well below 3"), N_("almost exactly 3"), N_("above 3"))
QUESTION = Question(N_("What is GELU(3) ({form} form)?"), CHOICES, _truth,
                    hides="the sentences that open the page, the chart, the probe's readouts and the values table")


# gelu_core's description of each activation (gelu_core speaks English only), for extraction; the page shows
# ``_(activation.description)`` (tests/test_i18n.py holds the two the same)
DESCRIPTIONS = {
    "relu": N_("A hard rule: negatives become 0, positives pass unchanged."),
    "gelu": N_("x times the chance that a standard-normal sample falls below x."),
    "gelu_tanh": N_("The cheaper approximation used by GPT-2 and chapter 4 of the book."),
    "gelu_sigmoid": N_("The cheapest approximation: a sigmoid gate squeezed to match Phi."),
    "sigmoid": N_("Squashes any number into (0, 1); the classic gate of early networks."),
    "tanh": N_("Squashes into (-1, 1), centred on zero."),
    "silu": N_("GELU's close cousin: x gated by a sigmoid instead of Phi (Llama uses it)."),
    "leaky_relu": N_("ReLU that lets a fixed fraction a of each negative through."),
    "elu": N_("Smooth on the negative side, levelling off at -alpha."),
    "softplus": N_("A smooth ReLU that never goes negative."),
}


PARAM_SYMBOLS = {"negative_slope": "a", "alpha": "α"}


def overlay_label(name: str, params: Mapping[str, float]) -> str:
    """"Leaky ReLU (a = 0.05)": the registry's short label plus the parameters the curve was drawn with."""
    label = gelu_core.get_activation(name).short
    if not params:
        return label
    return f"{label} ({', '.join(f'{PARAM_SYMBOLS.get(k, k)} = {v:g}' for k, v in params.items())})"


# the overlays with a parameter: registry name -> (the page's control for it, the parameter's name)
OVERLAY_PARAMS = {"leaky_relu": ("slope", "negative_slope"), "elu": ("alpha", "alpha")}


def table_points(text: str | None) -> tuple[list[float], str | None]:
    """The points the values table shows for the typed text, and why they are the default ones instead (None
    when the text is used)."""
    try:
        return parse_points(text), None
    except ValueError as err:
        note = _("{problem} Meanwhile the table shows the default points.").format(problem=err)
        return parse_points(CONTROLS["points"].default), note


def chosen_overlays(approximate: str, overlays: Sequence[str]) -> list[str]:
    """The chosen overlays in registry order, without the GELU form already drawn."""
    main = gelu_core.GELU_FORMS[approximate]
    return [n for n in gelu_core.ACTIVATIONS if n in overlays and n not in ("relu", main)]


def shape_words(approximate: str) -> str:
    r"""The page's opening sentences, with GELU's dip and its value at 3 in the chosen form (a dip of less than a
    quarter is "a little").

    >>> import re; words = shape_words("none")
    >>> re.findall(r"-?\d+\.\d+", words), "a little" in words
    (['-0.1700', '-0.7518', '2.9960'], True)
    """
    from ui.derivative import landmarks  # GELU's minimum, found once per form

    low = landmarks(approximate).minimum
    words = (_("ReLU lies flat on zero for every negative x and follows x for every positive one. GELU ({form}) dips "
               "a little below zero, to {low} at x = {x}, turns smoothly through the origin and joins the line y = x "
               "as x grows: GELU(3) = {at3}.") if -low.value < 0.25 else
             _("ReLU lies flat on zero for every negative x and follows x for every positive one. GELU ({form}) dips "
               "well below zero, to {low} at x = {x}, turns smoothly through the origin and joins the line y = x as "
               "x grows: GELU(3) = {at3}."))
    return words.format(form=form_name(approximate), low=fixed(low.value), x=fixed(low.x),
                        at3=fixed(gelu_core.gelu(3.0, approximate=approximate)))


def probe_readout(x: float, approximate: str) -> dict[str, float]:
    """ReLU(x), GELU(x) and the gate of the chosen form at one x."""
    return {
        "relu": gelu_core.relu(float(x)),
        "gelu": gelu_core.gelu(float(x), approximate=approximate),
        "gate": gelu_core.gelu_gate(float(x), approximate=approximate),
    }


READOUT = "curves_readout"  # the container of the three metrics: the live layer writes into it


def readout_texts(x: float, approximate: str) -> dict[str, str]:
    """The three metrics' labels and values at one x, as the page shows them."""
    form = form_name(approximate)
    r = probe_readout(x, approximate)
    at = fixed(x, 2)
    return {"relu_label": f"ReLU({at})", "relu": fixed(r["relu"]),
            "gelu_label": f"GELU({at}), {form}", "gelu": fixed(r["gelu"]),
            "gate_label": _("gate({at}), {form}").format(at=at, form=form), "gate": fixed(r["gate"])}


def outside_note(x: float, lo: float, hi: float) -> str:
    """The sentence under the readouts when the probe is off the chart ("" when it is on it)."""
    if lo <= x <= hi:
        return ""
    return _("The probe x = {x} lies outside the plotted range: widen the range to see it.").format(x=fixed(x, 2))


@memo(entry_bytes=256 * 1024)  # 100 KB measured
def _probe_columns(approximate: str) -> dict[str, tuple]:
    """Every readout string and marker height at every position of the probe's slider, for one form: the
    functions of ``probe_readout`` on the whole grid at once (bit for bit the same numbers, tests/test_live_tables),
    written as ``readout_texts`` writes them."""
    from ui.live import grid

    o = CONTROLS["x"].options
    xs = grid(o["min_value"], o["max_value"], o["step"])
    relu, gelu = gelu_core.relu(xs), gelu_core.gelu(xs, approximate=approximate)
    gate = gelu_core.gelu_gate(xs, approximate=approximate)
    form = form_name(approximate)
    at = [fixed(float(x), 2) for x in xs]
    return {"x": tuple(xs.tolist()), "y_relu": tuple(relu.tolist()), "y_gelu": tuple(gelu.tolist()),
            "relu_label": tuple(f"ReLU({a})" for a in at), "relu": tuple(fixed(float(v)) for v in relu),
            "gelu_label": tuple(f"GELU({a}), {form}" for a in at), "gelu": tuple(fixed(float(v)) for v in gelu),
            "gate_label": tuple(_("gate({at}), {form}").format(at=a, form=form) for a in at),
            "gate": tuple(fixed(float(v)) for v in gate)}


def probe_live_table(approximate: str, lo: float, hi: float) -> dict:
    """The live layer's table for the probe slider: the metrics, the two markers, the dotted line, the note and what
    the chart's words say of the markers at every step of the slider's grid, from the same functions the page draws
    with."""
    from ui.describe import live_words
    from ui.live import live_table

    c = _probe_columns(approximate)
    key = gelu_core.GELU_FORMS[approximate]
    labels = f".st-key-{READOUT} [data-testid='stMetricLabel'] p"
    values = f".st-key-{READOUT} [data-testid='stMetricValue'] p"
    texts = [(labels, 0, c["relu_label"]), (values, 0, c["relu"]), (labels, 1, c["gelu_label"]),
             (values, 1, c["gelu"]), (labels, 2, c["gate_label"]), (values, 2, c["gate"])]
    relu_names, gelu_names = zip(*map(probe_names, c["x"]), strict=True)
    traces = {"marker:relu": {"x": c["x"], "y": c["y_relu"], "name": relu_names},
              f"marker:{key}": {"x": c["x"], "y": c["y_gelu"], "name": gelu_names}}
    note = [outside_note(x, lo, hi) for x in c["x"]]
    words = live_words(curves_figure(lo, hi, 2, approximate, lo), "curves", traces)
    return live_table({"key": CONTROLS["x"].key, **CONTROLS["x"].options}, texts=texts, chart_key="chart_curves",
                      traces=traces, lines={0: c["x"]}, note=note, settle=True, words=words)


def probe_names(x: float) -> tuple[str, str]:
    """The two probe markers' names (their hover labels' second box) at x.

    >>> probe_names(-1.0)
    ('ReLU(-1.00)', 'GELU(-1.00)')
    """
    return f"ReLU({fixed(x, 2)})", f"GELU({fixed(x, 2)})"


def curves_figure(lo: float, hi: float, n: int, approximate: str, probe: float, overlays: Sequence[str] = (),
                  params: Mapping[str, Mapping[str, float]] | None = None) -> go.Figure:
    """ReLU and GELU (``approximate``) on linspace(lo, hi, n), the probe marked on both, overlays in their
    colours."""
    params = params or {}
    x = np.linspace(lo, hi, int(n))  # (n,), as torch.linspace(lo, hi, n)
    key = gelu_core.GELU_FORMS[approximate]
    act = gelu_core.get_activation(key)
    traces = [
        line_trace(x, gelu_core.relu(x), name="ReLU", key="relu"),
        line_trace(x, act(x), name=act.label, key=key),
    ]
    for name in chosen_overlays(approximate, overlays):
        p = dict(params.get(name, {}))
        traces.append(line_trace(x, gelu_core.get_activation(name)(x, **p), name=overlay_label(name, p), key=name,
                                 width=2))
    r = probe_readout(probe, approximate)
    relu_name, gelu_name = probe_names(probe)
    traces += [
        marker_trace(probe, r["relu"], name=relu_name, key="relu"),
        marker_trace(probe, r["gelu"], name=gelu_name, key=key),
    ]
    # each overlay adds a legend entry, a line of its own on a phone: the chart grows by one such line per overlay
    layout = base_layout("x", _("activation(x)"), height=420 + 22 * (len(traces) - 4))
    # Fixed axes: the range of x the student chose, and y over every curve there and both markers at every probe
    # position inside it, so that moving the probe (live, in the browser, or by a rerun) moves nothing else.
    layout["xaxis"]["range"] = [float(lo), float(hi)]
    layout["yaxis"]["range"] = _y_range([t["y"] for t in traces[:-2]], approximate, lo, hi)
    layout["shapes"] = [dict(type="line", x0=probe, x1=probe, yref="paper", y0=0, y1=1,
                             line=dict(color=NEUTRAL, width=1, dash="dot"))]
    return quick_figure(traces, layout)


def _y_range(curves: Sequence[np.ndarray], approximate: str, lo: float, hi: float) -> list[float]:
    """The y axis's range: every drawn curve, and the markers at every probe position in [lo, hi], 5 % apart."""
    c = _probe_columns(approximate)
    inside = [i for i, x in enumerate(c["x"]) if lo <= x <= hi]
    marks = [c["y_relu"][i] for i in inside] + [c["y_gelu"][i] for i in inside]
    ys = np.concatenate([np.asarray(y, dtype=np.float64).ravel() for y in curves] + [np.asarray(marks, dtype=float)])
    ys = ys[np.isfinite(ys)]
    bottom, top = (float(ys.min()), float(ys.max())) if ys.size else (-1.0, 1.0)
    pad = 0.05 * (top - bottom) or 0.5
    return [bottom - pad, top + pad]


def values_tables(points: Sequence[float], approximate: str, overlays: Sequence[str] = (),
                  params: Mapping[str, Mapping[str, float]] | None = None) -> list[dict[str, np.ndarray]]:
    """The functions at the chosen points, as tables of x and at most two functions each, so that a table fits a
    phone's width even for x = -1e6: ReLU beside the GELU form, then its gate, then the overlays two by two."""
    params = params or {}
    x = np.asarray(points, dtype=np.float64)  # (k,)
    form = form_name(approximate)
    tables = [
        {"x": x, "ReLU(x)": gelu_core.relu(x), f"GELU(x), {form}": gelu_core.gelu(x, approximate=approximate)},
        {"x": x, _("gate(x), {form}").format(form=form): gelu_core.gelu_gate(x, approximate=approximate)},
    ]
    names = chosen_overlays(approximate, overlays)
    for i in range(0, len(names), 2):
        table = {"x": x}
        for name in names[i:i + 2]:
            p = dict(params.get(name, {}))
            table[overlay_label(name, p)] = gelu_core.get_activation(name)(x, **p)
        tables.append(table)
    return tables


# ---------------------------------------------------------------- the code for this view
# The Curves script: the probe's three readouts and the values table, with the overlaid activations' columns.

TEMPLATE = '''
"""GELU Explorer, Curves: ReLU and GELU ($form form) at the probe x, and the table of values at chosen points."""

$imports

# GELU Explorer's own formulas (gelu_core) and number format (ui/format.py), for float64 tensors
$code


x = torch.tensor($x, dtype=torch.float64)  # the probe
print(f"ReLU({fixed(x, 2)}): {fixed(relu(x))}")
print(f"GELU({fixed(x, 2)}), $form: {fixed(x * $gate(x))}")  # GELU(x) = x * gate(x)
print(f"gate({fixed(x, 2)}), $form: {fixed($gate(x))}")

x = torch.tensor([$points], dtype=torch.float64)  # the table's points, ($count,)
table = {
    "x": x,
    "ReLU(x)": relu(x),
    "GELU(x), $form": x * $gate(x),
    "gate(x), $form": $gate(x),$overlays
}
print("  ".join(f"{name:>10}" for name in table))
for row in zip(*table.values(), strict=True):
    print("  ".join(f"{value:>{max(10, len(name))}.4f}" for name, value in zip(table, row, strict=True)))
'''


def _name(formula) -> str:
    return formula.__name__.lstrip("_")  # as ``source`` prints it


def live_tables(form: str) -> list[tuple[Callable, tuple]]:
    """The live tables a first visit at the controls' defaults draws, in the lesson's ``form``: (table, its
    arguments), each as the page hands it to ``ui.live.as_json`` (``ui.pages.make_live_tables``)."""
    return [(probe_live_table, (form, *ordered_range(*CONTROLS["range"].default)))]


def code(values: Values) -> str:
    v = settings(CONTROLS, values)
    approximate = v["form"]
    points, _problem = table_points(v["points"])  # the default points while the typed ones are not numbers, as the page
    params = {name: {param: float(v[control])} for name, (control, param) in OVERLAY_PARAMS.items()}
    overlays = [ACTIVATIONS[n] for n in chosen_overlays(approximate, v["more"])]  # as the page
    formulas = [GATES[approximate]]
    lines = ""
    for a in overlays:
        p = params.get(a.name, {})
        if a.approximate:  # another GELU form: x * its gate
            formulas.append(GATES[a.approximate])
            expression = f"x * {_name(GATES[a.approximate])}(x)"
        else:
            formulas.append(a.formula)
            expression = f"{_name(a.formula)}({', '.join(['x', *(number(p[k]) for k in a.params)])})"
        lines += f'\n    "{overlay_label(a.name, p)}": {expression},'
    return fill(TEMPLATE, form=gelu_core.form_word(approximate), gate=_name(GATES[approximate]), x=number(v["x"]),
                points=", ".join(number(p) for p in points), count=len(points), overlays=lines,
                code=source(*formulas, fixed, names={"relu": ACTIVATIONS["relu"].formula}))
