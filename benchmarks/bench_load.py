"""Load time and peak memory of gelu_core.load_tensors, as ratios.

Good files: a (8, 1024, 768) float32 batch (GPT-2 small, 8 sequences of 1024
tokens) in every format.  Time is given relative to np.load of the same batch
as .npy bytes, and relative to the format's own library reading the same bytes
(np.load, torch.load, safetensors.torch.load, np.loadtxt); peak memory is the
growth of resident memory while loading, relative to the file size (the
uploaded bytes themselves are already in memory and not counted).  CSV holds
2,730 x 768 values instead (the batch is over MAX_CSV_CELLS).  Hostile files:
time and peak memory of each refusal.

    python benchmarks/bench_load.py

glibc's malloc is pinned to a fixed mmap threshold (the script re-executes
itself with MALLOC_MMAP_THRESHOLD_ set) so that each large buffer is returned
to the system when freed and every repeat's peak is visible.
"""

from __future__ import annotations

import io
import os
import sys
import time
from pathlib import Path

if "MALLOC_MMAP_THRESHOLD_" not in os.environ:
    os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "MALLOC_MMAP_THRESHOLD_": "131072"})

import numpy as np  # noqa: E402
import safetensors.torch  # noqa: E402
import torch  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gelu_core import tensor_io  # noqa: E402
from harness import tensor_corpus as corpus  # noqa: E402

REPEATS = 5


def _reset_peak() -> None:
    with open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")


def _kib(field: str) -> int:
    with open("/proc/self/status") as handle:
        return next(int(line.split()[1]) for line in handle if line.startswith(field + ":"))


def measure(function, refused: bool = False) -> tuple[float, int]:
    """(best seconds of REPEATS, largest growth of resident memory in bytes) of one call."""
    best, peak = float("inf"), 0
    for _ in range(REPEATS):
        _reset_peak()
        before = _kib("VmRSS")
        started = time.perf_counter()
        try:
            result = function()
            if refused:
                raise SystemExit("a hostile file was loaded")
        except tensor_io.TensorFileError:
            if not refused:
                raise
            result = None
        best = min(best, time.perf_counter() - started)
        peak = max(peak, (_kib("VmHWM") - before) * 1024)
        del result
    return best, peak


def good_files(batch: torch.Tensor) -> dict[str, tuple[bytes, str, object]]:
    """label -> (bytes, file name, the format's own reader of those bytes)."""
    array = batch.numpy()

    def by_torch(data):
        return lambda: torch.load(io.BytesIO(data), weights_only=True)

    def by_numpy(data):
        return lambda: dict(np.load(io.BytesIO(data)))

    def by_safetensors(data):
        return lambda: safetensors.torch.load(data)

    files = {
        ".pt": (corpus.torch_bytes(batch), "batch.pt", by_torch),
        ".pt (state dict)": (corpus.torch_bytes({"h": {"0": {"x": batch}}}), "batch.pt", by_torch),
        ".pt float16": (corpus.torch_bytes(batch.half()), "batch.pt", by_torch),
        ".npy": (corpus.npy_bytes(array), "batch.npy", lambda d: (lambda: np.load(io.BytesIO(d)))),
        ".npz": (corpus.npz_bytes(False, x=array), "batch.npz", by_numpy),
        ".npz compressed": (corpus.npz_bytes(True, x=array), "batch.npz", by_numpy),
        ".safetensors": (corpus.safetensors_bytes({"x": batch}), "batch.safetensors", by_safetensors),
        ".safetensors bf16": (corpus.safetensors_bytes({"x": batch.bfloat16()}), "batch.safetensors", by_safetensors),
    }
    return {label: (data, name, reader(data)) for label, (data, name, reader) in files.items()}


