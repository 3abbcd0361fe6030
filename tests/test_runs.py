"""A class at the lab: heavy runs one at a time, identical runs computed once and shared, memory bounded.

References: call counts and overlap counts taken in the test itself (threads started together behind a
barrier, each compute lingering long enough for any overlap to show); the lab's own result compared with a
direct run_lab on the same block and input (bit for bit).
"""

from __future__ import annotations

import threading
import time

import pytest
import torch

from hosting import lab_runs as lab
from hosting.runs import Busy, RunSlot, SharedRuns


def together(n: int, call) -> list:
    """Run ``call(i)`` in n threads released at the same instant; their results (or exceptions) in order."""
    barrier = threading.Barrier(n)
    out: list = [None] * n

    def worker(i):
        barrier.wait()
        try:
            out[i] = call(i)
        except BaseException as err:  # noqa: BLE001  handed back to the test
            out[i] = err

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def test_identical_runs_are_computed_once_and_shared():
    shared = SharedRuns(max_entries=4)
    calls = []

    def compute():
        calls.append(1)
        time.sleep(0.1)
        return object()

    results = together(30, lambda i: shared.get(("seeded", 768, 0), compute))
    assert len(calls) == 1
    assert all(r is results[0] for r in results)  # one object, handed to all thirty


def test_different_runs_each_computed_and_kept_within_the_bound():
    shared = SharedRuns(max_entries=3)
    calls = []
    for key in range(5):
        shared.get(key, lambda key=key: calls.append(key) or key)
    assert calls == [0, 1, 2, 3, 4] and len(shared) == 3
    shared.get(4, lambda: calls.append("again"))  # kept: not computed again
    shared.get(0, lambda: calls.append("again") or 0)  # dropped first (least recently used): computed again
    assert calls[-1] == "again" and len(shared) == 3


def test_a_failure_reaches_everyone_who_waited_and_is_not_kept():
    shared = SharedRuns(max_entries=2)

    def fail():
        time.sleep(0.1)
        raise ValueError("no")

    results = together(5, lambda i: shared.get("k", fail))
    assert all(isinstance(r, ValueError) for r in results)
    assert shared.get("k", lambda: "fine") == "fine"


def test_a_waiter_takes_over_when_the_first_is_interrupted():
    """A student who stops the page (Streamlit's stop is no Exception) does not fail the others: one of them
    computes it instead."""

    class Stopped(BaseException):
        pass

    shared = SharedRuns(max_entries=2)
    started = threading.Event()

    def interrupted():
        started.set()
        time.sleep(0.1)
        raise Stopped

    first = threading.Thread(target=lambda: pytest.raises(Stopped, shared.get, "k", interrupted))
    first.start()
    started.wait()
    assert shared.get("k", lambda: "computed by the second") == "computed by the second"
    first.join()


def test_the_slot_runs_one_at_a_time_and_tells_who_waits_what_runs(monkeypatch):
    from types import SimpleNamespace

    from tests.conftest import most_at_once

    slot = RunSlot(poll=0.02)
    heard: list[tuple[str, float]] = []
    work = SimpleNamespace(run=lambda: None)

    def run():
        with slot.hold(f"run {threading.get_ident()}", on_wait=lambda what, s: heard.append((what, s))):
            work.run()

    assert most_at_once(monkeypatch, work, "run", run) == 1
    assert heard and all(what.startswith("run ") and s >= 0 for what, s in heard)
    assert slot.running() is None


def test_a_waiter_gives_up_with_a_sentence_after_its_timeout():
    slot = RunSlot(poll=0.02)
    started = threading.Event()

    def long_run():
        with slot.hold("(8, 1024, 768) through a block of d_model 768"):
            started.set()
            time.sleep(0.5)

    t = threading.Thread(target=long_run)
    t.start()
    started.wait()
    with pytest.raises(Busy, match=r"busy with other students' runs: \(8, 1024, 768\)"):
        with slot.hold("mine", timeout=0.1):
            pass
    t.join()


