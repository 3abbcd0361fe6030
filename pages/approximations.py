"""Approximations: exact vs tanh vs sigmoid GELU, how far apart they are, and what PyTorch computes."""

import numpy as np
import streamlit as st

from gelu_core import ACTIVATIONS, APPROXIMATIONS, form_word, gelu
from gelu_core.analysis import approximation_error, worst_error
from ui.approximations import error_figure, forms_figure, framework_figure, framework_table
from ui.controls import APPROX, DTYPES
from ui.format import sci
from ui.frame import chart, require_app_frame

require_app_frame()  # first of all: a deep link on a fresh server must run inside app.py's frame

POINTS = 801  # per curve: smooth at any zoom, light to send
TABLE_X = (-12.0, -8.0, -6.0, -5.5, -5.0, -3.0, -1.0, 1.0, 3.0)  # exact in every dtype shown

st.title("Approximations")
st.markdown(
    "Exact GELU needs the normal distribution's CDF, Φ. Two cheaper formulas imitate it: "
    "the **tanh form** (GPT-2, chapter 4 of the book) and the even cheaper **sigmoid form**. "
    "How close are they, and what does a framework really return?"
)


@st.cache_data(show_spinner=False)
def worst_points() -> dict[str, tuple[float, float]]:
    return {a: tuple(worst_error(a)) for a in ("tanh", "sigmoid")}


@st.cache_data(show_spinner=False, max_entries=64)
def framework_runs(x: tuple[float, ...], dtypes: tuple[str, ...], approximate: str):
    from gelu_core.frameworks import framework_gelu

    return [framework_gelu(np.asarray(x), d, approximate) for d in dtypes]


@st.cache_data(show_spinner=False)
def dtype_limits(dtype: str, approximate: str) -> dict[str, float]:
    from gelu_core.frameworks import underflow_below, unit_roundoff, zero_band

    every, some = zero_band(dtype, approximate)
    return {"roundoff": unit_roundoff(dtype), "every": every, "some": some,
            "holds": underflow_below(dtype, approximate)}


def three_forms(shown: bool):
    for key in ("gelu", "gelu_tanh", "gelu_sigmoid"):
        st.caption(ACTIVATIONS[key].label)
        st.latex(ACTIVATIONS[key].latex)
    lo, hi = st.slider(**APPROX["range"].kwargs())
    if not shown:
        return  # the slider stays (it holds its URL value); the charts are drawn only on the open tab
    if hi - lo < 0.5:
        st.info("Pick a range at least 0.5 wide: drag the two ends of the slider apart.")
        return
    x = np.linspace(lo, hi, POINTS)
    chart(forms_figure(x, {a: gelu(x, a) for a in APPROXIMATIONS}), "approx-forms")
    st.caption("At this scale the three curves lie on top of each other; the error charts below zoom in.")

    worst = worst_points()
    c1, c2 = st.columns(2)
    for col, a in ((c1, "tanh"), (c2, "sigmoid")):
        at_x, value = worst[a]
        col.metric(f"Largest error, {a} form", sci(value, 2), help=f"{value:.6e} at x = ±{at_x:.6f}")
        col.caption(f"at x = ±{at_x:.2f}, marked on the absolute-error chart")
    errors = {a: approximation_error(x, a) for a in ("tanh", "sigmoid")}
    c1, c2 = st.columns(2)
    with c1:
        st.markdown("**Absolute error**")
        chart(error_figure(x, {a: e[0] for a, e in errors.items()}, kind="absolute", worst=worst), "approx-absolute")
    with c2:
        st.markdown("**Relative error**")
        chart(error_figure(x, {a: e[1] for a, e in errors.items()}, kind="relative"), "approx-relative")
    st.caption(
        "Absolute error is |approximation − exact|; relative error divides it by |exact|. Both are drawn on a "
        "log scale. The error is the same at -x and +x, so each worst point is marked on both sides. "
        "Far left the true value is tiny and the forms part ways: the tanh form falls to zero faster than exact "
        "GELU (relative error → 100 %), the sigmoid form far slower (at x = -6 it is 37 000 times too large)."
    )


