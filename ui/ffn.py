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

import gelu_core
from gelu_core import ACTIVATIONS
from gelu_core.budget import MAX_D_MODEL
from ui.code_export import Values, fill, settings, source
from ui.controls import LAB_ACTIVATIONS, Control, PageControls, short_label
from ui.format import count, percent, shape, share, sig
from ui.i18n import N_, _
from ui.lesson import Question
from ui.theme import NEUTRAL, base_layout, color, legend_name, quick_figure, short_lines

# ---------------------------------------------------------------- the controls (each bound to the URL)

WEIGHT_SOURCES = ("Seeded", "File")  # the URL holds these words: ?ffn_weights=File
INPUT_SOURCES = ("Demo", "Upload")
DEMO_SHAPES: dict[str, tuple[int, int]] = {"2x3": (2, 3), "1x16": (1, 16), "8x1024": (8, 1024)}  # batch, tokens

CONTROLS = PageControls("ffn", (
    Control("segmented_control", "ffn_weights", N_("Weights"), "Seeded",
            dict(options=WEIGHT_SOURCES, required=True,
                 help=N_("Random weights drawn like nn.Linear's own, or one block from a state dict."))),
    Control("selectbox", "ffn_act", N_("Activation"), "gelu_tanh",
            dict(options=LAB_ACTIVATIONS, format_func=short_label, help=N_("GPT-2 uses GELU's tanh form."))),
    Control("selectbox", "ffn_vs", N_("Compared with"), "relu",
            dict(options=LAB_ACTIVATIONS, format_func=short_label,
                 help=N_("Runs on the same weights and the same input."))),
    Control("number_input", "ffn_d_model", N_("d_model (features per token)"), 768,
            dict(min_value=1, max_value=MAX_D_MODEL, step=1,
                 help=N_("768 is GPT-2 small; try 8 to read single numbers. Hidden width: 4 × this."))),
    Control("number_input", "ffn_seed", N_("Weight seed"), 0,
            dict(min_value=0, max_value=2**31 - 1, step=1,
                 help=N_("Same seed, same weights (and the same demo input)."))),
    Control("segmented_control", "ffn_input", N_("Tokens"), "Demo", dict(options=INPUT_SOURCES, required=True)),
    Control("selectbox", "ffn_demo", N_("Demo shape (batch x tokens)"), "2x3",
            dict(options=tuple(DEMO_SHAPES),
                 help=N_("Standard-normal numbers, about what LayerNorm hands the block in GPT-2. 8 x 1024 is eight "
                         "full GPT-2 contexts."))),
    Control("toggle", "ffn_backward", N_("Backwards too: the gradient reaching each hidden unit"), True,
            dict(help=N_("For the loss L = ½·mean(y²) on the block's output, computed with PyTorch's autograd."))),
))


# ---------------------------------------------------------------- the question (predict, then check)

def _truth(form: str) -> tuple[str, str]:
    from gelu_core.lab import as_tokens, demo_input, run_lab  # torch: only when the answer is asked for

    block = gelu_core.FeedForward(768, seed=0)
    r = run_lab(block, as_tokens(demo_input(768, 0), 768), "gelu_tanh", "relu")
    zeroed = r.b.zeroed / r.hidden_numel
    right = CHOICES[1] if 0.35 < zeroed < 0.65 else CHOICES[0] if zeroed < 0.35 else CHOICES[2]
    return right, _("On the seeded demo (2 x 3 tokens, d_model 768) ReLU set {share} of the {n} hidden values to "
                    "exactly 0: every negative one.").format(share=percent(zeroed), n=count(r.hidden_numel))