@pytest.mark.slow  # six runs of 0.8 s one after another, on the clock
def test_the_slot_serves_in_order_and_refuses_nobody_while_the_line_moves():
    """Five runs of 0.8 s queue behind a first one, each with a timeout of 3 s: the last waits over 3.2 s, past
    its timeout, and is not refused, because no run in front held the slot that long; they run in the order they
    asked (reference: the order recorded here, and each waiter's own account of the runs ahead)."""
    slot = RunSlot(poll=0.01)
    order, heard = [], {}
    asked, all_in = threading.Event(), threading.Event()

    def first():
        with slot.hold("run 0"):
            asked.set()
            all_in.wait(10)
            time.sleep(0.02)  # every waiter has heard what runs
            order.append(0)

    def later(i):
        def run():
            with slot.hold(f"run {i}", on_wait=lambda what, s: heard.setdefault(i, what), timeout=3.0):
                time.sleep(0.8)
                order.append(i)
        return run

    threads = [threading.Thread(target=first)]
    threads[0].start()
    asked.wait()
    for i in range(1, 6):
        threads.append(threading.Thread(target=later(i)))
        threads[-1].start()
        while len(slot._line) < i:  # each in line before the next asks: the order they asked in is known
            time.sleep(0.001)
    all_in.set()
    start = time.monotonic()
    for t in threads:
        t.join()
    assert time.monotonic() - start >= 3.2
    assert order == [0, 1, 2, 3, 4, 5]
    assert heard[5].startswith("run 0") and heard[5].endswith("(4 more before yours)")
    assert heard[1] == "run 0"
    assert slot.running() is None and not slot._line


def test_two_lanes_run_two_at_once_never_three_and_split_the_cores(monkeypatch):
    """RUN_SLOT's shape (two lanes, two cores): six runs together overlap two at a time, never three (reference:
    the overlap counted by tests.conftest.most_at_once); a run alone gets both cores, one beside another gets one."""
    from types import SimpleNamespace

    from tests.conftest import most_at_once

    slot = RunSlot(poll=0.01, lanes=2, cores=2)
    shares = []
    work = SimpleNamespace(run=lambda: None)

    def run():
        with slot.hold("run") as cores:
            shares.append(cores)
            work.run()

    assert most_at_once(monkeypatch, work, "run", run, threads=6) == 2
    assert set(shares) <= {1, 2} and 1 in shares
    with slot.hold("alone") as cores:
        assert cores == 2


def test_a_run_under_way_is_told_its_share_as_others_start_and_end():
    """RunSlot.share: both cores for a run alone, one each while a second runs beside it, both again once that
    one ends (reference: the lanes held, counted in the test)."""
    slot = RunSlot(poll=0.01, lanes=2, cores=2)
    inside, leave = threading.Event(), threading.Event()

    def second():
        with slot.hold("second"):
            inside.set()
            assert leave.wait(30)

    with slot.hold("first") as cores:
        assert cores == slot.share() == 2
        other = threading.Thread(target=second)
        other.start()
        assert inside.wait(30)
        assert slot.share() == 1  # two lanes held
        leave.set()
        other.join(30)
        assert not other.is_alive() and slot.share() == 2  # alone again


