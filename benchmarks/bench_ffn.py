"""FeedForward against a bare nn.Sequential on GPT-2 small's batch, the lab's whole computation, and what a
student waits for an upload in a real browser.

Prints ratios (target: FeedForward / Sequential <= 1.10) and the lab's time.  Run:

    python benchmarks/bench_ffn.py [--repeats 15] [--threads N] [--upload [--students 5] [--arrive link]]

Both blocks hold the same weights and run under torch.inference_mode(); the two are timed in alternation
(ABAB...) so that a busy machine slows both alike, and the median of each is compared.

``--upload``: ``streamlit run app.py`` and Chromium; a student picks a (6, 1024, 768) float64 ``.npy`` (36 MB)
on the lab's upload page (backwards on, the default) and waits until the result is drawn.  Printed: seconds
from choosing the file to drawn, against what gelu_core's forward and backward take on the same tensor in this
process, measured right after (``file_tokens`` + ``run_lab(..., backward=True)``, the faster of two; target: at
most 2x).  Then
``--students`` students each choose their own such file at the same moment: seconds until each is drawn
(target: all within 20 s), the server's peak resident memory, its CPU seconds for the class and the machine's
load average.  The machine's cores are shared by the
server, the browser and the timing here: compare the ratio, not the seconds, across machines.

``--arrive``: how each student reaches the uploader before choosing the file.  ``lab`` (the default): the lab
as its link or the lesson opens it, its demo batch drawn (so the page has loaded Plotly's chunk of the
frontend, as every page before the lab in the lesson has too), then **Upload** pressed.  ``link``: a link
straight to the uploader (``?ffn_input=Upload``) in a fresh tab, no chart drawn before the file: the result
then also pays for loading and starting Plotly in that tab (seconds of a core per page: the browser's CPU line
shows it).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.results import printed, record  # noqa: E402
from hosting import warm  # noqa: E402

warm.set_threads()  # torch's threads as the server sets them (one per usable CPU, asleep while they wait)

import torch  # noqa: E402
from torch import nn  # noqa: E402

from gelu_core import FeedForward, as_tokens, demo_input, run_lab  # noqa: E402
from hosting.warm import usable_cpus  # noqa: E402

SHAPE = (8, 1024, 768)  # 8 full GPT-2 contexts, GPT-2 small's width
TARGET = 1.10
UPLOAD_SHAPE = (6, 1024, 768)  # float64: 36 MB, within the 40 MiB upload cap
UPLOAD_RATIO = 2.0
CLASS_SECONDS = 20.0


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: one per usable CPU)")
    parser.add_argument("--upload", action="store_true", help="only the browser upload (see above)")
    parser.add_argument("--students", type=int, default=5, help="students uploading at once (with --upload)")
    parser.add_argument("--arrive", choices=("lab", "link"), default="lab",
                        help="how a student reaches the uploader (with --upload; see above)")
    return parser.parse_args(argv)


def main(args: argparse.Namespace) -> None:
    if args.upload:
        upload_wait(args.students, args.arrive)
        return
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


def upload_files(folder: Path, n: int) -> list[Path]:
    """n different (6, 1024, 768) float64 .npy files: standard normal, as LayerNorm hands the block."""
    import numpy as np

    paths = []
    for i in range(n):
        path = folder / f"activations_{i}.npy"
        np.save(path, np.random.default_rng(i).standard_normal(UPLOAD_SHAPE))
        paths.append(path)
    return paths


def choose(page, path: Path) -> None:
    """The lab's activations uploader gets a file, as a student's file dialog would give it."""
    from harness import browser as driver

    page.locator(driver.FILE_INPUT).first.set_input_files(str(path))


def arrive(page, base_url: str, how: str) -> None:
    """The student's page, at the lab's uploader with backwards on (see ``--arrive``)."""
    from harness import browser as driver

    if how == "link":
        driver.open_app(page, f"{base_url}/ffn?ffn_input=Upload&ffn_backward=true")
        return
    driver.open_app(page, f"{base_url}/ffn?ffn_backward=true")
    page.wait_for_function("document.querySelectorAll(\"[data-testid='stPlotlyChart'] .main-svg\").length > 0")
    upload = page.locator(f"{driver.MAIN} [data-testid='stButtonGroup'] button", has_text="Upload").first
    driver.act(page, upload.click)
    page.locator(driver.FILE_INPUT).first.wait_for(state="attached")


def drawn_at(page, before: int, timeout_ms: int) -> float:
    """Wait until a run after ``before`` is drawn with the backward pass's chart; its epoch seconds (the page's own
    clock at the moment the run's last frame was drawn)."""
    from harness import browser as driver

    page.wait_for_function(
        "n => window.__geluRuns > n && document.querySelectorAll(\"[data-testid='stPlotlyChart']\").length >= 4",
        arg=before, timeout=timeout_ms)
    driver.wait_idle(page, after=before, timeout_ms=timeout_ms)
    return page.evaluate("(performance.timeOrigin + window.__geluCountedAt) / 1000")


