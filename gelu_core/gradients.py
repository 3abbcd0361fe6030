"""The lab's backward pass: how much gradient reaches each hidden unit of the block, under two activations.

Loss: L = ½ · mean(y²) over every number of the block's output y = c_proj(act(h)), h = c_fc(x).  It is the
squared error against a target of 0, so dL/dy = y / N (N = batch · tokens · d_model): each output number
pulls on the hidden units in proportion to its own size, and the pull differs from token to token, as in
real training.  (L = mean(y) would send every token the same dL/dy = 1 / N, so dL/dh would only repeat
act'(h) scaled by a column sum of W_proj.)

Chain rule, one token at a time:

    dL/dy = y / N                                  # (tokens, d_model)
    dL/dh = (dL/dy @ W_proj) * act'(h)             # (tokens, hidden): act'(h) = 0 stops the gradient
    dL/dW_fc = (dL/dh)ᵀ @ x                        # (hidden, d_model): summed over every token

ReLU'(h) = 0 for every h ≤ 0 (relu'(0) = 0, as PyTorch), so about half of ReLU's dL/dh is exactly 0, and a
unit whose h ≤ 0 for every token of the input gets no gradient at all: it is dead for this input, and its
row of dL/dW_fc is all zeros.  GELU'(h) is small there but not 0.

This is the second half of one lab run (``gelu_core.lab.run_lab(..., backward=True)``): it starts from the
forward pass's own h and y, so c_fc and c_proj's forward are not computed again.  The loss is a sum over
tokens, so ``backward_chunk`` takes the rows in the lab's row chunks: dL/dy @ W_proj is a matmul, act'(h)
comes from torch autograd through PyTorch's own activation module on those rows alone, and dL/dW_fc is
accumulated over chunks.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import torch

from gelu_core.activations import get_activation
from gelu_core.ffn import FeedForward
from gelu_core.messages import N_, Refusal

LOSS = "L = ½ · mean(y²)"  # the loss as the page prints it
BINS_PER_DECADE = 10  # finest log bins of |dL/dh|: edges at 10^(k/10), merged to at most HIST_BINS bars
_MERGES = (1, 2, 5, 10, 20, 50, 100)  # bins merged per bar: edges stay at 10^(k/10) for k a multiple of this
# every nonzero float32 |dL/dh| (2**-149 to 2**128) has its bin k = floor(10 · log10 |g|) in [_K_LOW, _K_HIGH)
_K_LOW = math.floor(BINS_PER_DECADE * math.log10(2.0**-149))  # -449
_K_HIGH = math.floor(BINS_PER_DECADE * math.log10(2.0**128)) + 1  # 386


class LabInputError(Refusal, ValueError):
    """An input the lab cannot run, with a message fit to show as it is (gelu_core.lab raises it too): a whole
    sentence (a template and parameters, gelu_core.messages), English as ``str()``."""


@dataclass(frozen=True)
class LogHistogram:
    """Counts of |values| in log-spaced bins: ``counts[i]`` counts ``edges[i] <= |v| < edges[i + 1]``; exact 0s
    have no place on a log axis and are counted in ``zeros``."""

    edges: np.ndarray  # (bins + 1,) float64, each 10^(m/10) for an integer m
    counts: np.ndarray  # (bins,) int64
    zeros: int  # values exactly 0 (or -0.0)


@dataclass(frozen=True)
class GradientResult:
    """One activation's backward pass through the block: what reached the hidden pre-activations h."""

    name: str  # registry name
    label: str  # human label, e.g. "ReLU"
    loss: float  # L = ½ · mean(y²) with this activation
    zero_count: int  # hidden values whose dL/dh is exactly 0
    zero_share: float  # zero_count / hidden_numel
    dead_units: np.ndarray  # (n_dead,) int64: hidden units with dL/dh exactly 0 for every token, ascending
    mean_abs_grad: float  # mean |dL/dh| over every hidden value, zeros included
    max_abs_grad: float  # largest |dL/dh|
    fc_weight_grad_norm: float  # ‖dL/dW_fc‖ (Frobenius norm of the gradient reaching c_fc.weight)
    grad_hist: LogHistogram  # |dL/dh| on log bins shared with the other activation

    @property
    def dead_count(self) -> int:
        return int(self.dead_units.size)


