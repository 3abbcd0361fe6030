"""The palette: every curve readable on both themes, told apart from every curve drawn beside it.

References: WCAG 2.x relative luminance and contrast ratio (checked on WCAG's own examples: black on white is
21:1, #767676 on white 4.54:1); CIEDE2000 colour difference (Sharma, Wu & Dalal 2005, checked on pairs of their
published test data to 1e-4).  Thresholds: 3:1 contrast, WCAG's minimum for graphics, against both backgrounds of
.streamlit/config.toml; a CIEDE2000 difference of at least MIN_DELTA_E = 15 between any two colours a chart can
draw together (about 2 is just noticeable side by side; thin lines need far more); curves within 2 px of each
other on the default chart differ in dash as well.  Colour-vision deficiency: Machado, Oliveira & Fernandes
(2009), severity 1.0, their matrices applied in linear RGB (checked: each keeps white white and grey grey to 1e-3,
and the pure red of a protanope darkens to a dull olive); ReLU stays at least MIN_DELTA_E_CVD from every GELU form
under each, and no two activations share a dash, so none is told from another by colour alone.
"""

from __future__ import annotations

import itertools
import math
import tomllib

import numpy as np
import pytest

import gelu_core
from gelu_core.analysis import approximation_error
from tests.conftest import ROOT
from ui import approximations, curves, derivative, gate, home, steps
from ui.theme import COLORS, DASHES, NEUTRAL

MIN_CONTRAST = 3.0
MIN_DELTA_E = 15.0
MIN_DELTA_E_CVD = 12.0  # ReLU against each GELU form under simulated protanopia, deuteranopia, tritanopia
MIN_TEXT_CONTRAST = 4.5  # WCAG AA for body text: the captions, after draw/a11y.css
CAPTION_SHARE = 0.72  # draw/a11y.css: a caption is 72 % text colour, 28 % background
THEMES = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())["theme"]
BACKGROUNDS = {name: THEMES[name]["backgroundColor"] for name in ("light", "dark")}  # #ffffff, #0e1117


# ----------------------------------------------------------------- references

def _linear(channel: int) -> float:
    c = channel / 255
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def _rgb(hex_color: str) -> tuple[int, int, int]:
    return tuple(int(hex_color[i:i + 2], 16) for i in (1, 3, 5))


def luminance(hex_color: str) -> float:
    """WCAG relative luminance of an sRGB colour."""
    r, g, b = (_linear(v) for v in _rgb(hex_color))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    """WCAG contrast ratio, 1 to 21."""
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def lab(hex_color: str) -> tuple[float, float, float]:
    """CIELAB (D65 white) of an sRGB colour."""
    r, g, b = (_linear(v) for v in _rgb(hex_color))
    xyz = (0.4124564 * r + 0.3575761 * g + 0.1804375 * b,
           0.2126729 * r + 0.7151522 * g + 0.0721750 * b,
           0.0193339 * r + 0.1191920 * g + 0.9503041 * b)
    white = (0.95047, 1.0, 1.08883)

    def f(t):
        return t ** (1 / 3) if t > (6 / 29) ** 3 else t / (3 * (6 / 29) ** 2) + 4 / 29

    fx, fy, fz = (f(v / w) for v, w in zip(xyz, white, strict=True))
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)


