"""gelu_core.weights: state-dict names and layouts, read from files written in the test through load_tensors.

Reference: the block each file describes, computed by hand in the test with the file's own tensors: nn.Linear
layout as x @ W.T + b, GPT-2's Conv1D layout as x @ W + b (what transformers' Conv1D does: addmm(b, x, W)),
then PyTorch's own activation, then the second layer the same way.  Tolerance: rtol 1e-6, atol 1e-6 (the same
float32 products in another order); where the file is our own FeedForward's state dict, bitwise equality.
Blocks wider than the lab runs (files from harness.hostile_files): the refusal names the limit, and resident
memory grows by less than the bound each test states (harness.memory).
"""

from __future__ import annotations

import io

import numpy as np
import pytest
import torch
from safetensors.torch import save as safetensors_save

from gelu_core import load_tensors
from gelu_core.ffn import FeedForward, parameter_count
from gelu_core.tensor_io import load_tensors_with_notes
from gelu_core.weights import CONV1D, LINEAR, Candidate, WeightsError, check_block_shapes, find_blocks, load_block
from harness.hostile_files import deep_hidden_npz, wide_block_npz
from harness.memory import PeakGrowth
from tests.conftest import with_activation

TOL = dict(rtol=1e-6, atol=1e-6)


def torch_file(obj, tmp_path, name="weights.pt") -> tuple[bytes, str]:
    """torch.save to a real file in tmp_path, read back as the bytes an upload would carry."""
    path = tmp_path / name
    torch.save(obj, path)
    return path.read_bytes(), name


def rand(*shape, seed=0):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed)) * 0.3


def by_hand(x, w1, b1, w2, b2, conv1d: bool):
    """The block written out: first layer, PyTorch's tanh GELU, second layer, in the file's layout."""
    first = x @ w1 if conv1d else x @ w1.T
    h = torch.nn.functional.gelu(first + (b1 if b1 is not None else 0), approximate="tanh")
    second = h @ w2 if conv1d else h @ w2.T
    return second + (b2 if b2 is not None else 0)


def gpt2_mlp(d, hidden, layer, seed):
    """One GPT-2 (Hugging Face) layer's tensors around its MLP: Conv1D weights are (in, out)."""
    p = f"h.{layer}."
    return {
        p + "ln_2.weight": torch.ones(d), p + "ln_2.bias": torch.zeros(d),
        p + "attn.c_attn.weight": rand(d, 3 * d, seed=seed), p + "attn.c_attn.bias": torch.zeros(3 * d),
        p + "mlp.c_fc.weight": rand(d, hidden, seed=seed + 1), p + "mlp.c_fc.bias": rand(hidden, seed=seed + 2),
        p + "mlp.c_proj.weight": rand(hidden, d, seed=seed + 3), p + "mlp.c_proj.bias": rand(d, seed=seed + 4),
    }


def test_gpt2_conv1d_is_transposed_on_load(tmp_path):
    sd = gpt2_mlp(8, 32, layer=0, seed=0)
    tensors = load_tensors(*torch_file(sd, tmp_path))
    assert find_blocks(tensors) == [Candidate("h.0.mlp.", "c_fc", "c_proj")]
    loaded = load_block(tensors)
    assert loaded.layout == CONV1D and (loaded.d_model, loaded.hidden) == (8, 32) and loaded.notes == ()
    assert torch.equal(loaded.block.c_fc.weight.detach(), sd["h.0.mlp.c_fc.weight"].T)
    x = rand(2, 3, 8, seed=9)
    want = by_hand(x, sd["h.0.mlp.c_fc.weight"], sd["h.0.mlp.c_fc.bias"], sd["h.0.mlp.c_proj.weight"],
                   sd["h.0.mlp.c_proj.bias"], conv1d=True)
    with torch.inference_mode():
        np.testing.assert_allclose(loaded.block(x).numpy(), want.numpy(), **TOL)


def test_gpt2_small_sizes_from_safetensors():
    """GPT-2 small's MLP as Hugging Face stores it: c_fc.weight (768, 3072); the block has 4,722,432 parameters."""
    sd = {k: v for k, v in gpt2_mlp(768, 3072, layer=5, seed=1).items() if ".mlp." in k}
    tensors = load_tensors(safetensors_save(sd), "gpt2-layer5.safetensors")
    loaded = load_block(tensors)
    assert loaded.layout == CONV1D and (loaded.d_model, loaded.hidden) == (768, 3072)
    assert parameter_count(loaded.block) == 4_722_432
    assert loaded.candidate.label == "h.5.mlp.{c_fc, c_proj}"


