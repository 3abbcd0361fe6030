"""The home page's story: a few inputs through ReLU and GELU, as a table and one chart."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

import gelu_core
from hosting.runs import memo
from ui.format import fixed, readable
from ui.theme import NEUTRAL, base_layout, line_trace, marker_trace, quick_figure


def five_inputs_table(xs) -> dict[str, np.ndarray]:
    """Each input through ReLU and tanh GELU, with the tanh gate between them (GELU = x · gate), and exact GELU;
    the keys are the columns' titles, short for a phone (the page's caption says more)."""
    x = np.asarray(xs, dtype=np.float64)  # (n,)
    return {
        "x": x,
        "ReLU(x)": gelu_core.relu(x),
        "gate(x)": gelu_core.gelu_gate(x, approximate="tanh"),
        "GELU(x)": gelu_core.gelu(x, approximate="tanh"),
        "x·Φ(x)": gelu_core.gelu(x),
    }


def on_screen(table: dict[str, np.ndarray]) -> dict[str, list[str]]:
    """The table as drawn: every cell to four decimals in the app's number format (never "-0.0000")."""
    return {name: [fixed(v) for v in column.tolist()] for name, column in table.items()}


ENTRY_BYTES = 256 * 1024  # measured: tests/test_memo.py
TABLE_CELL = "[data-testid='stMain'] [data-testid='stTable'] tbody td:nth-child({}) p"  # column n (1-based), row by nth


@memo(entry_bytes=ENTRY_BYTES)
def input_live_table(i: int) -> dict:
    """The live layer's table for the i-th input (0-based): at every step of its grid (-20 … 20 by 0.5) the cells of
    its row of the table (``on_screen`` of ``five_inputs_table``, the page's own), and its two markers and the dotted
    stub between them on the chart (``overview_figure``'s).  The chart's range, its label and the paragraph under
    the table depend on all five inputs together: they follow on the rerun (Enter, or the held key's release)."""
    from ui.controls import HOME
    from ui.live import grid, live_table

    control = HOME[f"x{i + 1}"]
    xs = grid(control.options["min_value"], control.options["max_value"], control.options["step"])
    table = five_inputs_table(xs)
    cells = on_screen(table)
    texts = [(TABLE_CELL.format(n + 1), i, column) for n, column in enumerate(cells.values())]
    relu, tanh = table["ReLU(x)"], table["GELU(x)"]
    traces = {"marker:relu": {"x": xs, "y": relu, "point": i},
              "marker:gelu_tanh": {"x": xs, "y": tanh, "point": i},
              "gap": {"x": xs, "y": tanh, "segment": i, "y0": relu, "y1": tanh}}
    return live_table({"key": control.key, **control.options}, texts=texts, chart_key="chart_home", traces=traces,
                      number_input=True)


def prose(xs) -> str:
    """The paragraph under the table, about the inputs on screen: the most negative one (ReLU erases it,
    GELU keeps a little) and the smallest positive one (GELU passes a little less than all of it)."""
    x = sorted(set(float(v) for v in xs))
    negative = [v for v in x if v < 0]
    positive = [v for v in x if v > 0]
    parts = []
    if negative:
        n = negative[0]
        parts.append(
            f"Look at **x = {fixed(n, 2)}**: ReLU gives exactly 0, GELU gives "
            f"**{readable(gelu_core.gelu(n, approximate='tanh'), 4)}** (tanh form; the exact form "
            f"{readable(gelu_core.gelu(n), 4)}). GELU shrinks a negative input hard but does not erase it."
        )
    else:
        parts.append("None of your inputs is negative: set one below zero to see ReLU erase it while GELU "
                     "keeps a little.")
    if positive:
        p = positive[0]
        parts.append(f"On the positive side it lets a little less than all of x through: "
                     f"{fixed(gelu_core.gelu(p, approximate='tanh'))} of {fixed(p, 2)}.")
    return " ".join(parts)


def overview_figure(xs, *, points: int = 400) -> go.Figure:
    """ReLU, exact and tanh GELU over a range that holds every input; the inputs marked on ReLU and tanh GELU.

    A dotted stub joins ReLU(x) to GELU(x) at each input: the part GELU keeps that ReLU throws away (or the
    part it holds back).  The input with the most negative GELU is named under the dip, where no curve goes.
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
    layout = base_layout("x", "output", height=400)
    layout["xaxis"].update(range=[lo, hi], showgrid=False)  # a vertical gridline would cross the label
    top = float(max(gelu_core.relu(hi), gelu_core.gelu(hi, approximate="tanh")))
    dip = float(min(gelu_core.gelu(grid).min(), gelu_core.gelu(grid, approximate="tanh").min()))  # about -0.17
    span = top - dip
    step = next(s for s in (1, 2, 5, 10, 20) if top / s <= 6)
    # gridlines at 0 and above only; below the dip a band a fifth of the chart high holds the label
    y_range = [dip - 0.3 * span, top + 0.05 * span]
    layout["yaxis"].update(range=y_range, tickvals=list(np.arange(0.0, y_range[1], step)))
    low = int(np.argmin(tanh_in))
    if tanh_in[low] < 0:  # the input GELU lets through most negatively: the one ReLU zeroes out completely
        # Under the dip nothing is drawn, at any width; the label stays on one side of x = 0, the negative one when
        # it holds a third of the chart (room for the text on a 390 px phone), with an arrow to the point.
        left = -lo >= (hi - lo) / 3
        layout["annotations"] = [dict(
            x=float(x_in[low]), y=float(tanh_in[low]), xref="x", yref="y", showarrow=True, arrowhead=0,
            arrowwidth=1, arrowcolor=NEUTRAL, axref="x", ayref="y", ax=(-0.02 if left else 0.02) * (hi - lo),
            ay=dip - 0.04 * span, xanchor="right" if left else "left", yanchor="top", align="left",
            text=f"GELU {fixed(tanh_in[low])}<br>ReLU 0", font=dict(size=12),
        )]
    return quick_figure(traces, layout)
