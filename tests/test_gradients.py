"""The lab's backward pass (run_lab(..., backward=True), gelu_core.gradients) against finite differences, a
hand-written backward pass and direct counts.

References and tolerances, per test:
- dL/dh against central finite differences of L(h) = ½ · mean(c_proj(act(h))²), in float64 on a small block,
  step 1e-6: truncation ~ step² · L''' and rounding ~ 1e-16 · L / step, both below atol 1e-9 + rtol 1e-6;
- dL/dh against the chain rule written out, (y / N) @ W_proj * act'(h), with gelu_core's own derivatives
  (relu_grad, gelu_grad, silu_grad) evaluated in float64: rtol 1e-4, atol 1e-6 · max |dL/dh| (float32
  autograd through PyTorch's kernels vs float64 formulas); ReLU's zeros at exactly the same places;
- dL/dW_fc against torch autograd of the whole block in one piece (loss.backward on c_fc.weight): rtol 1e-5;
- counts (zeros, dead units, h ≤ 0, histogram totals): exact integers, counted directly on the whole tensor;
- sums and means: numpy float64 over the whole tensor, rtol 1e-6;
- the log histogram: numpy.histogram on the same edges, a handful of values allowed to sit one bin over;
- its bins, exactly: a plain-Python binning written in the test, v in bin k when v^10 >= 10^k and
  v^10 < 10^(k + 1) in fractions.Fraction (exact rationals, no logarithm), on values at, just below and just
  above every edge (float32 and float64), 0 and -0.0, subnormals, the largest float32 and inf: equal counts.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import torch

from gelu_core import ACTIVATIONS, FeedForward, demo_input
from gelu_core import gradients as gradients_module
from gelu_core import lab as lab_module
from gelu_core.ffn import activation_module
from gelu_core.gradients import _K_HIGH, _K_LOW, BINS_PER_DECADE, LOSS, log_bin_counts
from gelu_core.lab import HIST_BINS, LabInputError
from hosting.lab_runs import run_lab  # in the lab's run lanes, as the lab runs it
from tests.conftest import functional, with_activation

FD_STEP = 1e-6


def run_gradients(block, x, activation="gelu_tanh", compare="relu", bins=HIST_BINS):
    """The backward half of one lab run."""
    return run_lab(block, x, activation, compare, bins, backward=True).backward


def hidden_gradient(block: FeedForward, x: torch.Tensor, name: str) -> tuple[float, torch.Tensor]:
    """(L, the whole dL/dh) from the lab's own backward step (gradients.backward_chunk) given every row at once,
    on the forward's h and output y (the block's own layers)."""
    act = activation_module(name)
    with torch.no_grad():
        h = block.hidden_pre(x)
        y = block.c_proj(act(h))
    loss, grad = gradients_module.backward_chunk(block.c_proj, act, h.reshape(-1, block.hidden),
                                                 y.reshape(-1, block.d_model), x.numel())
    return loss, grad.reshape(h.shape)


def loss_of_h(block: FeedForward, name: str, h: torch.Tensor) -> float:
    """L = ½ · mean(y²), y = c_proj(act(h)), written in the test (act: torch.nn.functional)."""
    y = block.c_proj(functional(name)(h))
    return float(0.5 * (y * y).mean())


@pytest.mark.parametrize("name", ["relu", "gelu", "gelu_tanh", "silu"])
def test_hidden_gradient_matches_finite_differences(name):
    block = FeedForward(4, seed=5, dtype=torch.float64)  # hidden 16
    x = demo_input(4, 5, batch=2, tokens=3).double()
    loss, grad = hidden_gradient(block, x, name)
    with torch.no_grad():
        h = block.hidden_pre(x)  # (2, 3, 16)
        assert loss == pytest.approx(loss_of_h(block, name, h), rel=1e-14)
        assert float(h.abs().min()) > 100 * FD_STEP  # no ReLU kink inside a step
        numeric = torch.zeros_like(h)
        for index in np.ndindex(*h.shape):
            up, down = h.clone(), h.clone()
            up[index] += FD_STEP
            down[index] -= FD_STEP
            numeric[index] = (loss_of_h(block, name, up) - loss_of_h(block, name, down)) / (2 * FD_STEP)
    assert grad.shape == (2, 3, 16) and grad.dtype == torch.float64
    np.testing.assert_allclose(grad.numpy(), numeric.numpy(), rtol=1e-6, atol=1e-9)


def hand_backward(block: FeedForward, x: torch.Tensor, name: str) -> tuple[torch.Tensor, torch.Tensor]:
    """(h, dL/dh) by the chain rule: dL/dy = y / N, dL/dh = (dL/dy @ W_proj) * act'(h), in float64."""
    W2, b2 = block.c_proj.weight.detach().double(), block.c_proj.bias.detach().double()
    h32 = block.hidden_pre(x).detach()  # float32, as the block computes it
    h = h32.double()
    y = ACTIVATIONS[name](h) @ W2.T + b2  # (B, T, d)
    dy = y / y.numel()
    return h32, (dy @ W2) * ACTIVATIONS[name].derivative(h)


