"""Results by key, each computed once however many threads ask for it at the same time, a bounded number kept.

The app's one cache.  ``memo`` keeps a pure function's results by its arguments (the pages' figures, tables and
landmarks, shared by every session of the process); ``hosting.runs.SharedRuns`` builds on ``SharedResults`` for the
lab's and the race's runs.  Every instance takes its bound from the memory budget (``SharedResults.within``: the
largest entry and a share of ``gelu_core.budget.CACHE_BYTES``), so memory stays bounded whatever is asked.  The
pages use no ``st.cache_*`` and no ``functools.lru_cache`` (tests/test_memo.py).
"""

from __future__ import annotations

import functools
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from gelu_core import budget
from gelu_core.messages import N_, Message

Waiting = Callable[[str, float], None]  # (what is being computed, a str or a Message; seconds waited so far)


@dataclass
class _Pending:
    done: threading.Event
    what: str
    result: Any = None
    error: BaseException | None = None


class SharedResults:
    """Results by key: each computed once, however many ask for it at the same time; at most ``max_entries`` kept
    (least recently used first out).  A failure is handed to everyone who waited for that key, and not kept."""

    _instances: weakref.WeakSet[SharedResults] = weakref.WeakSet()

    def __init__(self, max_entries: int, entry_bytes: int | None = None):
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self.max_entries = max_entries
        self.entry_bytes = entry_bytes  # the largest entry, when the bound came from the budget (``within``)
        self._results: OrderedDict[Hashable, Any] = OrderedDict()
        self._pending: dict[Hashable, _Pending] = {}
        self._guard = threading.Lock()
        SharedResults._instances.add(self)

    @classmethod
    def every(cls) -> list:
        """Every live instance of this class (subclasses' included): what the process keeps, cache by cache."""
        return [shared for shared in list(SharedResults._instances) if isinstance(shared, cls)]

    @classmethod
    def within(cls, entry_bytes: int, share: float):
        """As many entries of at most ``entry_bytes`` as ``share`` of the budget's cache bytes holds (at least 1)."""
        return cls(budget.cache_entries(entry_bytes, share), entry_bytes)

    def __len__(self) -> int:
        return len(self._results)

    def get(self, key: Hashable, compute: Callable[[], Any], *, what: str = "the same run",
            on_wait: Waiting | None = None, poll: float = 0.25) -> Any:
        """The result for ``key``: kept, being computed by someone else (waited for), or computed now.

        If the one computing it is interrupted (stopped, not failed: an exception that is no ``Exception``, such
        as a page's rerun), a waiter takes over and computes it itself.
        """
        while True:
            with self._guard:
                if key in self._results:
                    self._results.move_to_end(key)
                    return self._results[key]
                pending = self._pending.get(key)
                mine = pending is None
                if mine:
                    pending = self._pending[key] = _Pending(threading.Event(), what)
            if mine:
                return self._compute(key, compute, pending)
            start = time.monotonic()
            while not pending.done.wait(poll):
                if on_wait is not None:
                    on_wait(Message(N_("{run} (the same run as yours: it will be shared)"), run=pending.what),
                            time.monotonic() - start)
            if pending.error is None:
                return pending.result
            if isinstance(pending.error, Exception):
                raise pending.error
            # interrupted, not failed: try again (and compute it here if nobody else has started)

    def _compute(self, key: Hashable, compute: Callable[[], Any], pending: _Pending) -> Any:
        try:
            pending.result = compute()
        except BaseException as err:
            pending.error = err
            raise
        else:
            self.put(key, pending.result)
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

    def put(self, key: Hashable, result: Any) -> None:
        """Keep ``result`` for ``key``, dropping the least recently used beyond ``max_entries``."""
        with self._guard:
            self._results[key] = result
            self._results.move_to_end(key)
            while len(self._results) > self.max_entries:
                oldest, _ = self._results.popitem(last=False)
                self._dropped(oldest)

    def clear(self) -> None:
        with self._guard:
            for key in self._results:
                self._dropped(key)
            self._results.clear()

    def _dropped(self, key: Hashable) -> None:
        """Called, with the lock held, for each key that leaves the cache (a subclass forgets what it kept of it)."""


def memo(entry_bytes: int, share: float = 0.005):
    """Decorator: keep a function's results by its (hashable) arguments in a ``SharedResults.within(entry_bytes,
    share)``, shared by every session and thread (one computes, the others wait for it).  ``entry_bytes`` is
    the largest result it keeps (tests/test_memo.py measures each); the function's ``.runs`` is its cache."""

    def wrap(function: Callable) -> Callable:
        runs = SharedResults.within(entry_bytes, share)
        what = function.__qualname__

        @functools.wraps(function)
        def call(*args, **kwargs):
            key = (args, tuple(sorted(kwargs.items()))) if kwargs else args
            return runs.get(key, lambda: function(*args, **kwargs), what=what)

        call.runs = runs
        return call

    return wrap