def delta_e_2000(lab1, lab2) -> float:
    """CIEDE2000 colour difference (kL = kC = kH = 1), as written out by Sharma, Wu & Dalal (2005)."""
    (l1, a1, b1), (l2, a2, b2) = lab1, lab2
    c_mean = (math.hypot(a1, b1) + math.hypot(a2, b2)) / 2
    g = 0.5 * (1 - math.sqrt(c_mean**7 / (c_mean**7 + 25**7)))
    a1, a2 = (1 + g) * a1, (1 + g) * a2
    c1, c2 = math.hypot(a1, b1), math.hypot(a2, b2)
    h1 = math.degrees(math.atan2(b1, a1)) % 360 if c1 else 0.0
    h2 = math.degrees(math.atan2(b2, a2)) % 360 if c2 else 0.0
    dh = 0.0 if c1 * c2 == 0 else (h2 - h1 + 180) % 360 - 180
    d_l, d_c, d_h = l2 - l1, c2 - c1, 2 * math.sqrt(c1 * c2) * math.sin(math.radians(dh / 2))
    l_mean, c_mean = (l1 + l2) / 2, (c1 + c2) / 2
    if c1 * c2 == 0:
        h_mean = h1 + h2
    elif abs(h1 - h2) <= 180:
        h_mean = (h1 + h2) / 2
    else:
        h_mean = (h1 + h2 + 360) / 2 if h1 + h2 < 360 else (h1 + h2 - 360) / 2
    t = (1 - 0.17 * math.cos(math.radians(h_mean - 30)) + 0.24 * math.cos(math.radians(2 * h_mean))
         + 0.32 * math.cos(math.radians(3 * h_mean + 6)) - 0.20 * math.cos(math.radians(4 * h_mean - 63)))
    s_l = 1 + 0.015 * (l_mean - 50) ** 2 / math.sqrt(20 + (l_mean - 50) ** 2)
    s_c, s_h = 1 + 0.045 * c_mean, 1 + 0.015 * c_mean * t
    r_t = (-2 * math.sqrt(c_mean**7 / (c_mean**7 + 25**7))
           * math.sin(math.radians(60 * math.exp(-(((h_mean - 275) / 25) ** 2)))))
    return math.sqrt((d_l / s_l) ** 2 + (d_c / s_c) ** 2 + (d_h / s_h) ** 2 + r_t * (d_c / s_c) * (d_h / s_h))


@pytest.mark.parametrize("lab1, lab2, expected", [  # Sharma, Wu & Dalal (2005), Table 1, pairs 1, 7, 17, 25, 34
    ((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485), 2.0425),
    ((50.0, 0.0, 0.0), (50.0, -1.0, 2.0), 2.3669),
    ((50.0, 2.5, 0.0), (73.0, 25.0, -18.0), 27.1492),
    ((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387), 1.2644),
    ((2.0776, 0.0795, -1.1350), (0.9033, -0.0636, -0.5514), 0.9082),
])
def test_delta_e_2000_reproduces_the_published_pairs(lab1, lab2, expected):
    assert delta_e_2000(lab1, lab2) == pytest.approx(expected, abs=1e-4)


def test_contrast_reproduces_wcag_examples():
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#767676", "#ffffff") == pytest.approx(4.54, abs=0.01)


# ----------------------------------------------------------------- the palette

PALETTE = {**COLORS, "neutral": NEUTRAL}  # the grey draws guides and helper curves beside the activations


def test_every_activation_has_a_colour_and_a_dash():
    assert set(COLORS) == set(DASHES) == set(gelu_core.ACTIVATIONS)


@pytest.mark.parametrize("name", PALETTE)
@pytest.mark.parametrize("theme", BACKGROUNDS)
def test_every_colour_stands_out_on_both_themes(name, theme):
    ratio = contrast(PALETTE[name], BACKGROUNDS[theme])
    assert ratio >= MIN_CONTRAST, f"{name} {PALETTE[name]} on {theme} {BACKGROUNDS[theme]}: {ratio:.2f}:1"


@pytest.mark.parametrize("a, b", list(itertools.combinations(PALETTE, 2)))
def test_any_two_colours_are_far_apart(a, b):
    d = delta_e_2000(lab(PALETTE[a]), lab(PALETTE[b]))
    assert d >= MIN_DELTA_E, f"{a} {PALETTE[a]} and {b} {PALETTE[b]}: CIEDE2000 {d:.1f}"


