"""The training race's wall time, and the lab's backward pass against its forward run, as ratios.

1. The default race (gelu_core.training.RaceConfig()): wall time of ``train`` (target: <= 5 s on a 2-core
   machine) and the cost per step; the page's way, ``race`` yielding a snapshot every 100 steps; and the same
   race recording its curves only at the ends (what the records every 10 steps cost).
2. The lab on GPT-2 small's batch (8, 1024, 768): ``run_gradients`` (backward, two activations) against
   ``run_lab`` (forward, two activations): time, and peak growth of resident memory (VmHWM, from /proc) over
   what the input and the block already hold.

    python benchmarks/bench_training.py [--repeats 5] [--skip-lab]

glibc's malloc is pinned to a fixed mmap threshold (the script re-executes itself with MALLOC_MMAP_THRESHOLD_
set) so that each large buffer goes back to the system when freed and every run's peak is visible.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

if "MALLOC_MMAP_THRESHOLD_" not in os.environ:
    os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "MALLOC_MMAP_THRESHOLD_": "131072"})

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from gelu_core import FeedForward, as_tokens, demo_input, run_gradients, run_lab  # noqa: E402
from gelu_core.training import RaceConfig, race, train, verdict  # noqa: E402
from harness.memory import reset_peak, status_kib  # noqa: E402

TARGET_SECONDS = 5.0  # the default race, start to finish, on this 2-core machine
SHAPE = (8, 1024, 768)


def measure(function) -> tuple[float, int]:
    """(seconds, growth of resident memory in bytes at its peak) of one call."""
    reset_peak()
    before = status_kib("VmRSS")
    started = time.perf_counter()
    result = function()
    seconds = time.perf_counter() - started
    peak = (status_kib("VmHWM") - before) * 1024
    del result
    return seconds, peak


def interleaved(functions: dict, repeats: int) -> dict[str, tuple[list[float], int]]:
    """name -> (seconds of each call, largest peak growth), the functions called in turn (ABAB...) so that a busy
    machine slows each alike."""
    times = {name: [] for name in functions}
    peaks = dict.fromkeys(functions, 0)
    for _ in range(repeats):
        for name, function in functions.items():
            seconds, peak = measure(function)
            times[name].append(seconds)
            peaks[name] = max(peaks[name], peak)
    return {name: (times[name], peaks[name]) for name in functions}


def bench_race(repeats: int) -> None:
    config = RaceConfig()
    print(f"default race: {config}")
    print("  (race() trains on one torch thread whatever the caller's setting: see gelu_core.training.one_thread)")
    train(RaceConfig(steps=20))  # warm-up: first-call costs of torch's kernels
    runs = interleaved({
        "train()": lambda: train(config),
        "race(), a snapshot every 100 steps": lambda: list(race(config, yield_every=100)),
        "train(), curves recorded only at the ends": lambda: train(RaceConfig(record_every=config.steps)),
    }, repeats)
    for name, (times, _) in runs.items():
        median, fastest = statistics.median(times), min(times)
        print(f"  {name:<44} median {median:5.2f} s, fastest {fastest:5.2f} s = {median / TARGET_SECONDS:.2f} of "
              f"the {TARGET_SECONDS:.0f} s target; {median / config.steps * 1e3:.2f} ms a step (two networks)")
    print(f"  verdict: {verdict(train(config)).text}")


def bench_lab(repeats: int) -> None:
    torch.set_num_threads(2)
    block = FeedForward(SHAPE[-1], seed=0)
    x = as_tokens(demo_input(SHAPE[-1], 0, *SHAPE[:2]), SHAPE[-1])
    hidden_mib = SHAPE[0] * SHAPE[1] * 4 * SHAPE[2] * 4 / 2**20
    runs = interleaved({
        "run_lab (forward)": lambda: run_lab(block, x, "gelu_tanh", "relu"),
        "run_gradients (backward)": lambda: run_gradients(block, x, "gelu_tanh", "relu"),
    }, repeats)
    print(f"lab on {SHAPE} float32, 2 threads (one (8, 1024, 3072) float32 tensor: {hidden_mib:.0f} MiB), "
          f"{repeats} interleaved repeats")
    for name, (times, peak) in runs.items():
        print(f"  {name:<26} median {statistics.median(times):6.2f} s  fastest {min(times):6.2f} s  "
              f"peak growth {peak / 2**20:7.1f} MiB")
    (forward, forward_peak), (backward, backward_peak) = runs.values()
    print(f"  backward / forward: time {statistics.median(backward) / statistics.median(forward):.2f} x of medians, "
          f"{min(backward) / min(forward):.2f} x of fastest; peak memory {backward_peak / forward_peak:.2f} x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--skip-lab", action="store_true", help="only the race")
    args = parser.parse_args()
    print(f"torch {torch.__version__}, {os.cpu_count()} CPUs")
    bench_race(args.repeats)
    if not args.skip_lab:
        bench_lab(args.repeats)


if __name__ == "__main__":
    main()