CHOICES = (N_("about a tenth"), N_("about half"), N_("nearly all"))
QUESTION = Question(
    N_("On standard-normal tokens, what share of the hidden values does ReLU set to exactly 0?"),
    CHOICES, _truth,
    hides="the lab's run: its shapes, its statistics and its histograms")


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
    total = _("in all")
    width = max(len(o) for o in [*ops, total]) + 2 + max(len(n) for n in numbers)
    lines = [shape(input_shape)]
    for step, op, params in zip(flow, ops, numbers[:-1], strict=True):
        lines.append(op + params.rjust(width - len(op)))
        lines.append(shape(step.shape))
    lines.append(total + numbers[-1].rjust(width - len(total)))
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
    label = html.escape(_("Seconds so far"))
    count = (f"<span class='gelu-running-time' role='timer' aria-label='{label}'>0 s</span>"
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
    below = (_("h < 0 ({share}): {name} outputs 0").format(share=share(negative_share),
                                                            name=ACTIVATIONS[zeroed_by].short)
             if zeroed_by else _("h < 0 ({share})").format(share=share(negative_share)))
    traces = [
        _bars(edges, counts, negative, name=legend_name(below),
              bar_color=color("relu")),
        _bars(edges, counts, ~negative, name="h ≥ 0", bar_color=NEUTRAL),
    ]
    # x titles broken by hand where the words allow: at 195 CSS px each line must fit the ~85 px its plot leaves a
    # centred title (draw/a11y.css sets them in 11 px there)
    layout = base_layout(_("pre-activation<br>h = c_fc(x)"), _("count"), height=height)
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
    layout = base_layout(_("activation<br>output act(h)"), _("count (log scale)") if log_y else _("count"),
                         height=height)
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
        where = _("batch %{customdata[0]}, token %{customdata[1]}")
    else:
        custom = np.stack([position, position + bucket - 1], axis=-1).tolist()
        where = _("mean of tokens %{customdata[0]} to %{customdata[1]}")
    traces = []
    for label, key, values in series:
        traces.append(dict(
            type="scatter", x=position.tolist(), y=np.asarray(values, dtype=np.float64).tolist(), mode=mode,
            name=label, meta=key, line=dict(color=color(key), width=2), marker=dict(size=7),
            customdata=custom, hovertemplate=f"{where}: %{{y:.4g}}<extra>{label}</extra>",
        ))
    x_title = _("token, in<br>reading order")
    if bucket > 1:  # each point the mean of `bucket` tokens: "(means of 12)", a long count on a line of its own
        means = _("(means of {n})")
        x_title = "<br>".join([x_title, short_lines(means.format(n=count(bucket)), len(means.format(n=12)))])
    layout = base_layout(x_title, _("‖output‖ (L2 norm)"), height=height)
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
        (_("h < 0 set to exactly 0"), [_("{n} of {of}").format(n=count(r.zeroed), of=count(neg)) for r in shown]),
        (_("negative signal kept"), [share(r.negative_kept) for r in shown]),
        (_("positive signal kept"), [share(r.positive_kept) for r in shown]),
        (_("act(h) from … to"), [f"{sig(r.post_min, 3)} … {sig(r.post_max, 3)}" for r in shown]),
        (_("mean ‖output‖ per token"), [sig(r.mean_token_norm) for r in shown]),
    ])


# What each activation does to a hidden value h, in words: its negative side, then its positive side, one sentence
# each ({name}: the activation's short name, the registry's)
ACTIVATION_NOTES = {
    "relu": N_("**{name}** returns exactly 0 for a negative h: that part of the signal is gone; it passes every "
               "positive h unchanged."),
    "gelu": N_("**{name}** returns h·Φ(h) with Φ(h) < ½ for a negative h: it shrinks but keeps its sign, and the"
               " closer h is to zero, the more of it survives; it trims small positive values a little and "
               "passes large ones almost unchanged."),
    "gelu_tanh": N_("**{name}** returns h·gate(h) with gate(h) < ½ for a negative h: it shrinks but keeps its sign, "
                    "and the closer h is to zero, the more of it survives; it trims small positive values a little "
                    "and passes large ones almost unchanged."),
    "gelu_sigmoid": N_("**{name}** returns h·σ(1.702 h) for a negative h: it shrinks but keeps its sign; it trims "
                       "small positive values a little and passes large ones almost unchanged."),
    "silu": N_("**{name}** returns h·σ(h) for a negative h: it shrinks but keeps its sign, a little more of it "
               "than GELU keeps; it trims small positive values a little and passes large ones almost unchanged."),
    "leaky_relu": N_("**{name}** keeps a fixed fraction a of every negative h; it passes every positive h unchanged."),
    "elu": N_("**{name}** bends a negative h towards -α: a large negative comes out near -α; it passes every "
              "positive h unchanged."),
    "softplus": N_("**{name}** turns a negative h into a small positive number: nothing comes out negative; it "
                   "passes a large positive h almost unchanged."),
    "sigmoid": N_("**{name}** squashes every h into (0, 1): nothing comes out negative; it squashes positives too, "
                  "below 1."),
    "tanh": N_("**{name}** squashes every h into (-1, 1), keeping its sign; it squashes positives too, below 1."),
}