def test_curves_that_share_a_stretch_differ_in_dash():
    """On the Curves page's default range (-3 to 3, about 100 px per unit) two curves within 0.02 (2 px) of each
    other over a quarter of the range or more would hide one another if their dashes matched: leaky ReLU and ELU
    on ReLU, the three GELU forms, sigmoid on softplus far left."""
    x = np.linspace(-3.0, 3.0, 601)
    y = {name: gelu_core.get_activation(name)(x) for name in gelu_core.ACTIVATIONS}
    sharing = [(a, b) for a, b in itertools.combinations(y, 2) if np.mean(np.abs(y[a] - y[b]) <= 0.02) >= 0.25]
    assert ("relu", "leaky_relu") in sharing and ("gelu", "gelu_tanh") in sharing  # the rule does find them
    assert [(a, b) for a, b in sharing if DASHES[a] == DASHES[b]] == []


# ----------------------------------------------------------------- colour-vision deficiency and text

MACHADO_2009 = {  # Machado, Oliveira & Fernandes (2009), Table 1, severity 1.0; rows act on linear RGB
    "protanopia": ((0.152286, 1.052583, -0.204868), (0.114503, 0.786281, 0.099216), (-0.003882, -0.048116, 1.051998)),
    "deuteranopia": ((0.367322, 0.860646, -0.227968), (0.280085, 0.672501, 0.047413),
                     (-0.011820, 0.042940, 0.968881)),
    "tritanopia": ((1.255528, -0.076749, -0.178779), (-0.078411, 0.930809, 0.147602), (0.004733, 0.691367, 0.303900)),
}


def simulate(hex_color: str, deficiency: str) -> str:
    """The colour as a person with the deficiency sees it (Machado 2009 in linear RGB, clipped, back to sRGB)."""
    linear = np.array([_linear(v) for v in _rgb(hex_color)])
    seen = np.clip(np.array(MACHADO_2009[deficiency]) @ linear, 0.0, 1.0)
    srgb = np.where(seen <= 0.0031308, 12.92 * seen, 1.055 * seen ** (1 / 2.4) - 0.055)
    return "#" + "".join(f"{round(float(v) * 255):02x}" for v in srgb)


def mix(fg: str, bg: str, share: float) -> str:
    """``share`` of fg over bg, per sRGB channel (as CSS color-mix(in srgb, ...) does)."""
    return "#" + "".join(f"{round(share * a + (1 - share) * b):02x}" for a, b in zip(_rgb(fg), _rgb(bg), strict=True))


@pytest.mark.parametrize("deficiency", MACHADO_2009)
def test_the_simulation_keeps_greys_and_reproduces_a_known_shift(deficiency):
    for grey in ("#ffffff", "#808080", "#000000"):
        assert delta_e_2000(lab(simulate(grey, deficiency)), lab(grey)) < 1.0, (deficiency, grey)
    if deficiency == "protanopia":  # red loses most of its lightness and all of its redness for a protanope
        seen = lab(simulate("#ff0000", deficiency))
        assert seen[0] < lab("#ff0000")[0] - 5 and abs(seen[1]) < 15 < seen[2]


@pytest.mark.parametrize("deficiency", MACHADO_2009)
@pytest.mark.parametrize("gelu", ["gelu", "gelu_tanh", "gelu_sigmoid"])
def test_relu_and_gelu_stay_apart_under_colour_vision_deficiency(deficiency, gelu):
    d = delta_e_2000(lab(simulate(COLORS["relu"], deficiency)), lab(simulate(COLORS[gelu], deficiency)))
    assert d >= MIN_DELTA_E_CVD, f"ReLU and {gelu} under {deficiency}: CIEDE2000 {d:.1f}"


