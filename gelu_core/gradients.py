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

The loss is a sum over tokens, so the backward runs in row chunks of 2**20 hidden values: an (8, 1024, 768)
input never holds more than a few (341, 3072) float32 tensors (4 MB each) beside the input itself and the
(3072, 768) gradient of W_fc.  dL/dh for each chunk comes from torch autograd through PyTorch's own activation
module; dL/dW_fc is the matmul above, accumulated over chunks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from gelu_core.activations import get_activation
from gelu_core.ffn import FeedForward, activation_module
from gelu_core.lab import HIST_BINS, LAB_RESULTS, LabInputError, describe_run
from gelu_core.runs import RUN_SLOT, Waiting

LOSS = "L = ½ · mean(y²)"  # the loss as the page prints it
_CHUNK = 1 << 20  # hidden values per row chunk: (341, 3072) float32 tensors of 4 MB, a third of one (1024, 3072)
BINS_PER_DECADE = 10  # finest log bins of |dL/dh|: edges at 10^(k/10), merged to at most HIST_BINS bars
_MERGES = (1, 2, 5, 10, 20, 50, 100)  # bins merged per bar: edges stay at 10^(k/10) for k a multiple of this
# every nonzero float32 |dL/dh| (2**-149 to 2**128) has its bin k = floor(10 · log10 |g|) in [_K_LOW, _K_HIGH)
_K_LOW = math.floor(BINS_PER_DECADE * math.log10(2.0**-149))  # -449
_K_HIGH = math.floor(BINS_PER_DECADE * math.log10(2.0**128)) + 1  # 386


@dataclass(frozen=True)
class LogHistogram:
    """Counts of |values| in log-spaced bins: ``counts[i]`` counts ``edges[i] <= |v| < edges[i + 1]``; exact 0s
    have no place on a log axis and are counted in ``zeros``."""

    edges: np.ndarray  # (bins + 1,) float64, each 10^(m/10) for an integer m
    counts: np.ndarray  # (bins,) int64
    zeros: int  # values exactly 0 (or -0.0)

    @property
    def centers(self) -> np.ndarray:
        """Geometric midpoints: where each bar sits on a log axis."""
        return np.sqrt(self.edges[:-1] * self.edges[1:])


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


def _check(block: FeedForward, x: torch.Tensor) -> torch.Tensor:
    if x.dim() != 3 or x.shape[-1] != block.d_model:
        raise LabInputError(f"the gradient lab wants (batch, tokens, {block.d_model}); got {tuple(x.shape)}.")
    return x.to(block.c_fc.weight.dtype)


