"""The Approximations page, driven through app.py with AppTest.

References: mpmath at 50 digits for the worst approximation errors (located with mpmath's own root finder,
not gelu_core's search) and for the exact GELU in the framework table (tolerance: 8 (1 + x^2) float64 ulps);
torch, called in this test on big tensors, for what the framework returns (tolerance: bit for bit).
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
import torch
from mpmath import mp

from tests.conftest import chart_spec, open_page
from tests.stacking import next_after
from ui.approximations import POINTS

PAGE = "pages/approximations.py"
TORCH_TAB = "What PyTorch computes"
TABLE_X = (-12.0, -8.0, -6.0, -5.5, -5.0, -3.0, -1.0, 1.0, 3.0)

mp.dps = 50


def answer(form: str = "tanh") -> tuple[str, str]:
    """The question's right choice and a number its reveal must quote: the tanh form's largest error, found by
    mpmath's maximiser over the whole line (``SOURCE_WORST``-free: computed here)."""
    import mpmath

    worst = max(abs(mp_gelu(x, "tanh") - mp_gelu(x)) for x in (mpmath.mpf(i) / 1000 for i in range(-4000, 4001)))
    right = "more than 0.01" if worst > 0.01 else "between 0.0001 and 0.01" if worst > 1e-4 else "less than 0.0001"
    return right, f"{float(worst):.3e}"[:4]


def mp_gelu(x, form: str = "none"):
    x = mpmath.mpf(x)
    if form == "none":
        return x * mp.erfc(-x / mp.sqrt(2)) / 2
    if form == "tanh":
        return x / (1 + mp.exp(-2 * mp.sqrt(2 / mp.pi) * (x + mpmath.mpf("0.044715") * x**3)))
    return x / (1 + mp.exp(-mpmath.mpf("1.702") * x))


def mp_worst(form: str, start: float):
    """Largest |approx - exact| on x > 0: where its derivative is 0, found by mpmath.findroot from ``start``."""
    def err(t):
        return mp_gelu(t, form) - mp_gelu(t)

    x = mp.findroot(lambda t: mp.diff(err, t), start)
    return float(x), float(abs(err(x)))


def x_range(spec: dict) -> tuple[float, float]:
    """The x range a chart shows: its x axis's range where it sets one (the three forms' curves span the range
    slider's whole -12 … 12 and the range sets the view: tests/test_live_tables.py checks the curves and the axes),
    else the first and last x of its first trace (plotly 6 may store it as a base64 typed array)."""
    import base64

    if "range" in spec["layout"].get("xaxis", {}):
        lo, hi = spec["layout"]["xaxis"]["range"]
        return float(lo), float(hi)
    x = spec["data"][0]["x"]
    if isinstance(x, dict):
        x = np.frombuffer(base64.b64decode(x["bdata"]), dtype=np.dtype(x["dtype"]))
    return float(x[0]), float(x[-1])


def test_opens_with_three_charts_and_the_worst_errors(app):
    """Worst absolute error: tanh 4.73e-04 at |x| = 2.70, sigmoid 2.03e-02 at |x| = 2.27 (the issue's numbers),
    each equal to 50-digit mpmath rounded to the 3 significant figures shown, and its place to 2 decimals."""
    at = open_page(app, PAGE)
    assert len(at.get("plotly_chart")) == 3
    metrics = {m.label: m.value for m in at.metric}
    captions = " ".join(c.value for c in at.caption)
    for form, start, shown in (("tanh", 2.7, "4.73e-04"), ("sigmoid", 2.27, "2.03e-02")):
        x_ref, err_ref = mp_worst(form, start)
        assert metrics[f"Largest error, {form} form"] == f"{err_ref:.2e}" == shown
        assert f"at x = ±{x_ref:.2f}" in captions
    assert "±2.70" in captions and "±2.27" in captions


def test_range_slider_moves_every_chart(app):
    at = open_page(app, PAGE)
    before = [chart_spec(at, i) for i in range(3)]
    at.slider(key="approximations_range").set_value((-12.0, 2.0)).run()
    after = [chart_spec(at, i) for i in range(3)]
    for b, a in zip(before, after, strict=True):
        assert x_range(b) == (-6.0, 6.0) and x_range(a) == (-12.0, 2.0)