def activation_notes(name_a: str, name_b: str) -> str:
    """A short paragraph on what the two chosen activations do to negative and positive hidden values."""
    return "\n\n".join(_(ACTIVATION_NOTES[name]).format(name=ACTIVATIONS[name].short)
                         for name in dict.fromkeys((name_a, name_b)))


def token_caption(result) -> str:
    """What the token chart shows and the two sizes the lab reports, named apart."""
    words = (_("Each point is the length ‖y‖ of one output token (all {n} numbers together). One output number is "
               "{size} in size on average (mean |y|, {name}), and the two activations' outputs differ by {diff} on "
               "average. Dotted lines mark where each sequence of the batch begins.")
             if 1 < result.input_shape[0] <= 32 else
             _("Each point is the length ‖y‖ of one output token (all {n} numbers together). One output number is "
               "{size} in size on average (mean |y|, {name}), and the two activations' outputs differ by {diff} on "
               "average."))
    return words.format(n=count(result.input_shape[-1]), size=sig(result.mean_abs_output), name=result.a.label,
                        diff=sig(result.mean_abs_diff))


def output_caption(result) -> str:
    """What the output histogram shows, naming the activation that piles values onto exactly 0, if any."""
    piles = [r for r in (result.a, result.b) if r.zeroed and r.zeroed == result.negative_count]
    if piles:
        return _("Both outputs on the same bins; counts on a log scale, because {name} puts every negative h, "
                 "{share} of all values, onto exactly 0.").format(name=ACTIVATIONS[piles[0].name].short,
                                                                   share=share(result.negative_share))
    return _("Both outputs on the same bins; counts on a log scale.")


# ---------------------------------------------------------------- the code for this view
# The feed-forward lab's script: GPT-2's block seeded as the page seeds it (or read from the student's files), the
# two activations on the same hidden values, the page's metrics and tables, and the backward pass if it is on.
#
# What the page computes with is gelu_core's own code, printed: the seeded weights and the demo input
# (``seeded_init``, ``lab._demo``), a file's layout and its weights into the layers (``weights._layout``,
# ``_set_weights``), the activation modules (``activation_module``), the forward's statistics (``lab._input_sides``,
# ``_output_sides``, ``_kept``: the page adds them up over row chunks of 2**20 values, the script takes every row at
# once, the same numbers for an input of one chunk) and the backward step (``gradients.backward_chunk``).  What the
# template writes: the block's wiring (c_fc once, each activation, c_proj), the reading of a student's file (the page
# reads uploads with gelu_core.tensor_io's guarded parser, not code for a notebook) and the print lines.  An
# uploaded file's name is not among the control values: the script names it in a variable at its top, for the
# student to set.

def modules(names, label: str = "short") -> tuple[str, list[type]]:
    """The activations' dict, name -> module, as gelu_core.ffn.activation_module builds each one (PyTorch's own
    module, written as it prints itself), and the source of any module of gelu_core's own among them."""
    from gelu_core.ffn import activation_module  # torch: imported when the page asks

    lines, own = [], []
    for name in dict.fromkeys(names):
        module = activation_module(name)
        if type(module).__module__.startswith("torch."):
            lines.append(f'    "{getattr(ACTIVATIONS[name], label)}": torch.nn.{module!r},')
        else:
            lines.append(f'    "{getattr(ACTIVATIONS[name], label)}": {type(module).__name__}(),')
            own.append(type(module))
    return "\n".join(lines), own


HEAD = '''
"""GELU Explorer, Feed-forward lab: GPT-2's block Linear(d, 4d) -> activation -> Linear(4d, d), run with
$first and with $second on the same weights and the same input."""

$imports

# GELU Explorer's own code (gelu_core, and the number formats of ui/format.py), as the page runs it
$code


first, second = "$first", "$second"  # the activation, and the one it is compared with
activations = {  # the modules the page runs; an activation owns no weights
$modules
}
'''