def test_several_layers_found_and_chosen(tmp_path):
    sd = {**gpt2_mlp(8, 32, layer=0, seed=0), **gpt2_mlp(8, 32, layer=1, seed=10)}
    tensors = load_tensors(*torch_file(sd, tmp_path))
    found = find_blocks(tensors)
    assert [c.prefix for c in found] == ["h.0.mlp.", "h.1.mlp."]
    with pytest.raises(WeightsError, match="2 feed-forward blocks"):
        load_block(tensors)
    loaded = load_block(tensors, found[1])
    assert torch.equal(loaded.block.c_proj.bias.detach(), sd["h.1.mlp.c_proj.bias"])


def test_own_feedforward_state_dict_round_trips_bitwise(tmp_path):
    block = FeedForward(16, seed=4)
    tensors = load_tensors(*torch_file(block.state_dict(), tmp_path))
    loaded = load_block(tensors, activation="gelu")
    assert loaded.layout == LINEAR and loaded.candidate == Candidate("", "c_fc", "c_proj")
    x = rand(3, 16, seed=2)
    with torch.inference_mode():
        assert torch.equal(loaded.block(x), with_activation(block, "gelu")(x))


def test_sequential_chapter4_names(tmp_path):
    """Chapter 4's FeedForward: self.layers = nn.Sequential(Linear(d, 4d), GELU(), Linear(4d, d))."""
    layers = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.GELU(approximate="tanh"), torch.nn.Linear(32, 8))
    sd = {f"trf_blocks.0.ff.layers.{k}": v for k, v in layers.state_dict().items()}
    tensors = load_tensors(*torch_file(sd, tmp_path))
    loaded = load_block(tensors)
    assert loaded.candidate == Candidate("trf_blocks.0.ff.layers.", "0", "2") and loaded.layout == LINEAR
    x = rand(2, 8, seed=3)
    with torch.inference_mode():
        np.testing.assert_allclose(loaded.block(x).numpy(), layers(x).numpy(), **TOL)


@pytest.mark.parametrize("first, second", [("fc1", "fc2"), ("linear1", "linear2"),
                                           ("dense_h_to_4h", "dense_4h_to_h")])
def test_other_linear_names(first, second):
    w1, b1, w2, b2 = rand(24, 6, seed=1), rand(24, seed=2), rand(6, 24, seed=3), rand(6, seed=4)
    sd = {f"layer.{first}.weight": w1, f"layer.{first}.bias": b1, f"layer.{second}.weight": w2,
          f"layer.{second}.bias": b2}
    buffer = io.BytesIO()
    np.savez(buffer, **{k: v.numpy() for k, v in sd.items()})
    loaded = load_block(load_tensors(buffer.getvalue(), "mlp.npz"))
    assert loaded.layout == LINEAR and (loaded.d_model, loaded.hidden) == (6, 24)
    x = rand(4, 6, seed=5)
    with torch.inference_mode():
        np.testing.assert_allclose(loaded.block(x).numpy(), by_hand(x, w1, b1, w2, b2, conv1d=False).numpy(), **TOL)


@pytest.mark.parametrize("conv1d", [False, True])
def test_no_biases_wider_side_is_hidden(conv1d):
    """nanoGPT with bias=False (Linear layout) and a Conv1D file without biases: the wider side is the hidden one."""
    w1, w2 = rand(32, 8, seed=1), rand(8, 32, seed=2)  # Linear: (hidden, d), (d, hidden)
    if conv1d:
        w1, w2 = w1.T.contiguous(), w2.T.contiguous()
    loaded = load_block({"mlp.c_fc.weight": w1, "mlp.c_proj.weight": w2})
    assert loaded.layout == (CONV1D if conv1d else LINEAR) and (loaded.d_model, loaded.hidden) == (8, 32)
    assert any("wider side" in n for n in loaded.notes) and any("bias is missing" in n for n in loaded.notes)
    x = rand(3, 8, seed=3)
    with torch.inference_mode():
        np.testing.assert_allclose(loaded.block(x).numpy(), by_hand(x, w1, None, w2, None, conv1d).numpy(), **TOL)


def test_square_without_biases_is_read_as_linear_and_says_so():
    loaded = load_block({"fc1.weight": rand(8, 8, seed=1), "fc2.weight": rand(8, 8, seed=2)})
    assert loaded.layout == LINEAR and any("square" in n for n in loaded.notes)


def test_float64_weights_are_converted_with_a_note():
    sd = {k: v.double() for k, v in gpt2_mlp(8, 32, 0, 0).items() if ".mlp." in k}
    loaded = load_block(sd)
    assert loaded.block.c_fc.weight.dtype == torch.float32 and any("float32" in n for n in loaded.notes)


