"""Heavy imports, once per server process, one after another, by one thread, before page code needs them.

Several sessions arriving together used to import pandas, plotly and torch lazily in parallel threads.  Some
code peeks into ``sys.modules`` instead of importing (Plotly reads ``sys.modules["pandas"]`` and
``["numpy"]``; gelu_core's backend read ``sys.modules["torch"].Tensor``), so a session could meet a module
that another session's thread had only half imported: ``partially initialized module 'pandas' has no
attribute 'Series'``.  Here the heavy modules are imported by one thread, in a fixed order, in two parts:

* ``PAGES``, what every page draws with (numpy, scipy, pandas, pyarrow, PIL, Plotly, and Plotly's validators,
  loaded by building one figure), and the app's own frame.  ``warm()`` returns once they are complete, and
  every script run calls it before anything else (app.py, through ``script_run()``): no page code runs beside
  a half-imported one of these.
* ``LATER``, scipy's root finder (the landmarks some pages mark), then torch with the modules built on it
  (the lab, the race, the PyTorch tab), in two groups.  Only those pages need them, and importing them takes
  over a CPU-second that the first page would otherwise share (on a small server with the browser beside it,
  half a second of the first page's 3 s).  So each group is imported in the background once the server has
  run no script for ``QUIET_S`` seconds: after the first page is drawn, or before any student arrives.  A page
  that needs one earlier imports it itself and so waits for it (or for the import under way: Python's own
  module lock), and at that run's end the group is completed here and frozen (below).  What runs meanwhile
  never reads torch from ``sys.modules`` (gelu_core's backend checks for a complete ``torch.Tensor``; Plotly,
  pandas and Streamlit only ask whether "torch" is there).  ``ready()`` is True once every group is done
  (``/readyz``).

Before torch can be imported, its threads are set for the whole process (every script thread runs torch on
its own OpenMP team): one per CPU the process may really use, its affinity set lowered by a cgroup CPU quota.
A container that sees 16 cores but may use 1 would otherwise run 16 threads on one core.

The server starts ``start()`` in the background at start-up (``hosting.lifespan``), so the imports overlap the
browser loading Streamlit's frontend.  Without a server (AppTest, a script), the first ``warm()`` imports
``PAGES`` itself.

After each part and group, ``gc.freeze()``: Streamlit runs a full garbage collection after every script run
(``runner.postScriptGC``), holding the GIL, and with torch, pandas and Plotly loaded that walks ~280,000
objects, about 110 ms on this machine, during which no other session's message goes out.  The modules'
objects live as long as the process anyway; frozen, the collection after a run only looks at what the runs
themselves made (well under 1 ms), and still frees their cycles.  (A later freeze may also freeze the
objects of a run under way: they stay, a few kilobytes, which is the price of not blocking it.)
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
    "ui.frame",  # app.py's own (gelu_core, the lesson, the code export): imported here, not by racing first runs
    "ui.controls",
)
LATER = (  # groups, each imported (and frozen) at once
    ("scipy.optimize",),  # the landmarks' root finder (the gate, curves, slopes), not the first page's
    (
        "torch",
        "gelu_core.lab",
        "gelu_core.frameworks",
        "gelu_core.tensor_io",
        "gelu_core.weights",
        "gelu_core.gradients",
        "gelu_core.training",
        "hosting.races",
    ),
)

QUIET_S = 2.0  # seconds with no script run before a LATER group is imported in the background (a first page's drawing)

_lock = threading.Lock()
_pages = threading.Event()
_done = threading.Event()
_runs = threading.Condition()  # guards the two below
_running = 0  # script runs under way
_quiet_since = time.monotonic()  # when the last one ended (or PAGES were done)
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
    """torch's (OpenMP's, MKL's) thread count for the whole process, unless the environment already says."""
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, str(usable_cpus()))


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
    global _running, _quiet_since
    warm()
    with _runs:
        _running += 1
    try:
        yield
    finally:
        with _runs:
            _running -= 1
            _quiet_since = time.monotonic()
            _runs.notify_all()


def _wanted(groups) -> tuple[str, ...] | None:
    """The first of ``groups`` a page has begun to import itself (its import then costs nothing more here), else
    the first of them once no script has run for ``QUIET_S`` seconds, else None.  Call holding ``_runs``."""
    for group in groups:
        if group[0] in sys.modules:
            return group
    if _running == 0 and time.monotonic() - _quiet_since >= QUIET_S:
        return groups[0]
    return None


def warm_all() -> None:
    """``warm()``, then each group of ``LATER`` when the server is quiet, or at once when a page has imported it
    itself (so that its objects are frozen too: unfrozen, torch's made every run's collection 70 ms longer); then
    say so in the log."""
    warm()
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
    """Whether every heavy import is complete (no first run anywhere would wait)."""
    return _done.is_set()


def start() -> threading.Thread:
    """Begin ``warm_all()`` on a background thread (at server start-up); script runs still call ``warm()``."""
    thread = threading.Thread(target=warm_all, name="gelu-warm-imports", daemon=True)
    thread.start()
    return thread
