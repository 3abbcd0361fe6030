"""The home page's story: a few inputs through ReLU and GELU, as a table and one chart."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

import gelu_core
from ui.controls import fmt
from ui.theme import NEUTRAL, base_layout, line_trace, marker_trace, quick_figure

TABLE_COLUMNS = {  # column title -> what it holds
    "x": "the input",
    "ReLU(x)": "max(0, x)",
    "GELU(x), tanh form": "0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), as GPT-2 and the book compute it",
    "GELU(x), exact": "x·Φ(x)",
    "gate Φ(x)": "how open the exact gate is: the chance a standard-normal sample falls below x",
}


def five_inputs_table(xs) -> dict[str, np.ndarray]:
    """Each input through ReLU, tanh GELU and exact GELU, plus the exact gate (columns of TABLE_COLUMNS)."""
    x = np.asarray(xs, dtype=np.float64)  # (n,)
    return {
        "x": x,
        "ReLU(x)": gelu_core.relu(x),
        "GELU(x), tanh form": gelu_core.gelu(x, approximate="tanh"),
        "GELU(x), exact": gelu_core.gelu(x),
        "gate Φ(x)": gelu_core.gelu_gate(x),
    }


def overview_figure(xs, *, points: int = 400) -> go.Figure:
    """ReLU, exact and tanh GELU over a range that holds every input; the inputs marked on ReLU and tanh GELU.

    A dotted stub joins ReLU(x) to GELU(x) at each input: the part GELU keeps that ReLU throws away (or the
    part it holds back).
    """
    x_in = np.asarray(xs, dtype=np.float64)
    lo = min(-3.0, float(x_in.min()) - 0.5)
    hi = max(3.0, float(x_in.max()) + 0.5)
    grid = np.linspace(lo, hi, points)
    relu_in = gelu_core.relu(x_in)
    tanh_in = gelu_core.gelu(x_in, approximate="tanh")

    stub_x, stub_y = [], []
    for xi, r, g in zip(x_in.tolist(), relu_in.tolist(), tanh_in.tolist(), strict=True):
        stub_x += [xi, xi, None]
        stub_y += [r, g, None]

    traces = [
        dict(type="scatter", x=stub_x, y=stub_y, mode="lines", name="ReLU − GELU", hoverinfo="skip",
             line=dict(color=NEUTRAL, width=2, dash="dot"), showlegend=False, meta="gap"),
        line_trace(grid, gelu_core.relu(grid), name="ReLU", key="relu"),
        line_trace(grid, gelu_core.gelu(grid), name="GELU exact", key="gelu"),
        line_trace(grid, gelu_core.gelu(grid, approximate="tanh"), name="GELU tanh", key="gelu_tanh"),
        marker_trace(x_in.tolist(), relu_in.tolist(), name="ReLU at your inputs", key="relu", size=10),
        marker_trace(x_in.tolist(), tanh_in.tolist(), name="GELU tanh at your inputs", key="gelu_tanh", size=10),
    ]
    low = int(np.argmin(tanh_in))
    if tanh_in[low] < 0:  # the input GELU lets through most negatively: the one ReLU zeroes out completely
        traces[-1]["mode"] = "markers+text"
        traces[-1]["text"] = [f"{fmt(v)} (ReLU: 0)" if i == low else "" for i, v in enumerate(tanh_in.tolist())]
        traces[-1]["textposition"] = "bottom center"
    traces[-1]["textfont"] = dict(size=12)
    layout = base_layout("x", "output", height=400)
    layout["xaxis"]["range"] = [lo, hi]
    return quick_figure(traces, layout)