@dataclass(frozen=True)
class GradientLabResult:
    """The backward pass of one input through one block with two activations on the same weights."""

    input_shape: tuple[int, ...]  # (batch, tokens, d_model)
    hidden_numel: int  # batch · tokens · hidden
    nonpositive_count: int  # h ≤ 0: where ReLU'(h) = 0
    loss_formula: str  # LOSS
    a: GradientResult  # the chosen activation
    b: GradientResult  # the comparison


def backward_chunk(
    c_proj: torch.nn.Linear, act: torch.nn.Module, h: torch.Tensor, y: torch.Tensor, n_outputs: int
) -> tuple[float, torch.Tensor]:
    """(these rows' share of L, dL/dh) from the forward pass's h (rows, hidden) and output y (rows, d_model).

    dL/dy = y / N and dL/d act(h) = dL/dy @ W_proj are written out; act'(h) comes from autograd through the
    activation module on these rows only.
    """
    with torch.no_grad():
        upstream = (y / n_outputs) @ c_proj.weight  # (rows, d_model) @ (d_model, hidden) -> (rows, hidden)
    with torch.enable_grad():
        h = h.detach().clone().requires_grad_()  # a plain tensor, whatever mode the forward ran in
        (grad_h,) = torch.autograd.grad(act(h), h, grad_outputs=upstream)  # (rows, hidden)
    loss = 0.5 * float(y.square().sum(dim=-1).sum(dtype=torch.float64)) / n_outputs
    return loss, grad_h


def _total(t: torch.Tensor) -> float:
    """Sum of a (rows, hidden) tensor: float32 row sums (torch's cascade), then float64 across rows."""
    return float(t.sum(dim=-1).sum(dtype=torch.float64))


def _edge_value(k: int, dtype: np.dtype) -> float:
    """The smallest number of ``dtype`` (float32 or float64) at or above the bin edge 10^(k/10): inf if none.

    Decided by exact rational comparison, v >= 10^(k/10) <=> v^10 >= 10^k (v > 0): no logarithm, no rounding.
    """
    def at_or_above(v) -> bool:
        return bool(np.isinf(v)) or Fraction(float(v)) ** BINS_PER_DECADE >= Fraction(10) ** k

    with np.errstate(over="ignore"):
        v = dtype.type(10.0 ** (k / BINS_PER_DECADE))  # within an ulp or two of the answer
    top, zero = dtype.type(np.inf), dtype.type(0)
    while not at_or_above(v):
        v = np.nextafter(v, top)
    while (below := np.nextafter(v, zero)) > 0 and at_or_above(below):
        v = below
    return float(v)


@functools.cache
def _edge_values(dtype: torch.dtype) -> torch.Tensor:
    """(_K_HIGH - _K_LOW + 1,) the smallest ``dtype`` number at or above each bin edge 10^(k/10), k = _K_LOW ..
    _K_HIGH: a magnitude v (same dtype) is in bin k exactly when values[k] <= v < values[k + 1]."""
    np_dtype = np.dtype(str(dtype).removeprefix("torch."))
    return torch.tensor([_edge_value(k, np_dtype) for k in range(_K_LOW, _K_HIGH + 1)], dtype=dtype)


_BITS_SHIFT = 16  # float32 magnitudes are looked up by their top 15 bits: exponent and 7 mantissa bits
_NEVER = torch.iinfo(torch.int32).max
_NORMAL_BITS = 1 << 23  # float32 bit patterns below this are 0 and subnormals


