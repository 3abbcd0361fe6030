"""What the feed-forward lab measures: one input through GPT-2's block, two activations on the same weights.

The block is ``c_proj(act(c_fc(x)))``.  ``c_fc`` runs once; each activation
then gets the same hidden pre-activations ``h``, so every difference between
the two outputs comes from the activation alone.  With ``backward=True`` the
same run goes on backwards from that forward's h and outputs
(``gelu_core.gradients``).  All sums are accumulated in float64; histogram
counts are exact integers (torch.histc in row chunks of 2**20 elements, below
float32's 2**24 limit for exact counting).

One run, one check: an input from ``demo_tokens`` or ``file_tokens`` is checked
once, there (shape, values, the run's size for its block), and carries the key
it is shared under (plain data: where it came from).  Pure computation: who
waits for whom, what is shared and kept, and for which sessions, is the
server's (``hosting.lab_runs``).
"""

from __future__ import annotations

import functools
import io
import math
from collections.abc import Callable, Hashable
from dataclasses import dataclass

import numpy as np
import torch

from gelu_core import budget
from gelu_core.activations import get_activation
from gelu_core.ffn import FeedForward, activation_module, parameter_count
from gelu_core.gradients import Backward, GradientLabResult, LabInputError, _total
from gelu_core.messages import N_, Message

MAX_D_MODEL, MAX_HIDDEN = budget.MAX_D_MODEL, budget.MAX_HIDDEN  # GPT-2 XL's block: the widest the lab runs
# Values of one run, from the process's memory budget (gelu_core.budget; GELU_MEMORY_BUDGET_MB changes them):
# hidden activations budget / 16, (8, 1024, 3072) float32s at the default, GPT-2 small's hidden layer for 8 full
# contexts; the input a quarter of that, (8, 1024, 768).  A run's peak is about three times its hidden layer.
MAX_HIDDEN_ELEMENTS = budget.HIDDEN_ELEMENTS
MAX_INPUT_ELEMENTS = budget.INPUT_ELEMENTS
HIST_BINS = 60  # bars per histogram: enough to see the shape, light to send
_CHUNK = 1 << 20  # values per row chunk: (341, 3072) float32 temporaries of 4 MB; histc exact below 2**24 a call

_SYMBOL_COUNTS = {"nan": "{nan} NaN", "pos": "{pos} +inf", "neg": "{neg} -inf"}  # nonfinite_report's counts
_INTEGER_DTYPES = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)


class WidthMismatch(LabInputError):
    """The input's last dimension is not the block's d_model; ``width`` is what the input has."""

    def __init__(self, width: int, d_model: int):
        self.width, self.d_model = width, d_model
        super().__init__(N_("Each token of this input has {width} features, but the block expects d_model = "
                            "{d_model}."), width=width, d_model=d_model)