@pytest.mark.parametrize("name", ["relu", "gelu", "gelu_tanh", "silu"])
def test_hidden_gradient_matches_hand_written_backward(name):
    block = FeedForward(64, seed=2)
    x = demo_input(64, 2, batch=2, tokens=5)
    _, grad = hidden_gradient(block, x, name)
    h, want = hand_backward(block, x, name)
    scale = float(want.abs().max())
    np.testing.assert_allclose(grad.double().numpy(), want.numpy(), rtol=1e-4, atol=1e-6 * scale)
    if name == "relu":
        assert torch.equal(grad == 0, h <= 0)  # relu'(0) = 0: zero exactly where h <= 0, nowhere else


def direct(block: FeedForward, x: torch.Tensor, name: str) -> dict:
    """Whole-tensor autograd in one piece (no chunks), and every count done directly on the result."""
    W1 = block.c_fc.weight.detach().clone().requires_grad_()
    h = torch.nn.functional.linear(x, W1, block.c_fc.bias.detach())
    h.retain_grad()
    y = block.c_proj(functional(name)(h))
    loss = 0.5 * (y * y).mean()
    loss.backward()
    g = h.grad.double().numpy()  # (B, T, hidden)
    return dict(
        loss=float(loss.detach()),
        h=h.detach().double().numpy(),
        g=g,
        zeros=int((g == 0).sum()),
        dead=np.flatnonzero((g == 0).reshape(-1, g.shape[-1]).all(axis=0)),
        fc_norm=float(np.linalg.norm(W1.grad.double().numpy())),
    )