def test_range_from_the_url(app):
    at = open_page(app, PAGE, approximations_range=["-12", "3"])
    assert at.slider(key="approximations_range").value == (-12.0, 3.0)
    assert x_range(chart_spec(at, 0)) == (-12.0, 3.0)


@pytest.mark.parametrize("bad", [["-40", "3"], ["abc", "1"], ["2"]])
def test_bad_range_in_the_url_falls_back_to_the_default(app, bad):
    at = open_page(app, PAGE, approximations_range=bad)
    assert at.slider(key="approximations_range").value == (-6.0, 6.0)
    assert x_range(chart_spec(at, 0)) == (-6.0, 6.0)


def test_an_empty_range_is_explained(app):
    at = open_page(app, PAGE, approximations_range=["3", "3"])
    assert any("at least 0.5 wide" in i.value for i in at.info)
    assert len(at.get("plotly_chart")) == 0


def test_bad_tab_in_the_url_opens_the_first_tab(app):
    at = open_page(app, PAGE, approximations_view="Nonsense")
    assert len(at.get("plotly_chart")) == 3


# ---------------------------------------------------------------- what PyTorch computes

def torch_vectorised(values, dtype, approximate):
    """torch's GELU of each value inside a 4096-long tensor of copies (the vectorised kernel, as in a model)."""
    return [float(torch.nn.functional.gelu(torch.full((4096,), v, dtype=dtype), approximate=approximate)[0])
            for v in values]


def framework_tables(at):
    """(limits table in long form, every column of the digit tables by name): the page shows the digits as
    several narrow tables (the truth, then one per dtype), each holding x; they are joined here on x."""
    limits, *digit_tables = [d.value for d in at.dataframe]
    digits = {}
    for table in digit_tables:
        assert table["x"].tolist() == list(TABLE_X)
        digits.update({name: table[name] for name in table.columns})
    return limits, digits


def limit(limits, dtype: str, which: str) -> float:
    """One cell of the long limits table: the x where ``which`` begins for ``dtype``."""
    rows = limits[(limits["dtype"] == dtype) & (limits["returns 0"] == which)]
    assert len(rows) == 1, (dtype, which)
    return float(rows["x"].iloc[0])


@pytest.mark.parametrize("form,approximate", [("exact", "none"), ("tanh", "tanh")])
def test_framework_table_against_torch_and_mpmath(app, form, approximate):
    """torch columns: bit for bit what torch returns; exact column: 50-digit mpmath within 8 (1 + x^2) ulps;
    relative error: recomputed here from those two; torch returns 0 at x = -12, -8, -6 (100 %)."""
    at = open_page(app, PAGE, approximations_view=TORCH_TAB, form=form,
                   approximations_fw_dtypes=["float32", "bfloat16", "float16"])
    assert len(at.get("plotly_chart")) == 1
    _, digits = framework_tables(at)
    assert digits["x"].tolist() == list(TABLE_X)
    assert all(len(d.value.columns) <= 3 for d in at.dataframe)  # narrow enough for a phone
    for x, exact in zip(TABLE_X, digits["exact (float64)"], strict=True):
        ref = mp_gelu(x, approximate)
        assert abs(exact - ref) <= 8 * (1 + x * x) * 2.0**-52 * abs(ref)
    for name, dtype in (("float32", torch.float32), ("bfloat16", torch.bfloat16), ("float16", torch.float16)):
        ours = torch_vectorised(TABLE_X, dtype, approximate)
        assert digits[f"torch {name}"].tolist() == ours
        rel = np.abs(np.array(ours) - digits["exact (float64)"]) / np.abs(digits["exact (float64)"])
        np.testing.assert_allclose(digits[f"rel. error {name}"], rel, rtol=1e-12)
        assert digits[f"rel. error {name}"].tolist()[:3] == [1.0, 1.0, 1.0]
    # gelu_core keeps what torch loses: its float32 result is the truth rounded to float32
    for x, ours in zip(TABLE_X, digits["gelu_core float32"], strict=True):
        ref = float(mp_gelu(x, approximate))
        assert ours == float(np.float32(ref)) or abs(ours - ref) <= np.spacing(np.float32(abs(ref)))


