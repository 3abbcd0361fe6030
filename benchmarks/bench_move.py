"""What one slider move costs the server: each explorer page's rerun beside a bare one-slider app's, then a class.

    python benchmarks/bench_move.py                          # 3 rounds of the solo moves, then a class of 30 and 100
    python benchmarks/bench_move.py --rounds 5 --classes ""  # the solo moves only
    python benchmarks/bench_move.py --against /tmp/main      # another checkout beside this one, in the same run
    python benchmarks/bench_move.py --langs de --classes ""  # each page in German beside English, on one server

Solo moves: in each round a fresh `streamlit run app.py` (``--ready``: its start-up imports done, as a server opened
before the lesson) and a fresh bare one-slider app (benchmarks/bench_browser.py's BASELINE_APP, with the repository's
config) run side by side.  On each explorer page (Home, The gate, Curves, Derivative, Step by step, Approximations)
one student alone (harness/streamlit_client.py: Streamlit's websocket protocol, as the browser speaks it) opens the
page (its first run, not counted; on a page that asks its question first, with "Show me", the page's first whole
view, once a visit: not a move either) and makes ``--moves`` moves back to back (the page's first slider, else number
input, one arrow-key step each, so every move is a value the server has not drawn yet); the bare app's student does
the same, after each page.  A move's cost is the server process's CPU time (user + system, /proc/<pid>/stat) over
the moves, divided by their count: /proc counts in 10 ms ticks, so a single move is never timed alone.  Every round
starts fresh servers, so no round finds another's results kept.  Printed per page: the median over the rounds of its
CPU per move and of its moves' median latency, and the ratio to the bare app's; then the median over the pages
and the worst page, against the issue's targets (median <= 10 ms, worst <= 15 ms).

``--langs de,zh-Hans``: each page also opened with ``lang=`` in its link, on the same server right after English,
its median over the pages printed as a ratio of English's (a move in another language costs no more:
<= TARGET_LANG_RATIO).

``--against DIR``: another checkout of the app (``git archive main | tar -x -C /tmp/main``), measured the same way in
each round right after this one, so that before and after see the same machine and load.

Classes (``--classes``, default 30 and 100): the class of benchmarks/bench_class.py (``run_class``: each student
arrives within ``--arrive`` s, opens their page, moves ``--class-moves`` times about ``--think`` s apart), spread over
the explorer pages, on a fresh `streamlit run app.py` of each checkout, then the same class on a fresh bare one-slider
app, ``--class-rounds`` times (default 3: one class's p95 moves by a third from run to run): the median p95 of the
moves each, their ratio (target <= 1.2x for the class of 30), each round's pair, errors (target 0), and the app
server's memory once the class has left (VmRSS, the most of the rounds, beside the memory budget for students' data,
gelu_core/budget.py).

Every figure is printed with its ratio or target, never asserted; the tables also go to benchmarks/RESULTS.md (this
benchmark's section, replaced by each run).  The students share this machine's cores with the servers.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_browser import BASELINE_APP  # noqa: E402
from benchmarks.bench_class import class_paths, ms, percentile, run_class  # noqa: E402
from benchmarks.results import record  # noqa: E402
from harness import browser as driver  # noqa: E402
from harness.balancer import cpu_seconds  # noqa: E402
from harness.memory import memory_kib  # noqa: E402
from harness.streamlit_client import Session  # noqa: E402

PAGES = ("home", "gate", "curves", "derivative", "steps", "approximations")
TARGET_MEDIAN_MS = 10.0  # the median over the pages of the server's CPU per move
TARGET_WORST_MS = 15.0  # the worst page's
TARGET_CLASS_RATIO = 1.2  # a class of 30's p95 against the bare app's under the same class
TARGET_LANG_RATIO = 1.10  # a language's median over the pages against English's (--langs)
BARE = "bare one-slider app"


@dataclass
class Solo:
    cpu_s: float  # the server's CPU per move
    latency_s: float  # the moves' median, request sent to the run finished


async def solo(base_url: str, pid: int, path: str, moves: int, timeout_s: float, query: str = "") -> Solo:
    """One student alone on ``path`` (with the link's ``query``): the first run (and, where the page asks its
    question first, "Show me": the page's first whole view, once a visit), then ``moves`` moves back to back; CPU
    and latency per move."""
    async with Session(base_url, path, query, timeout_s=timeout_s) as session:
        await session.run()
        await session.show_me()
        latencies = []
        before = cpu_seconds(pid)
        for _ in range(moves):
            run = await session.move()
            if run.troubles:
                raise RuntimeError(f"/{path}: {run.troubles[0]}")
            latencies.append(run.seconds)
        return Solo((cpu_seconds(pid) - before) / moves, statistics.median(latencies))


def queries(args) -> list[str]:
    """The links each page is measured with: the plain one, then one per ``--langs`` language (``lang=de``)."""
    return [""] + [f"lang={lang}" for lang in args.langs.split(",") if lang]


def column(d: Path, query: str) -> str:
    """A column of the table: a checkout, with the link's query where there is one."""
    return str(d) + (f"?{query}" if query else "")


def one_round(app_dirs: list[Path], args, flip: bool = False) -> dict[str, dict[str, Solo]]:
    """Fresh servers for every checkout and for the bare app; each page of each checkout (in each language asked
    for, on the same server: English first, or last with ``flip``, so that rounds share out what a page's first
    visit leaves in the server's caches), then the bare app again, in turn.  Column (or BARE) -> page -> its
    figures."""
    got: dict[str, dict[str, Solo]] = {column(d, q): {} for d in app_dirs for q in queries(args)}
    got[BARE] = {}
    bare_runs: list[Solo] = []
    with driver.one_file_app(BASELINE_APP) as folder, driver.Server(folder) as bare:
        servers = [driver.Server(d).start() for d in app_dirs]
        try:
            for server in servers:
                driver.wait_ready(server.base_url)
            for path in PAGES:
                url_path = "" if path == "home" else path
                for d, server in zip(app_dirs, servers, strict=True):
                    for q in queries(args)[::-1] if flip else queries(args):
                        got[column(d, q)][path] = asyncio.run(solo(server.base_url, server.proc.pid, url_path,
                                                                   args.moves, args.timeout, q))
                bare_runs.append(asyncio.run(solo(bare.base_url, bare.proc.pid, "", args.moves, args.timeout)))
        finally:
            for server in servers:
                server.stop()
    got[BARE]["bare"] = Solo(statistics.median(s.cpu_s for s in bare_runs),
                             statistics.median(s.latency_s for s in bare_runs))
    return got


def solo_table(rounds: list[dict[str, dict[str, Solo]]], columns: list[str], names: dict[str, str]) -> list[str]:
    """The per-page table (medians over the rounds) and the verdicts, as lines."""
    bare = statistics.median(r[BARE]["bare"].cpu_s for r in rounds)
    bare_lat = statistics.median(r[BARE]["bare"].latency_s for r in rounds)
    spread = [r[BARE]["bare"].cpu_s for r in rounds]
    heads = "".join(f" | {names[d]} CPU ms | x bare | move ms" for d in columns)
    lines = [f"| page{heads} |", "|---" + "|---:" * 3 * len(columns) + "|"]
    summary = {d: [] for d in columns}
    for path in PAGES:
        cells = []
        for d in columns:
            cpu = statistics.median(r[d][path].cpu_s for r in rounds)
            lat = statistics.median(r[d][path].latency_s for r in rounds)
            summary[d].append(cpu)
            cells.append(f" | {cpu * 1e3:.1f} | {cpu / bare:.1f} | {lat * 1e3:.0f}")
        lines.append(f"| {path}{''.join(cells)} |")
    lines.append(f"| {BARE}" + f" | {bare * 1e3:.1f} | 1.0 | {bare_lat * 1e3:.0f}" * len(columns) + " |")
    lines.append("")
    for d in columns:
        cpus = summary[d]
        median, worst = statistics.median(cpus), max(cpus)
        lines.append(
            f"{names[d]}: median over the pages {median * 1e3:.1f} ms of CPU a move ({median / bare:.1f}x the "
            f"bare app's {bare * 1e3:.1f} ms; target <= {TARGET_MEDIAN_MS:g} ms: "
            f"{'met' if median * 1e3 <= TARGET_MEDIAN_MS else 'NOT met'}), worst page {worst * 1e3:.1f} ms (target "
            f"<= {TARGET_WORST_MS:g} ms: {'met' if worst * 1e3 <= TARGET_WORST_MS else 'NOT met'})")
    per_round = ", ".join(
        "/".join(f"{statistics.median(r[d][p].cpu_s for p in PAGES) * 1e3:.1f}" for d in columns)
        for r in rounds)
    for d in columns[1:]:
        if d.split("?")[0] == columns[0]:  # a language beside English, on the same checkout and server
            ratio = statistics.median(summary[d]) / statistics.median(summary[columns[0]])
            lines.append(f"{names[d]}: its median {ratio:.2f}x English's (target <= {TARGET_LANG_RATIO:.2f}: "
                         f"{'met' if ratio <= TARGET_LANG_RATIO else 'NOT met'})")
    lines.append(f"noise: the pages' median per round {per_round} ms ({' / '.join(names[d] for d in columns)}); "
                 f"the bare app per round {', '.join(f'{s * 1e3:.1f}' for s in spread)} ms")
    return lines


def class_lines(n: int, app_dirs: list[Path], names: dict[str, str], args) -> tuple[list[str], bool]:
    """A class of ``n`` on each checkout, then on the bare app, each on a fresh server, ``--class-rounds`` times: the
    table's lines (one per checkout: the median over the rounds of each figure, the ratio of the median p95s, and
    each round's p95 beside the bare app's), and whether every student went without an error."""
    from gelu_core import budget

    paths = class_paths(n, ",".join(PAGES))
    ns = argparse.Namespace(moves=args.class_moves, think=args.think, arrive=args.arrive, timeout=args.timeout,
                            seed=args.seed)
    apps: dict[str, list] = {str(d): [] for d in app_dirs}
    bares = []
    for _ in range(args.class_rounds):
        for d in app_dirs:
            with driver.Server(d) as server:
                driver.wait_ready(server.base_url)
                result = run_class("one process", server.base_url, paths, {"streamlit": server.proc.pid}, ns)
                time.sleep(args.settle)  # the class has left: the janitor gives back what the sessions held
                apps[str(d)].append((result, memory_kib(server.proc.pid)))
        with driver.one_file_app(BASELINE_APP) as folder, driver.Server(folder) as bare_server:
            bares.append(run_class(BARE, bare_server.base_url, [""] * n, {"streamlit": bare_server.proc.pid}, ns))

    median = statistics.median

    def cpu_ms(result) -> float:
        return result.server_cpu_s / max(1, len(result.moves())) * 1e3

    bare95s = [percentile(b.moves(), 95) for b in bares]
    bare95 = median(bare95s)
    bare_errors = sum(sum(b.errors.values()) for b in bares)
    lines, fine = [], not bare_errors
    for d in app_dirs:
        runs = apps[str(d)]
        results = [r for r, _ in runs]
        app95s = [percentile(r.moves(), 95) for r in results]
        ratio = median(app95s) / bare95
        target = f" (target <= {TARGET_CLASS_RATIO:g}x: {'met' if ratio <= TARGET_CLASS_RATIO else 'NOT met'})" \
            if n <= 30 else ""
        errors = sum(sum(r.errors.values()) for r in results)
        fine &= not errors
        rounds = ", ".join(f"{ms(a)}/{ms(b)}" for a, b in zip(app95s, bare95s, strict=True))
        cells = [names[str(d)], n, sum(len(r.moves()) for r in results),
                 ms(median([percentile(r.moves(), 50) for r in results])), ms(median(app95s)),
                 ms(median([percentile(b.moves(), 50) for b in bares])), ms(bare95), f"{ratio:.2f}{target}", rounds,
                 errors, bare_errors, f"{median([cpu_ms(r) for r in results]):.1f}",
                 f"{median([cpu_ms(b) for b in bares]):.1f}",
                 f"{max(after['VmRSS'] for _, after in runs) / 2**10:.0f} (data budget {budget.BUDGET / 2**20:.0f})",
                 f"{results[0].load[0]:.1f}"]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
        for r in results:
            for s in r.students:
                if s.failure:
                    lines.append(f"  {names[str(d)]} /{s.path}: {s.failure}")
    for b in bares:
        for s in b.students:
            if s.failure:
                lines.append(f"  bare /{s.path}: {s.failure}")
    return lines, fine


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the solo moves, each on fresh servers")
    parser.add_argument("--moves", type=int, default=12, help="moves per page per round, back to back")
    parser.add_argument("--against", type=Path, default=None, help="another checkout, measured in each round too")
    parser.add_argument("--langs", default="", help="languages measured beside English on each page (de,zh-Hans)")
    parser.add_argument("--classes", default="30,100", help="class sizes, comma-separated ('' for none)")
    parser.add_argument("--class-moves", type=int, default=8)
    parser.add_argument("--class-rounds", type=int, default=3, help="each class this many times, on fresh servers")
    parser.add_argument("--think", type=float, default=1.0, help="seconds between a redraw and the next move (±50%%)")
    parser.add_argument("--arrive", type=float, default=1.0, help="a class arrives within this many seconds")
    parser.add_argument("--settle", type=float, default=3.0, help="seconds after a class before reading memory")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    app_dirs = [ROOT] + ([args.against.resolve()] if args.against else [])
    names = {str(ROOT): "this"} | ({str(args.against.resolve()): args.against.name} if args.against else {})
    out: list[str] = []

    def say(line: str = "") -> None:
        print(line, flush=True)
        out.append(line)

    say(f"Server CPU per move, one student alone per page, {args.moves} moves back to back (first run not counted), "
        f"{args.rounds} round(s) on fresh servers, medians over the rounds")
    say(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the start")
    say()
    rounds = []
    for i in range(args.rounds):
        rounds.append(one_round(app_dirs, args, flip=i % 2 == 1))
        print(f"(round {i + 1} of {args.rounds} done, load average {os.getloadavg()[0]:.2f})", flush=True)
    columns = [column(d, q) for d in app_dirs for q in queries(args)]
    names |= {column(d, q): f"{names[str(d)]} {q.removeprefix('lang=')}" for d in app_dirs for q in queries(args) if q}
    for line in solo_table(rounds, columns, names):
        say(line)

    ok = True
    sizes = [int(n) for n in args.classes.split(",") if n]
    if sizes:
        say()
        say(f"Classes over the explorer pages, one process: each student moves {args.class_moves} times "
            f"~{args.think:g} s apart, arriving within {args.arrive:g} s; then the same class on a bare one-slider "
            f"app; {args.class_rounds} round(s) on fresh servers, medians over the rounds (a class's p95 moves by a "
            f"third from one run to the next), each round's p95 / the bare app's in its own column")
        say()
        say("| checkout | students | moves | p50 ms | p95 ms | bare p50 ms | bare p95 ms | p95 / bare "
            "| p95 ms by round, / bare | errors | bare errors | CPU ms a move, first runs in "
            "| bare CPU ms a move, first runs in | VmRSS MiB after the class (most) | load at start |")
        say("|---|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---:|---:|---|---:|")
        for n in sizes:
            lines, fine = class_lines(n, app_dirs, names, args)
            ok &= fine
            for line in lines:
                say(line)
    record("bench_move --langs" if args.langs else "bench_move", None, out)  # a section of its own
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
