"""Heavy runs in a class: a few at a time per process, identical ones computed once and shared.

Thirty students pressing the same seeded demo must not cost thirty runs, and many big runs at once only stack
their memory.  So:

* ``RunSlot``: at most ``lanes`` heavy runs at a time (``RUN_SLOT``: two), in the order they came, each told
  its share of the cores (``share``, read again between a run's steps).  Whoever waits is told, every
  ``poll`` seconds, what is running, for how long and how many runs are ahead (``on_wait``); ``Busy``, a
  sentence fit to show, only if a run under way has held its lane for ``timeout`` seconds.  A run holds a
  lane only while it computes, and every run's size is capped before it starts
  (``gelu_core.lab.check_run_size``), so no run holds it without bound.
* ``SharedRuns``: results by key (the run's whole identity: weights, input, activations; an uploaded file by
  the hash of its bytes).  A key already computed is returned at once; a key being computed is waited for,
  not computed again; at most ``max_entries`` results are kept (least recently used first out), so memory is
  bounded.  A failure is handed to everyone who waited for that key, and not kept.  Each result remembers
  who asked for it (``owner``, a session id); ``SharedRuns.forget_owners`` drops, in every instance, the
  results that only departed owners used (the server's janitor calls it when students leave).
* ``memo``: a function's results by its arguments, in a ``SharedRuns`` (the pages' figures, tables and
  landmarks).  ``SharedRuns.within`` and ``memo`` take their bound from the memory budget: the largest entry
  (``entry_bytes``) and a share of ``gelu_core.budget.CACHE_BYTES``.  This is the app's one cache: the pages
  use no ``st.cache_*`` and no ``functools.lru_cache``, and what they keep is shared by every session of the
  process (tests/test_memo.py).
"""

from __future__ import annotations

import functools
import threading
import time
import weakref
from collections import OrderedDict, deque
from collections.abc import Callable, Hashable
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from gelu_core import budget


def _usable_cpus() -> int:
    from hosting.warm import usable_cpus  # no torch: warm imports it only when asked

    return usable_cpus()


Waiting = Callable[[str, float], None]  # (what is running, seconds waited so far)


class Busy(RuntimeError):
    """The slot stayed taken longer than the caller would wait; the message is fit to show."""


@dataclass
class _Running:
    what: str
    since: float


