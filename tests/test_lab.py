"""gelu_core.lab against the same measurements written out by hand with torch / numpy / scipy in the test.

References and tolerances, per test:
- counts (negatives, zeroed, histogram totals): exact integers;
- shares and sums: float64 sums over the float32 tensors in numpy, rtol 1e-6 (the lab sums rows in float32
  first: 3072 terms, relative error far below 1e-6);
- outputs: bitwise equal to a FeedForward with the same weights and that activation (the same kernels), and
  within rtol 1e-5 of a float64 forward pass written with matmuls;
- GELU's kept negative share: against scipy.special.ndtr (an independent Phi), rtol 1e-5.
- run sizes: the caps written out as arithmetic in the test; a refusal's resident growth under the bound stated
  in each test (harness.memory), against the gigabytes the refused run would take.
"""

from __future__ import annotations

import io

import numpy as np
import plotly.graph_objects as go
import pytest
import torch
from scipy import special

from gelu_core import ACTIVATIONS
from gelu_core.ffn import FeedForward
from gelu_core.lab import (
    HIST_BINS,
    MAX_HIDDEN_ELEMENTS,
    MAX_INPUT_ELEMENTS,
    LabInputError,
    WidthMismatch,
    array_bytes,
    as_tokens,
    check_run_size,
    demo_input,
    histogram,
    nonfinite_report,
    run_lab,
    shape_flow,
)
from harness.memory import PeakGrowth
from tests.conftest import functional
from ui.ffn import MAX_POINTS, hidden_histogram, post_histogram, token_norms_figure, token_profile

RTOL_SUM = 1e-6  # float32 row sums then float64, vs a float64 numpy sum


def hand(block: FeedForward, x: torch.Tensor, name: str) -> dict:
    """The lab's numbers for one activation, each written as directly as possible."""
    W1, b1 = block.c_fc.weight.detach(), block.c_fc.bias.detach()
    W2, b2 = block.c_proj.weight.detach(), block.c_proj.bias.detach()
    h = torch.nn.functional.linear(x, W1, b1)  # (B, T, 4d), float32 as the block computes it
    y = functional(name)(h)  # torch.nn.functional, not the lab's activation_module
    out = torch.nn.functional.linear(y, W2, b2)
    h64, y64 = h.double().numpy(), y.double().numpy()
    neg = h64 < 0
    return dict(
        h=h, y=y, out=out,
        negative_count=int(neg.sum()),
        zeroed=int((neg & (y64 == 0)).sum()),
        negative_kept=np.abs(y64[neg]).sum() / np.abs(h64[neg]).sum(),
        positive_kept=y64[~neg].sum() / h64[~neg].sum(),
    )


def forward64(block: FeedForward, x: torch.Tensor, name: str) -> np.ndarray:
    """The block in float64 with plain matmuls: (x W1^T + b1) -> act -> (. W2^T + b2)."""
    W1, b1 = block.c_fc.weight.detach().double(), block.c_fc.bias.detach().double()
    W2, b2 = block.c_proj.weight.detach().double(), block.c_proj.bias.detach().double()
    h = x.double() @ W1.T + b1
    return (functional(name)(h) @ W2.T + b2).numpy()


@pytest.mark.parametrize("d_model", [8, 64])
@pytest.mark.parametrize("activation, compare", [("gelu_tanh", "relu"), ("gelu", "relu"), ("silu", "gelu_tanh"),
                                                 ("relu", "leaky_relu")])