def core_seconds(path: Path) -> float:
    """What gelu_core spends on this file's tensor: the checks and the forward and backward passes."""
    import numpy as np

    from gelu_core import file_tokens

    block = FeedForward(UPLOAD_SHAPE[-1], seed=0)
    x = torch.from_numpy(np.load(path))
    times = []
    for _ in range(2):  # the faster of two: the first in a process also pays torch's one-off set-up
        start = time.perf_counter()
        run_lab(block, file_tokens(x, block, "bench", "x"), "gelu_tanh", "relu", backward=True)
        times.append(time.perf_counter() - start)
    return min(times)


def upload_wait(students: int, how: str = "lab") -> None:
    import tempfile

    from playwright.sync_api import sync_playwright

    from harness import browser as driver

    timeout_ms = 600_000
    with tempfile.TemporaryDirectory() as tmp, driver.Server() as server:
        paths = upload_files(Path(tmp), students + 1)
        driver.wait_ready(server.base_url)
        with sync_playwright() as pw:
            browser = driver.launch(pw)
            page = driver.new_page(browser)
            arrive(page, server.base_url, how)
            before, start = driver.runs(page), time.time()
            choose(page, paths[0])
            alone = drawn_at(page, before, timeout_ms) - start
            page.context.close()
            core = core_seconds(paths[0])
            print(f"one upload {UPLOAD_SHAPE} float64 ({paths[0].stat().st_size / 1e6:.0f} MB): drawn {alone:.1f} s "
                  f"after choosing the file; gelu_core's checks, forward and backward on it {core:.1f} s; "
                  f"ratio {alone / core:.2f} (target <= {UPLOAD_RATIO:g}: "
                  f"{'met' if alone <= UPLOAD_RATIO * core else 'MISSED'})")

            from harness.balancer import children_cpu_seconds, cpu_seconds

            pages = [driver.new_page(browser) for _ in range(students)]
            for p in pages:
                arrive(p, server.base_url, how)
            counts = [driver.runs(p) for p in pages]
            cpu, load, drawing = cpu_seconds(server.proc.pid), os.getloadavg()[0], children_cpu_seconds(server.proc.pid)
            start = time.time()
            for p, path in zip(pages, paths[1:], strict=True):
                choose(p, path)
            done = sorted(drawn_at(p, n, timeout_ms) - start for p, n in zip(pages, counts, strict=True))
            cpu, drawing = cpu_seconds(server.proc.pid) - cpu, children_cpu_seconds(server.proc.pid) - drawing
            errors = sum(p.locator(driver.ERROR_BOX).count() + p.locator(driver.EXCEPTION).count() for p in pages)
            browser.close()
        peak = server.rss_kib()["VmHWM"] / 1024
        ways = {"lab": "the lab, its demo drawn, then Upload", "link": "a link to the uploader, no chart before"}
        print(f"each student arrived by: {how} ({ways[how]})")
        print(f"{students} different uploads at once: drawn after " + ", ".join(f"{t:.1f}" for t in done) +
              f" s (target: all within {CLASS_SECONDS:g} s: {'met' if done[-1] <= CLASS_SECONDS else 'MISSED'}); "
              f"errors {errors}; server peak {peak:.0f} MB; server CPU {cpu:.1f} s ({cpu / students:.1f} s an "
              f"upload); load average {load:.1f} before, {os.getloadavg()[0]:.1f} after ({os.cpu_count()} cores)")
        cores = len(os.sched_getaffinity(0))
        print(f"CPU the {students} took: the server {cpu:.1f} s and the browser (upload, drawing) {drawing:.1f} s "
              f"({drawing / students:.1f} s a page): {cpu + drawing:.1f} s on {cores} cores, so on this machine no "
              f"order of work draws the last before {(cpu + drawing) / cores:.1f} s (the server's share alone: "
              f"{cpu / cores:.1f} s)")


if __name__ == "__main__":
    arguments = parse_args()
    with printed() as lines:
        main(arguments)
    record("bench_ffn --upload" if arguments.upload else "bench_ffn", None, lines)