def check_run_size(batch: int, tokens: int, d_model: int, hidden: int | None = None) -> None:
    """Refuse (LabInputError, naming the limit) a run too large for the lab, before anything is drawn or run.

    The block: d_model up to MAX_D_MODEL, hidden up to MAX_HIDDEN.  The run: batch x tokens x hidden hidden
    values up to MAX_HIDDEN_ELEMENTS, and batch x tokens x d_model input values up to MAX_INPUT_ELEMENTS.
    ``hidden`` None checks the input alone (what demo_input knows).

    >>> check_run_size(8, 1024, 768, 3072)  # GPT-2 small, eight full contexts: fits
    >>> check_run_size(8, 1024, 131072, 1)
    Traceback (most recent call last):
    ...
    gelu_core.gradients.LabInputError: ...d_model = 131,072; ...d_model = 1,600...
    """
    if d_model > MAX_D_MODEL:
        raise LabInputError(N_("This block has d_model = {d_model}; the lab runs blocks up to d_model = {most} "
                               "(GPT-2 XL)."), d_model=d_model, most=MAX_D_MODEL)
    count = batch * tokens
    if hidden is not None:
        if hidden > MAX_HIDDEN:
            raise LabInputError(N_("This block's hidden layer has {hidden} units; the lab runs hidden layers up to "
                                   "{most} (GPT-2 XL)."), hidden=hidden, most=MAX_HIDDEN)
        if count * hidden > MAX_HIDDEN_ELEMENTS:
            most, mb = MAX_HIDDEN_ELEMENTS // hidden, MAX_HIDDEN_ELEMENTS * 4 // 2**20
            if hidden == 4 * d_model:
                raise LabInputError(N_("This input has {count} tokens; the lab runs at most {most} tokens at d_model = "
                                       "{d_model} (about {mb} MB of hidden activations)."),
                                    count=count, most=most, d_model=d_model, mb=mb)
            raise LabInputError(N_("This input has {count} tokens; the lab runs at most {most} tokens at d_model = "
                                   "{d_model}, hidden = {hidden} (about {mb} MB of hidden activations)."),
                                count=count, most=most, d_model=d_model, hidden=hidden, mb=mb)
    if count * d_model > MAX_INPUT_ELEMENTS:
        raise LabInputError(N_("This input has {count} tokens; the lab runs at most {most} tokens at d_model = "
                               "{d_model} ({values} input values)."), count=count, most=MAX_INPUT_ELEMENTS // d_model,
                            d_model=d_model, values=MAX_INPUT_ELEMENTS)


def demo_input(d_model: int, seed: int, batch: int = 2, tokens: int = 3) -> torch.Tensor:
    """A seeded (batch, tokens, d_model) standard-normal tensor: what LayerNorm hands GPT-2's MLP, roughly.

    Drawn from its own generator seeded with ``seed + 1`` so it never repeats the weights' stream.
    Refuses (LabInputError) a shape over the lab's input cap before drawing it; ``demo_tokens`` checks the
    whole run for a block instead.
    """
    check_run_size(batch, tokens, d_model)
    return _demo(d_model, seed, batch, tokens)


def _demo(d_model: int, seed: int, batch: int, tokens: int) -> torch.Tensor:
    """(batch, tokens, d_model) standard-normal numbers from a generator of their own, seeded with seed + 1."""
    generator = torch.Generator(device="cpu").manual_seed(int(seed) + 1)
    return torch.randn((batch, tokens, d_model), generator=generator, dtype=torch.float32)


def as_tokens(x: torch.Tensor, d_model: int, hidden: int | None = None) -> torch.Tensor:
    """(d,), (tokens, d) or (batch, tokens, d) -> (batch, tokens, d) float32, or LabInputError saying why not.

    ``hidden`` is the block's hidden width (4 x d_model, GPT-2's, if None): the run's size is checked
    against it (check_run_size) before the input is copied.
    """
    if not isinstance(x, torch.Tensor):
        raise LabInputError(N_("The lab needs a tensor of numbers."))
    if not (x.is_floating_point() or x.dtype in _INTEGER_DTYPES):
        raise LabInputError(N_("The lab needs real numbers; this tensor holds {dtype}."),
                            dtype=str(x.dtype).removeprefix("torch."))
    if x.dim() == 0 or x.dim() > 3:
        raise LabInputError(N_("The lab takes one token (d,), a sequence (tokens, d) or a batch (batch, tokens, d); "
                               "this tensor has shape {shape}."), shape=str(tuple(x.shape)))
    if x.numel() == 0:
        raise LabInputError(N_("This tensor has shape {shape}: it holds no tokens."), shape=str(tuple(x.shape)))
    nonfinite = nonfinite_report(x)
    if nonfinite:
        raise LabInputError(nonfinite.template, **nonfinite.params)
    if x.shape[-1] != d_model:
        raise WidthMismatch(int(x.shape[-1]), d_model)
    x = x.reshape((1,) * (3 - x.dim()) + tuple(x.shape))  # (batch, tokens, d)
    check_run_size(x.shape[0], x.shape[1], d_model, 4 * d_model if hidden is None else hidden)
    x32 = x.to(torch.float32).contiguous()  # the block runs in float32, as GPT-2 does
    if not all_finite(x32):
        raise LabInputError(N_("Some values are beyond float32's range (about ±3.4e38), where the block runs."))
    return x32