def test_run_lab_matches_hand_computation(d_model, activation, compare):
    block = FeedForward(d_model, seed=3)
    x = demo_input(d_model, seed=3, batch=2, tokens=5)
    r = run_lab(block, x, activation, compare)
    a, b = hand(block, x, activation), hand(block, x, compare)

    assert r.input_shape == (2, 5, d_model)
    assert r.hidden_numel == 2 * 5 * 4 * d_model
    assert r.negative_count == a["negative_count"]
    assert r.negative_share == a["negative_count"] / r.hidden_numel
    assert (r.hidden_hist.edges[0], r.hidden_hist.edges[-1]) == (float(a["h"].min()), float(a["h"].max()))
    for got, want, name in ((r.a, a, activation), (r.b, b, compare)):
        assert got.name == name and got.label == ACTIVATIONS[name].label
        assert got.zeroed == want["zeroed"]
        assert got.negative_kept == pytest.approx(want["negative_kept"], rel=RTOL_SUM, abs=1e-12)
        assert got.positive_kept == pytest.approx(want["positive_kept"], rel=RTOL_SUM)
        assert torch.equal(got.output, want["out"])  # the same kernels, written out: the same bits
        np.testing.assert_allclose(got.output.numpy(), forward64(block, x, name), rtol=1e-5, atol=1e-6)
        norms = np.linalg.norm(want["out"].double().numpy(), axis=-1)  # (B, T)
        np.testing.assert_allclose(got.token_norms.numpy(), norms, rtol=1e-6)
        assert got.mean_token_norm == pytest.approx(norms.mean(), rel=1e-6)
        assert (got.post_min, got.post_max) == (float(want["y"].min()), float(want["y"].max()))
        assert got.post_hist.counts.sum() == r.hidden_numel
    diff = np.abs(a["out"].double().numpy() - b["out"].double().numpy())
    assert r.max_abs_diff == pytest.approx(diff.max(), rel=1e-6)
    assert r.mean_abs_diff == pytest.approx(diff.mean(), rel=RTOL_SUM)
    assert r.mean_abs_output == pytest.approx(np.abs(a["out"].double().numpy()).mean(), rel=RTOL_SUM)


def test_relu_zeroes_every_negative_and_keeps_every_positive():
    """ReLU: zeroed == count(h < 0), nothing of the negative side kept, all of the positive side kept (exact)."""
    block = FeedForward(64, seed=0)
    r = run_lab(block, demo_input(64, 0), "gelu_tanh", "relu")
    assert r.b.zeroed == r.negative_count > 0
    assert r.b.negative_kept == 0.0
    assert r.b.positive_kept == pytest.approx(1.0, rel=1e-12)
    assert r.a.zeroed == 0  # GELU(h) is 0 only where h underflows, far below these h
    assert 0.0 < r.a.negative_kept < 0.5  # Phi(h) < 1/2 for every h < 0


def test_gelu_keeps_phi_weighted_share_of_negatives():
    """|GELU(h)| / |h| = Phi(h) for h < 0, so the kept share is sum |h| Phi(h) / sum |h| over the negatives.

    Reference: scipy.special.ndtr on the float64 value of each float32 h; rtol 1e-5 (float32 GELU kernel).
    """
    block = FeedForward(64, seed=11)
    x = demo_input(64, 11, batch=3, tokens=7)
    r = run_lab(block, x, "gelu", "relu")
    h = block.hidden_pre(x).detach().double().numpy()
    neg = h[h < 0]
    assert r.a.negative_kept == pytest.approx((np.abs(neg) * special.ndtr(neg)).sum() / np.abs(neg).sum(), rel=1e-5)


def test_same_activation_twice_differs_by_nothing():
    block = FeedForward(8, seed=1)
    r = run_lab(block, demo_input(8, 1), "gelu", "gelu")
    assert r.max_abs_diff == 0.0 and r.mean_abs_diff == 0.0
    assert r.a is r.b


def test_gpt2_small_shape_flow_and_parameter_counts():
    """d_model = 768: 768·3072 + 3072 and 3072·768 + 768 parameters (arithmetic in the test), activation none."""
    block = FeedForward(768, seed=0)
    flow = shape_flow(block, (2, 3, 768), "gelu_tanh")
    assert [s.layer for s in flow] == ["c_fc", "activation", "c_proj"]
    assert [s.shape for s in flow] == [(2, 3, 3072), (2, 3, 3072), (2, 3, 768)]
    assert [s.op for s in flow] == ["Linear(768, 3072)", "GELU (tanh, GPT-2)", "Linear(3072, 768)"]
    assert [s.params for s in flow] == [768 * 3072 + 3072, 0, 3072 * 768 + 768]
    r = run_lab(block, demo_input(768, 0), "gelu_tanh", "relu")
    assert r.total_params == 4_722_432 == sum(s.params for s in flow)
    assert r.flow == flow


def test_histogram_counts_match_numpy():
    """Exact integer counts against numpy.histogram on the same edges (a value may sit on an edge: allow a
    handful to move to the neighbouring bin, none to be lost)."""
    values = torch.randn(1_000_003, generator=torch.Generator().manual_seed(5))
    lo, hi = float(values.min()), float(values.max())
    hist = histogram(values, lo, hi, bins=37)
    want, edges = np.histogram(values.double().numpy(), bins=37, range=(lo, hi))
    np.testing.assert_allclose(hist.edges, edges, rtol=1e-12)
    assert hist.counts.dtype == np.int64 and hist.counts.sum() == values.numel()
    assert np.abs(hist.counts - want).sum() <= 10