@pytest.mark.parametrize("activation, compare", [("gelu_tanh", "relu"), ("gelu", "relu"), ("silu", "leaky_relu")])
@pytest.mark.parametrize("batch, tokens, chunk_tokens", [(3, 10, 16), (1, 4, 1)])
def test_run_gradients_matches_direct_counts_across_chunks(monkeypatch, activation, compare, batch, tokens,
                                                           chunk_tokens):
    """Chunks of 16 tokens (30 tokens: 16 + 14) or of one token (4 tokens, so ReLU has dead units to carry
    across chunks): the chunked statistics equal the one-piece ones."""
    monkeypatch.setattr(lab_module, "_CHUNK", chunk_tokens * 256)
    block = FeedForward(64, seed=4)
    x = demo_input(64, 4, batch=batch, tokens=tokens)
    r = run_gradients(block, x, activation, compare)
    assert r.input_shape == (batch, tokens, 64) and r.hidden_numel == batch * tokens * 256
    assert r.loss_formula == LOSS
    if compare == "relu" and tokens == 4:
        assert r.b.dead_count > 0
    for got, name in ((r.a, activation), (r.b, compare)):
        want = direct(block, x, name)
        assert got.name == name and got.label == ACTIVATIONS[name].label
        assert r.nonpositive_count == int((want["h"] <= 0).sum())
        assert got.loss == pytest.approx(want["loss"], rel=1e-6)
        assert got.zero_count == want["zeros"] and got.zero_share == want["zeros"] / r.hidden_numel
        assert got.dead_units.tolist() == want["dead"].tolist() and got.dead_count == len(want["dead"])
        assert got.mean_abs_grad == pytest.approx(np.abs(want["g"]).mean(), rel=1e-6)
        assert got.max_abs_grad == pytest.approx(np.abs(want["g"]).max(), rel=1e-6)
        assert got.fc_weight_grad_norm == pytest.approx(want["fc_norm"], rel=1e-5)
        hist = got.grad_hist
        magnitudes = np.abs(want["g"][want["g"] != 0])
        assert hist.zeros == want["zeros"] and hist.counts.sum() == magnitudes.size
        numpy_counts, _ = np.histogram(magnitudes, bins=hist.edges)
        assert np.abs(hist.counts - numpy_counts).sum() <= 4  # edge cases only; nothing lost (total above)
        assert hist.edges[0] <= magnitudes.min() and magnitudes.max() < hist.edges[-1]
    assert r.a.grad_hist.edges is not r.b.grad_hist.edges
    np.testing.assert_array_equal(r.a.grad_hist.edges, r.b.grad_hist.edges)  # shared bins: bars side by side


def reference_bin(v: float) -> int | None:
    """The log bin k of a magnitude v >= 0, exactly: 10^(k/10) <= v < 10^((k+1)/10), i.e. v^10 >= 10^k and
    v^10 < 10^(k+1), compared as Python fractions; None for 0; k kept within [_K_LOW, _K_HIGH - 1] (values past
    the ends go to the end bins, as gelu_core documents)."""
    if v == 0:
        return None
    if math.isinf(v):
        return _K_HIGH - 1
    power = Fraction(v) ** BINS_PER_DECADE  # float -> Fraction is exact
    k = math.floor(BINS_PER_DECADE * math.log10(v))  # a first guess only, corrected exactly below
    while power < Fraction(10) ** k:
        k -= 1
    while power >= Fraction(10) ** (k + 1):
        k += 1
    return min(max(k, _K_LOW), _K_HIGH - 1)


def reference_counts(values: np.ndarray) -> tuple[int, np.ndarray]:
    counts, zeros = np.zeros(_K_HIGH - _K_LOW, dtype=np.int64), 0
    for v in np.abs(values).reshape(-1).tolist():
        k = reference_bin(v)
        if k is None:
            zeros += 1
        else:
            counts[k - _K_LOW] += 1
    return zeros, counts


