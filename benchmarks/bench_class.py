"""A whole class at once: N students on a fresh server, one process and behind HAProxy with 1, 2, ... replicas.

    python benchmarks/bench_class.py                                   # 30 students, every mode
    python benchmarks/bench_class.py --modes haproxy --replicas 2 --students 8 --moves 3     # CI's short run

Each student is a session of harness/streamlit_client.py (Streamlit's websocket protocol, as the browser
speaks it; all students share this one asyncio process).  The class is spread over every page of app.py in
turn.  Each student arrives within the first `--arrive` seconds, opens their page (first run; on a page that
asks its question first, "Show me" as well: the page's whole view, part of the visit, not a move), then moves
the page's first slider (else number input) `--moves` times, one arrow-key step at a time: after each
rerun has finished they look for about `--think` seconds (±50 %, seeded) before the next move, as a
student does.  A move's latency is from the rerun request sent to the run's `script_finished` received.

Figures per scenario: p50/p95/max move latency per page and overall, the first page loads, errors
(exception elements, error boxes, disconnects and runs that never finished), every server process's peak
and current memory (VmHWM/VmRSS from /proc), and the CPU each side used.  Scenarios, each on fresh servers:

  one process       `streamlit run app.py`, the class straight at it
  one-slider app    the same class on a bare one-slider Streamlit app: Streamlit's own floor (ratio)
  haproxy xR        R replicas behind deploy/haproxy.cfg (harness/balancer.py), for every R in --replicas

--poll (the class poll, draw/class_poll.py): a teacher starts a class for the students' number ("Start a class", as a
click sends it) and keeps the presenter view's console open; --poll-sizes students (default 30 and 60) on one
process (the memory store), then --poll-replicated (default 30 and 60) through HAProxy x2 with one Debian
redis-server (GELU_CLASS_STORE, run with deploy/docker-compose.yml's options), all open Home and then answer its
first round at a random moment within --poll-window (5 s), after which each student's page waits for the reveal, its
watch's fragment asking the class's state every draw.class_poll.WATCH_S.  Each fragment runs on its own, as its
st.fragment(run_every=...) timer makes a browser ask (the teacher's console every REFRESH_S), and the teacher reads
the count it shows ("N of M answered").  Printed: vote -> console latency p50/p95 (the j-th vote stored until the
first console run showing at least j answers; target p95 < 1 s), lost votes (cast minus shown, target 0, and minus
the store's own tally through Redis), the servers' memory before and after (VmRSS) and Redis's used_memory, and a
table of every size and mode.

    python benchmarks/bench_class.py --poll                      # 30 and 60 students, one process and two replicas

    python benchmarks/bench_class.py --race --students 30 --explorers 10   # a class racing (one process, x2)

``--race``: each of ``--students`` opens the training race with its own seed (the default race otherwise:
spiral, 1,000 steps, width 8, depth 3) within ``--arrive`` seconds, while ``--explorers`` students move the
sliders of the explorer pages; per race the time from the student's arrival to the finished race (the page's
run over, its verdict drawn) p50/p95/max, the explorers' move p95 meanwhile, errors and peak memory, on one
process and on two replicas behind HAProxy.  Targets: every race finished within 10 s, explorer p95 < 1 s.

    python benchmarks/bench_class.py --lab --students 10 --explorers 5 --moves 30 --timeout 300

``--lab``: one student alone opens the lab on the (8, 1024) demo with a weight seed of their own (a new block,
run forwards and backwards), then ``--students`` each do the same with their own seed within ``--arrive``
seconds while ``--explorers`` students move Curves' slider; per student the time from arrival to the result
drawn p50/p95/max, the Curves moves' p95 meanwhile, errors (a student told the lab is busy is one) and peak
memory, one process.  Targets: every run drawn within 60 s, none refused, Curves p95 < 1 s.

Targets from the issue, printed with each figure (never asserted): 0 errors; one process p95 within 1.2x the
one-slider app's; behind HAProxy p95 < 1 s with as few replicas as that takes.  Exit status 1 if any student
saw an error (exception, error box, disconnect, unfinished run), else 0.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_browser import BASELINE_APP  # noqa: E402
from benchmarks.results import printed, record  # noqa: E402
from harness import browser as driver  # noqa: E402
from harness.balancer import Balancer, cpu_seconds  # noqa: E402
from harness.memory import memory_kib  # noqa: E402
from harness.streamlit_client import Session, run_sync  # noqa: E402

TARGET_RATIO = 1.2  # one process p95 / one-slider app p95
TARGET_P95_S = 1.0  # behind HAProxy
UTILISATION = 0.6  # capacity estimate: a core kept 60 % busy keeps queues short (M/M/1: mean wait 1.5x the run)


@dataclass
class Student:
    path: str
    first: float | None = None  # seconds to the first run's end (and "Show me"'s, where the page asks first)
    moves: list[float] = field(default_factory=list)
    exceptions: int = 0
    error_boxes: int = 0
    failure: str | None = None  # disconnect, timeout, no control to move


@dataclass
class Result:
    name: str
    students: list[Student]
    wall_s: float
    server_cpu_s: float
    client_cpu_s: float
    memory: dict[str, dict[str, int]]
    load: tuple[float, float]  # the machine's 1-minute load average before and after: others' work shows here

    def moves(self, path: str | None = None) -> list[float]:
        return [m for s in self.students if path is None or s.path == path for m in s.moves]

    @property
    def errors(self) -> dict[str, int]:
        return {
            "exceptions": sum(s.exceptions for s in self.students),
            "error boxes": sum(s.error_boxes for s in self.students),
            "disconnects/unfinished": sum(1 for s in self.students if s.failure),
        }


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100); nan for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


async def student(base_url: str, path: str, rng: random.Random, args) -> Student:
    me = Student(path)
    await asyncio.sleep(rng.uniform(0, args.arrive))
    session = Session(base_url, path, timeout_s=args.timeout)
    try:
        await session.open()
        me.first = (await session.run()).seconds
        shown = await session.show_me()  # a page that asks its question first: its whole view, part of the visit
        me.first += shown.seconds if shown is not None else 0.0
        for _ in range(args.moves):
            await asyncio.sleep(args.think * rng.uniform(0.5, 1.5))
            me.moves.append((await session.move()).seconds)
    except Exception as err:  # SessionError, OSError, a timeout, a websocket closed mid-handshake: their failure
        me.failure = f"{type(err).__name__}: {err}"
    finally:
        me.exceptions, me.error_boxes = session.exceptions, session.error_boxes
        await session.close()
    return me


RACE_TARGET_S = 10.0  # every race finished within 10 s of its start
EXPLORER_PAGES = ("curves", "gate", "derivative", "approximations")


async def own_run(base_url: str, page: str, query: str, seed: int, shown, missing: str, rng: random.Random,
                  args) -> Student:
    """A student who opens ``page?query`` (their own run, seeded ``seed``): ``first`` is arrival to the run over,
    with ``shown(texts)`` true of what the page drew, else ``missing`` is their failure."""
    from harness.streamlit_client import texts

    me = Student(f"{page} (seed {seed})")
    await asyncio.sleep(rng.uniform(0, args.arrive))
    session = Session(base_url, page, query, timeout_s=args.timeout)
    arrived = time.perf_counter()
    try:
        await session.open()
        await session.run()
        if not shown(texts(session.elements)):
            me.failure = missing
        me.first = time.perf_counter() - arrived
    except Exception as err:  # noqa: BLE001  a disconnect or timeout: this student's failure
        me.failure = f"{type(err).__name__}: {err}"
    finally:
        me.exceptions, me.error_boxes = session.exceptions, session.error_boxes
        await session.close()
    return me


async def racer(base_url: str, seed: int, rng: random.Random, args) -> Student:
    """A student who opens the race with their own seed: ``first`` is arrival to finished race (verdict drawn)."""
    return await own_run(base_url, "training", f"training_seed={seed}", seed,
                         lambda shown: any(t.startswith("**") and "test accuracy" in t for t in shown),
                         "the run finished without a verdict", rng, args)


LAB_TARGET_S = 60.0  # every student's own (8, 1024) lab run drawn within 60 s
LAB_RESULT = "**Each token's output**"  # a markdown the lab draws only with a result


async def lab_student(base_url: str, seed: int, rng: random.Random, args) -> Student:
    """A student who opens the lab on the (8, 1024) demo with their own weight seed (backwards on, the default):
    ``first`` is arrival to the result drawn (the page's run over with the lab's result on it)."""
    return await own_run(base_url, "ffn", f"ffn_demo=8x1024&ffn_seed={seed}", seed,
                         lambda shown: LAB_RESULT in shown, "the run finished without the lab's result", rng, args)


def run_race_class(name: str, base_url: str, pids: dict[str, int], args, arrive=None,
                   pages: tuple[str, ...] = EXPLORER_PAGES) -> tuple[Result, Result]:
    """(the racers, the explorers) of one class run at once; ``arrive`` (default racer) is what each of the
    --students does, with seeds 1000, 1001, ..."""
    arrive = arrive or racer
    rng = random.Random(args.seed)
    explorer_paths = [pages[i % len(pages)] for i in range(args.explorers)]
    seeds = [rng.random() for _ in range(args.students + args.explorers)]
    load_before = os.getloadavg()[0]
    cpu_before = {k: cpu_seconds(p) for k, p in pids.items()}
    client_before = time.process_time()
    start = time.perf_counter()

    async def everyone():
        racers = [arrive(base_url, 1000 + i, random.Random(seeds[i]), args) for i in range(args.students)]
        explorers = [student(base_url, path, random.Random(seeds[args.students + i]), args)
                     for i, path in enumerate(explorer_paths)]
        return await asyncio.gather(*racers, *explorers)

    students = asyncio.run(everyone())
    wall = time.perf_counter() - start
    server_cpu = sum(cpu_seconds(p) - cpu_before[k] for k, p in pids.items())
    memory = {k: memory_kib(p) for k, p in pids.items()}
    load = (load_before, os.getloadavg()[0])
    client = time.process_time() - client_before
    return (Result(name, students[:args.students], wall, server_cpu, client, memory, load),
            Result(name, students[args.students:], wall, server_cpu, client, memory, load))


def report_race(racers: Result, explorers: Result, args, what: str = "race", target_s: float = RACE_TARGET_S) -> bool:
    """Print one race (or lab: ``what``) scenario; True if every target was met."""
    finished = [s.first for s in racers.students if s.first is not None and not s.failure]
    moves = explorers.moves()
    errors = {k: racers.errors[k] + explorers.errors[k] for k in racers.errors}
    worst = max(finished, default=math.nan)
    p95 = percentile(moves, 95)
    print(f"\n== {racers.name}: {len(racers.students)} {what}s (each its own seed) arriving within {args.arrive:g} s, "
          f"{len(explorers.students)} explorers moving sliders ({racers.wall_s:.0f} s)")
    met = len(finished) == len(racers.students) and worst <= target_s
    print(f"  {what}, arrival to {'drawn' if what == 'lab run' else 'finished'}: p50 {ms(percentile(finished, 50))} "
          f"ms, p95 {ms(percentile(finished, 95))} ms, max {ms(worst)} ms over {len(finished)}  (target every "
          f"{what} <= {target_s:g} s: {'met' if met else 'NOT met'})")
    print(f"  explorers meanwhile: {len(moves)} moves, p50 {ms(percentile(moves, 50))} ms, p95 {ms(p95)} ms, "
          f"max {ms(max(moves, default=math.nan))} ms  (target p95 < {TARGET_P95_S:g} s: "
          f"{'met' if p95 < TARGET_P95_S else 'NOT met'})")
    print("  errors: " + ", ".join(f"{k} {v}" for k, v in errors.items())
          + ("  (target 0: met)" if not any(errors.values()) else "  (target 0: NOT met)"))
    for s in racers.students + explorers.students:
        if s.failure:
            print(f"    /{s.path}: {s.failure}")
    for proc, kib in racers.memory.items():
        print(f"  memory {proc:<22} peak VmHWM {kib['VmHWM'] / 1024:6.0f} MiB   "
              f"now VmRSS {kib['VmRSS'] / 1024:6.0f} MiB")
    print(f"  CPU: servers {racers.server_cpu_s:.1f} s; machine load average {racers.load[0]:.1f} before, "
          f"{racers.load[1]:.1f} after ({os.cpu_count()} cores)")
    return met and p95 < TARGET_P95_S and not any(errors.values())


def lab_class(args) -> int:
    """--lab: one student alone first (their run's time), then the class at once, one process."""
    print(f"A lab class: {args.students} students each open the lab on the (8, 1024) demo with their own weight seed "
          f"(1000...), backwards on, within {args.arrive:g} s; {args.explorers} explorers on Curves move "
          f"{args.moves} times, ~{args.think:g} s apart")
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the start")
    with driver.Server() as server:
        print(f"(the class waits for /readyz: {driver.wait_ready(server.base_url):.1f} s after health)")
        cpu = cpu_seconds(server.proc.pid)
        alone = run_sync(lab_student(server.base_url, 999, random.Random(0), argparse.Namespace(**{
            **vars(args), "arrive": 0})))
        cpu = cpu_seconds(server.proc.pid) - cpu
        print(f"one student alone (seed 999): drawn after {ms(alone.first or math.nan)} ms, server CPU {cpu:.1f} s"
              + (f"  ({alone.failure})" if alone.failure else ""))
        ok = report_race(*run_race_class("one process", server.base_url, {"streamlit": server.proc.pid}, args,
                                         arrive=lab_student, pages=("curves",)), args, "lab run", LAB_TARGET_S)
    return 0 if ok else 1


def race_class(args) -> int:
    print(f"A racing class: {args.students} students each open their own default race (spiral, 1,000 steps, "
          f"width 8, depth 3; seeds 1000...) within {args.arrive:g} s; {args.explorers} explorers on "
          f"{', '.join(EXPLORER_PAGES)} move {args.moves} times, ~{args.think:g} s apart")
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the start")
    ok = []
    modes = set(args.modes.split(","))
    if "single" in modes:
        with driver.Server() as server:
            if args.ready:
                print(f"(the class waits for /readyz: {driver.wait_ready(server.base_url):.1f} s after health)")
            ok.append(report_race(*run_race_class("one process", server.base_url, {"streamlit": server.proc.pid},
                                                  args), args))
    if "haproxy" in modes:
        with Balancer(2) as lb:
            if args.ready:
                print(f"(the class waits for /readyz: {driver.wait_ready(lb.base_url):.1f} s after health)")
            ok.append(report_race(*run_race_class("haproxy x2", lb.base_url, lb.pids(), args), args))
    return 0 if all(ok) else 1


def run_class(name: str, base_url: str, paths: list[str], pids: dict[str, int], args) -> Result:
    rng = random.Random(args.seed)
    seeds = [rng.random() for _ in paths]
    load_before = os.getloadavg()[0]
    cpu_before = {k: cpu_seconds(p) for k, p in pids.items()}
    client_before = time.process_time()
    start = time.perf_counter()

    async def everyone():
        return await asyncio.gather(*(student(base_url, p, random.Random(s), args) for p, s in zip(paths, seeds,
                                                                                                 strict=True)))

    students = asyncio.run(everyone())
    wall = time.perf_counter() - start
    server_cpu = sum(cpu_seconds(p) - cpu_before[k] for k, p in pids.items())
    return Result(name, students, wall, server_cpu, time.process_time() - client_before,
                  {k: memory_kib(p) for k, p in pids.items()}, (load_before, os.getloadavg()[0]))  # fmt: skip


def solo_costs(base_url: str, pid: int, paths: list[str], moves: int) -> dict[str, tuple[float, float]]:
    """Per page, one student alone: (median move latency, median server CPU seconds per move)."""

    async def one(path: str) -> tuple[float, float]:
        async with Session(base_url, path) as session:
            await session.run()
            await session.move()  # caches and imports of this page warm, as in a lesson
            latency, cost = [], []
            for _ in range(moves):
                before = cpu_seconds(pid)
                latency.append((await session.move()).seconds)
                cost.append(cpu_seconds(pid) - before)
            return statistics.median(latency), statistics.median(cost)

    return {path: asyncio.run(one(path)) for path in dict.fromkeys(paths)}


def report_costs(costs: dict[str, tuple[float, float]], think: float) -> float:
    """Print the solo figures and a capacity estimate; return the mean CPU seconds per move over the pages."""
    print("\nOne student alone on the same server (after the class), per page: median over the moves")
    print(f"{'page':<16}{'move ms':>9}{'server CPU ms per move':>24}")
    for path, (latency, cost) in costs.items():
        print(f"{path or 'home':<16}{latency * 1e3:>9.0f}{cost * 1e3:>24.0f}")
    mean_cost = statistics.mean(c for _, c in costs.values())
    rate = 1 / (think + statistics.mean(lat for lat, _ in costs.values()))
    per_core = UTILISATION / (rate * mean_cost)
    print(f"mean over the pages: {mean_cost * 1e3:.0f} ms of CPU per move.  Estimate (a model, not a measurement): a "
          f"student moving every {1 / rate:.2f} s asks {rate * mean_cost:.3f} cores; one replica (one core, the GIL) "
          f"kept at {UTILISATION:.0%} busy for short queues serves about {per_core:.0f} students")
    return mean_cost


def class_paths(n: int, pages: str = "") -> list[str]:
    """Each of n students' url path, in turn over ``pages`` (--pages: comma-separated, "home" for the home page)
    or over every page of the app."""
    paths = (["" if page == "home" else page for page in pages.split(",")] if pages
             else ["" if p.default else p.url_path for p in driver.app_pages()])
    return [paths[i % len(paths)] for i in range(n)]


def ms(seconds: float) -> str:
    return "-" if math.isnan(seconds) else f"{seconds * 1e3:.0f}"


def report(result: Result, args) -> None:
    print(f"\n== {result.name}: {len(result.students)} students, {args.moves} moves each "
          f"({result.wall_s:.0f} s)")  # fmt: skip
    print(f"{'page':<16}{'moves':>6}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}{'first run p95':>15}")
    for path in dict.fromkeys(s.path for s in result.students):
        moves = result.moves(path)
        firsts = [s.first for s in result.students if s.path == path and s.first is not None]
        print(f"{path or 'home':<16}{len(moves):>6}{ms(percentile(moves, 50)):>9}{ms(percentile(moves, 95)):>9}"
              f"{ms(max(moves, default=math.nan)):>9}{ms(percentile(firsts, 95)):>15}")
    every = result.moves()
    firsts = [s.first for s in result.students if s.first is not None]
    print(f"{'all pages':<16}{len(every):>6}{ms(percentile(every, 50)):>9}{ms(percentile(every, 95)):>9}"
          f"{ms(max(every, default=math.nan)):>9}{ms(percentile(firsts, 95)):>15}")
    errors = result.errors
    print("errors: " + ", ".join(f"{k} {v}" for k, v in errors.items())
          + ("  (target 0: met)" if not any(errors.values()) else "  (target 0: NOT met)"))
    for s in result.students:
        if s.failure:
            print(f"  /{s.path}: {s.failure}")
    for proc, kib in result.memory.items():
        print(f"memory {proc:<22} peak VmHWM {kib['VmHWM'] / 1024:6.0f} MiB   now VmRSS {kib['VmRSS'] / 1024:6.0f} MiB")
    cores = os.cpu_count() or 1
    runs = len(every) + len(firsts)
    print(f"CPU: servers {result.server_cpu_s:.1f} s = {result.server_cpu_s / result.wall_s:.2f} cores on average, "
          f"{result.server_cpu_s / max(runs, 1) * 1e3:.0f} ms per script run ({runs} runs, first runs included); "
          f"this client {result.client_cpu_s:.1f} s = {result.client_cpu_s / result.wall_s:.2f} cores; "
          f"machine {cores} cores, load average {result.load[0]:.1f} before, {result.load[1]:.1f} after (a load "
          f"above {cores} means processes outside this benchmark were waiting for the same cores)")  # fmt: skip


def limits_note(replicas: int) -> str:
    cores = os.cpu_count() or 1
    return (f"  what limits it: each replica is one Python process whose script runs take turns on about one core "
            f"(the GIL), so {replicas} replica(s) can use at most about {min(replicas, cores)} of this machine's "
            f"{cores} cores, which the simulated class itself shares")  # fmt: skip


def sweep(sizes: list[int], args) -> int:
    """p95 per class size, one process and two replicas behind HAProxy, each on fresh servers."""
    print(f"Class size sweep: {args.moves} moves each, ~{args.think:g} s apart; p95 of the moves (ms), errors")
    print(f"{'students':>8}{'one process':>14}{'haproxy x2':>13}   load average at the start")
    errors = 0
    for n in sizes:
        paths, row = class_paths(n, args.pages), []
        load = os.getloadavg()[0]
        with driver.Server() as server:
            row.append(run_class("one process", server.base_url, paths, {"streamlit": server.proc.pid}, args))
        with Balancer(2) as lb:
            row.append(run_class("haproxy x2", lb.base_url, paths, lb.pids(), args))
        errors += sum(sum(r.errors.values()) for r in row)
        cells = [f"{ms(percentile(r.moves(), 95))} ({sum(r.errors.values())})" for r in row]
        print(f"{n:>8}{cells[0]:>14}{cells[1]:>13}   {load:.2f}")
    print(f"  ({os.cpu_count()} cores, shared with the simulated class and anything else running here)")
    return 1 if errors else 0


# ------------------------------------------------------------------ --poll: the class poll

async def poll_class(base_url: str, n: int, args) -> dict:
    """A teacher starts a class and watches its console; n students open Home, then answer within args.poll_window
    and wait for the reveal, their pages' watch asking the class's state as a browser's timer makes it do."""
    from draw.class_poll import answered_count
    from harness.streamlit_client import words

    rng = random.Random(args.seed)
    teacher = Session(base_url, "", timeout_s=args.timeout)
    students = [Session(base_url, "", timeout_s=args.timeout) for _ in range(n)]
    seen: list[tuple[float, int]] = []  # (teacher run finished, answers shown)
    voted: list[float] = []
    failures: list[str] = []

    def shown() -> int | None:
        return answered_count(" ".join(words(teacher.elements)))

    try:
        await teacher.open()
        await teacher.run()
        teacher.enter("Students in your class", n)  # the class's size: answers past it would be refused
        await teacher.click("Start a class")
        query = dict(p.split("=", 1) for p in teacher.query_string.split("&") if "=" in p)
        code = query["class"]
        teacher.query_string = f"present=true&class={code}&teacher={query['teacher']}"
        await teacher.run()
        console = next(iter(teacher.fragments.items()), None)  # the console's fragment and its timer
        if console is None:
            failures.append("the teacher's page has no timed fragment (the console)")
            console = ("", 0.5)
        for s in students:
            s.query_string = f"class={code}"
        opened = await asyncio.gather(*(s.open() for s in students), return_exceptions=True)
        failures += [repr(e) for e in opened if isinstance(e, BaseException)]
        ready = [s for s in students if s.ws is not None]
        firsts = await asyncio.gather(*(s.run() for s in ready), return_exceptions=True)
        failures += [repr(e) for e in firsts if isinstance(e, BaseException)]
        done = asyncio.Event()

        async def watch():
            while True:
                started = time.perf_counter()
                await teacher.run(fragment_id=console[0], auto=True)
                count = shown()
                if count is not None:
                    seen.append((time.perf_counter(), count))
                if done.is_set() and (count or 0) >= len(voted):
                    return
                await asyncio.sleep(max(0.0, console[1] - (time.perf_counter() - started)))

        async def waiting(s: Session):
            """A student's page after their answer: its watch's fragment, on its timer, until the class is done."""
            while not done.is_set() and s.fragments:
                fragment_id, every = next(iter(s.fragments.items()))
                await asyncio.sleep(every)
                try:
                    await s.run(fragment_id=fragment_id, auto=True)
                except Exception as err:  # noqa: BLE001  a disconnect: this student's failure
                    failures.append(f"{type(err).__name__}: {err}")
                    return

        all_in, finished = asyncio.Event(), [0]

        async def vote(s: Session, delay: float):
            await asyncio.sleep(delay)
            try:
                await s.answer(rng.randrange(3))
                voted.append(time.perf_counter())
            except Exception as err:
                failures.append(f"{type(err).__name__}: {err}")
            finished[0] += 1
            if finished[0] == len(ready):
                all_in.set()
            if s.ws is not None and not s.closed_reason:
                await waiting(s)

        watcher = asyncio.create_task(watch())
        start = time.perf_counter()
        votes = [asyncio.create_task(vote(s, rng.uniform(0, args.poll_window))) for s in ready]
        if ready:
            await all_in.wait()
        answered_s = time.perf_counter() - start
        done.set()
        await asyncio.gather(*votes)
        try:
            await asyncio.wait_for(watcher, 60)
        except TimeoutError:
            watcher.cancel()
            failures.append("the teacher's view never showed every vote within 60 s")
        latencies = []
        for j, t in enumerate(sorted(voted), start=1):
            later = [when for when, count in seen if count >= j and when >= t]
            if later:
                latencies.append(min(later) - t)
        troubles = sum(len(s.troubles) for s in [teacher, *students])
        return {"code": code, "cast": len(voted), "shown": seen[-1][1] if seen else 0, "latencies": latencies,
                "failures": failures, "troubles": troubles, "answered_s": answered_s}
    finally:
        await asyncio.gather(*(s.close() for s in [teacher, *students]), return_exceptions=True)


def poll_report(name: str, n: int, got: dict, memory: dict[str, tuple[int, int]], store_count: int | None,
                redis_bytes: int | None) -> bool:
    lat = got["latencies"]
    lost = got["cast"] - got["shown"]
    p95 = percentile(lat, 95)
    print(f"\n== class poll, {name}: {n} students answering Home's question within the window "
          f"(all answered after {got['answered_s']:.1f} s)")
    print(f"vote -> teacher's view: p50 {ms(percentile(lat, 50))} ms, p95 {ms(p95)} ms, "
          f"max {ms(max(lat, default=math.nan))} ms over {len(lat)} votes  (target p95 < {TARGET_P95_S:g} s: "
          f"{'met' if p95 < TARGET_P95_S else 'NOT met'})")
    got["row"] = (name, n, percentile(lat, 50), p95, max(lat, default=math.nan), lost)
    store_note = "" if store_count is None else f"; the store's own tally {store_count}"
    print(f"votes cast {got['cast']} of {n}, shown to the teacher {got['shown']}: lost {lost} (target 0: "
          f"{'met' if lost == 0 and got['cast'] == n else 'NOT met'}){store_note}")
    print(f"errors: exception/error boxes {got['troubles']}, failures {len(got['failures'])}"
          + "".join(f"\n  {f}" for f in got["failures"][:5]))
    for proc, (before, after) in memory.items():
        print(f"memory {proc:<22} VmRSS {before / 1024:6.0f} MiB before the class, {after / 1024:6.0f} MiB after")
    if redis_bytes is not None:
        print(f"memory redis-server (used_memory)  {redis_bytes / 1024:.0f} KiB")
    return lost == 0 and got["cast"] == n and not got["troubles"] and not got["failures"]


def poll(args) -> int:
    from harness.redis_server import RedisServer, redis_missing
    from hosting import classpoll

    ok, rows = True, []
    print(f"Class poll: answers within {args.poll_window:g} s; machine {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.2f} at the start; students simulated in this process on the same cores")
    for n in [int(x) for x in args.poll_sizes.split(",") if x]:
        with driver.Server() as server:
            driver.wait_ready(server.base_url)
            before = {"streamlit": memory_kib(server.proc.pid)["VmRSS"]}
            got = run_sync(poll_class(server.base_url, n, args))
            memory = {"streamlit": (before["streamlit"], memory_kib(server.proc.pid)["VmRSS"])}
            ok &= poll_report("one process (memory store)", n, got, memory, None, None)
            rows.append(got["row"])
    sizes = [int(x) for x in args.poll_replicated.split(",") if x]
    if sizes and redis_missing():
        print(f"\n(no replicas: {redis_missing()})")
        return 0 if ok else 1
    for n in sizes:
        with RedisServer(deployed=True) as redis_server:  # Compose's options: each write fsynced before its answer
            os.environ[classpoll.ENV] = redis_server.url  # the replicas inherit it
            try:
                with Balancer(2) as lb:
                    for s in lb.servers:
                        driver.wait_ready(s.base_url)
                    before = {k: memory_kib(p)["VmRSS"] for k, p in lb.pids().items()}
                    got = run_sync(poll_class(lb.base_url, n, args))
                    memory = {k: (before[k], memory_kib(p)["VmRSS"]) for k, p in lb.pids().items()}
            finally:
                os.environ.pop(classpoll.ENV, None)
            tally = classpoll.RedisStore(redis_server.url).tally(got["code"], "home", 3)
            ok &= poll_report("haproxy x2 + redis", n, got, memory, tally.total if tally else None,
                              redis_server.used_memory())
            rows.append(got["row"])
    print(f"\nThe teacher's console, vote -> the count on it (ms; target p95 < {TARGET_P95_S * 1e3:.0f} ms)")
    print(f"{'where':<28}{'students':>9}{'p50':>8}{'p95':>8}{'max':>8}{'lost':>6}  target")
    for name, n, p50, p95, worst, lost in rows:
        print(f"{name:<28}{n:>9}{ms(p50):>8}{ms(p95):>8}{ms(worst):>8}{lost:>6}  "
              f"{'met' if p95 < TARGET_P95_S and lost == 0 else 'NOT met'}")
    return 0 if ok else 1


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--moves", type=int, default=8)
    parser.add_argument("--think", type=float, default=1.0, help="seconds between a redraw and the next move (±50%%)")
    parser.add_argument("--arrive", type=float, default=1.0, help="students arrive within this many seconds")
    parser.add_argument("--modes", default="single,haproxy", help="single (one process + one-slider app), haproxy")
    parser.add_argument("--replicas", default="1,2,3", help="replica counts behind HAProxy")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds a student waits for one run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--pages", default="", help="url paths to spread the class over, comma-separated ('home' "
                        "for the home page; default every page), e.g. the explorer pages without the lab and race")
    parser.add_argument("--ready", action="store_true", help="the class arrives once the app says /readyz (a server "
                        "opened before the lesson) instead of right after it answers /_stcore/health")
    parser.add_argument("--solo", type=int, default=5, help="moves per page for one student alone (0: skip)")
    parser.add_argument("--sweep", default="", help="class sizes (e.g. 5,10,15,20): p95 of one process and of "
                                                    "HAProxy x2 per size, instead of the scenarios above")
    parser.add_argument("--poll", action="store_true", help="the class poll instead of the scenarios above")
    parser.add_argument("--poll-window", type=float, default=5.0, help="students answer within this many seconds")
    parser.add_argument("--poll-sizes", default="30,60", help="with --poll: class sizes on one process")
    parser.add_argument("--poll-replicated", default="30,60", help="with --poll: class sizes through HAProxy x2 + "
                        "Redis")
    parser.add_argument("--race", action="store_true", help="a racing class: --students races, each its own seed, "
                        "and --explorers students moving sliders meanwhile (modes single and haproxy x2)")
    parser.add_argument("--explorers", type=int, default=10, help="with --race: students on the explorer pages")
    parser.add_argument("--lab", action="store_true", help="a lab class: --students each open the (8, 1024) demo "
                        "with their own weight seed while --explorers students move Curves' slider (one process)")
    return parser.parse_args(argv)


def section_name(args: argparse.Namespace) -> str:
    """Its section of benchmarks/RESULTS.md: one per kind of class (the scenarios, the sweep, the poll, the race,
    the lab)."""
    mode = next((m for m in ("poll", "race", "lab", "sweep") if getattr(args, m)), None)
    return f"bench_class --{mode}" if mode else "bench_class"


def main(args: argparse.Namespace) -> int:
    if args.poll:
        return poll(args)
    if args.race:
        return race_class(args)
    if args.lab:
        return lab_class(args)
    if args.sweep:
        return sweep([int(n) for n in args.sweep.split(",")], args)
    modes = set(args.modes.split(","))
    paths = class_paths(args.students, args.pages)

    print(f"A class of {args.students}: pages {', '.join(dict.fromkeys(p or 'home' for p in paths))}; "
          f"arrive within {args.arrive:g} s; {args.moves} moves, each ~{args.think:g} s (±50 %) after the last redraw")
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the start; the class is "
          f"simulated in this one process on the same cores")  # fmt: skip
    results: dict[str, Result] = {}

    if "single" in modes:
        with driver.Server() as server:
            if args.ready:
                waited = driver.wait_ready(server.base_url)
                print(f"(the class waits for /readyz: {waited:.1f} s after /_stcore/health)")
            results["single"] = run_class("one process", server.base_url, paths, {"streamlit": server.proc.pid}, args)
            report(results["single"], args)
            print(limits_note(1))
            if args.solo:
                report_costs(solo_costs(server.base_url, server.proc.pid, paths, args.solo), args.think)
        with driver.one_file_app(BASELINE_APP) as folder:  # the repository's config, one slider: Streamlit's floor
            with driver.Server(folder) as bare:
                results["bare"] = run_class("one-slider app, one process", bare.base_url, [""] * len(paths),
                                            {"streamlit": bare.proc.pid}, args)  # fmt: skip
        report(results["bare"], args)
        app95, bare95 = percentile(results["single"].moves(), 95), percentile(results["bare"].moves(), 95)
        ratio = app95 / bare95
        print(f"\none process against the one-slider app, same class: p95 {ms(app95)} ms / {ms(bare95)} ms = "
              f"{ratio:.2f}x  (target <= {TARGET_RATIO}x: {'met' if ratio <= TARGET_RATIO else 'NOT met'})")

    if "haproxy" in modes:
        counts = [int(r) for r in args.replicas.split(",")]
        for replicas in counts:
            with Balancer(replicas) as lb:
                results[f"x{replicas}"] = run_class(f"haproxy x{replicas}", lb.base_url, paths, lb.pids(), args)
            report(results[f"x{replicas}"], args)
            print(limits_note(replicas))
        print(f"\nBehind HAProxy (deploy/haproxy.cfg), {args.students} students: p95 per replica count")
        base = results[f"x{counts[0]}"]
        base95 = percentile(base.moves(), 95)
        for replicas in counts:
            r = results[f"x{replicas}"]
            p95 = percentile(r.moves(), 95)
            runs_per_s = len(r.moves()) / r.wall_s
            verdict = "met" if p95 < TARGET_P95_S else "not met"
            print(f"  x{replicas}: p95 {ms(p95)} ms (gain {base95 / p95:.2f}x over x{counts[0]}; "
                  f"{runs_per_s:.1f} moves/s served; server CPU {r.server_cpu_s / r.wall_s:.2f} cores)  "
                  f"target p95 < {TARGET_P95_S:g} s: {verdict}")
        met = [n for n in counts if percentile(results[f"x{n}"].moves(), 95) < TARGET_P95_S]
        print(f"  fewest replicas meeting p95 < {TARGET_P95_S:g} s here: {met[0] if met else 'none measured'}"
              + ("" if met else f" (this machine has {os.cpu_count()} cores shared with the class itself)"))

    failed = [name for name, r in results.items() if any(r.errors.values())]
    print(f"\n{'errors in: ' + ', '.join(failed) if failed else 'no errors in any scenario'}")
    return 1 if failed else 0


if __name__ == "__main__":
    arguments = parse_args()
    with printed() as lines:
        status = main(arguments)
    record(section_name(arguments), None, lines)
    sys.exit(status)