class RunSlot:
    """At most ``lanes`` heavy runs at a time per process, first come first served, saying what runs to whoever
    waits; each run is handed its share of ``cores`` (``hold`` yields it: the cores over the runs under way)."""

    def __init__(self, poll: float = 0.25, lanes: int = 1, cores: int = 1):
        self._turn = threading.Condition()
        self._line: deque[object] = deque()  # the waiting runs, first in line first
        self._running: list[_Running] = []
        self.poll, self.lanes, self.cores = poll, max(1, lanes), max(1, cores)

    def share(self) -> int:
        """The torch threads each run under way should use now: the cores over the runs under way (at least 1).
        A run reads it again between its steps, so it widens when another ends and narrows when one starts."""
        return max(1, self.cores // max(1, len(self._running)))

    def running(self) -> tuple[str, float] | None:
        """(what has run longest of the runs under way, seconds it has run), or None when no run is under way."""
        now = list(self._running)
        return None if not now else (now[0].what, time.monotonic() - now[0].since)

    @contextmanager
    def hold(self, what: str, *, on_wait: Waiting | None = None, timeout: float | None = None):
        """Hold a lane for a run described as ``what``; wait in line (reporting to ``on_wait``) while all are taken.
        Yields the torch threads this run should use: its share of the cores when it starts (at least 1).

        Runs take the lanes in the order they asked for them, so a run waits only for the runs ahead of it, and a
        student is never refused while the line moves: ``Busy`` is raised only when the run holding a lane the
        longest has held it for ``timeout`` seconds (every run's size is capped, so that is a run far slower than
        any should be).
        """
        me, start = object(), time.monotonic()
        with self._turn:
            self._line.append(me)
        try:
            while True:
                with self._turn:
                    if len(self._running) < self.lanes and self._line[0] is me:
                        self._line.popleft()
                        mine = _Running(what, time.monotonic())
                        self._running.append(mine)
                        share = self.share()
                        break
                    self._turn.wait(self.poll)
                    ahead = self._line.index(me)
                now = self.running()
                if now is not None and on_wait is not None:
                    more = f" ({ahead} more before yours)" if ahead else ""
                    on_wait(now[0] + more, time.monotonic() - start)
                if now is not None and timeout is not None and now[1] >= timeout:
                    raise Busy(f"The lab is busy with other students' runs: {now[0]}. Try again in a minute.")
        except BaseException:
            with self._turn:
                self._line.remove(me)
                self._turn.notify_all()
            raise
        try:
            yield share
        finally:
            with self._turn:
                self._running.remove(mine)
                self._turn.notify_all()


@dataclass
class _Pending:
    done: threading.Event
    what: str
    result: Any = None
    error: BaseException | None = None


# The lab's forward and backward runs (hosting.lab_runs; races train apart, in hosting.races, so neither waits
# for the other): two at a time per server process at most, one per core it may use.  A run alone gets every
# core (torch threads); two at once get one each, which on two cores finishes both sooner than one after the
# other on two threads (torch's threads spin while they wait for each other, the more so on a busy machine) and
# never lets a class's runs stack more than two peaks (an (8, 1024, 768) batch forwards and backwards peaks near
# 300 MB).  Small runs take milliseconds in line.
RUN_SLOT = RunSlot(lanes=min(budget.RUN_LANES, _usable_cpus()), cores=_usable_cpus())  # the budget holds RUN_LANES


class SharedRuns:
    """Results by key: each computed once, however many ask for it at the same time; at most ``max_entries`` kept."""

    _instances: weakref.WeakSet[SharedRuns] = weakref.WeakSet()

    def __init__(self, max_entries: int, entry_bytes: int | None = None):
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self.max_entries = max_entries
        self.entry_bytes = entry_bytes  # the largest entry, when the bound came from the budget (``within``)
        self._results: OrderedDict[Hashable, Any] = OrderedDict()
        self._owners: dict[Hashable, set[str]] = {}
        self._pending: dict[Hashable, _Pending] = {}
        self._guard = threading.Lock()
        SharedRuns._instances.add(self)

    @classmethod
    def within(cls, entry_bytes: int, share: float) -> SharedRuns:
        """As many entries of at most ``entry_bytes`` as ``share`` of the budget's cache bytes holds (at least 1)."""
        return cls(budget.cache_entries(entry_bytes, share), entry_bytes)

    @classmethod
    def forget_owners(cls, gone: set[str]) -> int:
        """Drop, in every instance, the results whose owners have all gone; how many were dropped."""
        dropped = 0
        for shared in list(cls._instances):
            with shared._guard:
                for key in list(shared._results):
                    owners = shared._owners.get(key)
                    if owners and not owners - gone:
                        del shared._results[key]
                        del shared._owners[key]
                        dropped += 1
                    elif owners:
                        owners -= gone
        return dropped

    def _own(self, key: Hashable, owner: str | None) -> None:
        if owner is not None:
            self._owners.setdefault(key, set()).add(owner)

    def __len__(self) -> int:
        return len(self._results)

    def get(self, key: Hashable, compute: Callable[[], Any], *, what: str = "the same run",
            on_wait: Waiting | None = None, poll: float = 0.25, owner: str | None = None) -> Any:
        """The result for ``key``: kept, being computed by someone else (waited for), or computed now.

        If the one computing it is interrupted (stopped, not failed: an exception that is no ``Exception``, such
        as a page's rerun), a waiter takes over and computes it itself.
        """
        while True:
            with self._guard:
                if key in self._results:
                    self._results.move_to_end(key)
                    self._own(key, owner)
                    return self._results[key]
                pending = self._pending.get(key)
                mine = pending is None
                if mine:
                    pending = self._pending[key] = _Pending(threading.Event(), what)
            if mine:
                return self._compute(key, compute, pending, owner)
            start = time.monotonic()
            while not pending.done.wait(poll):
                if on_wait is not None:
                    on_wait(f"{pending.what} (the same run as yours: it will be shared)", time.monotonic() - start)
            if pending.error is None:
                with self._guard:
                    if key in self._results:
                        self._own(key, owner)
                return pending.result
            if isinstance(pending.error, Exception):
                raise pending.error
            # interrupted, not failed: try again (and compute it here if nobody else has started)

    def _compute(self, key: Hashable, compute: Callable[[], Any], pending: _Pending, owner: str | None) -> Any:
        try:
            pending.result = compute()
        except BaseException as err:
            pending.error = err
            raise
        else:
            self.put(key, pending.result, owner=owner)
            return pending.result
        finally:
            with self._guard:
                self._pending.pop(key, None)
            pending.done.set()

    def peek(self, key: Hashable, default: Any = None) -> Any:
        """The result kept for ``key`` (counted as used: the last to be dropped), or ``default``; never computes
        nor waits."""
        with self._guard:
            if key not in self._results:
                return default
            self._results.move_to_end(key)
            return self._results[key]

    def put(self, key: Hashable, result: Any, *, owner: str | None = None) -> None:
        """Keep ``result`` for ``key``, dropping the least recently used beyond ``max_entries``."""
        with self._guard:
            self._results[key] = result
            self._results.move_to_end(key)
            self._own(key, owner)
            while len(self._results) > self.max_entries:
                oldest, _ = self._results.popitem(last=False)
                self._owners.pop(oldest, None)

    def clear(self) -> None:
        with self._guard:
            self._results.clear()
            self._owners.clear()


def memo(entry_bytes: int, share: float = 0.005):
    """Decorator: keep a function's results by its (hashable) arguments in a ``SharedRuns.within(entry_bytes,
    share)``, shared by every session and thread (one computes, the others wait for it).  ``entry_bytes`` is
    the largest result it keeps (tests/test_memo.py measures each); the function's ``.runs`` is its cache."""

    def wrap(function: Callable) -> Callable:
        runs = SharedRuns.within(entry_bytes, share)
        what = function.__qualname__

        @functools.wraps(function)
        def call(*args, **kwargs):
            key = (args, tuple(sorted(kwargs.items()))) if kwargs else args
            return runs.get(key, lambda: function(*args, **kwargs), what=what)

        call.runs = runs
        return call

    return wrap