def hostile_files() -> dict[str, tuple[bytes, str]]:
    header = corpus.npy_with_header(corpus.npy_header_text("<f4", (4096,)))
    stored_header = b"\x00" + len(header).to_bytes(2, "little") + (len(header) ^ 0xFFFF).to_bytes(2, "little")
    sneaky = corpus.zip_bytes([{"name": "x.npy", "method": 8, "size": len(header) + 4 * 4096, "crc": 0,
                                "compressed": stored_header + header + corpus.zeros_deflated(2**28)}])
    declared = corpus.zip_bytes([{"name": "x.npy", "method": 8, "compressed": corpus.zeros_deflated(2**30),
                                  "size": 2**30, "crc": 0}])
    columns = 1024
    rows = tensor_io.MAX_CSV_CELLS // 768
    bad_last_cell = ((",".join(["0.1234"] * 768) + "\n") * (rows - 1) + ",".join(["1"] * 767 + ["x"])).encode()
    too_many_cells = ((",".join(["0"] * columns) + "\n") * (tensor_io.MAX_CSV_CELLS // columns + 1)).encode()
    return {
        "zero-stride view, 10^9 rows (.pt)": (corpus.torch_bytes(torch.zeros(1).expand(10**9)), "x.pt"),
        "bytearray(10^9) in the pickle (.pt)": (
            corpus.pt_with_pickle(corpus.call_pickle("builtins", "bytearray", 10**9)), "x.pt"),
        "50,000 tensor rebuilds, 250 KB (.pt)": (corpus.many_calls_pt(50_000), "x.pt"),
        "code-running pickle (.pt)": (corpus.evil_pickles("/nonexistent/marker")["SystemMarker-torch-zip"], "x.pt"),
        "1 GiB deflate member declared (.npz)": (declared, "x.npz"),
        "declares 16 kB, inflates 256 MiB (.npz)": (sneaky, "x.npz"),
        "65,000 members (.npz)": (corpus.zip_bytes([{"name": f"m{i}.npy"} for i in range(65_000)]), "x.npz"),
        "header shape 10^12 (.npy)": (
            corpus.npy_with_header(corpus.npy_header_text("<f4", (10**6, 10**6)), bytes(64)), "x.npy"),
        "header length 2^40 (.safetensors)": (
            corpus.safetensors_with_header({}, bytes(64), length=2**40), "x.safetensors"),
        "over MAX_CSV_CELLS (.csv)": (too_many_cells, "x.csv"),
        "at MAX_CSV_CELLS, last cell not a number": (bad_last_cell, "x.csv"),
        "50 MiB + 1 byte": (bytes(tensor_io.MAX_BYTES + 1), "x.npy"),
    }


def main() -> None:
    torch.manual_seed(0)
    batch = torch.randn(8, 1024, 768)  # (B, T, d_model): 6,291,456 float32 values, 24 MiB
    npy = corpus.npy_bytes(batch.numpy())
    base, _ = measure(lambda: np.load(io.BytesIO(npy)))
    tensor_io.load_tensors(npy, "warm.npy")
    print(f"good files: (8, 1024, 768) float32; np.load of its .npy bytes takes {base * 1e3:.1f} ms")
    print(f"{'format':<20}{'MiB':>7}{'ms':>8}{'/ np.load .npy':>16}{'/ own library':>15}{'peak MiB':>10}"
          f"{'peak / size':>13}")
    for label, (data, filename, reader) in good_files(batch).items():
        seconds, peak = measure(lambda data=data, filename=filename: tensor_io.load_tensors(data, filename))
        own, _ = measure(reader)
        print(f"{label:<20}{len(data) / 2**20:>7.1f}{seconds * 1e3:>8.1f}{seconds / base:>16.2f}{seconds / own:>15.2f}"
              f"{peak / 2**20:>10.1f}{peak / len(data):>13.2f}")

    rng = np.random.default_rng(0)
    table = np.round(rng.standard_normal((tensor_io.MAX_CSV_CELLS // 768, 768)), 4)  # 4 decimals: 15 MiB
    csv = corpus.csv_bytes(table)
    text = csv.decode()
    seconds, peak = measure(lambda: tensor_io.load_tensors(csv, "table.csv"))
    own, _ = measure(lambda: np.loadtxt(io.StringIO(text), delimiter=",", ndmin=2))
    npy_table = corpus.npy_bytes(table)
    table_npy, _ = measure(lambda: np.load(io.BytesIO(npy_table)))
    print(f"{'.csv 2730 x 768':<20}{len(csv) / 2**20:>7.1f}{seconds * 1e3:>8.1f}{seconds / table_npy:>16.2f}"
          f"{seconds / own:>15.2f}{peak / 2**20:>10.1f}{peak / len(csv):>13.2f}")

    print("\nhostile files: every one refused")
    print(f"{'file':<42}{'KiB':>10}{'ms':>9}{'peak MiB':>10}{'peak / size':>13}")
    for label, (data, filename) in hostile_files().items():
        seconds, peak = measure(lambda data=data, filename=filename: tensor_io.load_tensors(data, filename),
                                refused=True)
        print(f"{label:<42}{len(data) / 1024:>10,.1f}{seconds * 1e3:>9.1f}{peak / 2**20:>10.1f}"
              f"{peak / len(data):>13.2f}")


if __name__ == "__main__":
    main()
