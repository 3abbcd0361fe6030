"""The Curves page: ReLU and one GELU form on a shared range, a probe, other activations on top."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

import gelu_core
from ui.controls import FORM_TO_APPROXIMATE, OVERLAY_LABELS
from ui.theme import NEUTRAL, base_layout, line_trace, marker_trace, quick_figure

PARAM_SYMBOLS = {"negative_slope": "a", "alpha": "α"}

FORM_LATEX = {  # each GELU form on short lines, so it fits a phone
    "exact": r"\begin{gathered} \mathrm{GELU}(x) = x\,\Phi(x) \\ "
             r"= \tfrac{1}{2}\,x\,\operatorname{erfc}\!\left(-\tfrac{x}{\sqrt{2}}\right) \end{gathered}",
    "tanh": r"\begin{gathered} \mathrm{GELU}_{\tanh}(x) = \tfrac12\,x\,\bigl(1 + \tanh u\bigr) \\ "
            r"u = \sqrt{2/\pi}\,\left(x + 0.044715\,x^{3}\right) \end{gathered}",
    "sigmoid": r"\mathrm{GELU}_{\sigma}(x) = x\,\sigma(1.702\,x)",
}


def gelu_key(form: str) -> str:
    """Registry name of a GELU form: "exact" -> "gelu", "tanh" -> "gelu_tanh", "sigmoid" -> "gelu_sigmoid"."""
    return gelu_core.GELU_FORMS[FORM_TO_APPROXIMATE[form]]


def overlay_label(name: str, params: Mapping[str, float]) -> str:
    """"Leaky ReLU (a = 0.05)": the short label plus the parameters the curve was drawn with."""
    label = OVERLAY_LABELS.get(name, gelu_core.get_activation(name).label)
    if not params:
        return label
    return f"{label} ({', '.join(f'{PARAM_SYMBOLS.get(k, k)} = {v:g}' for k, v in params.items())})"


def _overlays(form: str, overlays: Sequence[str]) -> list[str]:
    """The chosen overlays in registry order, without the GELU form already drawn."""
    main = gelu_key(form)
    return [n for n in OVERLAY_LABELS if n in overlays and n != main]


def probe_readout(x: float, form: str) -> dict[str, float]:
    """ReLU(x), GELU(x) and the gate of the chosen form at one x."""
    approximate = FORM_TO_APPROXIMATE[form]
    return {
        "relu": gelu_core.relu(float(x)),
        "gelu": gelu_core.gelu(float(x), approximate=approximate),
        "gate": gelu_core.gelu_gate(float(x), approximate=approximate),
    }


def curves_figure(lo: float, hi: float, n: int, form: str, probe: float, overlays: Sequence[str] = (),
                  params: Mapping[str, Mapping[str, float]] | None = None) -> go.Figure:
    """ReLU and GELU (``form``) on linspace(lo, hi, n), the probe marked on both, overlays in their colours."""
    params = params or {}
    x = np.linspace(lo, hi, int(n))  # (n,), as torch.linspace(lo, hi, n)
    key = gelu_key(form)
    act = gelu_core.get_activation(key)
    traces = [
        line_trace(x, gelu_core.relu(x), name="ReLU", key="relu"),
        line_trace(x, act(x), name=act.label, key=key),
    ]
    for name in _overlays(form, overlays):
        p = dict(params.get(name, {}))
        traces.append(line_trace(x, gelu_core.get_activation(name)(x, **p), name=overlay_label(name, p), key=name,
                                 width=2))
    r = probe_readout(probe, form)
    traces += [
        marker_trace(probe, r["relu"], name=f"ReLU({probe:.2f})", key="relu"),
        marker_trace(probe, r["gelu"], name=f"GELU({probe:.2f})", key=key),
    ]
    layout = base_layout("x", "activation(x)")
    layout["shapes"] = [dict(type="line", x0=probe, x1=probe, yref="paper", y0=0, y1=1,
                             line=dict(color=NEUTRAL, width=1, dash="dot"))]
    return quick_figure(traces, layout)


def values_table(points: Sequence[float], form: str, overlays: Sequence[str] = (),
                 params: Mapping[str, Mapping[str, float]] | None = None) -> dict[str, np.ndarray]:
    """A column per function (ReLU, the GELU form, its gate, each overlay) at the chosen points."""
    params = params or {}
    x = np.asarray(points, dtype=np.float64)  # (k,)
    approximate = FORM_TO_APPROXIMATE[form]
    table = {
        "x": x,
        "ReLU(x)": gelu_core.relu(x),
        f"GELU(x), {form}": gelu_core.gelu(x, approximate=approximate),
        f"gate(x), {form}": gelu_core.gelu_gate(x, approximate=approximate),
    }
    for name in _overlays(form, overlays):
        p = dict(params.get(name, {}))
        table[overlay_label(name, p)] = gelu_core.get_activation(name)(x, **p)
    return table