def test_limits_table_marks_torchs_cliff(app):
    """float32 row: torch gives 0 at the first column's x and at 1000 float32 inputs spread over the unit below
    it; it never gives 0 at 1000 inputs spread over the unit above the second column's x.  The third column is
    far left: 50-digit GELU at x = -14 is still above float32's smallest number, 2^-149.  PyTorch's exact form."""
    at = open_page(app, PAGE, approximations_view=TORCH_TAB, form="exact")
    limits, _ = framework_tables(at)
    every, some = limit(limits, "float32", "torch: every x ≤"), limit(limits, "float32", "torch: some x up to")
    holds = limit(limits, "float32", "true GELU rounded: x ≤")
    assert -5.6 < every <= some < -5.4  # the "about -6": -5.54 on this CPU
    below = np.linspace(every - 1.0, every, 1000, dtype=np.float32).tolist()
    above = [v for v in np.linspace(some, some + 1.0, 1000, dtype=np.float32).tolist() if v > some]
    assert all(v == 0 for v in torch_vectorised(below, torch.float32, "none"))
    assert all(v != 0 for v in torch_vectorised(above, torch.float32, "none"))
    assert holds < -14 and abs(float(mp_gelu(-14.0))) > 2.0**-149


def test_framework_controls_change_the_chart(app):
    at = open_page(app, PAGE, approximations_view=TORCH_TAB, form="exact")
    base = chart_spec(at, 0)
    at.slider(key="approximations_fw_range").set_value((-8.0, -2.0)).run()
    moved = chart_spec(at, 0)
    assert moved["data"] != base["data"] and x_range(moved)[0] == -8.0
    at.segmented_control(key="form").set_value("tanh").run()
    assert chart_spec(at, 0)["data"] != moved["data"]
    at.multiselect(key="approximations_fw_dtypes").set_value(["float16"]).run()
    metas = [t.get("meta") for t in chart_spec(at, 0)["data"]]
    assert metas == ["torch:float16", "ours:float16", "cliff:float16"]  # the cliff: a legend entry for its line


def test_no_dtype_is_explained(app):
    at = open_page(app, PAGE, approximations_view=TORCH_TAB)
    at.multiselect(key="approximations_fw_dtypes").set_value([]).run()
    assert not at.exception
    assert any("at least one number format" in i.value for i in at.info)
    assert len(at.get("plotly_chart")) == 0


def test_bad_framework_values_in_the_url_fall_back(app):
    at = open_page(app, PAGE, approximations_view=TORCH_TAB, form="float128",
                   approximations_fw_dtypes=["int8"], approximations_fw_range=["-99", "0"])
    assert at.segmented_control(key="form").value == "tanh"  # the lesson's form unless the student chose another
    assert at.multiselect(key="approximations_fw_dtypes").value == ["float32", "bfloat16"]
    assert at.slider(key="approximations_fw_range").value == (-12.0, 4.0)


# ---------------------------------------------------------------- sentences that quote the numbers

def judged(approx, exact) -> str:
    """How the page words an approximation against the truth (the ratio of the two, mpmath): a multiple from 2
    up, a fraction up to 1/2, else a share too large or too small."""
    r = approx / exact
    if r >= 2:
        return "times the true value"
    if r <= 0.5:
        return "the true value divided by"
    return "too large" if r > 1 else "too small"


@pytest.mark.parametrize("lo", [-6.0, -12.0, -3.5])
def test_the_tail_sentence_quotes_the_left_end_of_the_range(app, lo):
    """At the left end of the range: exact, tanh and sigmoid GELU as 50-digit mpmath rounded to 4 significant
    digits, and each form judged from the mpmath ratio (at -6 the sigmoid form is about 37,000 times the truth,
    the tanh form far too small)."""
    at = open_page(app, PAGE, approximations_range=[str(lo), "6"])
    text = " ".join(c.value for c in at.caption)
    exact, tanh, sigmoid = (mp_gelu(lo, form) for form in ("none", "tanh", "sigmoid"))
    assert f"at x = {lo:.1f}, the left end of the range, exact GELU is {float(exact):.3e}" in text
    assert f"the tanh form gives {float(tanh):.3e}, " in text and f"the sigmoid form {float(sigmoid):.3e}, " in text
    tail = text[text.index("the tanh form gives"):]
    tanh_part, sigmoid_part = tail.split(", and the sigmoid form")
    assert judged(tanh, exact) in tanh_part and judged(sigmoid, exact) in sigmoid_part
    if lo == -6.0:
        ratio = float(sigmoid / exact)
        assert 36_500 < ratio < 37_500 and "37,000 times the true value" in sigmoid_part


