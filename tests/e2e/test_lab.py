"""The feed-forward lab through the real file inputs: good files give results, a booby-trapped .pt runs nothing.

Files are made in the test.  Reference for the lab's output: the same block written out in the test with
torch.nn.functional (x @ W_fc + b_fc -> tanh GELU -> @ W_proj + b_proj, GPT-2's Conv1D layout) on the
weights the test uploaded; the .npy the page offers for download must match it within 1e-5 (float32
matmuls summed in a different order).
"""

from __future__ import annotations

import io
import pickle

import numpy as np
import pytest

from harness import browser as driver

pytestmark = pytest.mark.e2e

D_MODEL, HIDDEN = 8, 32


def file_inputs(page):
    return page.locator(driver.FILE_INPUT)


def upload(page, index: int, name: str, data: bytes) -> None:
    """Give the index-th file input of the page a file, as a student's browser would, and wait for the rerun."""
    target = file_inputs(page).nth(index)
    driver.act(
        page,
        lambda: target.set_input_files(files=[{"name": name, "mimeType": "application/octet-stream", "buffer": data}]),
    )


def test_uploaded_weights_and_input_go_through_the_block(new_tab, tmp_path):
    torch = pytest.importorskip("torch")
    gen = torch.Generator().manual_seed(5)
    weights = {  # GPT-2's names and Conv1D layout: c_fc.weight is (d_model, hidden)
        "mlp.c_fc.weight": torch.randn(D_MODEL, HIDDEN, generator=gen) * 0.3,
        "mlp.c_fc.bias": torch.randn(HIDDEN, generator=gen) * 0.1,
        "mlp.c_proj.weight": torch.randn(HIDDEN, D_MODEL, generator=gen) * 0.3,
        "mlp.c_proj.bias": torch.randn(D_MODEL, generator=gen) * 0.1,
    }
    buffer = io.BytesIO()
    torch.save(weights, buffer)
    x = np.random.default_rng(7).standard_normal((2, 5, D_MODEL)).astype(np.float32)
    npy = io.BytesIO()
    np.save(npy, x)

    tab = new_tab()
    tab.open("ffn?ffn_weights=File&ffn_input=Upload")
    page = tab.page
    assert file_inputs(page).count() == 2, "expected a weights uploader and an input uploader"
    uploaders = page.locator(f"{driver.MAIN} [data-testid='stFileUploaderDropzoneInstructions']").all_inner_texts()
    assert all("40MB" in text for text in uploaders), uploaders  # server.maxUploadSize reaches the page

    upload(page, 0, "gpt2_block.pt", buffer.getvalue())
    upload(page, 1, "activations.npy", npy.getvalue())
    tab.assert_clean()
    assert page.locator(driver.ERROR_BOX).count() == 0, page.locator(driver.ERROR_BOX).all_inner_texts()
    shapes = page.locator(f"{driver.MAIN} pre.gelu-flow").first.inner_text()
    for shape in ("(2, 5, 8)", "(2, 5, 32)"):
        assert shape in shapes, shapes
    assert page.locator(f"{driver.MAIN} [data-testid='stMetric']").count() >= 4
    assert page.locator(f"{driver.MAIN} [data-testid='stPlotlyChart']").count() >= 3

    with page.expect_download() as download_info:
        page.get_by_role("button", name="Download .npy").click()
    path = tmp_path / "out.npy"
    download_info.value.save_as(path)
    got = np.load(path, allow_pickle=False)

    F = torch.nn.functional
    h = torch.from_numpy(x) @ weights["mlp.c_fc.weight"] + weights["mlp.c_fc.bias"]  # (2, 5, 8) -> (2, 5, 32)
    want = F.gelu(h, approximate="tanh") @ weights["mlp.c_proj.weight"] + weights["mlp.c_proj.bias"]  # -> (2, 5, 8)
    assert got.shape == (2, 5, D_MODEL)
    np.testing.assert_allclose(got, want.numpy(), rtol=0, atol=1e-5)


class Trap:
    """Unpickling this runs exec(code): the thing weights_only=True exists to refuse."""

    def __init__(self, code: str):
        self.code = code

    def __reduce__(self):
        return (exec, (self.code,))


def torch_saved(obj) -> bytes:
    torch = pytest.importorskip("torch")
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return buffer.getvalue()


def trapped_file(kind: str, marker) -> bytes:
    trap = Trap(f"open({str(marker)!r}, 'w').write('ran')")
    return torch_saved({"x": trap}) if kind == "torch.save zip" else pickle.dumps(trap, protocol=2)


def unsafe_load(kind: str, data: bytes):
    if kind == "torch.save zip":
        import torch

        return torch.load(io.BytesIO(data), weights_only=False)
    return pickle.loads(data)


@pytest.mark.parametrize("kind", ["torch.save zip", "bare pickle"])
def test_a_booby_trapped_pt_is_refused_and_runs_nothing(new_tab, tmp_path, kind):
    armed = tmp_path / "armed"  # the same trap, opened unsafely here, does run: the test can fail
    unsafe_load(kind, trapped_file(kind, armed))
    assert armed.exists()

    marker = tmp_path / "pwned"
    data = trapped_file(kind, marker)

    tab = new_tab()
    tab.open("ffn?ffn_input=Upload")
    upload(tab.page, 0, "activations.pt", data)

    errors = tab.page.locator(driver.ERROR_BOX)
    assert errors.count() == 1, "expected one clear error message"
    message = errors.first.inner_text()
    assert 0 < len(message) < 300 and "Traceback" not in message and "<" not in message, message
    tab.assert_clean()  # an st.error, not an exception box
    assert tab.page.locator(f"{driver.MAIN} [data-testid='stPlotlyChart']").count() == 0
    assert not marker.exists(), "the pickle's code ran on the server"
