"""FeedForward against a bare nn.Sequential on GPT-2 small's batch, and the lab's whole computation.

Prints ratios (target: FeedForward / Sequential <= 1.10) and the lab's time.  Run:

    python benchmarks/bench_ffn.py [--repeats 15] [--threads N]

Both blocks hold the same weights and run under torch.inference_mode(); the two are timed in alternation
(ABAB...) so that a busy machine slows both alike, and the median of each is compared.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402
from torch import nn  # noqa: E402

from gelu_core import FeedForward, as_tokens, demo_input, run_lab  # noqa: E402
from hosting.warm import usable_cpus  # noqa: E402

SHAPE = (8, 1024, 768)  # 8 full GPT-2 contexts, GPT-2 small's width
TARGET = 1.10


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: one per usable CPU)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads or usable_cpus())
    threads = torch.get_num_threads()

    block = FeedForward(SHAPE[-1], seed=0)  # tanh GELU, as GPT-2
    bare = nn.Sequential(nn.Linear(768, 3072), nn.GELU(approximate="tanh"), nn.Linear(3072, 768))
    with torch.no_grad():
        bare[0].load_state_dict(block.c_fc.state_dict())
        bare[2].load_state_dict(block.c_proj.state_dict())
    x = demo_input(SHAPE[-1], 0, *SHAPE[:2])

    with torch.inference_mode():
        assert torch.equal(block(x), bare(x)), "the two blocks must compute the same numbers"
        ours, theirs = [], []
        for _ in range(args.repeats):
            ours.append(timed(lambda: block(x)))
            theirs.append(timed(lambda: bare(x)))
    ratio = statistics.median(ours) / statistics.median(theirs)
    ratio_min = min(ours) / min(theirs)  # steadier than the medians on a busy machine

    lab_times = [timed(lambda: run_lab(block, as_tokens(x, 768), "gelu_tanh", "relu")) for _ in range(5)]
    forward = statistics.median(ours)

    print(f"torch {torch.__version__}, {threads} threads, input {SHAPE} float32, {args.repeats} interleaved repeats")
    for name, times in (("FeedForward", ours), ("nn.Sequential", theirs)):
        median, fastest = statistics.median(times) * 1e3, min(times) * 1e3
        print(f"{name:<14} forward  median {median:7.1f} ms  fastest {fastest:7.1f} ms")
    verdict = "met" if ratio <= TARGET else "MISSED"
    print(f"ratio FeedForward / Sequential: {ratio:.3f} of medians, {ratio_min:.3f} of fastest "
          f"(target <= {TARGET:.2f}: {verdict})")
    print(f"lab (as_tokens + two activations + every statistic) median {statistics.median(lab_times):.2f} s "
          f"= {statistics.median(lab_times) / forward:.1f} x one forward pass")


if __name__ == "__main__":
    main()
