"""FeedForward: GPT-2's Linear(768, 3072) -> GELU -> Linear(3072, 768), checked against the same sum by hand."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from gelu_core import ACTIVATIONS, FeedForward, gelu, parameter_count
from gelu_core.ffn import activation_module
from tests.conftest import with_activation


@pytest.fixture(scope="module")
def block():
    return FeedForward(seed=0)  # 768 -> 3072 -> 768, tanh GELU, as GPT-2 small and chapter 4


def by_hand(x, block, activation=lambda h: F.gelu(h, approximate="tanh")):
    """x @ W1.T + b1 -> activation -> @ W2.T + b2, with the block's own weights."""
    w1, b1 = block.c_fc.weight, block.c_fc.bias
    w2, b2 = block.c_proj.weight, block.c_proj.bias
    return activation(x @ w1.T + b1) @ w2.T + b2


def test_parameter_count_is_gpt2_small(block):
    """768 * 3072 + 3072 (first layer) + 3072 * 768 + 768 (second) = 4,722,432; the activation owns none."""
    expected = 768 * 3072 + 3072 + 3072 * 768 + 768
    assert expected == 4_722_432
    assert parameter_count(block) == expected
    assert sum(p.numel() for p in block.parameters()) == expected
    assert parameter_count(block.act) == 0 and list(block.act.parameters()) == []


@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_no_activation_owns_parameters(name):
    assert parameter_count(activation_module(name)) == 0


def test_shapes(block):
    """(2, 3, 768) -> hidden (2, 3, 3072), kept by the activation -> (2, 3, 768)."""
    x = torch.randn(2, 3, 768, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        hidden = block.hidden_pre(x)
        assert hidden.shape == (2, 3, 3072)
        assert block.act(hidden).shape == (2, 3, 3072)
        assert block(x).shape == (2, 3, 768)
        assert block(x[0]).shape == (3, 768)  # any leading shape


def test_output_equals_the_computation_by_hand_float32(block):
    """Reference: x @ W1.T + b1 -> torch's tanh GELU -> @ W2.T + b2 with the block's weights, float32.
    Tolerance: rtol 1e-5, atol 1e-5 (3072-term float32 sums, summed in another order by nn.Linear)."""
    x = torch.randn(2, 3, 768, generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        torch.testing.assert_close(block(x), by_hand(x, block), rtol=1e-5, atol=1e-5)


def test_output_equals_the_computation_by_hand_float64():
    """The same in float64 (rtol 1e-12, atol 1e-12), and with gelu_core's own tanh GELU as the activation
    (an independent kernel: torch's 0.5 x (1 + tanh) vs our x sigmoid(2u); tolerance alike)."""
    block = FeedForward(seed=3, dtype=torch.float64)
    x = torch.randn(2, 3, 768, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        torch.testing.assert_close(block(x), by_hand(x, block), rtol=1e-12, atol=1e-12)
        ours = by_hand(x, block, activation=lambda h: gelu(h, "tanh"))
        torch.testing.assert_close(block(x), ours, rtol=1e-12, atol=1e-12)
        assert block.c_fc.weight.dtype == torch.float64


@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_every_registry_activation_works(name):
    """A small block with each registry activation: its output is the by-hand sum with gelu_core's own
    function of that name (float64; tolerance 1e-12; softplus: torch switches to x above 20, never
    reached here, |hidden| < 3)."""
    block = FeedForward(d_model=16, activation=name, seed=5, dtype=torch.float64)
    x = torch.randn(4, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(6))
    with torch.no_grad():
        assert block.hidden_pre(x).abs().max() < 3
        expected = by_hand(x, block, activation=ACTIVATIONS[name])
        torch.testing.assert_close(block(x), expected, rtol=1e-12, atol=1e-12)
    assert block.activation == name and block.hidden == 64


def test_activations_change_the_output():
    """Different activations on the same weights give different outputs (the activation is wired in)."""
    block = FeedForward(d_model=16, seed=7)
    x = torch.randn(4, 16, generator=torch.Generator().manual_seed(8))
    with torch.no_grad():
        outs = {name: with_activation(block, name)(x) for name in ("gelu_tanh", "gelu", "relu", "silu")}
    assert not torch.equal(outs["gelu_tanh"], outs["relu"])
    assert not torch.equal(outs["gelu"], outs["silu"])
    # the tanh form is within 4.73e-4 of exact GELU per unit, so outputs differ by at most sum_j |W2_ij| 4.74e-4
    bound = block.c_proj.weight.abs().sum(dim=1) * 4.74e-4
    assert ((outs["gelu_tanh"] - outs["gelu"]).abs() <= bound).all()


def test_seed_reproducibility():
    """The same seed gives the same weights (and output); another seed other weights."""
    a, b, c = FeedForward(d_model=32, seed=11), FeedForward(d_model=32, seed=11), FeedForward(d_model=32, seed=12)
    for (name, p), q, r in zip(a.state_dict().items(), b.state_dict().values(), c.state_dict().values(),
                               strict=True):
        assert torch.equal(p, q), name
        assert not torch.equal(p, r), name
    x = torch.randn(2, 32)
    with torch.no_grad():
        assert torch.equal(a(x), b(x))


def test_seeded_init_is_nn_linear_default_range():
    """nn.Linear's default init: weights and biases uniform in +-1/sqrt(fan_in)."""
    block = FeedForward(d_model=64, seed=13)
    for layer in (block.c_fc, block.c_proj):
        bound = layer.in_features ** -0.5
        for p in (layer.weight, layer.bias):
            assert p.abs().max() <= bound and p.abs().max() > 0.9 * bound

def test_bad_configuration_is_refused_clearly():
    with pytest.raises(ValueError, match="d_model"):
        FeedForward(d_model=0)
    with pytest.raises(ValueError, match="hidden"):
        FeedForward(d_model=4, hidden=0)
    with pytest.raises(ValueError, match="unknown activation"):
        FeedForward(d_model=4, activation="gelu_fast")


def test_gradients_flow_to_both_layers():
    """Training would work: a backward pass reaches every weight and bias."""
    block = FeedForward(d_model=8, seed=14)
    block(torch.randn(2, 8)).sum().backward()
    for name, p in block.named_parameters():
        assert p.grad is not None and p.grad.abs().sum() > 0, name
