"""The feed-forward lab's figures and text: histograms as bars of precomputed counts, token norms, the shape flow.

Streamlit-free and torch-free: builders take numpy arrays (a histogram's edges
and counts, a token profile) so that no more than a few thousand numbers ever
reach the browser, whatever the size of the input.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from gelu_core import ACTIVATIONS
from ui.format import count, shape, share, sig
from ui.theme import NEUTRAL, base_layout, color, legend_name, quick_figure, short_lines

MAX_POINTS = 2048  # most points per token-norm line sent to the browser


@dataclass(frozen=True)
class Profile:
    """A per-token series cut to at most ``max_points``: token positions, and the mean per bucket."""

    position: np.ndarray  # first flat token index of each bucket
    mean: np.ndarray
    bucket: int  # tokens per bucket (1: every token shown)


def token_profile(norms, max_points: int = MAX_POINTS) -> Profile:
    """Flatten (batch, tokens) in reading order; average consecutive tokens in buckets if there are too many.

    >>> p = token_profile(np.arange(6.0).reshape(2, 3), max_points=3); p.bucket, p.mean.tolist()
    (2, [0.5, 2.5, 4.5])
    """
    flat = np.asarray(norms, dtype=np.float64).reshape(-1)
    bucket = max(1, -(-flat.size // max_points))  # ceil division
    if bucket == 1:
        return Profile(np.arange(flat.size), flat, 1)
    pad = -flat.size % bucket
    # the last bucket may be short: pad with NaN and let nan-aware reductions skip it
    grid = np.concatenate([flat, np.full(pad, np.nan)]).reshape(-1, bucket)
    return Profile(np.arange(grid.shape[0]) * bucket, np.nanmean(grid, axis=1), bucket)


def flow_text(input_shape: Sequence[int], flow: Sequence, total_params: int) -> str:
    """The block as shapes and layers, one per line, trainable parameters aligned on the right (a code block).

    ``flow`` holds objects with ``layer``, ``op``, ``shape`` and ``params`` (gelu_core.lab.FlowStep).
    """
    ops = [f"↓ {'' if step.layer == 'activation' else step.layer + ' '}{step.op}" for step in flow]
    numbers = [count(step.params) for step in flow] + [count(total_params)]
    width = max(len(o) for o in ops + ["in all"]) + 2 + max(len(n) for n in numbers)
    lines = [shape(input_shape)]
    for step, op, params in zip(flow, ops, numbers[:-1], strict=True):
        lines.append(op + params.rjust(width - len(op)))
        lines.append(shape(step.shape))
    lines.append("in all" + numbers[-1].rjust(width - len("in all")))
    return "\n".join(lines)


FLOW_STYLE = ("margin: 0 0 1rem; padding: 0.75rem 1rem; border-radius: 0.5rem; font-family: 'Source Code Pro', "
              "monospace; font-size: 0.875rem; line-height: 1.6; white-space: pre-wrap; overflow-wrap: anywhere; "
              "background: rgba(128, 128, 128, 0.12); color: inherit")


def flow_html(input_shape: Sequence[int], flow: Sequence, total_params: int) -> str:
    """flow_text as a plain, escaped <pre> for st.html: monospaced like st.code, without the frontend's syntax
    highlighter (a chunk of 0.51 MB gzipped that st.code loads).  It wraps rather than scrolls on a narrow screen."""
    return (f'<pre class="gelu-flow" style="{FLOW_STYLE}">'
            f"{html.escape(flow_text(input_shape, flow, total_params))}</pre>")


# What a student sees while the lab runs: still words, and for a big run a count of seconds that changes once a
# second, instead of Streamlit's spinner, whose ring turns every frame and whose timer redraws ten times a second
# (~0.05 of a core more in each waiting page; README, "The lab on an upload").  The words are a status; the count
# is a timer (not announced), so a screen reader hears "Running ..." once.  Hidden for its first half second, as
# the spinner is: a run that comes back at once shows nothing.
RUNNING_STYLE = ("<style>.gelu-running { display: flex; flex-wrap: wrap; gap: 0 0.5rem; align-items: baseline;"
                 " margin: 0.25rem 0 0.75rem; animation: gelu-running-after 0s linear 0.5s both; }"
                 " .gelu-running-time { font-size: 0.875rem; font-variant-numeric: tabular-nums;"
                 " color: color-mix(in srgb, currentColor 72%, var(--gelu-background, transparent)); }"
                 " @keyframes gelu-running-after { from { visibility: hidden; } to { visibility: visible; } }</style>")
RUNNING_SCRIPT = """<script>
(() => {
  const out = document.currentScript.closest(".gelu-running").querySelector(".gelu-running-time");
  const start = Date.now();
  const timer = setInterval(() => {
    if (!out.isConnected) return clearInterval(timer);
    out.textContent = `${Math.floor((Date.now() - start) / 1000)} s`;
  }, 1000);
})();
</script>"""


def running_html(text: str, *, timed: bool) -> str:
    """The lab's "running" line for st.html: ``text`` as a status, and with ``timed`` a seconds count beside it,
    kept by a script (st.html(..., unsafe_allow_javascript=True)) that stops once the line is gone.

    >>> "0 s" in running_html("Running", timed=True), "<script>" in running_html("Running", timed=False)
    (True, False)
    """
    count = ("<span class='gelu-running-time' role='timer' aria-label='Seconds so far'>0 s</span>"
             + RUNNING_SCRIPT) if timed else ""
    return (f"{RUNNING_STYLE}<div class='gelu-running'><span role='status'>{html.escape(text)}</span>"
            f"{count}</div>")


def _bars(edges: np.ndarray, counts: np.ndarray, mask: np.ndarray, *, name: str, bar_color: str,
          opacity: float = 1.0, value_name: str = "h") -> dict:
    lo, hi = edges[:-1][mask], edges[1:][mask]
    return dict(
        type="bar",
        x=(0.5 * (lo + hi)).tolist(),
        y=counts[mask].tolist(),
        width=(hi - lo).tolist(),
        name=name,
        marker=dict(color=bar_color, line=dict(width=0)),
        opacity=opacity,
        customdata=np.stack([lo, hi], axis=-1).tolist(),
        hovertemplate=(f"{value_name} in [%{{customdata[0]:.3f}}, %{{customdata[1]:.3f}}]: %{{y:,}}"
                       f"<extra>{name}</extra>"),
    )


def hidden_histogram(edges: np.ndarray, counts: np.ndarray, negative_share: float, *, height: int = 340,
                     zeroed_by: str | None = "relu") -> go.Figure:
    """What the activation receives: counts of the hidden pre-activations h, the negative side in ReLU's colour;
    ``zeroed_by`` names the compared activation that outputs 0 there (None when neither does)."""
    edges, counts = np.asarray(edges, dtype=np.float64), np.asarray(counts)
    centers = 0.5 * (edges[:-1] + edges[1:])
    negative = centers < 0
    note = f": {ACTIVATIONS[zeroed_by].short} outputs 0" if zeroed_by else ""
    traces = [
        _bars(edges, counts, negative, name=legend_name(f"h < 0 ({share(negative_share)}){note}"),
              bar_color=color("relu")),
        _bars(edges, counts, ~negative, name="h ≥ 0", bar_color=NEUTRAL),
    ]
    # x titles broken by hand where the words allow: at 195 CSS px each line must fit the ~85 px its plot leaves a
    # centred title (ui/frame.py sets them in 11 px there; README, "Accessibility")
    layout = base_layout("pre-activation<br>h = c_fc(x)", "count", height=height)
    layout.update(bargap=0, hovermode="closest")
    return quick_figure(traces, layout)


def post_histogram(edges: np.ndarray, counts_a: np.ndarray, counts_b: np.ndarray, *, key_a: str, label_a: str,
                   key_b: str, label_b: str, log_y: bool = True, height: int = 340) -> go.Figure:
    """Both activations' outputs on shared bins, side by side in each bin; log counts so ReLU's pile of zeros
    leaves room for the rest."""
    edges = np.asarray(edges, dtype=np.float64)
    everything = np.ones(len(edges) - 1, dtype=bool)
    pairs = [(key_a, label_a, counts_a)] + ([(key_b, label_b, counts_b)] if key_b != key_a else [])
    traces = []
    for key, label, counts in pairs:
        bars = _bars(edges, np.asarray(counts), everything, name=label, bar_color=color(key), value_name="act(h)")
        bars.pop("width")  # grouped: plotly splits each bin between the two
        traces.append(bars)
    layout = base_layout("activation<br>output act(h)", "count (log scale)" if log_y else "count", height=height)
    layout.update(barmode="group", bargap=0.05, bargroupgap=0, hovermode="closest")
    if log_y:
        layout["yaxis"].update(type="log", dtick=1)  # ticks at 1, 10, 100, ... only
    return quick_figure(traces, layout)


def token_norms_figure(position: np.ndarray, series: Sequence[tuple[str, str, np.ndarray]], *, bucket: int,
                       tokens: int, batch: int, height: int = 320) -> go.Figure:
    """‖output‖ per token in reading order (batch 0 first); ``series`` is (label, key, values) per activation.

    With ``bucket`` > 1 each point is the mean of that many consecutive tokens (the profile was cut to fit).
    Dotted lines mark where each batch row starts.
    """
    position = np.asarray(position)
    n = len(position)
    mode = "lines+markers" if n <= 64 else "lines"
    if bucket == 1:
        b, t = np.divmod(position, tokens)
        custom = np.stack([b, t], axis=-1).tolist()
        where = "batch %{customdata[0]}, token %{customdata[1]}"
    else:
        custom = np.stack([position, position + bucket - 1], axis=-1).tolist()
        where = "mean of tokens %{customdata[0]} to %{customdata[1]}"
    traces = []
    for label, key, values in series:
        traces.append(dict(
            type="scatter", x=position.tolist(), y=np.asarray(values, dtype=np.float64).tolist(), mode=mode,
            name=label, meta=key, line=dict(color=color(key), width=2), marker=dict(size=7),
            customdata=custom, hovertemplate=f"{where}: %{{y:.4g}}<extra>{label}</extra>",
        ))
    x_title = "token, in<br>reading order"
    if bucket > 1:  # each point the mean of `bucket` tokens: "(means of 12)", a long count on a line of its own
        x_title += "<br>" + short_lines(f"(means of {count(bucket)})", len("(means of 12)"))
    layout = base_layout(x_title, "‖output‖ (L2 norm)", height=height)
    layout.update(hovermode="closest")
    layout["xaxis"].update(zeroline=False, tickformat="d")  # token 0 is a position, not a value; whole tokens
    if n <= 12:
        layout["xaxis"].update(dtick=bucket, tick0=0)
    if 1 < batch <= 32:
        layout["shapes"] = [
            dict(type="line", x0=row * tokens - 0.5, x1=row * tokens - 0.5, yref="paper", y0=0, y1=1,
                 line=dict(color=NEUTRAL, width=1, dash="dot"))
            for row in range(1, batch)
        ]
    return quick_figure(traces, layout)


def runs(result) -> list:
    """The lab result's runs, one per activation shown (one when both sides ran the same activation)."""
    return [result.a] if result.a is result.b else [result.a, result.b]


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown_table(shown: list, rows: list[tuple[str, list[str]]]) -> str:
    """A markdown table: a column per run (headed by its activation's short name), a row per (label, cells)."""
    header = " | ".join(_cell(ACTIVATIONS[r.name].short) for r in shown)
    lines = [f"| | {header} |", "|---" * (len(shown) + 1) + "|"]
    lines += [f"| {_cell(label)} | " + " | ".join(_cell(c) for c in cells) + " |" for label, cells in rows]
    return "\n".join(lines)


