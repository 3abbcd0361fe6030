"""Figure builders of the training race (ui.training), without Streamlit.

Each figure is validated by plotly itself (``go.Figure(fig.to_dict())``, since the builders skip plotly's
validation for speed) and read the way a student would: which runs, in which house colour, carrying exactly
the numbers gelu_core.training computed (tolerance 0: the same float64 values; the decision regions carry
P(class 1) rounded to whole percent, so within 0.5 percentage points).
"""

from __future__ import annotations

import base64

import numpy as np
import plotly.graph_objects as go
import pytest

from gelu_core.training import GRID_POINTS, RaceConfig, train, verdict
from tests.test_training import finished
from ui.theme import COLORS
from ui.training import (
    CLASS_COLORS,
    dead_units_figure,
    decision_regions_figure,
    loss_figure,
    probability_percent,
    verdict_text,
)

CONFIG = RaceConfig(task="circle", width=8, depth=3, steps=200, n_train=100, n_test=60, optimizer="sgd",
                    learning_rate=2.0, seed=1)  # plain SGD with a large step: some ReLU units die


@pytest.fixture(scope="module")
def snapshot():
    return train(CONFIG)


def valid(fig) -> dict:
    return go.Figure(fig.to_dict()).to_dict()


def arr(v) -> np.ndarray:
    """A trace's array as float64: plotly 6 stores numpy arrays as base64 typed arrays ({dtype, bdata, shape})."""
    if isinstance(v, dict) and "bdata" in v:
        flat = np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"])).astype(np.float64)
        return flat.reshape([int(n) for n in str(v["shape"]).split(",")]) if "shape" in v else flat
    return np.asarray(v, dtype=np.float64)


def by_meta(fig, meta: str) -> dict:
    found = [t for t in valid(fig)["data"] if t.get("meta") == meta]
    assert len(found) == 1, f"expected one trace with meta {meta!r}"
    return found[0]


def test_loss_figure_carries_both_runs_on_a_log_axis(snapshot):
    fig = loss_figure(snapshot)
    layout = valid(fig)["layout"]
    assert layout["yaxis"]["type"] == "log" and layout["xaxis"]["range"] == [0, CONFIG.steps]
    for run in snapshot.runs:
        test, training = by_meta(fig, f"test:{run.name}"), by_meta(fig, f"train:{run.name}")
        assert test["line"]["color"] == COLORS[run.name] == training["line"]["color"]
        np.testing.assert_array_equal(arr(test["x"]), run.steps)
        np.testing.assert_array_equal(arr(test["y"]), run.test_loss)
        np.testing.assert_array_equal(arr(training["y"]), run.train_loss)
        assert run.label in test["name"] and "test" in test["name"] and "training" in training["name"]


def test_the_loss_axis_labels_one_two_five_per_decade_and_spans_the_losses(snapshot):
    """Reference: the snapshot's own losses. Plotly's default labels every minor tick of a short log axis."""
    ticks = np.asarray(valid(loss_figure(snapshot))["layout"]["yaxis"]["tickvals"])
    losses = np.concatenate([np.r_[run.test_loss, run.train_loss] for run in snapshot.runs])
    mantissas = {round(t / 10 ** np.floor(np.log10(t)), 9) for t in ticks}
    assert mantissas <= {1.0, 2.0, 5.0}, mantissas
    assert np.all(np.diff(ticks) > 0) and ticks[0] <= losses.min() and ticks[-1] >= losses.max()
    assert ticks[1] > losses.min() and ticks[-2] < losses.max()  # no label beyond the first past each end


def test_dead_units_figure_sums_layers_and_names_them(snapshot):
    fig = dead_units_figure(snapshot)
    relu = by_meta(fig, "dead:relu")
    dead = snapshot.runs[0].dead_units  # (records, depth)
    assert dead[-1].sum() > 0  # this race kills some ReLU units: the chart has something to show
    np.testing.assert_array_equal(arr(relu["y"]), dead.sum(axis=1))
    assert relu["customdata"][-1] == " · ".join(str(v) for v in dead[-1])
    np.testing.assert_array_equal(arr(by_meta(fig, "dead:gelu")["y"]), snapshot.runs[1].dead_units.sum(axis=1))
    layout = valid(fig)["layout"]
    assert layout["yaxis"]["title"]["text"] == f"dead units (of {CONFIG.width * CONFIG.depth})"


def test_decision_regions_side_by_side_with_points_and_boundaries(snapshot):
    fig = decision_regions_figure(snapshot)
    figure = valid(fig)
    for i, run in enumerate(snapshot.runs):
        axis = "x" if i == 0 else "x2"
        region = by_meta(fig, f"region:{run.name}")
        assert region["xaxis"] == axis and region["type"] == "heatmap"
        z = arr(region["z"])
        assert z.shape == (GRID_POINTS, GRID_POINTS)
        assert np.abs(z - 100 * run.grid_probability).max() <= 0.5 + 1e-4  # whole percent
        np.testing.assert_allclose(arr(region["x"]), snapshot.grid)
        boundary = by_meta(fig, f"boundary:{run.name}")
        assert boundary["line"]["color"] == COLORS[run.name]
        assert boundary["contours"]["start"] == 50 == boundary["contours"]["end"]
    data = snapshot.dataset
    points = [t for t in figure["data"] if str(t.get("meta", "")).startswith("points:")]
    assert len(points) == 4  # two classes on each side
    for trace in points:
        label = int(trace["meta"].split(":")[1])
        want = data.train_points[data.train_labels == label]
        np.testing.assert_allclose(np.stack([arr(trace["x"]), arr(trace["y"])], axis=1), want)
        assert trace["marker"]["color"] == CLASS_COLORS[label]
    assert not set(CLASS_COLORS) & set(COLORS.values())  # a class colour is never a run's colour
    titles = [a["text"] for a in figure["layout"]["annotations"]]
    assert [run.label in t and f"{100 * run.final_test_accuracy:.1f}%" in t
            for run, t in zip(snapshot.runs, titles, strict=True)] == [True, True]
    assert figure["layout"]["yaxis2"]["scaleanchor"] == "x2"  # square cells on each side


def test_decision_regions_travel_light(snapshot):
    """A 60 x 60 grid per run as uint8 percent: the whole figure stays under 60 kB of JSON."""
    assert len(decision_regions_figure(snapshot).to_json()) < 60_000


def test_probability_percent_rounds_to_whole_percent():
    got = probability_percent(np.array([[0.0, 0.004, 0.494, 0.5, 0.506, 1.0]], dtype=np.float32))
    assert got.dtype == np.uint8 and got.tolist() == [[0, 0, 49, 50, 51, 100]]


def test_the_verdict_sentence_names_the_leader_past_the_margin():
    """Reference: hand-made records (tests.test_training.finished) and the sentence written out here."""
    v = finished((0.80, 0.95), (0.45, 0.12))
    assert verdict_text(v, verdict(v)) == "GELU (exact) ahead: 95.0% vs 80.0% test accuracy (test loss 0.120 vs 0.450)."
    v = finished((0.93, 0.90), (0.2, 0.3))
    assert verdict_text(v, verdict(v)).startswith("ReLU ahead: 93.0% vs 90.0%")


def test_the_verdict_sentence_calls_a_small_gap_about_the_same():
    v = finished((0.955, 0.97))  # 1.5 points: inside the margin
    assert verdict_text(v, verdict(v)).startswith(
        "About the same: test accuracy 95.5% (ReLU) vs 97.0% (GELU (exact)), within 2 points")
