"""The race's film (hosting.races) and what the player is handed (ui.race_player).

References: gelu_core.training.race run in the test with the film's spacing (its snapshots' decision grids in
whole percent, as ui.training.probability_percent draws them: exact, tolerance 0); the figures the page draws
(ui.training), read for their trace order and strings; zlib and base64 from the standard library to read the
film back.
"""

from __future__ import annotations

import base64
import zlib

import numpy as np

from gelu_core import training
from hosting.races import RaceLane, film_every
from ui import race_player
from ui import training as view

SMALL = dict(width=6, depth=2, steps=120, n_train=100, n_test=60, record_every=10)


def film_of(config: training.RaceConfig):
    lane = RaceLane(max_kept=2)
    job = lane.submit(config)
    return job.result(timeout=60), job.film


def test_the_film_is_gelu_cores_snapshots_in_whole_percent():
    config = training.RaceConfig(**{**SMALL, "steps": 1000, "width": 4})  # 1,000 steps: a frame every 20
    final, film = film_of(config)
    every = film_every(config)
    snapshots = list(training.race(config, yield_every=every))
    assert every == 20 and [step for step, _ in film] == [s.step for s in snapshots] == list(range(0, 1001, 20))
    for (step, frame), snapshot in zip(film, snapshots, strict=True):
        want = np.stack([view.probability_percent(run.grid_probability) for run in snapshot.runs])
        assert frame.dtype == np.uint8 and np.array_equal(frame, want), step
    assert np.array_equal(film[-1][1], np.stack([view.probability_percent(r.grid_probability) for r in final.runs]))


def test_the_player_table_holds_the_film_and_the_figures_own_traces():
    config = training.RaceConfig(**SMALL, seed=4)
    final, film = film_of(config)
    regions, loss = view.decision_regions_figure(final), view.loss_figure(final)
    table = race_player.film_table(final, film, regions, loss, regions_key="r", loss_key="l")
    grids = np.frombuffer(zlib.decompress(base64.b64decode(table["film"])), dtype=np.uint8)
    assert np.array_equal(grids.reshape(len(film), 2, 60, 60), np.stack([frame for _, frame in film]))
    assert table["steps"] == [step for step, _ in film] == list(range(0, 121, 10))
    metas = [t.meta for t in regions.data]
    assert [[metas[i] for i in pair] for pair in table["heat"]] == [["region:relu", "boundary:relu"],
                                                                      ["region:gelu", "boundary:gelu"]]
    assert [loss.data[i].meta for i in table["curves"]["indices"]] == ["test:relu", "train:relu", "test:gelu",
                                                                       "train:gelu"]
    run = final.runs[1]
    assert table["curves"]["y"][2] == run.test_loss.tolist() and table["curves"]["x"][2] == run.steps.tolist()
    # frame k shows the records up to its step, and each run's test accuracy there, as the title writes it
    for k, step in enumerate(table["steps"]):
        assert final.runs[0].steps[table["records"][k] - 1] == step
        for i, r in enumerate(final.runs):
            assert table["titles"][k][i] == f"{100 * r.test_accuracy[table['records'][k] - 1]:.1f}% test"
    assert table["titles"][-1] == [view.accuracy_line(r) for r in final.runs]
    # the last frame: the chart drawn
    assert regions.layout.annotations[1].text.endswith(f"<br>{table['titles'][-1][1]}<br>accuracy")
    assert table["texts"][-1] == "Step 120 of 120" and table["axis"] == final.grid.astype(float).tolist()


def test_the_colour_table_is_the_regions_scale_at_every_percent():
    """Reference: the figure's own colour scale, its stops read here and each channel interpolated linearly."""
    scale = view.decision_regions_figure(training.train(training.RaceConfig(**SMALL))).data[0].colorscale
    colours = view.region_colors()
    assert len(colours) == 101 and colours[50] == [0, 0, 0, 0]
    for (at, text), percent in zip(scale, (0, 50, 100), strict=True):
        r, g, b, a = (float(v) for v in text[5:-1].split(","))
        assert at * 100 == percent and colours[percent] == [round(r), round(g), round(b), round(255 * a)]
    r, g, b = (int(view.CLASS_COLORS[0][i:i + 2], 16) for i in (1, 3, 5))  # class 0's colour, half way to none
    assert colours[25] == [round(r / 2), round(g / 2), round(b / 2), round(255 * 0.55 / 2)]
