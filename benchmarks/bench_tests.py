"""Where the test run's time goes: its wall time, and the CPU of every process it starts, by kind.

    python benchmarks/bench_tests.py [pytest arguments ...]     # e.g. tests/e2e/test_fit.py -n 0

Runs ``python -m pytest`` with those arguments and samples every process under it twice a second: Chromium's
(browser, renderers, GPU), the Streamlit servers the tests start, pytest and its workers, and the rest
(Playwright's driver, haproxy, redis).  Prints each kind's CPU seconds and share, and the CPU the whole run took
against the machine's cores: a run that needs C CPU seconds cannot end before C / cores on this machine, however
its tests are spread over workers.  (A process's last half second before it exits is missed, so the figures are
slightly low.)
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.results import printed, record  # noqa: E402
from harness.balancer import descends, processes  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def kind(cmdline: str) -> str:
    if "chrom" in cmdline.split(" ", 1)[0]:
        return "chromium"
    if "streamlit" in cmdline:
        return "streamlit servers"
    if "python" in cmdline.split(" ", 1)[0]:  # pytest, and its xdist workers (execnet's bootstrap: python -c)
        return "pytest and its workers"
    return "other"


def sample(root: int, seen: dict[int, tuple[str, float]]) -> None:
    """Each live descendant of ``root``: its kind and its own CPU seconds so far (utime + stime)."""
    table = processes()
    for pid, (_, fields) in table.items():
        if not descends(pid, root, table):
            continue
        if pid not in seen:
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            seen[pid] = (kind(cmdline), 0.0)
        seen[pid] = (seen[pid][0], (int(fields[11]) + int(fields[12])) / TICK)


def main() -> int:
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *sys.argv[1:]],
                            cwd=ROOT)
    seen: dict[int, tuple[str, float]] = {}
    while proc.poll() is None:
        sample(proc.pid, seen)
        time.sleep(0.5)
    wall = time.perf_counter() - start
    by_kind = Counter()
    for name, cpu in seen.values():
        by_kind[name] += cpu
    total = sum(by_kind.values())
    cores = len(os.sched_getaffinity(0))
    print(f"\nwall {wall:.0f} s; CPU {total:.0f} s in all ({total / wall:.2f} cores busy on average, of {cores}); "
          f"no spread over workers ends this run before {total / cores:.0f} s here")
    for name, cpu in by_kind.most_common():
        print(f"  {name:24s} {cpu:7.1f} s  {cpu / total:4.0%}")
    print(f"load average at the end {os.getloadavg()[0]:.1f}")
    return proc.returncode


if __name__ == "__main__":
    with printed() as lines:
        status = main()
    record("bench_tests", None, lines)
    sys.exit(status)