SEEDED = '''
config = {
    "d_model": $d_model,  # features per token (768: GPT-2 small); the hidden layer is 4 x d_model wide
    "seed": $seed,  # seeds the weights, and (plus 1) the demo input
}
d_model, hidden = config["d_model"], 4 * config["d_model"]

# The block, named as in GPT-2, seeded as the page seeds it
c_fc = torch.nn.Linear(d_model, hidden)  # (..., d) -> (..., 4d)
c_proj = torch.nn.Linear(hidden, d_model)  # (..., 4d) -> (..., d)
seeded_init((c_fc, c_proj), config["seed"])
'''

FILE_WEIGHTS = '''
WEIGHTS_FILE = "weights.pt"  # the state dict you uploaded on the page (a .pt): put its path here
FIRST, SECOND = "c_fc", "c_proj"  # the block's two layers as the file names them, e.g. "h.0.mlp.c_fc"

state = torch.load(WEIGHTS_FILE, weights_only=True)  # data only: no code in the file runs
w_fc, w_proj = state[FIRST + ".weight"], state[SECOND + ".weight"]
b_fc, b_proj = state.get(FIRST + ".bias"), state.get(SECOND + ".bias")
# nn.Linear stores a layer as (out, in), GPT-2's Conv1D as (in, out): told apart by the shapes, as the page does
found, _ = layout(tuple(w_fc.shape), None if b_fc is None else tuple(b_fc.shape), FIRST)
if found == CONV1D:
    w_fc, w_proj = w_fc.T, w_proj.T
hidden, d_model = w_fc.shape
c_fc = torch.nn.Linear(d_model, hidden)  # (..., d) -> (..., 4d)
c_proj = torch.nn.Linear(hidden, d_model)  # (..., 4d) -> (..., d)
set_weights(c_fc, c_proj, w_fc, w_proj, b_fc, b_proj)
'''

DEMO = '''
# The demo input: standard-normal numbers, about what LayerNorm hands the block, from a generator of its own
batch, tokens = $batch, $tokens
x = demo(d_model, $demo_seed, batch, tokens)  # (B, T, d)
'''

UPLOAD = '''
INPUT_FILE = "activations.npy"  # the file you uploaded on the page: put its path here (.npy, .npz, .pt or .csv)


def load(path):
    """The file's first tensor (where a file holds several, the page lets you choose: take that one)."""
    if path.endswith(".npy"):
        return torch.from_numpy(np.load(path))
    if path.endswith(".npz"):
        with np.load(path) as archive:
            return torch.from_numpy(archive[archive.files[0]])
    if path.endswith(".csv"):
        return torch.from_numpy(np.loadtxt(path, delimiter=",", ndmin=2))  # a header row: add skiprows=1
    loaded = torch.load(path, weights_only=True)  # a tensor, or a dict of them; data only, no code runs
    return loaded if isinstance(loaded, torch.Tensor) else next(iter(loaded.values()))


x = load(INPUT_FILE)
x = x.reshape((1,) * (3 - x.dim()) + tuple(x.shape)).to(torch.float32)  # (d,) or (T, d) -> (B, T, d), float32
'''

FORWARD = '''
# Forwards: c_fc runs once, and each activation gets the very same hidden values h
with torch.no_grad():
    h = c_fc(x)  # (B, T, d) -> (B, T, 4d): what the activation receives
    rows = h.reshape(-1, hidden)  # (B·T, 4d): a row per token
    negative, negative_in, positive_in = input_sides(rows)
    runs = {}
    for name, activation in activations.items():
        y = activation(h)  # (B, T, 4d), shape kept
        output = c_proj(y)  # (B, T, 4d) -> (B, T, d)
        zeroed, negative_out, positive_out = output_sides(rows, y.reshape(-1, hidden))
        runs[name] = {
            "output": output,
            "zeroed": zeroed,  # negative h made exactly 0
            # how much signal survives: sum |act(h)| / sum |h| where h < 0, sum act(h) / sum h where h >= 0
            "negative kept": kept(negative_out, negative_in),
            "positive kept": kept(positive_out, positive_in),
            "range": torch.aminmax(y),
            "mean norm": torch.linalg.vector_norm(output, dim=-1).mean(dtype=torch.float64),  # mean ||y|| per token
        }

print(f"Hidden values below 0: {share(negative / rows.numel())}")
print(f"{second} sets to 0: {count(runs[second]['zeroed'])}")
print(f"{first} keeps of h < 0: {share(runs[first]['negative kept'])}")
print(f"Outputs differ by, at most: {sig((runs[first]['output'] - runs[second]['output']).abs().max())}")
for name, run in runs.items():
    print(name)
    print(f"  h < 0 set to exactly 0: {count(run['zeroed'])} of {count(negative)}")
    print(f"  negative signal kept: {share(run['negative kept'])}")
    print(f"  positive signal kept: {share(run['positive kept'])}")
    print(f"  act(h) from … to: {sig(run['range'][0], 3)} … {sig(run['range'][1], 3)}")
    print(f"  mean ‖output‖ per token: {sig(run['mean norm'])}")
'''

