"""The lab's backward pass on screen: the sizes of dL/dh as log-spaced bars, and a table of what reached h.

Streamlit-free and torch-free: the builders read a ``gelu_core.gradients.GradientLabResult`` (numpy arrays and
numbers).  Exact zeros have no place on a log axis: the legend and the table count them instead.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from gelu_core import ACTIVATIONS
from ui.ffn import markdown_table, runs
from ui.format import count, power_of_ten, share, sig
from ui.i18n import _
from ui.theme import base_layout, color, legend_name, quick_figure


def gradient_histogram(result, *, height: int = 340) -> go.Figure:
    """How many hidden values got a gradient of each size |dL/dh|, both activations on the same log bins.

    The x axis is log10 |dL/dh| (ticks at powers of ten); each run's exact zeros are counted in its legend.
    """
    traces = []
    for run in runs(result):
        hist = run.grad_hist
        low, high = np.log10(hist.edges[:-1]), np.log10(hist.edges[1:])
        name = _("{name}: {share} exactly 0 (not drawn)").format(name=ACTIVATIONS[run.name].short,
                                                                   share=share(run.zero_share))
        traces.append(dict(
            type="bar", x=(0.5 * (low + high)).tolist(), y=hist.counts.tolist(), name=legend_name(name), meta=run.name,
            marker=dict(color=color(run.name), line=dict(width=0)),
            customdata=np.stack([hist.edges[:-1], hist.edges[1:]], axis=-1).tolist(),
            hovertemplate=f"|dL/dh| in [%{{customdata[0]:.2e}}, %{{customdata[1]:.2e}}): %{{y:,}}<extra>{name}</extra>",
        ))
    layout = base_layout(_("gradient size<br>|dL/dh|<br>(log scale)"), _("count"), height=height)  # lines: ui/ffn.py
    layout.update(barmode="group", bargap=0.05, bargroupgap=0, hovermode="closest")
    edges = result.a.grad_hist.edges
    decades = range(int(np.floor(np.log10(edges[0]))), int(np.ceil(np.log10(edges[-1]))) + 1)
    layout["xaxis"].update(tickvals=list(decades), ticktext=[power_of_ten(d) for d in decades], zeroline=False)
    return quick_figure(traces, layout)


def gradient_table(result) -> str:
    """A markdown table, one column per activation: the loss, the zeros, the dead units and the gradient sizes."""
    shown = runs(result)
    return markdown_table(shown, [
        (result.loss_formula, [sig(r.loss) for r in shown]),
        (_("dL/dh exactly 0"), [_("{n} of {of} ({share})").format(n=count(r.zero_count), of=count(result.hidden_numel),
                                                                  share=share(r.zero_share)) for r in shown]),
        (_("units dead for this input"), [count(r.dead_count) for r in shown]),
        (_("mean |dL/dh|"), [sig(r.mean_abs_grad) for r in shown]),
        (_("largest |dL/dh|"), [sig(r.max_abs_grad) for r in shown]),
        (_("‖dL/dW‖ reaching c_fc"), [sig(r.fc_weight_grad_norm) for r in shown]),
    ])


def zero_words(result) -> str:
    """One sentence on where each activation passed no gradient back, from the counts."""
    parts = []
    for run in runs(result):
        short = ACTIVATIONS[run.name].short
        if run.zero_count == 0:
            parts.append(_("{name} passed some gradient back through every hidden value.").format(name=short))
        elif run.zero_count == result.nonpositive_count:
            parts.append(_("{name} passed nothing back through exactly the hidden values with h ≤ 0 ({share} of them): "
                           "its slope there is 0.").format(name=short, share=share(run.zero_share)))
        else:
            parts.append(_("{name} passed nothing back through {share} of the hidden values.").format(
                name=short, share=share(run.zero_share)))
    return " ".join(parts)
