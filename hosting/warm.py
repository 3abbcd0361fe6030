"""Heavy imports, once per server process, one after another, by one thread, before page code needs them.

Why: some code peeks into ``sys.modules`` instead of importing (Plotly reads ``sys.modules["pandas"]``), so
sessions arriving together and importing lazily in their own threads could meet a half-imported module
(``partially initialized module 'pandas' has no attribute 'Series'``).  Two parts:

* ``PAGES``: what every page draws with, and the app's frame.  ``warm()`` returns once they are complete;
  every script run calls it first (app.py, through ``script_run()``), so no page code runs beside a
  half-imported one of these.
* ``LATER``: groups only some pages need (scipy's root finder; torch and what is built on it).  Each is
  imported in the background once no script has run for ``QUIET_S`` seconds, so it does not share the CPU
  with the first page.  A page that needs a group earlier imports it itself (Python's module lock makes it
  wait for an import under way), and the group is completed here at that run's end.  ``ready()`` is True
  once every group is done (``/readyz``).
* ``TABLES``: right after ``PAGES``, every page's live tables at its controls' defaults, the largest cost of a
  page's first visit on a fresh server (``ui.pages.make_live_tables``); a class arriving at ``/readyz`` finds
  them made.

Before torch is imported its threads are set for the process: one per CPU it may really use (its affinity
set, lowered by a cgroup CPU quota), not one per core it sees, waiting for work asleep, not spinning.
``start()`` runs in the background at start-up (``hosting.lifespan``); without a server (AppTest, a script)
the first ``warm()`` imports ``PAGES``.

After each part and group, ``gc.freeze()``: a full collection holds the GIL, and the imported modules' objects
(which live as long as the process) would be walked every time; frozen, a collection only looks at what the
runs made (``hosting.janitor.Collector`` collects once a second after runs, not Streamlit after every run).
``python benchmarks/bench_class.py`` prints the server's CPU per script run, the app's and a bare Streamlit app's.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import os
import sys
import threading
import time
from collections.abc import Iterator

# In import order: each entry's dependencies come before it.
PAGES = (
    "numpy",
    "scipy.special",
    "pandas",
    "pyarrow",
    "PIL.Image",
    "plotly.graph_objects",
    "plotly.io",
    "ui.theme",
    "draw.frame",  # app.py's own (gelu_core, the lesson, the code export): imported here, not by racing first runs
    "ui.controls",
)
LATER = (  # groups, each imported (and frozen) at once
    ("scipy.optimize",),  # the landmarks' root finder (the gate, curves, slopes), not the first page's
    (
        "torch",
        "gelu_core.lab",
        "hosting.lab_runs",
        "gelu_core.frameworks",
        "gelu_core.tensor_io",
        "gelu_core.weights",
        "gelu_core.gradients",
        "torch.fx.experimental.symbolic_shapes",  # autograd imports it (and sympy) on its first use: here, so
        # that the lab's first backward does not wait for it
        "gelu_core.training",
        "hosting.races",
    ),
)

# Then the pages' live tables at their defaults (``ui.pages.make_live_tables``, by name: hosting imports no ui): a
# class's first visits would otherwise each make theirs, up to 300 ms of the one core the whole class shares.
TABLES = ("ui.pages", "make_live_tables")

QUIET_S = 2.0  # seconds with no script run before a LATER group is imported in the background (a first page's drawing)

_lock = threading.Lock()
_pages = threading.Event()
_done = threading.Event()
_runs = threading.Condition()  # guards the three below
_running = 0  # script runs under way
_quiet_since = time.monotonic()  # when the last one ended (or PAGES were done)
_finished = 0  # script runs ended so far (hosting.janitor.Collector collects their garbage)
seconds: dict[str, float] = {}  # how long each import took, for the start-up line and bench_startup.py


def usable_cpus() -> int:
    """CPUs this process may use: its affinity set, lowered by a cgroup v2 CPU quota (containers, hosted apps)."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    try:
        with open("/sys/fs/cgroup/cpu.max") as f:
            quota, period = f.read().split()[:2]
        if quota != "max":
            cpus = min(cpus, max(1, -(-int(quota) // int(period))))  # ceil(quota / period)
    except (OSError, ValueError):
        pass
    return max(1, cpus)


def set_threads() -> None:
    """torch's (OpenMP's, MKL's) thread count for the whole process, and OpenMP's threads sleeping rather than
    spinning while they wait for work (``OMP_WAIT_POLICY=PASSIVE``), unless the environment already says.

    Spinning pays on an idle machine; a server shares its cores with its own script threads, and often with
    others, where spinning threads take the CPU the waiting work needs."""
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, str(usable_cpus()))
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def _import(names) -> None:
    for name in names:
        start = time.perf_counter()
        importlib.import_module(name)
        seconds[name] = time.perf_counter() - start
    if "ui.theme" in names:
        start = time.perf_counter()
        sys.modules["ui.theme"].base_figure("x", "y")  # Plotly loads its validators on the first figure
        seconds["plotly validators"] = time.perf_counter() - start
    gc.collect()
    gc.freeze()  # the modules' own objects out of every later collection's way (see above)


def warm() -> None:
    """Import ``PAGES`` (once per process); a second caller waits for the first to finish."""
    global _quiet_since
    if _pages.is_set():
        return
    with _lock:
        if not _pages.is_set():
            if "torch" not in sys.modules:
                set_threads()  # before any page could import torch itself
            _import(PAGES)
            _pages.set()
            with _runs:
                _quiet_since = time.monotonic()


@contextlib.contextmanager
def script_run() -> Iterator[None]:
    """Around every script run (app.py): ``warm()`` first, and the run counted, so that ``LATER`` waits for quiet;
    at its end ``warm_all`` looks again (the run may have imported a group itself)."""
    global _running, _quiet_since, _finished
    warm()
    with _runs:
        _running += 1
    try:
        yield
    finally:
        with _runs:
            _running -= 1
            _finished += 1
            _quiet_since = time.monotonic()
            _runs.notify_all()


def finished_runs() -> int:
    """How many script runs have ended in this process."""
    return _finished


def _wanted(groups) -> tuple[str, ...] | None:
    """The first of ``groups`` a page has begun to import itself (its import then costs nothing more here), else
    the first of them once no script has run for ``QUIET_S`` seconds, else None.  Call holding ``_runs``."""
    for group in groups:
        if group[0] in sys.modules:
            return group
    if _running == 0 and time.monotonic() - _quiet_since >= QUIET_S:
        return groups[0]
    return None


def make_tables() -> None:
    """``TABLES``: the pages' live tables at their defaults, made and kept in the process's cache.  A failure is
    logged and not kept: the first visit of that page makes its table itself, and shows what went wrong there."""
    start = time.perf_counter()
    module, function = TABLES
    try:
        getattr(importlib.import_module(module), function)()
    except Exception as err:  # noqa: BLE001  the server still starts; each page makes what it needs on its visit
        print(f"GELU Explorer: the pages' tables were not made ahead ({type(err).__name__}: {err})", file=sys.stderr,
              flush=True)
        return
    seconds["live tables"] = time.perf_counter() - start


def warm_all() -> None:
    """``warm()`` and the pages' tables (``make_tables``), then each group of ``LATER`` when the server is quiet, or
    at once when a page has imported it itself (so that its objects are frozen too); then say so in the log."""
    warm()
    make_tables()
    pending = list(LATER)
    while pending:
        with _runs:
            while (group := _wanted(pending)) is None:
                left = QUIET_S - (time.monotonic() - _quiet_since)
                _runs.wait(timeout=max(left, 0.05) if _running == 0 else None)
        _import(group)  # a page's import under way finishes first (Python's module lock)
        pending.remove(group)
    _done.set()
    parts = ", ".join(f"{name} {took:.2f}" for name, took in seconds.items() if took >= 0.05)
    print(f"GELU Explorer: imports ready in {sum(seconds.values()):.2f} s ({parts})", file=sys.stderr, flush=True)


def ready() -> bool:
    """Whether every heavy import is complete and the pages' tables are made (no first run anywhere would wait)."""
    return _done.is_set()


def start() -> threading.Thread:
    """Begin ``warm_all()`` on a background thread (at server start-up); script runs still call ``warm()``."""
    thread = threading.Thread(target=warm_all, name="gelu-warm-imports", daemon=True)
    thread.start()
    return thread