def test_histogram_counts_beyond_float32_exact_range():
    """One bin with more than 2**24 values: float32 counting would stall at 16,777,216; ours must not."""
    n = 2**24 + 1001
    hist = histogram(torch.zeros(n), -1.0, 1.0, bins=4)
    assert hist.counts.tolist() == [0, 0, n, 0]


def test_histogram_of_a_constant():
    hist = histogram(torch.full((10,), 2.5), 2.5, 2.5, bins=4)
    assert hist.counts.sum() == 10 and hist.edges[0] < 2.5 < hist.edges[-1]


@pytest.mark.parametrize("shape, want", [((8,), (1, 1, 8)), ((5, 8), (1, 5, 8)), ((2, 5, 8), (2, 5, 8))])
def test_as_tokens_accepts_three_shapes(shape, want):
    x = torch.randn(shape, dtype=torch.float64)
    got = as_tokens(x, 8)
    assert got.shape == want and got.dtype == torch.float32
    assert torch.equal(got.reshape(-1), x.to(torch.float32).reshape(-1))


def test_as_tokens_width_mismatch_says_both_widths():
    with pytest.raises(WidthMismatch) as err:
        as_tokens(torch.zeros(2, 3, 5), 8)
    assert err.value.width == 5 and err.value.d_model == 8
    assert "5" in str(err.value) and "8" in str(err.value)


@pytest.mark.parametrize("x, words", [
    (torch.zeros(()), "shape ()"),
    (torch.zeros(1, 2, 3, 8), "shape (1, 2, 3, 8)"),
    (torch.zeros(0, 8), "no tokens"),
    (torch.full((3, 5), float("nan")), "15 NaN"),  # reported before the width
    (torch.zeros(3, 8, dtype=torch.bool), "bool"),
    (torch.zeros(3, 8, dtype=torch.complex64), "complex64"),
    (torch.full((3, 8), 1e300, dtype=torch.float64), "float32's range"),
])
def test_as_tokens_refusals_are_sentences(x, words):
    with pytest.raises(LabInputError) as err:
        as_tokens(x, 8)
    assert words in str(err.value)


def test_as_tokens_caps_tokens():
    most = MAX_HIDDEN_ELEMENTS // (4 * 8)
    assert as_tokens(torch.zeros(most, 8), 8).shape == (1, most, 8)
    with pytest.raises(LabInputError, match="at most"):
        as_tokens(torch.zeros(most + 1, 8), 8)


def test_nonfinite_counted_and_refused():
    x = torch.zeros(2, 3, 4)
    x[0, 2, 1] = float("nan")
    x[1, 0, 0] = float("nan")
    x[1, 0, 3] = float("inf")
    x[1, 2, :3] = float("-inf")
    report = nonfinite_report(x)
    assert "2 NaN" in report and "1 +inf" in report and "3 -inf" in report
    assert "3 of 6 tokens" in report and "first: batch 0, token 2" in report
    assert "first: token 2" in nonfinite_report(x[0])
    with pytest.raises(LabInputError, match="NaN"):
        as_tokens(x, 4)
    assert nonfinite_report(torch.ones(3)) is None


def test_overflow_inside_the_block_is_a_message():
    block = FeedForward(8, seed=0)
    with pytest.raises(LabInputError, match="overflowed"):
        run_lab(block, torch.full((1, 2, 8), 3e38))


def test_run_lab_wants_the_block_width():
    with pytest.raises(LabInputError):
        run_lab(FeedForward(8, seed=0), torch.zeros(1, 2, 4))