def test_uploads_at_once_get_the_numbers_each_gets_alone():
    """Three different inputs through the lab's own lanes at the same moment, forwards and backwards: each result
    equals the one its input gets alone (reference: run_lab alone in this thread on two torch threads; rtol 1e-6,
    since a run beside another computes on one thread, whose matmul may sum in another order)."""
    lab.LAB_RESULTS.clear()
    block = lab.shared_seeded_block(32, 5)
    inputs = [lab.demo_tokens(block, seed, 4, 64) for seed in (11, 12, 13)]
    together_ = together(3, lambda i: lab.shared_run_lab(block, inputs[i], "gelu_tanh", "relu", backward=True))
    for tokens, got in zip(inputs, together_, strict=True):
        assert not isinstance(got, BaseException), got
        alone = lab._run_lab(block, tokens, "gelu_tanh", "relu", lab.HIST_BINS, backward=True)
        for name in ("a", "b"):
            torch.testing.assert_close(getattr(got, name).output, getattr(alone, name).output, rtol=1e-6, atol=1e-7)
            assert getattr(got, name).zeroed == getattr(alone, name).zeroed
            assert getattr(got.backward, name).zero_count == getattr(alone.backward, name).zero_count
            assert getattr(got.backward, name).fc_weight_grad_norm == pytest.approx(
                getattr(alone.backward, name).fc_weight_grad_norm, rel=1e-6)
        assert got.negative_count == alone.negative_count
        assert (got.hidden_hist.counts == alone.hidden_hist.counts).all()
    before = torch.get_num_threads()
    with lab.torch_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    lab.LAB_RESULTS.clear()


def test_a_waiter_who_leaves_the_line_lets_the_next_in():
    """A waiter interrupted while waiting (a page's rerun stops its script with an exception) leaves the line."""
    slot = RunSlot(poll=0.01)
    release = threading.Event()

    def holder():
        with slot.hold("long"):
            release.wait(5)

    t = threading.Thread(target=holder)
    t.start()
    while slot.running() is None:
        time.sleep(0.001)

    class Rerun(BaseException):
        pass

    def interrupted(what, seconds):
        raise Rerun

    with pytest.raises(Rerun):
        with slot.hold("gone", on_wait=interrupted):
            pass
    assert not slot._line
    release.set()
    t.join()
    with slot.hold("next", timeout=0.1):
        assert slot.running()[0] == "next"


def test_a_demo_input_is_drawn_only_when_its_run_is_computed(monkeypatch):
    """Each rerun of the lab makes a new demo input; one served from the results already computed is never drawn.
    Reference: draws counted here; the numbers against demo_input, drawn directly."""
    import gelu_core.lab as core

    lab.LAB_RESULTS.clear()
    block = lab.shared_seeded_block(16, 4)
    draws = []
    real = core._demo
    monkeypatch.setattr(core, "_demo", lambda *args: draws.append(args) or real(*args))
    tokens = lab.demo_tokens(block, 4, 2, 5)
    assert tokens.shape == (2, 5, 16) and not draws  # its shape is known before it is drawn
    first = lab.shared_run_lab(block, tokens, "gelu_tanh", "relu")
    again = lab.shared_run_lab(block, lab.demo_tokens(block, 4, 2, 5), "gelu_tanh", "relu")  # the next rerun
    assert again is first and len(draws) == 1
    assert torch.equal(tokens.x, core.demo_input(16, 4, 2, 5)) and len(draws) == 2  # demo_input draws its own
    lab.LAB_RESULTS.clear()


def test_the_lab_shares_a_run_between_students(monkeypatch):
    """Ten students press the same seeded demo at once: the block runs once; each gets the result run_lab gives."""
    lab.LAB_RESULTS.clear()
    block = lab.shared_seeded_block(16, 3)
    x = lab.demo_tokens(block, 3, 2, 5)
    runs = []
    real = lab._run_lab

    def counted(*args, **kwargs):
        runs.append(1)
        time.sleep(0.05)
        return real(*args, **kwargs)

    monkeypatch.setattr(lab, "_run_lab", counted)
    results = together(10, lambda i: lab.shared_run_lab(block, x, "gelu_tanh", "relu"))
    assert len(runs) == 1 and all(r is results[0] for r in results)
    direct = real(block, x, "gelu_tanh", "relu", lab.HIST_BINS)
    # The shared run ran in a run lane, on that lane's torch threads; the direct one on this thread's: a matmul's
    # sums may be split differently, so float32's last bits may differ (rtol 1e-6, a few ulps).
    torch.testing.assert_close(results[0].a.output, direct.a.output, rtol=1e-6, atol=0)
    assert results[0].b.zeroed == direct.b.zeroed
    lab.LAB_RESULTS.clear()
