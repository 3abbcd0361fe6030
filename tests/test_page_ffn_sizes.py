"""The lab page, run from app.py in AppTest, given blocks wider or longer than it runs: one error, no exception.

Files are made in the test (harness.hostile_files and torch.save); references are the messages gelu_core gives,
each naming its limit, and the page's resident growth while it refuses (harness.memory), against the gigabytes
the refused runs would take.
"""

from __future__ import annotations

import io

import torch

from harness.hostile_files import deep_hidden_npz, wide_block_npz
from harness.memory import PeakGrowth

PAGE = "pages/ffn.py"


def lab_with_weights(app, name: str, data: bytes, **params):
    for key, value in {"ffn_weights": "File", **params}.items():
        app.query_params[key] = str(value)
    app.switch_page(PAGE)
    app.run()
    app.file_uploader(key="ffn_weights_file").set_value((name, data, "application/octet-stream"))
    with PeakGrowth() as grown:
        app.run()
    return app, grown.bytes


def test_a_block_wider_than_gpt2_xl_is_refused_before_the_demo_is_drawn(app):
    """d_model 2**17 in 2.6 kB: the 8 x 1024 demo for it would be 4 GiB; resident growth stays under 64 MiB."""
    at, grown = lab_with_weights(app, "block.npz", wide_block_npz(), ffn_demo="8x1024")
    assert not at.exception
    assert [e.value for e in at.error] == [
        "The block {c_fc, c_proj} has d_model = 131,072; the lab runs blocks up to d_model = 1,600 (GPT-2 XL)."]
    assert grown is None or grown < 64 * 2**20, grown


def test_a_block_with_a_huge_hidden_layer_is_refused_before_it_is_inflated(app):
    """A 2**24-wide hidden layer in 130 kB: 128 MiB once inflated; resident growth stays under 64 MiB."""
    at, grown = lab_with_weights(app, "block.npz", deep_hidden_npz())
    assert not at.exception
    assert "has a hidden layer of 16,777,216; the lab runs hidden layers up to 6,400" in at.error[0].value
    assert grown is None or grown < 64 * 2**20, grown


def test_the_demo_counts_the_blocks_own_hidden_width(app):
    """A file block with d_model 8 and hidden 4,096 (not 4 x 8): 8 x 1024 tokens make 33.5 M hidden values, over
    the (8, 1024, 3072) the lab runs; the page says so before drawing the demo (4 x d_model would have let it)."""
    buffer = io.BytesIO()
    torch.save({"fc1.weight": torch.zeros(4096, 8), "fc1.bias": torch.zeros(4096), "fc2.weight": torch.zeros(8, 4096),
                "fc2.bias": torch.zeros(8)}, buffer)
    at, _ = lab_with_weights(app, "mlp.pt", buffer.getvalue(), ffn_demo="8x1024")
    assert not at.exception
    assert [e.value for e in at.error] == [
        "This input has 8,192 tokens; the lab runs at most 6,144 tokens at d_model = 8, hidden = 4,096 "
        "(about 96 MB of hidden activations)."]


def test_a_demo_over_the_input_cap_is_an_error_not_a_crash(app):
    """GPT-2 XL's width with a one-unit hidden layer: the 8 x 1024 demo would be 13.1 M input values, over the
    (8, 1024, 768) the lab takes; the page checks the run before calling demo_input, which would raise."""
    buffer = io.BytesIO()
    torch.save({"fc1.weight": torch.zeros(1, 1600), "fc1.bias": torch.zeros(1), "fc2.weight": torch.zeros(1600, 1),
                "fc2.bias": torch.zeros(1600)}, buffer)
    at, _ = lab_with_weights(app, "narrow.pt", buffer.getvalue(), ffn_demo="8x1024")
    assert not at.exception
    assert [e.value for e in at.error] == [
        "This input has 8,192 tokens; the lab runs at most 3,932 tokens at d_model = 1,600 (6,291,456 input values)."]
