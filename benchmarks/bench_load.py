"""Load time and peak memory of gelu_core.load_tensors, as ratios.

Good files: a (8, 1024, 768) float32 batch (GPT-2 small, 8 sequences of 1024
tokens) in every format.  Time is given relative to np.load of the same batch
as .npy bytes, and relative to the format's own library reading the same bytes
(np.load, torch.load, safetensors.torch.load, np.loadtxt); peak memory is the
growth of resident memory while loading, relative to the file size (the
uploaded bytes themselves are already in memory and not counted).  CSV holds
2,730 x 768 values instead (the batch is over MAX_CSV_CELLS).

Hostile files: every file of harness.hostile_files, through the uploader it
targets (the weights uploader's check_block_shapes included, as pages/ffn.py
calls it): time and peak memory of each refusal, as ratios to the targets a
refusal must meet, REFUSAL_SECONDS and REFUSAL_MIB (a ratio above 1 misses).

    python benchmarks/bench_load.py [--only good|hostile] [--repeats 5]

glibc's malloc is pinned to a fixed mmap threshold (the script re-executes
itself with MALLOC_MMAP_THRESHOLD_ set) so that each large buffer is returned
to the system when freed and every repeat's peak is visible.
"""

from __future__ import annotations

import argparse
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

from benchmarks.results import printed, record  # noqa: E402
from gelu_core import tensor_io  # noqa: E402
from gelu_core.weights import WeightsError, check_block_shapes  # noqa: E402
from harness import tensor_corpus as corpus  # noqa: E402
from harness.hostile_files import hostile_files  # noqa: E402
from harness.memory import reset_peak, status_kib  # noqa: E402

REFUSAL_SECONDS = 1.0  # a hostile file is refused within this
REFUSAL_MIB = 32  # growing resident memory by less than this (the upload's own bytes not counted)


def measure(function, refused: bool = False, repeats: int = 5) -> tuple[float, int]:
    """(best seconds of ``repeats``, largest growth of resident memory in bytes) of one call."""
    best, peak = float("inf"), 0
    for _ in range(repeats):
        reset_peak()
        before = status_kib("VmRSS")
        started = time.perf_counter()
        try:
            result = function()
            if refused:
                raise SystemExit("a hostile file was loaded")
        except (tensor_io.TensorFileError, WeightsError):
            if not refused:
                raise
            result = None
        best = min(best, time.perf_counter() - started)
        peak = max(peak, (status_kib("VmHWM") - before) * 1024)
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


def good(repeats: int) -> None:
    torch.manual_seed(0)
    batch = torch.randn(8, 1024, 768)  # (B, T, d_model): 6,291,456 float32 values, 24 MiB
    npy = corpus.npy_bytes(batch.numpy())
    base, _ = measure(lambda: np.load(io.BytesIO(npy)), repeats=repeats)
    tensor_io.load_tensors(npy, "warm.npy")
    print(f"good files: (8, 1024, 768) float32; np.load of its .npy bytes takes {base * 1e3:.1f} ms")
    print(f"{'format':<20}{'MiB':>7}{'ms':>8}{'/ np.load .npy':>16}{'/ own library':>15}{'peak MiB':>10}"
          f"{'peak / size':>13}")
    for label, (data, filename, reader) in good_files(batch).items():
        seconds, peak = measure(lambda data=data, filename=filename: tensor_io.load_tensors(data, filename),
                                repeats=repeats)
        own, _ = measure(reader, repeats=repeats)
        print(f"{label:<20}{len(data) / 2**20:>7.1f}{seconds * 1e3:>8.1f}{seconds / base:>16.2f}{seconds / own:>15.2f}"
              f"{peak / 2**20:>10.1f}{peak / len(data):>13.2f}")

    rng = np.random.default_rng(0)
    table = np.round(rng.standard_normal((tensor_io.MAX_CSV_CELLS // 768, 768)), 4)  # 4 decimals: 15 MiB
    csv = corpus.csv_bytes(table)
    text = csv.decode()
    seconds, peak = measure(lambda: tensor_io.load_tensors(csv, "table.csv"), repeats=repeats)
    own, _ = measure(lambda: np.loadtxt(io.StringIO(text), delimiter=",", ndmin=2), repeats=repeats)
    npy_table = corpus.npy_bytes(table)
    table_npy, _ = measure(lambda: np.load(io.BytesIO(npy_table)), repeats=repeats)
    print(f"{'.csv 2730 x 768':<20}{len(csv) / 2**20:>7.1f}{seconds * 1e3:>8.1f}{seconds / table_npy:>16.2f}"
          f"{seconds / own:>15.2f}{peak / 2**20:>10.1f}{peak / len(csv):>13.2f}")


def hostile(repeats: int) -> None:
    print(f"hostile files: every one refused; targets {REFUSAL_SECONDS:g} s and {REFUSAL_MIB} MiB of growth")
    print(f"{'file':<56}{'uploader':>9}{'KiB':>10}{'ms':>9}{'/ 1 s':>8}{'peak MiB':>10}{f'/ {REFUSAL_MIB} MiB':>10}")
    worst_time = worst_memory = 0.0
    for case in hostile_files():
        check = check_block_shapes if case.uploader == "weights" else None
        data = case.data
        seconds, peak = measure(lambda data=data, case=case, check=check: tensor_io.load_tensors_with_notes(
            data, case.filename, check=check), refused=True, repeats=repeats)
        time_ratio, memory_ratio = seconds / REFUSAL_SECONDS, peak / 2**20 / REFUSAL_MIB
        worst_time, worst_memory = max(worst_time, time_ratio), max(worst_memory, memory_ratio)
        print(f"{case.name[:55]:<56}{case.uploader:>9}{len(data) / 1024:>10,.1f}{seconds * 1e3:>9.1f}"
              f"{time_ratio:>8.3f}{peak / 2**20:>10.1f}{memory_ratio:>10.3f}")
    print(f"worst: {worst_time:.3f} of the time target, {worst_memory:.3f} of the memory target")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", choices=("good", "hostile"))
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    if args.only != "hostile":
        good(args.repeats)
    if args.only != "good":
        if args.only is None:
            print()
        hostile(args.repeats)


if __name__ == "__main__":
    with printed() as lines:
        main()
    record("bench_load", None, lines)