def test_token_profile_keeps_or_averages():
    """Up to max_points: every token; beyond: means of equal consecutive buckets (numpy reshape by hand)."""
    norms = torch.arange(10, dtype=torch.float32).reshape(2, 5)
    p = token_profile(norms, max_points=16)
    assert p.bucket == 1 and p.mean.tolist() == list(range(10)) and p.position.tolist() == list(range(10))
    values = torch.rand(3, 1001, generator=torch.Generator().manual_seed(2))
    p = token_profile(values, max_points=100)
    flat = values.double().numpy().reshape(-1)  # 3003 tokens -> buckets of 31, the last one short
    assert p.bucket == 31 and len(p.mean) == 97 <= 100
    np.testing.assert_allclose(p.mean[:-1], flat[: 96 * 31].reshape(96, 31).mean(axis=1), rtol=1e-12)
    np.testing.assert_allclose(p.mean[-1], flat[96 * 31:].mean(), rtol=1e-12)
    assert p.position[1] == 31


def test_demo_input_is_seeded():
    a, b, c = demo_input(16, 4), demo_input(16, 4), demo_input(16, 5)
    assert a.shape == (2, 3, 16) and a.dtype == torch.float32
    assert torch.equal(a, b) and not torch.equal(a, c)
    big = demo_input(64, 0, batch=4, tokens=256)
    assert abs(float(big.mean())) < 0.02 and abs(float(big.std()) - 1) < 0.02  # standard normal, 65,536 draws


def test_array_bytes_round_trip():
    """Downloads: np.load and torch.load(weights_only=True) give back the exact tensor."""
    t = run_lab(FeedForward(8, seed=0), demo_input(8, 0)).a.output
    assert np.array_equal(np.load(io.BytesIO(array_bytes(t, "npy")), allow_pickle=False), t.numpy())
    assert torch.equal(torch.load(io.BytesIO(array_bytes(t, "pt")), weights_only=True), t)
    with pytest.raises(ValueError):
        array_bytes(t, "csv")


def test_charts_stay_light_for_eight_full_contexts():
    """8 x 1024 tokens: the token-norm line holds at most MAX_POINTS points a series, histograms HIST_BINS bars,
    so the browser never gets millions of points (ui.ffn builders, fed by the lab)."""
    norms = torch.rand(8, 1024, generator=torch.Generator().manual_seed(0))
    p = token_profile(norms)
    fig = token_norms_figure(p.position, [("GELU", "gelu", p.mean), ("ReLU", "relu", p.mean)], bucket=p.bucket,
                             tokens=1024, batch=8)
    assert p.bucket == 4 and all(len(t.y) == 2048 <= MAX_POINTS for t in fig.data)
    hist = histogram(torch.randn(100_000), -5, 5)
    bars = hidden_histogram(hist.edges, hist.counts, 0.5)
    assert sum(len(t.y) for t in bars.data) == HIST_BINS and sum(sum(t.y) for t in bars.data) == hist.counts.sum()
    both = post_histogram(hist.edges, hist.counts, hist.counts, key_a="gelu", label_a="GELU", key_b="relu",
                          label_b="ReLU")
    assert [len(t.y) for t in both.data] == [HIST_BINS, HIST_BINS] and both.layout.yaxis.type == "log"
    for figure in (fig, bars, both):
        go.Figure(figure.to_dict())  # validates: the builders skip plotly's checks for speed


def test_a_run_widens_to_both_cores_when_the_other_lane_frees(monkeypatch):
    """Reference: torch.get_num_threads() read in the test at each backward step of a lab run (one row a chunk):
    one thread while another run holds the second lane, both cores once it has left (RUN_SLOT's own count)."""
    import threading

    from gelu_core import gradients, lab
    from hosting import lab_runs

    slot = lab_runs.RUN_SLOT
    if slot.lanes < 2 or slot.cores < 2:
        pytest.skip("one lane on this host: nothing to share")
    monkeypatch.setattr(lab, "_CHUNK", 32)  # hidden 32: one row a step, six steps
    inside, leave = threading.Event(), threading.Event()
    threads_at_step = []
    step = gradients.Backward.add

    def counted(self, *args):
        threads_at_step.append(torch.get_num_threads())
        if len(threads_at_step) == 2:  # the other run leaves after our second step; we wait till it has
            leave.set()
            other.join(30)
        step(self, *args)

    def other_run():
        with slot.hold("another student's run"):
            inside.set()
            assert leave.wait(30)

    monkeypatch.setattr(gradients.Backward, "add", counted)
    other = threading.Thread(target=other_run)
    other.start()
    assert inside.wait(30)
    block = lab.FeedForward(8, seed=0)
    lab_runs.run_lab(block, lab.demo_input(8, 0, 2, 3), backward=True)
    other.join(30)
    assert threads_at_step[:2] == [1, 1] and set(threads_at_step[2:]) == {slot.cores} and len(threads_at_step) == 6


