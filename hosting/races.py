"""The race lane: students' training races trained on one worker thread, the races waiting stacked together.

A race is small (two networks of a few hundred weights), so its cost is per operation: thirty races trained
one after another cost thirty times the operations of thirty races trained as one stack
(``gelu_core.training.races``).  So the lane trains, each time it is free, every race waiting in its queue at
once (those of one shape in one stack), and hands each student the snapshots of their own race as they come.

* The lane is its own: it holds neither the lab's run slot nor any lock of the page server, so a lab run never
  waits behind a race, nor a race behind a lab run.  torch lets go of the GIL inside each operation, so the
  server's other script runs go on between them.
* Races are shared by key (the whole ``RaceConfig``): a race already queued, training or finished is the same
  job for everyone who asks for it.  Finished races are kept in a ``hosting.runs.SharedRuns``, at most
  ``max_kept`` (least recently asked for first out); their number comes from the memory budget
  (``gelu_core.budget.cache_entries``).
* Each race comes with its film: both runs' decision regions at about ``FRAMES`` evenly spaced steps, in whole
  percent (``RaceJob.film``), for the page to play in the browser at frame rate (``ui.race_player``) instead of
  redrawing its charts from the server at every snapshot.
* Whoever waits can ask how many races train or wait before theirs and about how long that takes
  (``RaceLane.ahead``), from the time per race and step the lane last measured.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import numpy as np

from gelu_core import budget
from gelu_core.training import RaceConfig, RaceSnapshot, races, stack_shape
from hosting.runs import SharedRuns

FRAMES = 50  # frames of a race's film at most: its decision regions every 2 % of its steps (at least a record apart)
MAX_STACK = 64  # races trained as one stack at most
RACE_BYTES = 2**20 + 2**19  # a finished race kept, at its largest: curves (5,000 steps recorded each step, about
# 1 MB) and its film (51 frames of two 60 x 60 grids in whole percent, 367 kB)


@dataclass(eq=False)
class RaceJob:
    """One race in the lane: queued, training or finished; its latest snapshot and how many came so far."""

    config: RaceConfig
    started: float | None = None
    finished: float | None = None
    latest: RaceSnapshot | None = None
    frames: int = 0  # snapshots published so far
    film: list = field(default_factory=list)  # (step, (2, G, G) uint8: both runs' P(class 1) in whole percent)
    error: BaseException | None = None
    changed: threading.Condition = field(default_factory=threading.Condition)

    @property
    def done(self) -> bool:
        return self.finished is not None

    def publish(self, snapshot: RaceSnapshot | None = None, error: BaseException | None = None) -> None:
        with self.changed:
            if snapshot is not None:
                self.latest, self.frames = snapshot, self.frames + 1
            if error is not None:
                self.error = error
            if error is not None or (snapshot is not None and snapshot.done):
                self.finished = time.monotonic()
            self.changed.notify_all()

    def wait(self, seen: int, timeout: float) -> tuple[int, RaceSnapshot | None]:
        """(frames so far, latest snapshot) once a frame newer than ``seen`` came, the race ended, or ``timeout``
        seconds passed.  Raises the race's error if it failed."""
        with self.changed:
            self.changed.wait_for(lambda: self.frames > seen or self.done, timeout)
            if self.error is not None:
                raise self.error
            return self.frames, self.latest

    def result(self, timeout: float | None = None) -> RaceSnapshot:
        """The final snapshot, waiting for it (at most ``timeout`` seconds: TimeoutError after)."""
        with self.changed:
            if not self.changed.wait_for(lambda: self.done, timeout):
                raise TimeoutError("the race has not finished")
            if self.error is not None:
                raise self.error
            return self.latest