@pytest.mark.parametrize("change, words", [
    ({"h.0.mlp.c_proj.weight": rand(32, 9)}, "do not chain"),
    ({"h.0.mlp.c_fc.bias": rand(31)}, "bias has 31"),
    ({"h.0.mlp.c_proj.bias": rand(9)}, "c_proj.bias has 9"),
    ({"h.0.mlp.c_fc.weight": rand(8, 32, 1)}, "should be a matrix"),
    ({"h.0.mlp.c_fc.bias": rand(32, 1)}, "should be a vector"),
    ({"h.0.mlp.c_fc.bias": torch.full((32,), float("nan"))}, "NaN"),
    ({"h.0.mlp.c_fc.weight": torch.ones(8, 32, dtype=torch.int32)}, "floating-point"),
])
def test_mismatches_are_clear_messages(change, words):
    sd = {k: v for k, v in gpt2_mlp(8, 32, 0, 0).items() if ".mlp." in k}
    sd.update(change)
    with pytest.raises(WeightsError) as err:
        load_block(sd)
    assert words in str(err.value) and len(str(err.value)) < 200


def test_no_block_found_names_what_was_expected():
    with pytest.raises(WeightsError) as err:
        load_block({"encoder.weight": rand(4, 4), "xfc1.weight": rand(4, 4), "xfc2.weight": rand(4, 4)})
    assert "c_fc" in str(err.value) and "fc1/fc2" in str(err.value)
    assert find_blocks({"xfc1.weight": rand(4, 4), "xfc2.weight": rand(4, 4)}) == []


# ---------------------------------------------------------------------------------------------
# Blocks wider than the lab runs: refused from their shapes, before anything big is allocated
# ---------------------------------------------------------------------------------------------


def test_gpt2_xl_block_in_float16_loads_and_builds():
    """GPT-2 XL's MLP (d_model 1,600, hidden 6,400), as Hugging Face stores it in float16: 41 MB, the widest
    block the lab runs; it loads under the default budget and builds (shapes checked against the test's)."""
    sd = {"h.0.mlp.c_fc.weight": torch.zeros(1600, 6400, dtype=torch.float16),
          "h.0.mlp.c_fc.bias": torch.zeros(6400, dtype=torch.float16),
          "h.0.mlp.c_proj.weight": torch.zeros(6400, 1600, dtype=torch.float16),
          "h.0.mlp.c_proj.bias": torch.zeros(1600, dtype=torch.float16)}
    data = safetensors_save(sd)
    tensors, _ = load_tensors_with_notes(data, "gpt2-xl-mlp.safetensors", check=check_block_shapes)
    loaded = load_block(tensors)
    assert (loaded.d_model, loaded.hidden, loaded.layout) == (1600, 6400, CONV1D)


@pytest.mark.parametrize("build, words", [
    (wide_block_npz, "d_model = 131,072; the lab runs blocks up to d_model = 1,600 (GPT-2 XL)."),
    (deep_hidden_npz, "a hidden layer of 16,777,216; the lab runs hidden layers up to 6,400 (GPT-2 XL)."),
])
def test_blocks_wider_than_the_lab_are_refused_from_their_shapes(build, words):
    """The two measured bugs: a 2.6 kB .npz 'block' with d_model 2**17 (the lab then drew a 4 GiB demo input)
    and a 130 kB .npz with a 2**24-wide hidden layer (the run peaked at 2-3 GB).  Both load as files (their
    tensors fit the loader's 128 MiB); load_block refuses them from the shapes, before building anything."""
    tensors = load_tensors(build(), "block.npz")
    with pytest.raises(WeightsError) as err:
        load_block(tensors)
    assert words in str(err.value) and len(str(err.value)) < 200


@pytest.mark.parametrize("build, words", [(wide_block_npz, "d_model = 131,072"),
                                          (deep_hidden_npz, "hidden layer of 16,777,216")])
def test_wide_blocks_are_refused_before_the_file_is_inflated(build, words):
    """With the weights uploader's check, the same files are refused from their declared shapes: resident memory
    grows by less than 8 MiB, where inflating the 2**24 one takes 128 MiB (the test above loads it)."""
    data = build()
    with PeakGrowth() as grown, pytest.raises(WeightsError) as err:
        load_tensors_with_notes(data, "block.npz", check=check_block_shapes)
    assert words in str(err.value)
    assert grown.bytes is None or grown.bytes < 8 * 2**20, grown.bytes


def test_check_block_shapes_wants_one_block_the_lab_can_run():
    good = {"h.1.mlp.c_fc.weight": (8, 32), "h.1.mlp.c_proj.weight": (32, 8)}
    wide = {"h.0.mlp.c_fc.weight": (1, 2**17), "h.0.mlp.c_fc.bias": (1,), "h.0.mlp.c_proj.weight": (2**17, 1)}
    check_block_shapes({**wide, **good})  # one usable block: the student chooses it
    with pytest.raises(WeightsError, match="d_model = 131,072"):
        check_block_shapes(wide)
    with pytest.raises(WeightsError, match="No feed-forward weights found"):
        check_block_shapes({"encoder.weight": (4, 4)})
    check_block_shapes({"c_fc.weight": (8, 32, 1), "c_proj.weight": (32, 8)})  # not a block: load_block says why