def test_runs_take_turns(monkeypatch):
    """Reference: a counter of runs inside the block at once, from four threads; the lab lets in as many at a time
    as it has run lanes (two; one on a one-CPU host), never more."""
    from gelu_core import lab
    from hosting import lab_runs
    from tests.conftest import most_at_once

    block, x = lab.FeedForward(8, seed=0), lab.demo_input(8, 0, 2, 3)
    most = most_at_once(monkeypatch, lab, "_input_sides", lambda: lab_runs.run_lab(block, x))
    assert most == lab_runs.RUN_SLOT.lanes


def test_nonfinite_report_on_one_token():
    """A (d,) input with a NaN: the sentence names the only token (an IndexError before)."""
    report = nonfinite_report(torch.tensor([1.0, float("nan"), 2.0]))
    assert "1 NaN (1 of 1 tokens affected; first: the only token)" in report


# ---------------------------------------------------------------------------------------------
# The run's size, checked before anything is drawn or run
# ---------------------------------------------------------------------------------------------


def test_default_budget_runs_gpt2_small_batches_and_refuses_more():
    """(8, 1024, 768) through GPT-2 small's block fits exactly; one more token does not; GPT-2 XL's block gets
    at most MAX_HIDDEN_ELEMENTS // 6400 tokens (arithmetic in the test)."""
    check_run_size(8, 1024, 768, 3072)
    with pytest.raises(LabInputError, match="at most 8,192 tokens at d_model = 768"):
        check_run_size(1, 8193, 768, 3072)
    with pytest.raises(LabInputError, match=f"at most {MAX_HIDDEN_ELEMENTS // 6400:,} tokens at d_model = 1,600"):
        check_run_size(8, 1024, 1600, 6400)
    with pytest.raises(LabInputError, match=r"at most 8,192 tokens at d_model = 768 \(6,291,456 input values\)"):
        check_run_size(2, 8193, 768, 1)
    assert MAX_INPUT_ELEMENTS == 8 * 1024 * 768


@pytest.mark.parametrize("args, words", [
    ((8, 1024, 2**17, 1), "d_model = 131,072; the lab runs blocks up to d_model = 1,600"),
    ((2, 3, 1, 2**24), "hidden layer has 16,777,216 units; the lab runs hidden layers up to 6,400"),
    ((8, 1024, 8, 4096), "at most 6,144 tokens at d_model = 8, hidden = 4,096 (about 96 MB"),
])
def test_check_run_size_names_the_limit(args, words):
    with pytest.raises(LabInputError) as err:
        check_run_size(*args)
    assert words in str(err.value)


def test_demo_input_over_the_cap_is_refused_before_it_is_drawn():
    """The (8, 1024, 131072) demo a 2**17-wide 'block' asked for: 4 GiB if drawn.  Refused with resident growth
    under 16 MiB (harness.memory)."""
    with PeakGrowth() as grown, pytest.raises(LabInputError, match="d_model = 131,072"):
        demo_input(2**17, 0, 8, 1024)
    assert grown.bytes is None or grown.bytes < 16 * 2**20, grown.bytes
    with pytest.raises(LabInputError, match="at most 3,932 tokens at d_model = 1,600"):
        demo_input(1600, 0, 8, 1024)  # 13.1 M input values, over the cap even before the block is known


def test_as_tokens_and_run_lab_count_the_blocks_own_hidden_width():
    """A block with d_model 1 and a 2**24-wide hidden layer: 6 tokens make 100 M hidden values (400 MB), where
    4 x d_model counted 24.  as_tokens given the block's hidden width, and run_lab in any case, refuse it before
    anything is allocated: the block lives on the meta device (no memory), so any allocation would fail."""
    x = torch.ones(2, 3, 1)
    assert as_tokens(x, 1).shape == (2, 3, 1)  # without the block's width: GPT-2's 4 x d_model
    with pytest.raises(LabInputError, match="16,777,216 units"):
        as_tokens(x, 1, hidden=2**24)
    block = FeedForward(1, hidden=2**24, device="meta")
    with PeakGrowth() as grown, pytest.raises(LabInputError, match="16,777,216 units"):
        run_lab(block, x)
    assert grown.bytes is None or grown.bytes < 16 * 2**20, grown.bytes
