"""AppTest of the Training race page: the race trained, its figures and its verdict read from the numbers.

References: gelu_core.training.train run here on the same config (bit-identical: same seed, same data, same
weights), its verdict and dead-unit counts; the URL sets every control.
"""

from __future__ import annotations

import numpy as np
import pytest

from gelu_core import training
from tests.conftest import chart_spec, open_page
from ui import training as view

PAGE = "pages/training.py"
SMALL = dict(training_steps="200", training_width="4", training_depth="2")  # a race of a fraction of a second


def answer(form: str = "tanh") -> tuple[str, str]:
    """The question's right choice and the sentence its reveal must quote: the default race trained here by
    gelu_core.training.train, and its verdict."""
    reference = training.train(training.RaceConfig())
    verdict = training.verdict(reference)
    return ({"relu": "ReLU", None: "they do about as well"}.get(verdict.leader, "GELU"),
            view.verdict_text(reference, verdict))


def verdict_line(at) -> str:
    """The race's verdict as the page writes it, after its label (the whole race: the replay may be mid-way)."""
    lines = [m.value for m in at.markdown if m.value.startswith("**The whole race") and "test accuracy" in m.value]
    assert len(lines) == 1, [m.value for m in at.markdown]
    return lines[0].strip("*").split(" steps: ", 1)[1]


def test_the_default_race_and_its_verdict(app):
    at = open_page(app, PAGE)
    assert not at.exception and not at.error
    reference = training.train(training.RaceConfig())
    assert verdict_line(at) == view.verdict_text(reference, training.verdict(reference))
    notes = " ".join(c.value for c in at.caption)
    for run in reference.runs:
        dead = int(np.asarray(run.dead_units)[-1].sum())
        assert f"{run.label} ended with {dead} of 24 hidden units dead" in notes
    assert len(at.get("plotly_chart")) == 3


@pytest.mark.parametrize("task, a, b", [("circle", "relu", "gelu"), ("xor", "leaky_relu", "gelu_tanh")])
def test_the_url_sets_the_race(app, task, a, b):
    from gelu_core import ACTIVATIONS

    at = open_page(app, PAGE, training_task=task, training_a=ACTIVATIONS[a].short, training_b=ACTIVATIONS[b].short,
                   training_seed="3", **SMALL)
    config = training.RaceConfig(task=task, activations=(a, b), width=4, depth=2, steps=200, seed=3)
    reference = training.train(config)
    assert verdict_line(at) == view.verdict_text(reference, training.verdict(reference))
    loss = chart_spec(at, 1)
    tests = [t for t in loss["data"] if t["meta"].startswith("test:")]
    assert [t["meta"] for t in tests] == [f"test:{a}", f"test:{b}"]
    assert tests[0]["y"] == pytest.approx(reference.runs[0].test_loss.tolist(), rel=1e-12)


def test_the_preset_where_relu_units_die(app):
    """circle, learning rate 0.1, seed 1: ReLU's last layer dies and it scores about a coin toss."""
    at = open_page(app, PAGE, **SMALL)
    at.button(key="training_preset_dying").click().run()
    assert at.segmented_control(key="training_task").value == "circle"
    assert at.segmented_control(key="training_lr").value == 0.1 and at.number_input(key="training_seed").value == 1
    reference = training.train(training.RaceConfig(task="circle", learning_rate=0.1, seed=1, width=4, depth=2,
                                                   steps=200))
    assert verdict_line(at) == view.verdict_text(reference, training.verdict(reference))


def test_the_same_race_is_trained_once_for_the_whole_class(app, monkeypatch):
    """Reference: a count of the races actually trained; a second student opening the same link gets the first
    student's result."""
    from hosting import races as lane

    trained = []
    real = lane.races

    def counted(configs, *args, **kwargs):
        trained.extend(configs)
        yield from real(configs, *args, **kwargs)

    monkeypatch.setattr(lane, "races", counted)
    lane.LANE.clear()
    first = open_page(app, PAGE, training_seed="11", **SMALL)
    from streamlit.testing.v1 import AppTest

    from tests.conftest import ROOT

    second = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    second = open_page(second, PAGE, training_seed="11", **SMALL)
    assert len(trained) == 1 and verdict_line(first) == verdict_line(second)


def test_live_drawings_that_come_out_equal_do_not_collide(app, monkeypatch):
    """A collapsed network draws the same flat regions at several snapshots (the widest race's link did, on
    some CPUs): each live drawing has its own key, so equal figures cannot raise StreamlitDuplicateElementId.
    Reference: the snapshot drawn four times over, as distinct objects, by a race replaced in the test."""
    import dataclasses

    from hosting import races as lane

    def repeating(configs, yield_every=None):
        last = training.train_many(configs)
        for step in (0, 1, 2, configs[0].steps):  # four snapshots with equal figures, the last one done
            yield [dataclasses.replace(s, step=step) for s in last]

    monkeypatch.setattr(lane, "races", repeating)
    lane.LANE.clear()
    at = open_page(app, PAGE, **{**SMALL, "training_seed": "12"})
    lane.LANE.clear()
    assert not at.exception, at.exception
    assert len(at.get("plotly_chart")) == 3


def test_a_race_stopped_before_its_first_report_says_no_other_races_step(app):
    """Stop pressed before the race's first progress: the page's last snapshot is the race before (200 steps), whose
    step is not this race's (it said "Stopped at step 200 of 300")."""
    at = open_page(app, PAGE, **SMALL)
    assert at.session_state["training_last"].config.steps == 200
    at.session_state["training_stopped"] = training.RaceConfig(width=4, depth=2, steps=300)
    at.slider(key="training_steps").set_value(300).run()
    assert not at.exception and not at.error
    assert [w.value for w in at.warning] == ["Stopped."]
    assert len(at.get("plotly_chart")) == 0