@functools.cache
def _float32_slots() -> tuple[torch.Tensor, torch.Tensor]:
    """Look-up tables (first, step) over a float32 magnitude's bits >> _BITS_SHIFT: its slot is
    ``first[key] + (bits >= step[key])``.

    Slots: 0 for 0, 1 for subnormals (binned apart: one key covers too wide a range), then 2 + (k - _K_LOW) for
    bin k, and _K_HIGH - _K_LOW + 2 and up past the last edge (inf, nan).  A normal float's key covers less than
    2**-7 of its value, a tenth of a decade is 26 % of it, so at most one edge falls inside a key: ``step`` is
    the bit pattern of the first number at or above it (_NEVER where none does).
    """
    edges = _edge_values(torch.float32).numpy().view(np.int32).astype(np.int64)  # increasing bit patterns
    span = 1 << _BITS_SHIFT
    low = np.arange(1 << (31 - _BITS_SHIFT), dtype=np.int64) * span  # each key's first bit pattern
    at_low = np.searchsorted(edges, low, side="right")  # edges at or below it
    inside = np.searchsorted(edges, low + span, side="left") - at_low  # edges strictly inside its range
    normal = low >= _NORMAL_BITS
    assert inside[normal].max() <= 1, "two bin edges under one key"
    first = 1 + at_low
    step = np.where(inside > 0, edges[np.minimum(at_low, edges.size - 1)], _NEVER)
    first[~normal], step[~normal] = 1, _NEVER
    first[0], step[0] = 0, 1  # bits 0 (the value 0): slot 0; the subnormals under key 0: slot 1
    return torch.from_numpy(first.astype(np.int32)), torch.from_numpy(step.astype(np.int32))


def log_bin_counts(magnitude: torch.Tensor) -> tuple[int, torch.Tensor]:
    """(exact 0s, (_K_HIGH - _K_LOW,) int64 counts) of nonnegative magnitudes in the bins [10^(k/10),
    10^((k+1)/10)), k = _K_LOW .. _K_HIGH - 1, decided exactly; values past the ends (float64 only, and inf)
    go to the end bins.

    float32 (every lab run in the app): one look-up of each value's top bits and one integer comparison
    (``_float32_slots``), no copy of the values; other dtypes (and float32 subnormals): a search of the
    edges' exact values (``_edge_values``).
    """
    bins = _K_HIGH - _K_LOW
    flat = magnitude.reshape(-1)
    if flat.dtype == torch.float32:
        first, step = _float32_slots()
        bits = flat.view(torch.int32)  # a nonnegative float32's bit pattern orders as its value
        key = bits >> _BITS_SHIFT
        slots = torch.index_select(first, 0, key) + (bits >= torch.index_select(step, 0, key))
        found = torch.bincount(slots, minlength=bins + 3)
        counts = found[2:bins + 2].clone()
        counts[-1] += found[bins + 2:].sum()
        zeros = int(found[0])
        if int(found[1]):  # subnormals: rare, binned by a search of the edges
            tiny = bits[(bits > 0) & (bits < _NORMAL_BITS)]
            edges = _edge_values(torch.float32).view(torch.int32)
            counts += _searched_counts(tiny, edges, bins)
        return zeros, counts
    if flat.dtype != torch.float64:
        flat = flat.to(torch.float64)  # float16, bfloat16: every value exact in float64
    zeros = flat.numel() - int(torch.count_nonzero(flat))
    counts = _searched_counts(flat, _edge_values(flat.dtype), bins)
    counts[0] -= zeros  # 0 is below every edge; what is left there is nonzero and below the first edge
    return zeros, counts


def _searched_counts(values: torch.Tensor, edges: torch.Tensor, bins: int) -> torch.Tensor:
    """(bins,) counts of values by the number of edges at or below each, the ends taking what lies past them."""
    found = torch.bincount(torch.bucketize(values, edges, right=True), minlength=bins + 2)  # 0 .. bins + 1
    counts = found[1:bins + 1].clone()
    counts[0] += found[0]
    counts[-1] += found[bins + 1:].sum()
    return counts