@dataclass(frozen=True, eq=False)
class Tokens:
    """An input the lab has checked for one block width: ``x`` is (batch, tokens, d_model) float32, finite,
    within the run's caps at ``hidden``; ``key`` names where it came from, for sharing the run.

    ``x`` may be given as a function that makes it (the seeded demo): it is then made the first time ``x`` is
    read, so a run served from a cache of results by ``key`` never draws it; ``shape`` is known before.
    """

    source: torch.Tensor | Callable[[], torch.Tensor]
    key: Hashable
    hidden: int
    dims: tuple[int, ...] | None = None  # the shape, when ``source`` is a function

    @functools.cached_property
    def x(self) -> torch.Tensor:  # cached_property writes the instance's __dict__: fine on a frozen dataclass
        return self.source() if callable(self.source) else self.source

    @property
    def shape(self) -> tuple[int, ...]:
        return self.dims if self.dims is not None else tuple(self.x.shape)


def demo_tokens(block: FeedForward, seed: int, batch: int, tokens: int) -> Tokens:
    """The demo input for this block, its whole run's size checked first; drawn only once a run reads it."""
    check_run_size(batch, tokens, block.d_model, block.hidden)
    d_model = block.d_model
    return Tokens(lambda: _demo(d_model, seed, batch, tokens), ("demo", d_model, int(seed), batch, tokens),
                  block.hidden, (batch, tokens, d_model))


def file_tokens(x: torch.Tensor, block: FeedForward, digest: str, name: str) -> Tokens:
    """A tensor from an uploaded file (its content hash and its name in the file) as the lab's input for this
    block: as_tokens's checks, once."""
    return Tokens(as_tokens(x, block.d_model, block.hidden), ("file", digest, name), block.hidden)


def all_finite(x: torch.Tensor) -> bool:
    """Whether every value of a non-empty floating-point tensor is finite: its smallest and largest are (a NaN
    anywhere makes both NaN), a tenth of the time of ``torch.isfinite(x).all()``."""
    return x.numel() == 0 or all(math.isfinite(v) for v in torch.aminmax(x.reshape(-1)))


def nonfinite_report(x: torch.Tensor) -> Message | None:
    """None if every value is finite, else a sentence counting NaN, +inf and -inf and naming the first token hit.

    One non-finite feature spoils its whole token: ``c_fc`` mixes all d features into each hidden value.
    """
    if not x.is_floating_point() or all_finite(x):
        return None
    nan = int(torch.isnan(x).sum())
    pos = int(torch.isposinf(x).sum())
    neg = int(torch.isneginf(x).sum())
    # the counts with their symbols, no words: a Message whose template is in no catalog, its numbers in the
    # reader's format
    present = {key: n for key, n in (("nan", nan), ("pos", pos), ("neg", neg)) if n}
    counts = Message(", ".join(_SYMBOL_COUNTS[key] for key in present), **present)
    tokens = x.reshape(-1, x.shape[-1]) if x.dim() else x.reshape(1, 1)
    bad_tokens = (~torch.isfinite(tokens)).any(dim=-1)
    first = int(bad_tokens.nonzero()[0, 0])
    index = [int(i) for i in np.unravel_index(first, tuple(x.shape[:-1]))] if x.dim() > 1 else []
    if not index:  # one token (d,)
        where = Message(N_("the only token"))
    elif len(index) == 1:
        where = Message(N_("token {token}"), token=index[0])
    else:
        where = Message(N_("batch {batch}, token {token}"), batch=index[0], token=index[-1])
    return Message(N_("The input holds {counts} ({affected} of {tokens} tokens affected; first: {where}). The block "
                      "mixes every feature of a token into each hidden value, so one of these would spoil the whole "
                      "token; replace them (e.g. with numpy.nan_to_num) and upload again."),
                   counts=counts, affected=int(bad_tokens.sum()), tokens=bad_tokens.numel(), where=where)


