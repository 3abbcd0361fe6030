"""The training race's wall time, and the lab's backward pass against its forward run, as ratios.

1. The default race (gelu_core.training.RaceConfig()), both ways in one run, interleaved: CPU seconds and torch
   operations per training step of the race by autograd (gelu_core.training.autograd_race: each network an
   nn.Module, autograd, torch.optim; the readable reference) against the stacked trainer
   (gelu_core.training.train: target <= 0.3 s of CPU), ``race`` yielding a snapshot every 100 steps and every 20
   (the lane's way: the film the page plays, hosting.races.film_every), and 30 different default races trained
   as one stack (``train_many``), per race.
2. The lab on GPT-2 small's batch (8, 1024, 768): ``run_lab(..., backward=True)`` (forward and backward, two
   activations) against ``run_lab`` (forward, two activations): time, and peak growth of resident memory
   (VmHWM, from /proc) over what the input and the block already hold.

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

from benchmarks.results import printed, record  # noqa: E402
from gelu_core import FeedForward, as_tokens, demo_input, run_lab  # noqa: E402
from gelu_core.training import (  # noqa: E402
    RaceConfig,
    _Stack,
    autograd_race,
    native_gelu,
    race,
    train,
    train_many,
    verdict,
)
from harness.memory import reset_peak, status_kib  # noqa: E402
from ui.training import verdict_text  # noqa: E402

TARGET_CPU_SECONDS = 0.3  # one default race's CPU time, start to finish
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


def cpu_seconds(function) -> float:
    started = time.process_time()
    function()
    return time.process_time() - started


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


def operations_per_step(step) -> int:
    """torch operations in one call of ``step``: the aten calls the profiler sees that no other aten call made
    (what the autograd engine runs for the backward counts too)."""
    from torch.profiler import ProfilerActivity, profile

    step()  # warm
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step()
    def outermost(event) -> bool:
        parent = event.cpu_parent
        while parent is not None:
            if parent.name.startswith("aten::"):
                return False
            parent = parent.cpu_parent
        return True

    return sum(1 for e in prof.events() if e.name.startswith("aten::") and outermost(e))


def reference_step(config: RaceConfig):
    """One training step of both networks by autograd and torch.optim, network by network (as autograd_race)."""
    import torch.nn.functional as F

    from gelu_core.training import make_dataset, twin_networks

    data = make_dataset(config.task, config.n_train, config.n_test, config.noise, config.seed)
    points, labels = torch.from_numpy(data.train_points), torch.from_numpy(data.train_labels)
    nets = twin_networks(config)
    optimizers = [torch.optim.Adam(net.parameters(), lr=config.learning_rate, foreach=True) for net in nets]
    generator = torch.Generator().manual_seed(1)

    def step():
        index = torch.randint(0, config.n_train, (config.batch_size,), generator=generator)
        for net, opt in zip(nets, optimizers, strict=True):
            loss = F.binary_cross_entropy_with_logits(net(points[index]), labels[index])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()

    return step


def bench_race(repeats: int) -> None:
    config = RaceConfig()
    many = [RaceConfig(seed=seed) for seed in range(30)]
    print(f"default race: {config}")
    print("  (both on one torch thread: see gelu_core.training.one_thread); CPU seconds (process time), "
          f"{repeats} interleaved repeats, medians")
    train(RaceConfig(steps=20))  # warm-up: first-call costs of torch's kernels
    autograd_race(RaceConfig(steps=20))
    functions = {
        "autograd + torch.optim, net by net": lambda: autograd_race(config),
        "stacked, train()": lambda: train(config),
        "stacked, race(), a snapshot every 100 steps": lambda: list(race(config, yield_every=100)),
        "stacked, the lane's way: a 51-frame film (every 20)": lambda: list(race(config, yield_every=20)),
        "30 races stacked, train_many(), per race": lambda: train_many(many),
    }
    cpu = {name: [] for name in functions}
    for _ in range(repeats):
        for name, function in functions.items():
            cpu[name].append(cpu_seconds(function) / (len(many) if "30 races" in name else 1))
    by_autograd = statistics.median(cpu[next(iter(cpu))])
    for name, times in cpu.items():
        median = statistics.median(times)
        print(f"  {name:<52} {median:6.3f} s CPU  ({by_autograd / median:5.1f}x less than autograd's; "
              f"{median / TARGET_CPU_SECONDS:.2f} of the {TARGET_CPU_SECONDS} s target)")
    with torch.no_grad():
        stack = _Stack([config])
        stacked_ops = operations_per_step(stack.step)
        stack30 = _Stack(many)
        stacked30_ops = operations_per_step(stack30.step)
    with one_thread_for_ops():
        autograd_ops = operations_per_step(reference_step(config))
    print(f"  torch operations per training step (both networks): autograd {autograd_ops}, stacked {stacked_ops} "
          f"({autograd_ops / stacked_ops:.1f}x fewer); 30 races stacked: {stacked30_ops} for 60 networks "
          f"({30 * autograd_ops / stacked30_ops:.0f}x fewer than 30 races one by one)")
    trained = train(config)
    print(f"  verdict: {verdict_text(trained, verdict(trained))}")
    print(f"  exact GELU on PyTorch's own kernel, not oneDNN's: {native_gelu(config)} (gelu_core.training.native_gelu;"
          " autograd's race and the stack alike); a network's matmuls one by one, as autograd's (the stack's _addmm"
          " and its step)")


def one_thread_for_ops():
    from gelu_core.training import one_thread

    return one_thread()


def bench_lab(repeats: int) -> None:
    torch.set_num_threads(2)
    block = FeedForward(SHAPE[-1], seed=0)
    x = as_tokens(demo_input(SHAPE[-1], 0, *SHAPE[:2]), SHAPE[-1])
    hidden_mib = SHAPE[0] * SHAPE[1] * 4 * SHAPE[2] * 4 / 2**20
    runs = interleaved({
        "run_lab (forward)": lambda: run_lab(block, x, "gelu_tanh", "relu"),
        "run_lab (and backward)": lambda: run_lab(block, x, "gelu_tanh", "relu", backward=True),
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
    print(f"torch {torch.__version__}, {os.cpu_count()} CPUs, kernels for {torch.backends.cpu.get_cpu_capability()}")
    bench_race(args.repeats)
    if not args.skip_lab:
        bench_lab(args.repeats)


if __name__ == "__main__":
    with printed() as lines:
        main()
    record("bench_training", None, lines)
