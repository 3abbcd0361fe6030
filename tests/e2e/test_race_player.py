"""The race played in a real browser (ui/race_player.py): every frame of the film drawn in order, each one the
decision grids gelu_core computed at its step, then Plotly's own drawing of the finished race back; nothing
plays under prefers-reduced-motion until asked.

References: gelu_core.training.race run in the test on the page's config, with the film's spacing
(hosting.races.film_every), its snapshots' grids in whole percent (ui.training.probability_percent): compared
with what each drawn frame drew, exactly.  How fast the film plays is benchmarks/bench_race_live.py's.
"""

from __future__ import annotations

import numpy as np
import pytest

from gelu_core import training
from hosting.races import film_every
from ui import training as view

pytestmark = pytest.mark.e2e

QUERY = "training_steps=200&training_width=4&training_depth=2&training_seed={seed}"
CHECK_JS = "window.__geluRace = { played: {}, shown: [], ticks: [], check: true };"
STATE_JS = """() => {
  const r = document.querySelector('.st-key-chart_training-regions .js-plotly-plot');
  return { shown: window.__geluRace.shown.map((e) => [e.k, e.step, e.z]),
           ours: r.querySelectorAll('path.gelu-race-border').length,
           titles: [...r.querySelectorAll('.annotation-text tspan.line')].map((t) => t.textContent) };
}"""


def film(seed: int) -> tuple[training.RaceSnapshot, list[tuple[int, np.ndarray]]]:
    config = training.RaceConfig(width=4, depth=2, steps=200, seed=seed)
    snapshots = list(training.race(config, yield_every=film_every(config)))
    return snapshots[-1], [(s.step, np.stack([view.probability_percent(r.grid_probability) for r in s.runs]))
                           for s in snapshots]


def test_every_frame_drawn_is_gelu_cores_snapshot(new_tab):
    tab = new_tab()
    tab.page.add_init_script(CHECK_JS)
    tab.open("training?" + QUERY.format(seed=31))
    final, frames = film(31)
    tab.page.wait_for_function("n => window.__geluRace.shown.length >= n && !document.querySelector("
                               "'.st-key-chart_training-regions path.gelu-race-border')", arg=len(frames),
                               timeout=30_000)
    state = tab.page.evaluate(STATE_JS)
    assert [k for k, _, _ in state["shown"]] == list(range(len(frames)))  # every frame, once, in order
    for (k, step, drew), (want_step, want) in zip(state["shown"], frames, strict=True):
        assert step == want_step
        for run in (0, 1):
            got = np.array([int(v) for v in drew[run].split(",")], dtype=np.uint8).reshape(want[run].shape)
            assert np.array_equal(got, want[run]), (k, run)
    # the film over: the chart as the page drew it (the finished race's titles), our border path gone
    assert state["ours"] == 0
    assert state["titles"] == [final.runs[0].label, view.accuracy_line(final.runs[0]), "accuracy",
                               final.runs[1].label, view.accuracy_line(final.runs[1]), "accuracy"]
    tab.assert_clean()


def test_reduced_motion_shows_the_finished_race_and_plays_on_request(new_tab):
    tab = new_tab()
    tab.page.emulate_media(reduced_motion="reduce")
    tab.page.add_init_script(CHECK_JS)
    tab.open("training?" + QUERY.format(seed=32))
    tab.page.wait_for_timeout(1500)
    assert tab.page.evaluate(STATE_JS)["shown"] == []  # nothing moved by itself
    tab.page.get_by_role("button", name="Replay the training").click()
    _, frames = film(32)
    tab.page.wait_for_function("n => window.__geluRace.shown.length >= n", arg=len(frames), timeout=30_000)
    tab.assert_clean()