@dataclass(frozen=True)
class Histogram:
    """Counts of values in equal-width bins: ``counts[i]`` counts ``edges[i] <= v < edges[i + 1]`` (last bin closed)."""

    edges: np.ndarray  # (bins + 1,) float64
    counts: np.ndarray  # (bins,) int64


def histogram(values: torch.Tensor, lo: float, hi: float, bins: int = HIST_BINS, transform=None) -> Histogram:
    """Exact integer counts over [lo, hi] in ``bins`` equal bins (torch.histc in chunks; widened if lo == hi).

    ``transform`` (e.g. an activation module) is applied chunk by chunk: the histogram of act(h) without act(h).
    """
    lo, hi = float(lo), float(hi)
    if hi <= lo:
        lo, hi = lo - 0.5, hi + 0.5
    counts = torch.zeros(bins, dtype=torch.float64)
    for chunk in values.detach().reshape(-1).split(_CHUNK):
        chunk = transform(chunk) if transform is not None else chunk
        counts += torch.histc(chunk.to(torch.float32), bins=bins, min=lo, max=hi).to(torch.float64)
    return Histogram(np.linspace(lo, hi, bins + 1), counts.numpy().round().astype(np.int64))


@dataclass(frozen=True)
class ActivationResult:
    """One activation applied to the block's hidden pre-activations h, and what came out."""

    name: str  # registry name
    label: str  # human label, e.g. "GELU (tanh, GPT-2)"
    output: torch.Tensor  # (batch, tokens, d_model): c_proj(act(h))
    token_norms: torch.Tensor  # (batch, tokens): L2 norm of each output token
    mean_token_norm: float  # mean of token_norms
    zeroed: int  # negative pre-activations the activation set to exactly 0
    negative_kept: float  # sum |act(h)| over h < 0, as a share of sum |h| over h < 0 (0 for ReLU)
    positive_kept: float  # sum act(h) over h >= 0, as a share of sum h over h >= 0 (1 for ReLU)
    post_hist: Histogram  # act(h), on edges shared with the other activation
    post_min: float
    post_max: float


@dataclass(frozen=True)
class FlowStep:
    """One line of the shape flow: a layer, the shape it hands on, its trainable parameters."""

    layer: str  # "c_fc", "activation", "c_proj"
    op: str  # "Linear(768, 3072)", "GELU (tanh, GPT-2)"
    shape: tuple[int, ...]  # output shape
    params: int


@dataclass(frozen=True)
class LabResult:
    """Everything the lab page shows for one input, one block and two activations."""

    input_shape: tuple[int, ...]  # (batch, tokens, d_model) as run
    flow: tuple[FlowStep, ...]
    total_params: int
    hidden_numel: int
    negative_count: int  # h < 0
    negative_share: float  # negative_count / hidden_numel
    hidden_hist: Histogram
    a: ActivationResult  # the chosen activation (tanh GELU by default)
    b: ActivationResult  # the comparison (ReLU by default)
    max_abs_diff: float  # max |out_a - out_b|
    mean_abs_diff: float  # mean |out_a - out_b|
    mean_abs_output: float  # mean |out_a|: the scale the differences are read against
    backward: GradientLabResult | None = None  # the same run backwards (run_lab(..., backward=True))


def shape_flow(block: FeedForward, input_shape: tuple[int, ...], activation: str) -> tuple[FlowStep, ...]:
    """(..., d) -> c_fc -> (..., hidden) -> activation -> (..., hidden) -> c_proj -> (..., d), with parameters.

    >>> [(s.shape, s.params) for s in shape_flow(FeedForward(768), (2, 3, 768), "gelu_tanh")]
    [((2, 3, 3072), 2362368), ((2, 3, 3072), 0), ((2, 3, 768), 2360064)]
    """
    lead = tuple(input_shape[:-1])
    return (
        FlowStep("c_fc", f"Linear({block.d_model}, {block.hidden})", lead + (block.hidden,),
                 parameter_count(block.c_fc)),
        FlowStep("activation", get_activation(activation).label, lead + (block.hidden,),
                 parameter_count(activation_module(activation))),
        FlowStep("c_proj", f"Linear({block.hidden}, {block.d_model})", lead + (block.d_model,),
                 parameter_count(block.c_proj)),
    )