@pytest.mark.parametrize("deficiency", MACHADO_2009)
def test_colours_that_deficiency_brings_together_differ_in_dash(deficiency):
    """Any two activations closer than MIN_DELTA_E under the deficiency are told apart by their dash (every
    activation has its own, so this holds for every pair; the close pairs are listed to show the rule bites)."""
    close = [(a, b) for a, b in itertools.combinations(COLORS, 2)
             if delta_e_2000(lab(simulate(COLORS[a], deficiency)), lab(simulate(COLORS[b], deficiency))) < MIN_DELTA_E]
    assert close, "no pair comes close: the simulation is not doing anything"
    assert [(a, b) for a, b in close if DASHES[a] == DASHES[b]] == []
    assert len(set(DASHES.values())) == len(DASHES)


@pytest.mark.parametrize("name", ["relu", "gelu", "gelu_tanh"])
@pytest.mark.parametrize("theme", BACKGROUNDS)
@pytest.mark.parametrize("deficiency", MACHADO_2009)
def test_the_lessons_lines_keep_3_to_1_under_colour_vision_deficiency(name, theme, deficiency):
    ratio = contrast(simulate(COLORS[name], deficiency), BACKGROUNDS[theme])
    assert ratio >= MIN_CONTRAST, f"{name} under {deficiency} on {theme}: {ratio:.2f}:1"


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("surface", ["backgroundColor", "secondaryBackgroundColor"])
def test_captions_reach_aa_contrast_on_every_surface(theme, surface):
    """A caption is CAPTION_SHARE of the text colour mixed with the page's background (draw/a11y.css), and is
    read on the page and on the sidebar; Streamlit's own (60 % opacity) is 4.21:1 on white, under AA."""
    text, page_bg, bg = THEMES[theme]["textColor"], THEMES[theme]["backgroundColor"], THEMES[theme][surface]
    assert contrast(mix(text, page_bg, CAPTION_SHARE), bg) >= MIN_TEXT_CONTRAST
    assert contrast(mix(text, page_bg, 0.6), "#ffffff" if theme == "light" else page_bg) < MIN_TEXT_CONTRAST \
        or theme == "dark"  # the reason for the style: Streamlit's own fails on white


def test_the_caption_share_is_the_one_the_style_uses():
    from draw.assets import text

    assert f"currentColor {round(CAPTION_SHARE * 100)}%" in text("a11y.css")


# ----------------------------------------------------------------- the figures, as drawn together

def _lines(fig) -> list[tuple[str, str, str]]:
    """(name, colour, dash) of every drawn line of a figure (markers-only traces and invisible fills left out)."""
    out = []
    for t in fig.to_dict()["data"]:
        line = t.get("line") or {}
        if "lines" in t.get("mode", "lines") and line.get("width", 1) != 0:
            out.append((t["name"], line.get("color"), line.get("dash", "solid")))
    return out


def _every_figure():
    x = np.linspace(-6.0, 6.0, 101)
    runs = [_framework_run(d, x) for d in ("float32", "bfloat16", "float16")]
    yield "home", home.overview_figure([-2.0, -1.0, 0.0, 1.0, 2.0])
    for form in gelu_core.APPROXIMATE:  # every overlay at once, on each GELU form
        yield f"curves-{form}", curves.curves_figure(-3.0, 3.0, 50, form, 1.0, list(gelu_core.ACTIVATIONS))
        yield f"slopes-{form}", derivative.slopes_figure(form, 0.1)
        yield f"minimum-{form}", derivative.gelu_minimum_figure(form)
    yield "gate", gate.gate_figure(1.0)
    yield "bell", gate.bell_figure(1.0)
    yield "soften", gate.generalised_figure(0.5, 0.5)[0]
    yield "forms", approximations.forms_figure(x, {a: gelu_core.gelu(x, a) for a in gelu_core.APPROXIMATE})
    errors = {a: approximation_error(x, a)[0] for a in ("tanh", "sigmoid")}
    yield "errors", approximations.error_figure(x, errors, kind="absolute")
    yield "pytorch", approximations.framework_figure(runs, ours=runs[0], cliff=("float32", -5.54))
    grid = np.linspace(-4.0, 4.0, 81)
    yield "steps", steps.steps_figure(1.0, grid, gelu_core.gelu(grid, "tanh"), gelu_core.gelu_gate(grid, "tanh"),
                                      gelu_at_x=gelu_core.gelu(1.0, "tanh"), gate_at_x=gelu_core.gelu_gate(1.0, "tanh"))


