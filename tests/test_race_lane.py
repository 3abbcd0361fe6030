"""hosting.races: a class's races trained in one lane, the waiting ones stacked, each shared by key.

References: gelu_core.training.train on the same config in the test (bit for bit, tolerance 0); counts of the
stacks the lane trains, taken in the test; the lab's own run_lab timed against a race still training.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from gelu_core import training
from hosting import races as lane_module
from hosting.races import RaceLane

SMALL = dict(width=6, depth=2, steps=120, n_train=100, n_test=60, record_every=10)
LONG = dict(steps=3000, width=32, depth=6)  # seconds of training: long enough to do something beside it


def same_curves(a: training.RaceSnapshot, b: training.RaceSnapshot) -> bool:
    fields = ("steps", "train_loss", "test_loss", "test_accuracy", "dead_units", "grid_probability")
    return a.step == b.step and all(np.array_equal(getattr(x, f), getattr(y, f))
                                    for x, y in zip(a.runs, b.runs, strict=True) for f in fields)


def test_races_that_wait_are_trained_as_one_stack_and_each_gets_its_own(monkeypatch):
    stacks, real = [], lane_module.races
    gate = threading.Event()

    def counted(configs, *args, **kwargs):
        stacks.append(len(configs))
        gate.wait(5)  # the first stack waits, so that the others queue up behind it
        yield from real(configs, *args, **kwargs)

    monkeypatch.setattr(lane_module, "races", counted)
    lane = RaceLane(max_kept=16)
    configs = [training.RaceConfig(**SMALL, seed=seed) for seed in range(6)]
    jobs = [lane.submit(configs[0])]
    while not stacks:
        time.sleep(0.01)
    jobs += [lane.submit(c) for c in configs[1:]]
    assert lane.ahead(jobs[3]) == (3, pytest.approx(3 * 120 * 0.0005))  # one training, two queued before it
    gate.set()
    results = [job.result(timeout=60) for job in jobs]
    assert stacks == [1, 5]  # the five that waited: one stack
    for config, result in zip(configs, results, strict=True):
        assert result.config == config and same_curves(result, training.train(config))
    assert lane.ahead(jobs[3]) == (0, 0.0)


def test_the_same_race_is_one_job_and_kept_within_the_bound(monkeypatch):
    trained, real = [], lane_module.races

    def counted(configs, *args, **kwargs):
        trained.extend(configs)
        yield from real(configs, *args, **kwargs)

    monkeypatch.setattr(lane_module, "races", counted)
    lane = RaceLane(max_kept=2)
    config = training.RaceConfig(**SMALL)
    first, second = lane.submit(config), lane.submit(config)
    assert first is second
    assert lane.train(config, timeout=60) is first.result()
    assert trained == [config]
    for seed in (1, 2):
        lane.train(training.RaceConfig(**SMALL, seed=seed), timeout=60)
    assert lane._kept.peek(config) is None and lane._kept.peek(training.RaceConfig(**SMALL, seed=2)) is not None


def test_snapshots_come_live_and_the_last_is_done():
    lane = RaceLane(max_kept=2, frames=4)
    job = lane.submit(training.RaceConfig(**SMALL, seed=7))
    seen, steps = 0, []
    while True:
        seen, latest = job.wait(seen, timeout=5)
        steps.append(latest.step)
        if latest.done:
            break
    assert steps[-1] == 120 and len(steps) >= 2 and steps == sorted(steps)


def test_a_failed_race_reaches_whoever_waits(monkeypatch):
    def failing(configs, *args, **kwargs):
        raise RuntimeError("broken")
        yield  # noqa: RET503 (a generator)

    monkeypatch.setattr(lane_module, "races", failing)
    lane = RaceLane(max_kept=2)
    with pytest.raises(RuntimeError, match="broken"):
        lane.train(training.RaceConfig(**SMALL), timeout=10)
    assert lane._kept.peek(training.RaceConfig(**SMALL)) is None


def test_a_lab_move_completes_while_a_race_trains():
    """The lab's run (through its own run slot) does not wait for the race lane: it finishes while a race of
    several seconds is still training.  Reference: the race's job, not done when the lab's result is back."""
    from hosting import lab_runs as lab

    lane = RaceLane(max_kept=2)
    job = lane.submit(training.RaceConfig(**LONG, seed=3))
    while job.frames < 2:  # training, past its first snapshot
        job.wait(job.frames, timeout=10)
    block = lab.shared_seeded_block(64, 0)
    x = lab.demo_tokens(block, 0, 2, 16)
    started = time.monotonic()
    result = lab.shared_run_lab(block, x, "gelu_tanh", "relu")
    seconds = time.monotonic() - started
    assert result.a.output.shape == (2, 16, 64)
    assert not job.done, "the race finished before the lab's move: no overlap tested"
    assert seconds < 5
    job.result(timeout=120)
