"""The race, played: the table of the film that moves the border and the loss in the browser at frame rate, as in
TensorFlow Playground.

A race trains in a fraction of a second (``hosting.races``), far faster than an eye follows, and redrawing its
charts from the server at every snapshot costs the server a figure per student per frame.  So the page draws
the finished race's charts once, and a custom component (draw/race_player.py, in the page, no iframe, sends
nothing back) plays the race's film over them, from the table built here: ``FPS`` frames a second, frame ``k``
showing both runs' decision regions and borders at the film's ``k``-th step (``hosting.races.RaceJob.film``:
gelu_core's snapshots in whole percent, as the chart draws them), the loss curves up to that step and each run's
test accuracy there.  The last frame is the chart as Python drew it.  Python formats every string; the browser
only picks a row.

With ``prefers-reduced-motion: reduce`` nothing plays: the finished race is shown as drawn, and "Replay the
training" plays it on request.  A tab plays a race once on its own (a rerun of the same race does not replay).
Pure: no Streamlit, no server.
"""

from __future__ import annotations

import base64
import zlib
from collections.abc import Sequence

import numpy as np

from ui.format import count
from ui.i18n import _

FPS = 15  # frames a second: a 51-frame film plays in 3.4 s


def _indices(figure, prefixes: Sequence[str]) -> list[list[int]]:
    """Per prefix, the indices of the figure's traces whose ``meta`` starts with it, in drawing order."""
    metas = [str(trace.meta or "") for trace in figure.data]
    return [[i for i, meta in enumerate(metas) if meta.startswith(prefix)] for prefix in prefixes]


def film_table(snapshot, film: Sequence[tuple[int, np.ndarray]], regions_figure, loss_figure, *,
               regions_key: str, loss_key: str, fps: int = FPS) -> dict:
    """What the player needs: the film (``(step, (2, G, G) uint8)`` per frame, the last one the finished race),
    the trace indices it moves in the two figures the page drew, and each frame's strings, from ``snapshot``
    (the finished race) and the figures themselves."""
    from ui.training import accuracy_line, region_colors

    steps = [int(step) for step, _ in film]
    grids = np.stack([np.asarray(frame, dtype=np.uint8) for _, frame in film])  # (frames, 2, G, G)
    record_steps = np.asarray(snapshot.runs[0].steps)
    records = [int(np.searchsorted(record_steps, step, side="right")) for step in steps]  # points up to the step
    titles = [[accuracy_line(run, k - 1) for run in snapshot.runs] for k in records]
    regions, boundaries = _indices(regions_figure, ("region:", "boundary:"))
    curves = [i for i, trace in enumerate(loss_figure.data) if str(trace.meta or "").split(":")[0] in ("test", "train")]
    columns = [column for run in snapshot.runs for column in (run.test_loss, run.train_loss)]  # the figure's order
    total = snapshot.config.steps
    return {
        "id": repr(snapshot.config), "regions": regions_key, "loss": loss_key, "fps": fps,
        "grid": int(grids.shape[-1]), "axis": np.asarray(snapshot.grid, dtype=np.float64).tolist(),
        "colors": region_colors(), "steps": steps, "records": records, "titles": titles,
        "texts": [_("Step {step} of {total}").format(step=count(step), total=count(total)) for step in steps],
        "replay": _("Replay the training"),  # the button's words
        "film": base64.b64encode(zlib.compress(grids.tobytes(), 6)).decode("ascii"),
        "heat": [[r, b] for r, b in zip(regions, boundaries, strict=True)],
        "curves": {"indices": curves,
                   "x": [record_steps.tolist()] * len(curves),
                   "y": [np.asarray(column, dtype=np.float64).tolist() for column in columns]},
    }