BACKWARD = '''
# Backwards: the loss L = ½ · mean(y²) over every output number, and the gradient dL/dh reaching each hidden value
print("Backwards")
for name, activation in activations.items():
    output = runs[name]["output"]  # (B, T, d)
    loss, grad_h = backward(c_proj, activation, rows, output.reshape(-1, d_model), output.numel())  # (B·T, 4d)
    zero = grad_h == 0  # where the activation's slope is 0, no gradient passes
    runs[name].update(
        loss=loss,
        zero=int(zero.sum()),
        dead=int(zero.all(dim=0).sum()),  # units that no token of this input sends a gradient
        grad_h=grad_h,
        grad_fc=grad_h.T @ x.reshape(-1, d_model),  # dL/dW of c_fc: (4d, B·T) @ (B·T, d)
    )

for name in dict.fromkeys((second, first)):
    print(f"{name}: gradient exactly 0: {share(runs[name]['zero'] / grad_h.numel())}")
print(f"Units dead for this input ({second} / {first}): {runs[second]['dead']} / {runs[first]['dead']}")
for name, run in runs.items():
    zero_share = share(run["zero"] / grad_h.numel())
    print(name)
    print(f"  L = ½ · mean(y²): {sig(run['loss'])}")
    print(f"  dL/dh exactly 0: {count(run['zero'])} of {count(grad_h.numel())} ({zero_share})")
    print(f"  units dead for this input: {count(run['dead'])}")
    print(f"  mean |dL/dh|: {sig(total(run['grad_h'].abs()) / grad_h.numel())}")
    print(f"  largest |dL/dh|: {sig(run['grad_h'].abs().max())}")
    print(f"  ‖dL/dW‖ reaching c_fc: {sig(torch.linalg.vector_norm(run['grad_fc'].double()))}")
'''


def code(values: Values) -> str:
    from gelu_core import ffn, gradients, lab, weights  # torch: imported when the page asks

    v = settings(CONTROLS, values)
    first, second = (ACTIVATIONS[v[key]].short for key in ("act", "vs"))
    listed, own = modules((v["act"], v["vs"]))
    upload, seeded = v["input"] != "Demo", v["weights"] == "Seeded"
    parts = [HEAD, SEEDED if seeded else FILE_WEIGHTS, UPLOAD if upload else DEMO, FORWARD, *[BACKWARD] * v["backward"]]
    batch, tokens = DEMO_SHAPES[v["demo"]]
    printed = {  # the script's name -> the function the page runs (looked up now: a test may swap one)
        **({"seeded_init": ffn.seeded_init} if seeded
           else {"layout": weights._layout, "set_weights": weights._set_weights}),
        **({} if upload else {"demo": lab._demo}),
        "input_sides": lab._input_sides, "output_sides": lab._output_sides, "kept": lab._kept,
        **({"backward": gradients.backward_chunk, "total": gradients._total} if v["backward"] else {}),
    }
    return fill("\n\n".join(part.strip() for part in parts), first=first, second=second, modules=listed,
                code=source(*own, share, sig, count, names=printed),
                d_model=int(v["d_model"]), seed=int(v["seed"]), batch=batch, tokens=tokens,
                demo_seed='config["seed"]' if seeded else "0")  # a file's block: seed 0, as the page