def _row_chunks(*tensors: torch.Tensor):
    """Matching slices of about _CHUNK elements of (..., width) tensors with the same rows, as (rows, width) views:
    the masks and temporaries of the statistics and of the backward pass stay small, whatever the batch."""
    flat = [t.reshape(-1, t.shape[-1]) for t in tensors]
    step = max(1, _CHUNK // max(t.shape[-1] for t in tensors))
    for start in range(0, flat[0].shape[0], step):
        yield [f[start:start + step] for f in flat]


def _input_sides(h: torch.Tensor) -> tuple[int, float, float]:
    """(count of h < 0, sum |h| over h < 0, sum h over h >= 0) of (rows, hidden) values."""
    return int(torch.count_nonzero(h < 0)), -_total(h.clamp(max=0.0)), _total(h.clamp(min=0.0))


def _output_sides(h: torch.Tensor, y: torch.Tensor) -> tuple[int, float, float]:
    """(count of h < 0 with y == 0, sum |y| over h < 0, sum y over h >= 0) of (rows, hidden) values, y = act(h)."""
    negative = h < 0
    on_negative = y * negative  # y where h < 0, else 0 (y is finite): a product, cheaper than torch.where
    zeroed = int(torch.count_nonzero(negative)) - int(torch.count_nonzero(on_negative))  # y == 0 or -0.0
    positive = _total(y) - _total(on_negative)
    return zeroed, _total(on_negative.abs_()), positive


def _chunked(measure: Callable[..., tuple[int, float, float]], *tensors: torch.Tensor) -> tuple[int, float, float]:
    """``measure``'s (count, sum, sum) of (..., hidden) tensors, added up over their row chunks (_row_chunks)."""
    count, first, second = 0, 0.0, 0.0
    for chunk in _row_chunks(*tensors):
        c, a, b = measure(*chunk)
        count, first, second = count + c, first + a, second + b
    return count, first, second


def _kept(part: float, whole: float) -> float:
    """part / whole: how much of one side's signal the activation keeps; NaN when that side holds nothing."""
    return part / whole if whole > 0 else float("nan")


def run_lab(
    block: FeedForward,
    x: torch.Tensor | Tokens,  # (batch, tokens, d_model), finite (see as_tokens), or Tokens checked for this block
    activation: str = "gelu_tanh",
    compare: str = "relu",
    bins: int = HIST_BINS,
    *,
    backward: bool = False,
    pace: Callable[[], None] | None = None,
) -> LabResult:
    """Run x through the block with ``activation`` and with ``compare`` on the same weights, and measure both;
    ``backward``: then backwards from that forward (``LabResult.backward``).  ``pace``, if given, is called
    between the run's steps (each activation's forward, each row chunk backwards): where a server sets the
    threads the rest of the run may use."""
    return _run_lab(block, x, activation, compare, bins, backward, pace or _no_pace)


def _no_pace() -> None:
    pass


def _run_lab(block: FeedForward, x: torch.Tensor | Tokens, activation: str, compare: str, bins: int,
             backward: bool, pace: Callable[[], None]) -> LabResult:
    if isinstance(x, Tokens) and x.hidden == block.hidden and x.shape[-1] == block.d_model:
        x = x.x  # checked once, where it was made
    else:
        x = x.x if isinstance(x, Tokens) else x
        if x.dim() != 3 or x.shape[-1] != block.d_model:
            raise LabInputError(N_("run_lab wants (batch, tokens, {d_model}); got {shape}."), d_model=block.d_model,
                                shape=str(tuple(x.shape)))
        check_run_size(x.shape[0], x.shape[1], block.d_model, block.hidden)  # before any activation is allocated
    x = x.to(block.c_fc.weight.dtype)
    with torch.no_grad():  # not inference_mode: the backward differentiates the activation on the forward's h
        h = block.hidden_pre(x)  # (B, T, d) -> (B, T, hidden)
        h_min, h_max = (float(v) for v in torch.aminmax(h))
        if not (np.isfinite(h_min) and np.isfinite(h_max)):
            raise LabInputError(N_("The hidden pre-activations overflowed float32 (values past 3.4e38): the input is "
                                   "too large for this block. Scale it down and try again."))
        negative_count, negative_in, positive_in = _chunked(_input_sides, h)
        modules = {name: activation_module(name) for name in (activation, compare)}

        partial = {}
        for name, act in modules.items():
            pace()
            y = act(h)  # (B, T, hidden), shape kept
            y_min, y_max = (float(v) for v in torch.aminmax(y))
            zeroed, negative_out, positive_out = _chunked(_output_sides, h, y)
            out = block.c_proj(y)  # (B, T, hidden) -> (B, T, d)
            del y
            partial[name] = dict(
                output=out,
                zeroed=zeroed,
                negative_kept=_kept(negative_out, negative_in),
                positive_kept=_kept(positive_out, positive_in),
                post_min=y_min,
                post_max=y_max,
            )
        lo = min(p["post_min"] for p in partial.values())
        hi = max(p["post_max"] for p in partial.values())
        results = {}
        pace()
        for name, act in modules.items():
            p = partial[name]
            out = p["output"]
            if not all_finite(out):
                raise LabInputError(N_("The block's output overflowed float32 for this input: it is too large. Scale "
                                       "it down."))
            norms = torch.linalg.vector_norm(out, dim=-1)  # (B, T)
            results[name] = ActivationResult(
                name=name,
                label=get_activation(name).label,
                token_norms=norms,
                mean_token_norm=float(norms.mean(dtype=torch.float64)),
                post_hist=histogram(h, lo, hi, bins, transform=act),  # recomputed: cheaper than holding y
                **p,
            )
        out_a, out_b = results[activation].output, results[compare].output
        diff = (out_a - out_b).abs()
        grads = None
        if backward:
            grads = Backward(block, modules, x.dtype, x.numel())
            names = list(modules)
            for x_rows, h_rows, *outs in _row_chunks(x, h, *(results[n].output for n in names)):
                pace()
                grads.add(x_rows, h_rows, dict(zip(names, outs, strict=True)))
            grads = grads.result(tuple(x.shape), activation, compare, bins)
        return LabResult(
            input_shape=tuple(x.shape),
            flow=shape_flow(block, tuple(x.shape), activation),
            total_params=parameter_count(block),
            hidden_numel=h.numel(),
            negative_count=negative_count,
            negative_share=negative_count / h.numel(),
            hidden_hist=histogram(h, h_min, h_max, bins),
            a=results[activation],
            b=results[compare],
            max_abs_diff=float(diff.max()),
            mean_abs_diff=float(diff.mean(dtype=torch.float64)),
            mean_abs_output=float(out_a.abs().mean(dtype=torch.float64)),
            backward=grads,
        )


def array_bytes(t: torch.Tensor, fmt: str) -> bytes:
    """A tensor as a file's bytes: "npy" (numpy.save) or "pt" (torch.save of the tensor alone)."""
    buffer = io.BytesIO()
    t = t.detach().cpu().contiguous()
    if fmt == "npy":
        np.save(buffer, t.numpy(), allow_pickle=False)
    elif fmt == "pt":
        torch.save(t.clone(), buffer)  # a plain tensor: loads with torch.load(..., weights_only=True)
    else:
        raise ValueError(f"fmt must be 'npy' or 'pt', got {fmt!r}")
    return buffer.getvalue()
