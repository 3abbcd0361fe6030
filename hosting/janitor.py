"""Give back what a session held once its student has left.

Streamlit keeps a disconnected session (its state, its uploaded files, the callables behind its download
buttons, and through them the last run's tensors) for ``server.disconnectedSessionTTL`` seconds in case the
browser reconnects, and drops its files only when some later session happens to disconnect.  A class that
leaves together would leave its uploads in memory.  Every ``PERIOD`` seconds the janitor looks at which
sessions still have a websocket; a session gone for longer than ``GRACE`` seconds is closed, its uploaded
files dropped, and the app's shared results (``hosting.runs.SharedRuns``) drop the entries that only
departed sessions used.  A student who comes back later starts a fresh session and re-uploads.

Garbage in cycles (a run's page module and its functions, and whatever its globals held) is collected by
``Collector``, at most once a ``COLLECT_PERIOD`` after script runs have ended, instead of by Streamlit after
every run (``runner.postScriptGC = false`` in .streamlit/config.toml).  A full collection walks every object
the sessions hold and holds the GIL meanwhile, so one after each of a class's runs takes a share of the script
threads' time that grows with the class (``python benchmarks/bench_class.py --race`` measures a class racing).
Once a second, a run's cycles wait at most about a second.

Freed memory then goes back to the system: glibc's malloc keeps freed blocks for reuse (and after a large
block is freed it raises its mmap threshold, so later arrays of a few MB come from its heaps, not from
mmap); ``release_memory`` runs a collection and ``malloc_trim``.  Elsewhere than glibc it only collects.
``tune_allocator`` fixes the mmap threshold at start-up instead (16 MiB): a whole run's tensors (an upload, h,
the outputs) come from mmap and go back when freed, while the lab's row-chunk temporaries (up to 2**20 values,
8 MiB in float64) are reused from the heap.  Below that size every chunk temporary would be a fresh mapping whose
pages the kernel faults in and zeroes anew, several times the page faults and system CPU of a run.
"""

from __future__ import annotations

import asyncio
import gc
import os
import time

from hosting import internals
from hosting.internals import release_memory
from hosting.runs import SharedRuns

PERIOD = 5.0
COLLECT_PERIOD = 1.0  # seconds between the Collector's looks
GRACE = float(os.environ.get("GELU_SESSION_GRACE_S", "30"))  # seconds; a tab's reload reconnects well within
MMAP_THRESHOLD = 16 << 20  # twice the lab's largest row-chunk temporary (gelu_core.lab._CHUNK float64s: 8 MiB)


def tune_allocator(mmap_threshold: int = MMAP_THRESHOLD) -> bool:
    """Blocks of ``mmap_threshold`` bytes and more always come from mmap, and go back to the system when freed
    (a fixed threshold also stops glibc from raising it); smaller ones come from the heap, whose free top glibc
    still gives back at once (its trim threshold stays at 128 KiB).  True where glibc took it."""
    return internals.set_mmap_threshold(mmap_threshold)


class Collector:
    """A full garbage collection once a period after script runs have ended (``hosting.warm.finished_runs``),
    and once more on the look after (a run's page module is let go just after its count is taken)."""

    def __init__(self, runs=None):
        from hosting import warm

        self.runs = runs or warm.finished_runs
        self.seen = self.runs()
        self.again = False

    def tick(self) -> bool:
        """One look: True where it collected."""
        now = self.runs()
        due = now != self.seen or self.again
        self.again, self.seen = now != self.seen, now
        if due:
            gc.collect()
        return due

    async def run(self, period: float | None = None) -> None:
        while True:
            await asyncio.sleep(COLLECT_PERIOD if period is None else period)
            self.tick()


class Janitor:
    """Remembers when each session was last seen connected; sweeps what departed sessions held."""

    def __init__(self, grace: float = GRACE):
        self.grace = grace
        self.last_seen: dict[str, float] = {}
        self.trim_again = False  # a departed session's run may still be ending: what it frees comes after the sweep

    def sweep(self, runtime, now: float | None = None) -> list[str]:
        """One pass: the ids of the sessions whose files and shared results were given back."""
        now = time.monotonic() if now is None else now
        active = internals.active_session_ids(runtime)
        for session_id in active:
            self.last_seen[session_id] = now
        storage = internals.uploads_by_session(runtime)
        known = set(self.last_seen) | set(storage)
        gone = [s for s in known if s not in active and now - self.last_seen.setdefault(s, now) >= self.grace]
        for session_id in gone:
            internals.close_session(runtime, session_id)
            runtime.uploaded_file_mgr.remove_session_files(session_id)
            self.last_seen.pop(session_id, None)
        if gone:
            SharedRuns.forget_owners(set(gone))
        if gone or self.trim_again:  # and once more on the pass after, for what a run still under way freed since
            release_memory()
        self.trim_again = bool(gone)
        return gone

    async def run(self, period: float = PERIOD) -> None:
        from streamlit.runtime import Runtime

        while True:
            await asyncio.sleep(period)
            if Runtime.exists():
                self.sweep(Runtime.instance())