def what_pytorch_computes(shown: bool):
    st.markdown(
        "A framework stores numbers with a fixed number of digits: float32 keeps about 7 significant digits, "
        "bfloat16 and float16 about 3. For most inputs PyTorch's GELU is as close to the true value as those "
        "digits allow. Far to the left, though, it returns **exactly 0** from some point on, although the true "
        "GELU there is a tiny negative number that float32 could still hold. The chart shows how far PyTorch's "
        "answer is from the true value, as a share of it: 100 % means the answer is 0."
    )
    with st.expander("Why it becomes 0, for the curious"):
        st.markdown(
            "PyTorch's CPU kernel computes exact GELU as ½·x·(1 + erf(x/√2)) in float32 (bfloat16 and float16 are "
            "widened to float32 for it). Once erf(x/√2) rounds to -1, the sum 1 + erf is exactly 0, and so is "
            "the answer. gelu_core, this app's own computation, writes the same function with erfc, which never "
            "subtracts two nearly equal numbers, and works in float64 before rounding once to the dtype."
        )
        st.latex(r"\tfrac12\,x\,\bigl(1 + \operatorname{erf}(x/\sqrt2)\bigr)"
                 r"\;=\;\tfrac12\,x\,\operatorname{erfc}(-x/\sqrt2)")
        st.caption("Dotted lines on the chart: half a unit in the last place, the best a dtype can do with normal "
                   "numbers. The dashed line is gelu_core's own float32 result, rounded once from float64.")
    c1, c2 = st.columns([1, 2])
    with c1:
        approximate = st.segmented_control(**APPROX["fw_form"].kwargs())
    with c2:
        dtypes = st.multiselect(**APPROX["fw_dtypes"].kwargs())
    lo, hi = st.slider(**APPROX["fw_range"].kwargs())
    if not shown:
        return  # torch is imported only when this tab is open
    if not dtypes:
        st.info("Pick at least one number format to compare.")
        return
    if hi - lo < 0.5:
        st.info("Pick a range at least 0.5 wide: drag the two ends of the slider apart.")
        return
    order = tuple(d for d in DTYPES if d in dtypes)
    with st.spinner("Asking PyTorch…"):
        runs = framework_runs(tuple(np.linspace(lo, hi, POINTS).tolist()), order, approximate)
        table_runs = framework_runs(TABLE_X, order, approximate)
        limits = {d: dtype_limits(d, approximate) for d in order}
    ours = runs[order.index("float32")] if "float32" in order else runs[0]
    chart(framework_figure(runs, ours=ours, roundoff={d: v["roundoff"] for d, v in limits.items()},
                           cliff=(order[0], limits[order[0]]["every"])), "approx-pytorch")
    st.caption(
        f"PyTorch's {form_word(approximate)} GELU against the true value (computed in float64 at the very input "
        f"PyTorch received). Dashed: this app's own {ours.dtype} result."
    )
    st.markdown("**Where the answer becomes 0**")
    st.dataframe(
        {
            "dtype": list(order),
            "torch: 0 for every x ≤": [limits[d]["every"] for d in order],
            "torch: 0 for some x up to": [limits[d]["some"] for d in order],
            "true GELU rounds to 0 for x ≤": [limits[d]["holds"] for d in order],
        },
        hide_index=True, key="approx_fw_limits",
        column_config={"dtype": st.column_config.TextColumn()} | {
            name: st.column_config.NumberColumn(format="%.6f")
            for name in ("torch: 0 for every x ≤", "torch: 0 for some x up to", "true GELU rounds to 0 for x ≤")
        },
    )
    st.caption(
        "Between the two torch columns, 1 + erf(x/√2) (or 1 + tanh) is only a few units in the last place, "
        "so some inputs give 0 and their neighbours do not. \"True GELU rounds to 0\" is where even a perfect "
        "kernel must return 0, because the dtype holds nothing that small: for float32 and bfloat16 it lies far "
        "to the left of torch's cliff."
    )
    st.markdown("**A few inputs, digit by digit**")
    table = framework_table(table_runs, ours=table_runs[order.index(ours.dtype)])
    config = {name: st.column_config.NumberColumn(format="%.4e") for name in table if name != "x"}
    config["x"] = st.column_config.NumberColumn(format="%.1f")
    st.dataframe(table, hide_index=True, column_config=config, key="approx_fw_table")
    st.caption("Every x in the table is exact in each dtype, so all the error is the kernel's.")


forms_tab, torch_tab = st.tabs(**APPROX["view"].kwargs())
with forms_tab:
    three_forms(bool(forms_tab.open))
with torch_tab:
    what_pytorch_computes(bool(torch_tab.open))