def comparison_table(result) -> str:
    """A markdown table, one column per activation: what each did to the negative and positive side.

    ``result`` is a gelu_core.lab.LabResult (read, never computed on, here).
    """
    shown = runs(result)
    neg = result.negative_count
    return markdown_table(shown, [
        ("h < 0 set to exactly 0", [f"{count(r.zeroed)} of {count(neg)}" for r in shown]),
        ("negative signal kept", [share(r.negative_kept) for r in shown]),
        ("positive signal kept", [share(r.positive_kept) for r in shown]),
        ("act(h) from … to", [f"{sig(r.post_min, 3)} … {sig(r.post_max, 3)}" for r in shown]),
        ("mean ‖output‖ per token", [sig(r.mean_token_norm) for r in shown]),
    ])


# What each activation does to a hidden value h, in words: negative side, positive side.
_NEGATIVE_SIDE = {
    "relu": "returns exactly 0 for a negative h: that part of the signal is gone",
    "gelu": "returns h·Φ(h) with Φ(h) < ½ for a negative h: it shrinks but keeps its sign, and the closer h is "
            "to zero, the more of it survives",
    "gelu_tanh": "returns h·gate(h) with gate(h) < ½ for a negative h: it shrinks but keeps its sign, and the "
                 "closer h is to zero, the more of it survives",
    "gelu_sigmoid": "returns h·σ(1.702 h) for a negative h: it shrinks but keeps its sign",
    "silu": "returns h·σ(h) for a negative h: it shrinks but keeps its sign, a little more of it than GELU keeps",
    "leaky_relu": "keeps a fixed fraction a of every negative h",
    "elu": "bends a negative h towards -α: a large negative comes out near -α",
    "softplus": "turns a negative h into a small positive number: nothing comes out negative",
    "sigmoid": "squashes every h into (0, 1): nothing comes out negative",
    "tanh": "squashes every h into (-1, 1), keeping its sign",
}
_POSITIVE_SIDE = {
    "relu": "passes every positive h unchanged",
    "leaky_relu": "passes every positive h unchanged",
    "elu": "passes every positive h unchanged",
    "sigmoid": "squashes positives too, below 1",
    "tanh": "squashes positives too, below 1",
    "softplus": "passes a large positive h almost unchanged",
}