def _chunk_rows(hidden: int) -> int:
    return max(1, _CHUNK // hidden)


def _backward_chunk(block: FeedForward, act: torch.nn.Module, h: torch.Tensor, n_outputs: int):
    """(loss of these rows, dL/dh) for h (rows, hidden): torch autograd through c_proj and the activation."""
    with torch.enable_grad():
        h = h.detach().requires_grad_()
        y = block.c_proj(act(h))  # (rows, hidden) -> (rows, d_model)
        loss = 0.5 * y.square().sum() / n_outputs  # these rows' share of ½ · mean(y²)
        (grad_h,) = torch.autograd.grad(loss, h)  # (rows, hidden)
    return float(loss), grad_h


def hidden_gradient(block: FeedForward, x: torch.Tensor, activation: str = "gelu_tanh") -> tuple[float, torch.Tensor]:
    """(L, dL/dh) for L = ½ · mean(y²): the whole (batch, tokens, hidden) gradient, for small inputs and downloads.

    >>> block = FeedForward(4, seed=0)
    >>> loss, grad = hidden_gradient(block, torch.ones(1, 2, 4), "relu")
    >>> tuple(grad.shape), bool((grad[..., block.hidden_pre(torch.ones(4)) <= 0] == 0).all())
    ((1, 2, 16), True)
    """
    x = _check(block, x)
    act = activation_module(activation)
    rows = x.reshape(-1, block.d_model)
    grads, loss = [], 0.0
    with torch.no_grad():
        for x_rows in rows.split(_chunk_rows(block.hidden)):
            chunk_loss, grad_h = _backward_chunk(block, act, block.hidden_pre(x_rows), x.numel())
            loss += chunk_loss
            grads.append(grad_h)
    return loss, torch.cat(grads).reshape(*x.shape[:-1], block.hidden)


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
        nonzero = magnitude != 0
        self.loss += loss
        self.zeros += magnitude.numel() - int(torch.count_nonzero(nonzero))
        self.abs_sum += float(magnitude.sum(dim=-1).sum(dtype=torch.float64))
        self.abs_max = max(self.abs_max, float(magnitude.max()))
        self.alive |= nonzero.any(dim=0)
        self.fc_weight_grad += grad_h.T @ x_rows  # (hidden, rows) @ (rows, d_model) -> (hidden, d_model)
        for part in magnitude[nonzero].split(_CHUNK // 2):  # float64 temporaries of at most 4 MB
            k = torch.floor(BINS_PER_DECADE * torch.log10(part.to(torch.float64))).to(torch.int64)
            k = k.clamp_(_K_LOW, _K_HIGH - 1)  # a no-op in float32; a float64 block's extremes go to the end bins
            self.bins += torch.bincount(k - _K_LOW, minlength=self.bins.numel())


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


def run_gradients(
    block: FeedForward,
    x: torch.Tensor,  # (batch, tokens, d_model), finite (see lab.as_tokens)
    activation: str = "gelu_tanh",
    compare: str = "relu",
    bins: int = HIST_BINS,
    *,
    on_wait: Waiting | None = None,
    timeout: float | None = None,
) -> GradientLabResult:
    """Backpropagate L = ½ · mean(y²) through the block with ``activation`` and with ``compare`` (same weights,
    same input) and measure dL/dh for each; row chunk by row chunk, one run at a time per process (the lab's
    ``RUN_SLOT``, shared with run_lab).
    """
    with RUN_SLOT.hold("the backward pass of " + describe_run(tuple(x.shape), block), on_wait=on_wait,
                       timeout=timeout):
        return _run_gradients(block, x, activation, compare, bins)


def _run_gradients(block: FeedForward, x: torch.Tensor, activation: str, compare: str, bins: int):
    x = _check(block, x)
    names = list(dict.fromkeys((activation, compare)))  # one pass when both are the same
    modules = {name: activation_module(name) for name in names}
    tallies = {name: _Tally(block.hidden, x.dtype, block.d_model) for name in names}
    nonpositive = 0
    with torch.no_grad():
        for x_rows in x.reshape(-1, block.d_model).split(_chunk_rows(block.hidden)):
            h = block.hidden_pre(x_rows)  # (rows, d_model) -> (rows, hidden), shared by both activations
            if not bool(torch.isfinite(h).all()):
                raise LabInputError("The hidden pre-activations overflowed float32: scale the input down.")
            nonpositive += int(torch.count_nonzero(h <= 0))
            for name in names:
                loss, grad_h = _backward_chunk(block, modules[name], h, x.numel())
                tallies[name].add(loss, grad_h, x_rows)
                del grad_h
    first, last, merge = _shared_bins(list(tallies.values()), bins)
    hidden_numel = x.numel() // block.d_model * block.hidden
    results = {}
    for name, tally in tallies.items():
        if not (math.isfinite(tally.loss) and math.isfinite(tally.abs_sum)):
            raise LabInputError("The loss overflowed float32 for this input: it is too large. Scale it down.")
        results[name] = GradientResult(
            name=name,
            label=get_activation(name).label,
            loss=tally.loss,
            zero_count=tally.zeros,
            zero_share=tally.zeros / hidden_numel,
            dead_units=torch.nonzero(~tally.alive).reshape(-1).numpy().astype(np.int64),
            mean_abs_grad=tally.abs_sum / hidden_numel,
            max_abs_grad=tally.abs_max,
            fc_weight_grad_norm=float(torch.linalg.vector_norm(tally.fc_weight_grad.to(torch.float64))),
            grad_hist=_log_histogram(tally, first, last, merge),
        )
    return GradientLabResult(
        input_shape=tuple(x.shape),
        hidden_numel=hidden_numel,
        nonpositive_count=nonpositive,
        loss_formula=LOSS,
        a=results[activation],
        b=results[compare],
    )


def shared_run_gradients(key, block: FeedForward, x: torch.Tensor, activation: str, compare: str, *,
                         on_wait: Waiting | None = None, timeout: float | None = None,
                         owner: str | None = None) -> GradientLabResult:
    """run_gradients, computed once for everyone who asks with the same ``key`` (as lab.shared_run_lab)."""
    what = "the backward pass of " + describe_run(tuple(x.shape), block)
    return LAB_RESULTS.get(("backward", key),
                           lambda: run_gradients(block, x, activation, compare, on_wait=on_wait, timeout=timeout),
                           what=what, on_wait=on_wait, owner=owner)