def _framework_run(dtype, x):
    from types import SimpleNamespace

    exact = gelu_core.gelu(x)
    return SimpleNamespace(dtype=dtype, x=x, exact=exact, torch_value=exact, ours=exact,
                           torch_rel_error=np.full(x.size, 1e-7), ours_rel_error=np.full(x.size, 1e-8))


def _xy(trace) -> tuple[np.ndarray, np.ndarray]:
    from tests.test_ui_explorer_pages import arr

    return arr(trace["x"]), arr(trace["y"])


@pytest.mark.parametrize("name, fig", list(_every_figure()) + [("soften-sigma-0", gate.generalised_figure(0, 0)[0])],
                         ids=lambda v: v if isinstance(v, str) else "")
def test_lines_that_lie_on_each_other_differ_in_dash(name, fig):
    """Two lines of one chart on the same x within 0.5 % of the chart's height (1.5 px) of each other over a quarter
    of their points or more (x · gate on ReLU at σ = 0, the three GELU forms, every dtype's 100 % far left) differ
    in dash: the one below shows through."""
    lines = [t for t in fig.to_dict()["data"] if "lines" in t.get("mode", "") and (t.get("line") or {}).get("width", 1)]
    for a, b in itertools.combinations(lines, 2):
        (xa, ya), (xb, yb) = _xy(a), _xy(b)
        if xa.shape != xb.shape or not np.array_equal(xa, xb, equal_nan=True):
            continue
        both = np.isfinite(ya) & np.isfinite(yb)
        if fig.layout.yaxis.type == "log":
            ya, yb = np.log10(np.where(ya > 0, ya, np.nan)), np.log10(np.where(yb > 0, yb, np.nan))
            both &= np.isfinite(ya) & np.isfinite(yb)
        span = np.ptp(np.concatenate([ya[both], yb[both]])) or 1.0
        if np.mean(np.abs(ya[both] - yb[both]) <= 0.005 * span) >= 0.25:
            dash_a, dash_b = a["line"].get("dash", "solid"), b["line"].get("dash", "solid")
            assert dash_a != dash_b, f"{name}: {a['name']} and {b['name']} lie on each other, both {dash_a}"


@pytest.mark.parametrize("name, fig", list(_every_figure()), ids=lambda v: v if isinstance(v, str) else "")
def test_lines_drawn_together_differ_in_colour_or_dash(name, fig):
    """Within one chart no two lines share both colour and dash, and every line's colour is in the palette."""
    lines = _lines(fig)
    pairs = [(c, d) for _, c, d in lines]
    assert len(set(pairs)) == len(pairs), f"{name}: {lines}"
    assert {c for c, _ in pairs} <= set(PALETTE.values()), f"{name}: {lines}"


@pytest.mark.parametrize("values", [np.linspace(-3, 3, 801), np.arange(10, dtype=np.int64),
                                    np.array([300, -5], dtype=np.int64), np.zeros((3, 4), np.uint8),
                                    np.array([1e10], dtype=np.int64), np.arange(5, dtype=np.float32),
                                    np.array([1.0, np.nan, np.inf])])
def test_typed_arrays_are_what_plotly_itself_writes(values):
    """Reference: Plotly's own _plotly_utils.utils.to_typed_array_spec on the same array."""
    from _plotly_utils.utils import to_typed_array_spec

    from ui.theme import typed_array

    theirs = to_typed_array_spec(values.copy())
    mine = typed_array(values)
    if isinstance(theirs, dict):
        assert mine == theirs
    else:
        assert isinstance(mine, np.ndarray) and np.array_equal(mine, theirs)
