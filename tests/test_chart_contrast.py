"""Every mark that carries a chart's meaning stands out from the chart's background, in both themes.

WCAG 2.2's 1.4.11 (non-text contrast) asks 3:1 for a graphical object needed to understand the content: each
curve, marker, filled area (the bell's shaded area is the gate's meaning) and line shape of every figure the pages
draw.  References: the figures' own colours (``to_plotly_json``), a translucent colour composited over the
background the way the browser paints it (alpha blending in sRGB), WCAG's relative luminance and contrast
(tests/test_ui_theme.py, checked there on WCAG's own examples), the backgrounds of .streamlit/config.toml.  The
checker is tried on a figure made in the test with a pale fill, so it can fail.
"""

from __future__ import annotations

import re

import numpy as np
import plotly.graph_objects as go
import pytest

from tests.test_ui_theme import BACKGROUNDS, MIN_CONTRAST, _every_figure, contrast

_RGBA = re.compile(r"rgba?\(\s*([\d.]+)\s*,\s*([\d.]+)\s*,\s*([\d.]+)\s*(?:,\s*([\d.]+)\s*)?\)")


def painted(colour: str, background: str) -> str:
    """The colour the browser paints: ``colour`` (#rrggbb, rgb() or rgba()) over ``background``, as #rrggbb.

    >>> painted("rgba(0, 0, 0, 0.5)", "#ffffff"), painted("#1b2430", "#0e1117")
    ('#808080', '#1b2430')
    """
    if colour.startswith("#"):
        return colour.lower()
    r, g, b, a = _RGBA.fullmatch(colour.strip()).groups()
    alpha = 1.0 if a is None else float(a)
    back = [int(background[i:i + 2], 16) for i in (1, 3, 5)]
    mixed = [round(alpha * float(c) + (1 - alpha) * k) for c, k in zip((r, g, b), back, strict=True)]
    return "#" + "".join(f"{v:02x}" for v in mixed)


def marks(fig) -> list[tuple[str, str]]:
    """(what, colour) of every mark a figure draws that a reader needs: lines, markers, filled areas, line shapes."""
    found = []
    for trace in fig.to_plotly_json()["data"]:
        name, kind = trace.get("name") or trace.get("meta") or "trace", trace.get("type", "scatter")
        if kind in ("heatmap", "contour"):  # colour scales: the regions' meaning is told by their borders and legend
            continue
        mode = trace.get("mode", "lines" if kind == "scatter" else "")
        line, marker = trace.get("line") or {}, trace.get("marker") or {}
        if kind == "bar":
            found.append((f"{name} bars", marker.get("color")))
            continue
        if "lines" in mode and line.get("width", 2) != 0 and line.get("color"):
            found.append((f"{name} line", line["color"]))
        if "markers" in mode and isinstance(marker.get("color"), str):
            found.append((f"{name} markers", marker["color"]))
        if trace.get("fill") in ("tozeroy", "tonexty", "toself", "tozerox") and trace.get("fillcolor"):
            found.append((f"{name} area", trace["fillcolor"]))
    for shape in fig.to_plotly_json()["layout"].get("shapes", []):
        colour = (shape.get("line") or {}).get("color")
        if colour and (shape.get("line") or {}).get("width", 2) != 0:
            found.append(("a line on the chart", colour))
    return [(what, colour) for what, colour in found if colour]


def faint(fig, background: str) -> list[str]:
    """The marks under 3:1 against ``background``, in words."""
    return [f"{what} {colour} on {background}: {contrast(painted(colour, background), background):.2f}:1"
            for what, colour in marks(fig) if contrast(painted(colour, background), background) < MIN_CONTRAST]


def _lab_and_race_figures():
    """The lab's and the race's figures, as their pages build them, on a small seeded run of each."""
    from gelu_core import FeedForward
    from gelu_core.lab import as_tokens, demo_input, run_lab
    from gelu_core.training import RaceConfig, train
    from ui import ffn, gradients, training

    lab = run_lab(FeedForward(16, seed=0), as_tokens(demo_input(16, 0), 16), "gelu_tanh", "relu", backward=True)
    a, b = lab.a, lab.b
    yield "lab-hidden", ffn.hidden_histogram(lab.hidden_hist.edges, lab.hidden_hist.counts, lab.negative_share,
                                             zeroed_by="relu")
    yield "lab-output", ffn.post_histogram(a.post_hist.edges, a.post_hist.counts, b.post_hist.counts, key_a=a.name,
                                           label_a=a.label, key_b=b.name, label_b=b.label)
    profiles = [(r.label, r.name, ffn.token_profile(r.token_norms.numpy())) for r in ffn.runs(lab)]
    means = [(label, key, profile.mean) for label, key, profile in profiles]
    yield "lab-tokens", ffn.token_norms_figure(profiles[0][2].position, means, bucket=profiles[0][2].bucket,
                                               tokens=3, batch=2)
    yield "lab-gradients", gradients.gradient_histogram(lab.backward)
    race = train(RaceConfig(steps=100, width=4, depth=2))
    yield "race-regions", training.decision_regions_figure(race)
    yield "race-loss", training.loss_figure(race)
    yield "race-dead", training.dead_units_figure(race)


FIGURES = list(_every_figure())


def test_the_checker_finds_a_pale_fill():
    x = np.linspace(0, 1, 5)
    pale = go.Figure(go.Scatter(x=x, y=x, fill="tozeroy", fillcolor="rgba(11, 107, 203, 0.2)", line=dict(width=0)))
    assert faint(pale, BACKGROUNDS["dark"]) and faint(pale, BACKGROUNDS["light"])
    solid = go.Figure(go.Scatter(x=x, y=x, mode="lines", line=dict(color="#0b6bcb")))
    assert faint(solid, BACKGROUNDS["light"]) == []


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("name, fig", FIGURES, ids=[name for name, _ in FIGURES])
def test_every_mark_of_the_explorer_charts_reaches_3_to_1(name, fig, theme):
    assert faint(fig, BACKGROUNDS[theme]) == []


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_every_mark_of_the_lab_and_race_charts_reaches_3_to_1(theme):
    found = {name: faint(fig, BACKGROUNDS[theme]) for name, fig in _lab_and_race_figures()}
    assert len(found) == 7 and all(v == [] for v in found.values()), found
