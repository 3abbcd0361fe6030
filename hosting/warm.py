"""Heavy imports, once per server process, one after another, before any page code runs.

Several sessions arriving together used to import pandas, plotly and torch lazily in parallel threads.
Some libraries peek into ``sys.modules`` instead of importing (Plotly reads ``sys.modules["pandas"]``,
SciPy's array-API helpers ``sys.modules["torch"]``), so a session could meet a module that another
session's thread had only half imported: ``partially initialized module 'pandas' has no attribute
'Series'``.  Here every heavy module is imported by one thread, in a fixed order; ``warm()`` returns only
when all of them are complete, and every script run calls it before anything else (app.py's first line).

Before torch is imported, its threads are set for the whole process (every script thread runs torch on its
own OpenMP team): one per CPU the process may really use, its affinity set lowered by a cgroup CPU quota.  A
container that sees 16 cores but may use 1 would otherwise run 16 threads on one core.

The server starts ``warm()`` in the background at start-up (``hosting.lifespan``), so the imports overlap
the browser loading Streamlit's frontend; a session that arrives earlier waits for them.  Without a server
(AppTest, a script), the first call does the imports itself.

Then ``gc.freeze()``: Streamlit runs a full garbage collection after every script run
(``runner.postScriptGC``), holding the GIL, and with torch, pandas and Plotly loaded that walks ~280,000
objects, about 110 ms on this machine, during which no other session's message goes out.  The objects of
the imported modules live as long as the process anyway; frozen, the collection after a run only looks at
what the runs themselves made (well under 1 ms), and still frees their cycles.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
import threading
import time

# In import order: each entry's dependencies come before it.
HEAVY = (
    "numpy",
    "scipy.special",
    "scipy.optimize",
    "pandas",
    "pyarrow",
    "PIL.Image",
    "plotly.graph_objects",
    "plotly.io",
    "torch",
    "gelu_core.lab",
    "gelu_core.frameworks",
    "gelu_core.tensor_io",
    "gelu_core.weights",
)

_lock = threading.Lock()
_done = threading.Event()
seconds: dict[str, float] = {}  # how long each import took, for benchmarks/bench_startup.py


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


def warm() -> None:
    """Import every module in HEAVY (once per process); a second caller waits for the first to finish."""
    if _done.is_set():
        return
    with _lock:
        if _done.is_set():
            return
        if "torch" not in sys.modules:
            set_threads()
        for name in HEAVY:
            start = time.perf_counter()
            importlib.import_module(name)
            seconds[name] = time.perf_counter() - start
        gc.collect()
        gc.freeze()  # the modules' own objects out of every later collection's way (see above)
        _done.set()
        parts = ", ".join(f"{name} {took:.2f}" for name, took in seconds.items() if took >= 0.05)
        print(f"GELU Explorer: imports ready in {sum(seconds.values()):.2f} s ({parts})", file=sys.stderr, flush=True)


def ready() -> bool:
    """Whether the heavy imports are complete (a script run would not wait)."""
    return _done.is_set()


def start() -> threading.Thread:
    """Begin warm() on a background thread (at server start-up); script runs still call warm() to wait."""
    thread = threading.Thread(target=warm, name="gelu-warm-imports", daemon=True)
    thread.start()
    return thread