def test_no_tail_sentence_without_a_tail(app):
    at = open_page(app, PAGE, approximations_range=["-0.5", "6"])
    text = " ".join(c.value for c in at.caption)
    assert "Stretch the range to the left" in text and "left end of the range" not in text


def test_the_digits_each_dtype_keeps_come_from_torch(app):
    """Significant decimal digits: -log10 of half torch.finfo(dtype).eps, to the nearest whole (7, 2, 3)."""
    at = open_page(app, PAGE, approximations_view=TORCH_TAB)
    text = " ".join(m.value for m in at.markdown)
    kept = {d: round(-np.log10(torch.finfo(getattr(torch, d)).eps / 2)) for d in ("float32", "bfloat16", "float16")}
    assert (f"float32 keeps about {kept['float32']} significant digits, bfloat16 about {kept['bfloat16']} and "
            f"float16 about {kept['float16']}") in text


def test_the_cliff_sentence_follows_the_limits_table(app):
    """Each dtype's distance from torch's cliff to where the true GELU rounds to 0, from the table's own numbers:
    1 or more is "far" (float32: more than 8, since the table test holds its ends to torch), less is "only"."""
    at = open_page(app, PAGE, approximations_view=TORCH_TAB, form="exact",
                   approximations_fw_dtypes=["float32", "bfloat16", "float16"])
    limits, _ = framework_tables(at)
    text = " ".join(c.value for c in at.caption)
    gaps = {d: limit(limits, d, "torch: every x ≤") - limit(limits, d, "true GELU rounded: x ≤")
            for d in ("float32", "bfloat16", "float16")}
    far = [d for d, g in gaps.items() if g >= 1]
    near = [d for d, g in gaps.items() if 0 < g < 1]
    assert "float32" in far and gaps["float32"] > 8
    assert f"far to the left of torch's cliff ({' and '.join(f'{gaps[d]:.2f}' for d in far)} further)" in text
    for d in near:
        assert f"for {d} only {gaps[d]:.2f} to the left" in text


def test_the_three_charts_follow_the_range_slider(app):
    """Phone order on the first tab: the range slider, then the three charts it moves."""
    at = open_page(app, PAGE)
    assert next_after(at, "slider:approximations_range")[:3] == ["plotly_chart:chart_approximations-forms",
                                                         "plotly_chart:chart_approximations-absolute",
                                                         "plotly_chart:chart_approximations-relative"]


@pytest.mark.parametrize("ends, apart", [(("-6", "6"), False), (("-1", "-0.5"), True)])
def test_the_forms_chart_caption_judges_the_gap_against_the_height(app, ends, apart):
    """The largest gap between a form and exact GELU on the plotted grid (mpmath, to 1e-3 of it) against the chart's
    height: "lie on top of each other" at 1 % or less (on -6 … 6 the sigmoid form's worst, 2.03e-02, is 0.33 % of
    about 6.2), "part visibly" above (on -1 … -0.5 the gap is as large as the curves' whole height)."""
    import re

    at = open_page(app, PAGE, approximations_range=list(ends))
    caption = [c.value for c in at.caption if "apart" in c.value][0]
    gap_text, share = re.search(r"(\d\.\d{3}e[-+]\d\d) apart, ([\d.]+)%", caption).groups()
    x = np.linspace(float(ends[0]), float(ends[1]), POINTS)  # the page's own grid
    values = {form: [mp_gelu(v, form) for v in x] for form in ("none", "tanh", "sigmoid")}
    gap = max(abs(a - e) for form in ("tanh", "sigmoid") for a, e in zip(values[form], values["none"], strict=True))
    span = max(max(v) for v in values.values()) - min(min(v) for v in values.values())
    assert float(gap_text) == pytest.approx(float(gap), rel=1e-3)
    assert float(share) == pytest.approx(float(100 * gap / span), rel=2e-2)
    assert ("part visibly" in caption) == apart == (gap > span / 100)