def around_every_edge(dtype) -> np.ndarray:
    """For every edge 10^(k/10) in float32's range: its nearest ``dtype`` number and the two either side of it
    (so some sit exactly on an edge, 1, 10, ..., and the rest just below and just above one), made here with
    numpy alone; plus 0, -0.0, subnormals, the largest float32, random values across the range, and negatives."""
    with np.errstate(over="ignore"):  # 10^38.6 is past float32's largest: inf, dropped
        near = np.array([10.0 ** (k / BINS_PER_DECADE) for k in range(_K_LOW, _K_HIGH + 1)]).astype(dtype)
    near = near[np.isfinite(near) & (near > 0)]
    steps = [near]
    for direction in (0, np.inf):
        step = near
        for _ in range(2):
            step = np.nextafter(step, dtype(direction))
            steps.append(step)
    tiny = np.float32(2.0**-149)
    special = np.array([0.0, -0.0, tiny, 3 * tiny, 2.0**-130, np.float32(2.0**-126) - tiny, 2.0**-126,
                        np.finfo(np.float32).max, 1.0, 10.0, 1e10, np.inf], dtype=dtype)
    spread = (10.0 ** np.random.default_rng(7).uniform(-45.5, 38.5, 4000)).astype(dtype)
    values = np.concatenate(steps + [special, spread])
    return np.concatenate([values, -values[:500]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_log_bins_are_exact_at_every_edge(dtype):
    """gelu_core's bins (look-up of float32 bits, a search of exact edge values otherwise) equal the reference
    binning above value for value: a single value one bin over fails the test."""
    values = around_every_edge(dtype)
    if dtype == np.float64:  # beyond float32's range: go to the end bins
        values = np.concatenate([values, [5e-324, 1e-300, 1e-46, 1e39, 1e300]])
    visited = {reference_bin(float(v)) for v in np.abs(values) if v}
    assert visited >= set(range(-420, _K_HIGH))  # every bin (below 10^-42 some hold no float32 at all)
    below_one = np.nextafter(dtype(1.0), dtype(0.0))
    assert reference_bin(1.0) == 0 and reference_bin(float(below_one)) == -1  # the reference itself, on an edge
    zeros, counts = log_bin_counts(torch.from_numpy(np.abs(values)))
    want_zeros, want = reference_counts(values)
    assert zeros == want_zeros >= 2  # 0.0 and -0.0, and the steps below 2**-149
    np.testing.assert_array_equal(counts.numpy(), want)


def test_log_bins_of_half_precision_are_exact():
    """float16 and bfloat16 magnitudes (widened to float64 exactly, then searched): the reference's counts."""
    for dtype in (torch.float16, torch.bfloat16):
        values = torch.tensor([0.0, 1.0, 10.0, 2.0**-24, 6.1e-5, 0.1, 0.09998, 65504.0, 3.0e38], dtype=dtype)
        values = torch.cat([values, torch.rand(500, generator=torch.Generator().manual_seed(3)).to(dtype)])
        zeros, counts = log_bin_counts(values)
        want_zeros, want = reference_counts(values.double().numpy())
        assert zeros == want_zeros and counts.tolist() == want.tolist()


def test_log_bins_of_a_run_are_exact():
    """A lab run's histogram bars (merged tenths of decades) hold exactly the reference's counts of its dL/dh
    (the lab's own backward step on every row at once: the run's one chunk, so the very same numbers)."""
    block = FeedForward(64, seed=2)
    x = demo_input(64, 2, batch=2, tokens=24)
    r = run_gradients(block, x, "gelu_tanh", "relu")
    for got, name in ((r.a, "gelu_tanh"), (r.b, "relu")):
        zeros, fine = reference_counts(hidden_gradient(block, x, name)[1].detach().numpy())
        m = np.round(np.log10(got.grad_hist.edges) * BINS_PER_DECADE).astype(int)  # edges at 10^(m/10)
        bars = [fine[lo - _K_LOW:hi - _K_LOW].sum() for lo, hi in zip(m[:-1], m[1:], strict=True)]
        assert got.grad_hist.zeros == zeros and got.grad_hist.counts.tolist() == bars
        assert sum(bars) == fine.sum()  # no value outside the bars


def test_relu_silences_every_nonpositive_h_and_gelu_none():
    """ReLU: zero_count == count(h <= 0) exactly; a unit is dead exactly when h <= 0 for all six tokens (counted
    in the test on h); GELU: no zeros, no dead unit, smaller but nonzero gradients where h < 0."""
    block = FeedForward(768, seed=0)
    x = demo_input(768, 0)  # (2, 3, 768): six tokens, so about 3072 / 2**6 = 48 units see only h <= 0
    r = run_gradients(block, x, "gelu_tanh", "relu")
    h = block.hidden_pre(x).detach().reshape(-1, 3072)
    assert r.b.zero_count == r.nonpositive_count == int((h <= 0).sum())
    dead_by_h = torch.nonzero((h <= 0).all(dim=0)).reshape(-1).tolist()
    assert r.b.dead_units.tolist() == dead_by_h and 20 < len(dead_by_h) < 100
    assert r.a.zero_count == 0 and r.a.dead_count == 0 and r.a.grad_hist.zeros == 0
    assert r.b.grad_hist.zeros == r.b.zero_count


def test_relu_slope_at_zero_is_zero():
    """Units whose weights and bias are all 0 get h = 0 exactly for every token: relu'(0) = 0 makes them dead
    and counts them among h <= 0; GELU'(0) = 1/2 keeps them alive."""
    block = FeedForward(16, seed=6)
    with torch.no_grad():
        block.c_fc.weight[:5] = 0.0
        block.c_fc.bias[:5] = 0.0
    x = demo_input(16, 6, batch=2, tokens=50)  # 100 tokens: no other unit is negative for all of them
    r = run_gradients(block, x, "gelu", "relu")
    h = block.hidden_pre(x).detach()
    assert r.nonpositive_count == int((h <= 0).sum()) == int((h < 0).sum()) + 5 * 100
    assert r.b.dead_units.tolist() == [0, 1, 2, 3, 4] and r.b.zero_count == r.nonpositive_count
    assert r.a.dead_count == 0


def test_dead_units_get_no_weight_gradient():
    """The lesson in one assertion: a dead unit's row of dL/dW_fc is exactly zero (torch autograd, whole block)."""
    block = FeedForward(64, seed=1)
    x = demo_input(64, 1, batch=1, tokens=3)
    r = run_gradients(block, x, "gelu", "relu")
    assert r.b.dead_count > 0
    for name, dead in (("relu", r.b.dead_units), ("gelu", r.a.dead_units)):
        same = with_activation(block, name)  # the same weights, this activation
        y = same(x)
        (grad_w,) = torch.autograd.grad(0.5 * (y * y).mean(), same.c_fc.weight)
        rows_zero = torch.nonzero((grad_w == 0).all(dim=1)).reshape(-1).tolist()
        assert rows_zero == dead.tolist()


def test_chunks_bound_what_is_held(monkeypatch):
    """Every backward step sees at most _CHUNK hidden values a time, and starts from the forward's h: c_fc runs
    once per run, on the whole input (recorded by wrapping backward_chunk and with a global forward hook on a
    (4, 64, 64) input cut into 16-token chunks)."""
    monkeypatch.setattr(lab_module, "_CHUNK", 16 * 256)
    block = FeedForward(64, seed=0)
    rows, fc_calls = [], []
    real = gradients_module.backward_chunk

    def recorded(block, act, h, y, n_outputs):
        rows.append(max(h.shape[0], y.shape[0]))
        return real(block, act, h, y, n_outputs)

    monkeypatch.setattr(gradients_module, "backward_chunk", recorded)
    hook = torch.nn.modules.module.register_module_forward_hook(
        lambda module, args, out: fc_calls.append(args[0].shape) if module is block.c_fc else None
    )
    try:
        run_gradients(block, demo_input(64, 0, batch=4, tokens=64))
    finally:
        hook.remove()
    assert rows and max(rows) == 16 and sum(rows) == 2 * 4 * 64  # rows per step; every row, per activation
    assert fc_calls == [torch.Size([4, 64, 64])]


def test_log_bins_merge_to_fit_and_stay_on_tenths_of_decades():
    """Edges are 10^(m/10) for integers m, steps of 1, 2, 5, ... tenths; at most ``bins`` bars."""
    r = run_gradients(FeedForward(64, seed=3), demo_input(64, 3, batch=2, tokens=8), "gelu", "relu", bins=12)
    edges = r.a.grad_hist.edges
    m = np.log10(edges) * BINS_PER_DECADE
    np.testing.assert_allclose(m, np.round(m), atol=1e-9)
    assert len(edges) - 1 <= 12 and len(set(np.diff(np.round(m)))) == 1
    assert r.a.grad_hist.counts.sum() + r.a.grad_hist.zeros == r.hidden_numel
    wide = run_gradients(FeedForward(64, seed=3), demo_input(64, 3, batch=2, tokens=8), "gelu", "relu")
    assert len(wide.a.grad_hist.counts) <= HIST_BINS


def test_same_activation_twice_is_one_result():
    r = run_gradients(FeedForward(8, seed=1), demo_input(8, 1), "gelu", "gelu")
    assert r.a is r.b


def test_wrong_width_and_overflow_are_messages():
    with pytest.raises(LabInputError):
        run_gradients(FeedForward(8, seed=0), torch.zeros(1, 2, 4))
    with pytest.raises(LabInputError, match="overflowed"):
        run_gradients(FeedForward(8, seed=0), torch.full((1, 2, 8), 3e38))


def test_runs_take_turns_with_the_lab(monkeypatch):
    """Reference: a counter of backward steps under way at once, from four threads: inside the lab's run lanes,
    as many at a time as it has lanes (two, one on a one-CPU host), never more."""
    from hosting.runs import RUN_SLOT
    from tests.conftest import most_at_once

    block, x = FeedForward(8, seed=0), demo_input(8, 0)
    assert most_at_once(monkeypatch, gradients_module, "backward_chunk",
                        lambda: run_lab(block, x, backward=True)) == RUN_SLOT.lanes


# ---------------------------------------------------------------- the figures (ui.gradients)

def test_gradient_histogram_carries_the_counts_on_shared_log_bins():
    """Validated by plotly; bars at the log10 midpoints of gelu_core's edges with its exact counts."""
    import plotly.graph_objects as go

    from ui.gradients import gradient_histogram, power_of_ten
    from ui.theme import COLORS

    r = run_gradients(FeedForward(64, seed=3), demo_input(64, 3, batch=2, tokens=8), "gelu_tanh", "relu")
    figure = go.Figure(gradient_histogram(r).to_dict()).to_dict()
    bars = {t["meta"]: t for t in figure["data"]}
    for run in (r.a, r.b):
        trace, edges = bars[run.name], run.grad_hist.edges
        np.testing.assert_allclose(trace["x"], 0.5 * (np.log10(edges[:-1]) + np.log10(edges[1:])), rtol=1e-12)
        assert trace["y"] == run.grad_hist.counts.tolist() and trace["marker"]["color"] == COLORS[run.name]
    assert "50." in bars["relu"]["name"] or "49." in bars["relu"]["name"]  # about half of ReLU's are 0
    assert "0.0% exactly 0" in bars["gelu_tanh"]["name"]
    ticks = figure["layout"]["xaxis"]
    assert ticks["ticktext"] == [power_of_ten(v) for v in ticks["tickvals"]] and power_of_ten(-8) == "10⁻⁸"
    assert ticks["tickvals"][0] <= np.log10(r.a.grad_hist.edges[0]) < np.log10(r.a.grad_hist.edges[-1]) <= \
        ticks["tickvals"][-1]


def test_gradient_table_reads_the_result():
    from ui.format import count
    from ui.format import sig as number
    from ui.gradients import gradient_table

    r = run_gradients(FeedForward(64, seed=1), demo_input(64, 1, batch=1, tokens=3), "gelu", "relu")
    lines = gradient_table(r).splitlines()
    assert lines[0] == "| | GELU exact | ReLU |" and len(lines) == 2 + 6
    row = {line.split(" | ")[0].lstrip("| "): line.split(" | ")[1:] for line in lines[2:]}
    assert row["units dead for this input"] == [count(r.a.dead_count), count(r.b.dead_count) + " |"]
    assert row["dL/dh exactly 0"][1].startswith(f"{count(r.b.zero_count)} of {count(r.hidden_numel)}")
    assert row[LOSS][0] == number(r.a.loss)