class _Tally:
    """Running statistics of one activation's dL/dh, fed chunk by chunk."""

    def __init__(self, hidden: int, dtype: torch.dtype, d_model: int):
        self.loss = 0.0
        self.zeros = 0
        self.abs_sum = 0.0
        self.abs_max = 0.0
        self.alive = torch.zeros(hidden, dtype=torch.bool)  # some token gave this unit a nonzero gradient
        self.fc_weight_grad = torch.zeros(hidden, d_model, dtype=dtype)
        self.bins = torch.zeros(_K_HIGH - _K_LOW, dtype=torch.int64)

    def add(self, loss: float, grad_h: torch.Tensor, x_rows: torch.Tensor) -> None:
        magnitude = grad_h.abs()  # (rows, hidden)
        unit_max = magnitude.amax(dim=0)  # (hidden,): each unit's largest |dL/dh| over these rows
        self.loss += loss
        self.abs_sum += _total(magnitude)
        self.abs_max = max(self.abs_max, float(unit_max.max()))
        self.alive |= unit_max > 0
        self.fc_weight_grad.addmm_(grad_h.T, x_rows)  # += (hidden, rows) @ (rows, d_model), in place: no temporary
        zeros, counts = log_bin_counts(magnitude)
        self.zeros += zeros
        self.bins += counts


def _shared_bins(tallies: list[_Tally], bins: int) -> tuple[int, int, int]:
    """(first k, last k + 1, bins merged per bar) covering every tally's nonzero bins in at most ``bins`` bars."""
    used = torch.nonzero(sum(t.bins for t in tallies)).reshape(-1)
    if used.numel() == 0:
        return 0, 1, 1
    first, last = int(used[0]) + _K_LOW, int(used[-1]) + _K_LOW + 1
    for merge in _MERGES:
        low, high = (first // merge) * merge, -(-last // merge) * merge  # widened to multiples of merge
        if (high - low) // merge <= bins:
            break
    return low, high, merge


def _log_histogram(tally: _Tally, first: int, last: int, merge: int) -> LogHistogram:
    counts = tally.bins[first - _K_LOW:last - _K_LOW].reshape(-1, merge).sum(dim=1)
    edges = 10.0 ** (np.arange(first, last + 1, merge) / BINS_PER_DECADE)
    return LogHistogram(edges, counts.numpy().astype(np.int64), tally.zeros)


class Backward:
    """The backward pass of one lab run, fed the forward's row chunks (``add``) and read once (``result``)."""

    def __init__(self, block: FeedForward, modules: dict[str, torch.nn.Module], dtype: torch.dtype, n_outputs: int):
        self.block, self.modules, self.n_outputs = block, modules, n_outputs
        self.tallies = {name: _Tally(block.hidden, dtype, block.d_model) for name in modules}
        self.nonpositive = 0
        self.hidden_numel = 0

    def add(self, x_rows: torch.Tensor, h_rows: torch.Tensor, outputs: dict[str, torch.Tensor]) -> None:
        """One row chunk: the input, h and each activation's output y for the same rows."""
        self.nonpositive += int(torch.count_nonzero(h_rows <= 0))
        self.hidden_numel += h_rows.numel()
        for name, act in self.modules.items():
            loss, grad_h = backward_chunk(self.block.c_proj, act, h_rows, outputs[name], self.n_outputs)
            self.tallies[name].add(loss, grad_h, x_rows)
            del grad_h

    def result(self, input_shape: tuple[int, ...], activation: str, compare: str, bins: int) -> GradientLabResult:
        first, last, merge = _shared_bins(list(self.tallies.values()), bins)
        results = {}
        for name, tally in self.tallies.items():
            if not (math.isfinite(tally.loss) and math.isfinite(tally.abs_sum)):
                raise LabInputError(N_("The loss overflowed float32 for this input: it is too large. Scale it down."))
            results[name] = GradientResult(
                name=name,
                label=get_activation(name).label,
                loss=tally.loss,
                zero_count=tally.zeros,
                zero_share=tally.zeros / self.hidden_numel,
                dead_units=torch.nonzero(~tally.alive).reshape(-1).numpy().astype(np.int64),
                mean_abs_grad=tally.abs_sum / self.hidden_numel,
                max_abs_grad=tally.abs_max,
                fc_weight_grad_norm=float(torch.linalg.vector_norm(tally.fc_weight_grad.to(torch.float64))),
                grad_hist=_log_histogram(tally, first, last, merge),
            )
        return GradientLabResult(
            input_shape=tuple(input_shape),
            hidden_numel=self.hidden_numel,
            nonpositive_count=self.nonpositive,
            loss_formula=LOSS,
            a=results[activation],
            b=results[compare],
        )