class RaceLane:
    """A queue of races and one thread that trains what waits in it, stacked; finished races kept by key."""

    def __init__(self, max_kept: int, max_stack: int = MAX_STACK, frames: int = FRAMES):
        self.max_kept, self.max_stack, self.frames = max_kept, max_stack, frames
        self._guard = threading.Lock()
        self._work = threading.Condition(self._guard)
        self._queue: list[RaceJob] = []
        self._training: list[RaceJob] = []
        self._jobs: dict[RaceConfig, RaceJob] = {}  # queued or training
        self._kept = SharedRuns(max_kept, RACE_BYTES)  # finished: RaceConfig -> RaceJob
        self._seconds_per_step = 0.0005  # per race and step, measured on every batch trained; a guess until the first
        self._thread: threading.Thread | None = None

    # ---------------------------------------------------------------- what the pages call

    def submit(self, config: RaceConfig) -> RaceJob:
        """The job of ``config``'s race: finished and kept, queued or training (shared), or queued now."""
        with self._guard:
            job = self._kept.peek(config)
            if job is not None:
                return job
            job = self._jobs.get(config)
            if job is None:
                job = self._jobs[config] = RaceJob(config)
                self._queue.append(job)
                self._start()
                self._work.notify()
            return job

    def train(self, config: RaceConfig, timeout: float | None = None) -> RaceSnapshot:
        """The final snapshot of ``config``'s race, trained in the lane (or kept from before)."""
        return self.submit(config).result(timeout)

    def ahead(self, job: RaceJob) -> tuple[int, float]:
        """(races training or queued before ``job``'s, about how many seconds until ``job`` starts)."""
        with self._guard:
            if job.started is not None or job.done:
                return 0, 0.0
            queued = self._queue.index(job) if job in self._queue else 0
            ahead = self._training + self._queue[:queued]
            return len(ahead), sum(j.config.steps for j in ahead) * self._seconds_per_step

    def clear(self) -> None:
        """Forget the finished races (queued and training ones go on)."""
        with self._guard:
            self._kept.clear()

    # ---------------------------------------------------------------- the worker

    def _start(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._serve, name="race-lane", daemon=True)
            self._thread.start()

    def _serve(self) -> None:
        while True:
            with self._guard:
                self._work.wait_for(lambda: bool(self._queue))
                self._training, self._queue = self._queue[:self.max_stack], self._queue[self.max_stack:]
                batch = list(self._training)
            started = time.monotonic()
            groups: dict[tuple, list[RaceJob]] = {}
            for job in batch:
                groups.setdefault(stack_shape(job.config), []).append(job)
            for jobs in groups.values():
                self._train(jobs)
            with self._guard:
                steps = sum(job.config.steps for job in batch)
                self._seconds_per_step = (time.monotonic() - started) / steps
                self._training = []

    def _train(self, jobs: list[RaceJob]) -> None:
        now = time.monotonic()
        for job in jobs:
            job.started = now
        every = film_every(jobs[0].config, self.frames)
        finals: list = [None] * len(jobs)
        try:
            for snapshots in races([job.config for job in jobs], yield_every=every):
                for i, (job, snapshot) in enumerate(zip(jobs, snapshots, strict=True)):
                    job.film.append((snapshot.step, grid_percent(snapshot)))
                    if snapshot.done:
                        finals[i] = snapshot  # published once kept, so that a finished race is found kept
                    else:
                        job.publish(snapshot)
        except Exception as err:  # noqa: BLE001  handed to everyone who waits for these races
            finals = [None] * len(jobs)
            for job in jobs:
                job.publish(error=err)
        with self._guard:
            for job, final in zip(jobs, finals, strict=True):
                self._jobs.pop(job.config, None)
                if final is not None:
                    self._kept.put(job.config, job)
                    job.latest = final
        for job, final in zip(jobs, finals, strict=True):
            if final is not None:
                job.publish(final)


def film_every(config: RaceConfig, frames: int = FRAMES) -> int:
    """Steps between two frames of a race's film: about ``frames`` frames, at least one record apart.

    >>> film_every(RaceConfig()), film_every(RaceConfig(steps=120, record_every=10))
    (20, 10)
    """
    return max(config.record_every, config.steps // frames)


def grid_percent(snapshot: RaceSnapshot) -> np.ndarray:
    """Both runs' P(class 1) on the decision grid in whole percent, (2, G, G) uint8: what the page draws
    (``ui.training.probability_percent``), 7,200 bytes a frame."""
    return np.rint(100.0 * np.stack([run.grid_probability for run in snapshot.runs]).astype(np.float64)
                   ).astype(np.uint8)


# The server's one lane: finished races kept within 5 % of the cache budget (about 49 at 1.5 GiB).
LANE = RaceLane(max_kept=budget.cache_entries(RACE_BYTES, share=0.05))
