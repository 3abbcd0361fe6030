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
* ``LATER``, scipy's root finder (the landmarks some pages mark) and torch with the modules built on it (the
  lab, the race, the PyTorch tab).  Only those pages need them, and importing them takes over a CPU-second that
  the first page would otherwise share (on a small server with the browser beside it, half a second of the
  first page's 3 s).  So they are imported in the background
  once the server has run no script for ``QUIET_S`` seconds: after the first page is drawn, or before any
  student arrives.  A page that needs them earlier imports them itself and so waits for them (or for the import
  under way: Python's own module lock); what runs meanwhile never reads torch from ``sys.modules``
  (gelu_core's backend checks for a complete ``torch.Tensor``; Plotly, pandas and Streamlit only ask whether
  "torch" is there).  ``ready()`` is True once both parts are done (``/readyz``).

Before torch can be imported, its threads are set for the whole process (every script thread runs torch on
its own OpenMP team): one per CPU the process may really use, its affinity set lowered by a cgroup CPU quota.
A container that sees 16 cores but may use 1 would otherwise run 16 threads on one core.

The server starts ``start()`` in the background at start-up (``hosting.lifespan``), so the imports overlap the
browser loading Streamlit's frontend.  Without a server (AppTest, a script), the first ``warm()`` imports
``PAGES`` itself.

After each part, ``gc.freeze()``: Streamlit runs a full garbage collection after every script run
(``runner.postScriptGC``), holding the GIL, and with torch, pandas and Plotly loaded that walks ~280,000
objects, about 110 ms on this machine, during which no other session's message goes out.  The modules'
objects live as long as the process anyway; frozen, the collection after a run only looks at what the runs
themselves made (well under 1 ms), and still frees their cycles.  (The second freeze may also freeze the
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
LATER = (
    "scipy.optimize",  # the landmarks' root finder (the gate, curves, slopes), not the first page's
    "torch",
    "gelu_core.lab",
    "gelu_core.frameworks",
    "gelu_core.tensor_io",
    "gelu_core.weights",
    "gelu_core.gradients",
    "gelu_core.training",
)

QUIET_S = 2.0  # seconds with no script run before LATER is imported in the background (a first page's drawing)

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
    """Around every script run (app.py): ``warm()`` first, and the run counted, so that ``LATER`` waits for quiet."""
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


def wait_quiet(quiet_s: float = QUIET_S) -> None:
    """Return once no script has run for ``quiet_s`` seconds."""
    with _runs:
        while True:
            left = quiet_s - (time.monotonic() - _quiet_since)
            if _running == 0 and left <= 0:
                return
            _runs.wait(timeout=max(left, 0.05) if _running == 0 else None)


def warm_all() -> None:
    """``warm()``, then, once the server is quiet, ``LATER`` (torch and what is built on it); say so in the log."""
    warm()
    if _done.is_set():
        return
    wait_quiet()
    _import(LATER)
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