def activation_notes(name_a: str, name_b: str) -> str:
    """A short paragraph on what the two chosen activations do to negative and positive hidden values."""
    lines = []
    for name in dict.fromkeys((name_a, name_b)):
        short = ACTIVATIONS[name].short
        positive = _POSITIVE_SIDE.get(name, "trims small positive values a little and passes large ones almost "
                                            "unchanged")
        lines.append(f"**{short}** {_NEGATIVE_SIDE[name]}; it {positive}.")
    return "\n\n".join(lines)


def token_caption(result) -> str:
    """What the token chart shows and the two sizes the lab reports, named apart."""
    text = (f"Each point is the length ‖y‖ of one output token (all {result.input_shape[-1]:,} numbers together). "
            f"One output number is {sig(result.mean_abs_output)} in size on average (mean |y|, {result.a.label}), "
            f"and the two activations' outputs differ by {sig(result.mean_abs_diff)} on average.")
    batch = result.input_shape[0]
    if 1 < batch <= 32:
        text += " Dotted lines mark where each sequence of the batch begins."
    return text


def output_caption(result) -> str:
    """What the output histogram shows, naming the activation that piles values onto exactly 0, if any."""
    text = "Both outputs on the same bins; counts on a log scale"
    piles = [r for r in (result.a, result.b) if r.zeroed and r.zeroed == result.negative_count]
    if piles:
        text += (f", because {ACTIVATIONS[piles[0].name].short} puts every negative h, "
                 f"{share(result.negative_share)} of all values, onto exactly 0")
    return text + "."
