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
  the hash of its bytes), computed once and bounded as ``gelu_core.shared.SharedResults`` keeps them, each
  remembering who asked for it (``owner``, a session id); ``SharedRuns.forget_owners`` drops, in every
  instance, the results that only departed owners used (the server's janitor calls it when students leave).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Hashable
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from gelu_core import budget
from gelu_core.messages import N_, Message, Refusal
from gelu_core.shared import SharedResults, Waiting


def _usable_cpus() -> int:
    from hosting.warm import usable_cpus  # no torch: warm imports it only when asked

    return usable_cpus()


class Busy(Refusal, RuntimeError):
    """The slot stayed taken longer than the caller would wait; raised with a sentence fit to show (a template and
    its parameters, ``gelu_core.messages``: ``ui.format.refusal`` writes it in the reader's language)."""


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
                    on_wait(Message(N_("{run} ({ahead} more before yours)"), run=now[0], ahead=ahead) if ahead
                            else now[0], time.monotonic() - start)
                if now is not None and timeout is not None and now[1] >= timeout:
                    raise Busy(N_("The lab is busy with other students' runs: {run}. Try again in a minute."),
                               run=now[0])
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


# The lab's forward and backward runs (hosting.lab_runs; races train apart, in hosting.races, so neither waits
# for the other): two at a time per server process at most, one per core it may use.  A run alone gets every
# core (torch threads); two at once get one each, which on two cores finishes both sooner than one after the
# other on two threads (torch's threads spin while they wait for each other, the more so on a busy machine) and
# never lets a class's runs stack more than two peaks (an (8, 1024, 768) batch forwards and backwards peaks near
# 300 MB).  Small runs take milliseconds in line.
RUN_SLOT = RunSlot(lanes=min(budget.RUN_LANES, _usable_cpus()), cores=_usable_cpus())  # the budget holds RUN_LANES


class SharedRuns(SharedResults):
    """``SharedResults`` that remember who asked for each result (``owner``, a session id): the janitor drops the
    results that only departed owners used (``forget_owners``), in every instance."""

    def __init__(self, max_entries: int, entry_bytes: int | None = None):
        super().__init__(max_entries, entry_bytes)
        self._owners: dict[Hashable, set[str]] = {}

    @classmethod
    def forget_owners(cls, gone: set[str]) -> int:
        """Drop, in every instance, the results whose owners have all gone; how many were dropped."""
        dropped = 0
        for shared in cls.every():
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

    def get(self, key: Hashable, compute: Callable[[], Any], *, owner: str | None = None, **how) -> Any:
        """``SharedResults.get``, remembering ``owner`` as one who used the result."""
        result = super().get(key, compute, **how)
        self._own(key, owner)
        return result

    def put(self, key: Hashable, result: Any, *, owner: str | None = None) -> None:
        super().put(key, result)
        self._own(key, owner)

    def _own(self, key: Hashable, owner: str | None) -> None:
        if owner is not None:
            with self._guard:
                if key in self._results:
                    self._owners.setdefault(key, set()).add(owner)

    def _dropped(self, key: Hashable) -> None:
        self._owners.pop(key, None)
