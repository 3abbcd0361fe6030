"""Approximations: exact vs tanh vs sigmoid GELU, how far apart they are, and what PyTorch computes."""

import numpy as np
import streamlit as st

from gelu_core import ACTIVATIONS, gelu
from gelu_core.analysis import approximation_error, worst_error
from ui.approximations import error_figure, forms_figure, framework_figure, framework_table
from ui.frame import require_app_frame

require_app_frame()  # first of all: a deep link on a fresh server must run inside app.py's frame

POINTS = 801  # per curve: smooth at any zoom, light to send
TABLE_X = (-12.0, -8.0, -6.0, -5.5, -5.0, -3.0, -1.0, 1.0, 3.0)  # exact in every dtype shown
FORM_CHOICES = {"exact": "none", "tanh": "tanh"}  # what the page says -> torch's approximate=
DTYPE_CHOICES = ("float32", "bfloat16", "float16")

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
    lo, hi = st.slider(
        "Range of x", -12.0, 12.0, (-6.0, 6.0), 0.5, key="approx_range", bind="query-params",
        help="Stretch it to −12 to see the tails, where relative error grows.",
    )
    if not shown:
        return  # the slider stays (it holds its URL value); the charts are drawn only on the open tab
    if hi - lo < 0.5:
        st.info("Pick a range at least 0.5 wide: drag the two ends of the slider apart.")
        return
    x = np.linspace(lo, hi, POINTS)
    st.plotly_chart(forms_figure(x, {a: gelu(x, a) for a in ("none", "tanh", "sigmoid")}), theme="streamlit",
                    key="approx_forms_chart")
    st.caption("At this scale the three curves lie on top of each other; the error charts below zoom in.")

    worst = worst_points()
    c1, c2 = st.columns(2)
    for col, a in ((c1, "tanh"), (c2, "sigmoid")):
        at_x, value = worst[a]
        col.metric(f"Largest error, {a} form", f"{value:.2e}", help=f"{value:.6e} at x = ±{at_x:.6f}")
        col.caption(f"at x = ±{at_x:.2f}, marked on the left chart below")
    errors = {a: approximation_error(x, a) for a in ("tanh", "sigmoid")}
    c1, c2 = st.columns(2)
    with c1:
        st.plotly_chart(error_figure(x, {a: e[0] for a, e in errors.items()}, kind="absolute", worst=worst),
                        theme="streamlit", key="approx_abs_chart")
    with c2:
        st.plotly_chart(error_figure(x, {a: e[1] for a, e in errors.items()}, kind="relative"),
                        theme="streamlit", key="approx_rel_chart")
    st.caption(
        "Absolute error is |approximation − exact|; relative error divides it by |exact|. Both are drawn on a "
        "log scale. The error is the same at −x and +x, so each worst point is marked on both sides. "
        "Far left the true value is tiny and the forms part ways: the tanh form falls to zero faster than exact "
        "GELU (relative error → 100 %), the sigmoid form far slower (at x = −6 it is 37 000 times too large)."
    )


def what_pytorch_computes(shown: bool):
    st.markdown(
        "PyTorch's CPU kernel computes exact GELU as ½·x·(1 + erf(x/√2)) in float32 (bfloat16 and float16 are "
        "widened to float32 for it). Once erf(x/√2) rounds to −1, the sum 1 + erf is exactly 0 and so is "
        "the answer, although float32 could hold the true value. gelu_core writes the same function with "
        "erfc, which has no such cancellation, and works in float64 before rounding once."
    )
    st.latex(r"\tfrac12\,x\,\bigl(1 + \operatorname{erf}(x/\sqrt2)\bigr)"
             r"\;=\;\tfrac12\,x\,\operatorname{erfc}(-x/\sqrt2)")
    c1, c2 = st.columns([1, 2])
    with c1:
        form = st.segmented_control("GELU form", tuple(FORM_CHOICES), default="exact", required=True,
                                    key="approx_fw_form", bind="query-params")
        approximate = FORM_CHOICES[form]
    with c2:
        dtypes = st.multiselect("Number formats", DTYPE_CHOICES, default=["float32", "bfloat16"],
                                key="approx_fw_dtypes", bind="query-params")
    lo, hi = st.slider("Range of x", -12.0, 12.0, (-12.0, 4.0), 0.5, key="approx_fw_range",
                       bind="query-params")
    if not shown:
        return  # torch is imported only when this tab is open
    if not dtypes:
        st.info("Pick at least one number format to compare.")
        return
    if hi - lo < 0.5:
        st.info("Pick a range at least 0.5 wide: drag the two ends of the slider apart.")
        return
    order = tuple(d for d in DTYPE_CHOICES if d in dtypes)
    with st.spinner("Asking PyTorch…"):
        runs = framework_runs(tuple(np.linspace(lo, hi, POINTS).tolist()), order, approximate)
        table_runs = framework_runs(TABLE_X, order, approximate)
        limits = {d: dtype_limits(d, approximate) for d in order}
    ours = runs[order.index("float32")] if "float32" in order else runs[0]
    st.plotly_chart(
        framework_figure(runs, ours=ours, roundoff={d: v["roundoff"] for d, v in limits.items()},
                         cliff=(order[0], limits[order[0]]["every"])),
        theme="streamlit", key="approx_fw_chart",
    )
    st.caption(
        "Reference: gelu_core in float64 at the very input the framework received (x rounded to its dtype). "
        "Dotted lines: half a unit in the last place, the best a dtype can do with normal numbers. "
        f"The dashed line is gelu_core's own {ours.dtype} result: float64 inside, rounded once."
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
        "Between the first two columns 1 + erf(x/√2) (or 1 + tanh) is only a few units in the last place, "
        "so some inputs give 0 and their neighbours do not. The last column is where even a perfect kernel "
        "must return 0, because the dtype holds nothing that small: for float32 and bfloat16 it lies far to "
        "the left of torch's cliff."
    )
    st.markdown("**A few inputs, digit by digit**")
    table = framework_table(table_runs, ours=table_runs[order.index(ours.dtype)])
    config = {name: st.column_config.NumberColumn(format="%.4e") for name in table if name != "x"}
    config["x"] = st.column_config.NumberColumn(format="%.1f")
    st.dataframe(table, hide_index=True, column_config=config, key="approx_fw_table")
    st.caption("Every x in the table is exact in each dtype, so all the error is the kernel's.")


# No st.fragment here: a fragment rerun would leave the sidebar's share link behind the view.
forms_tab, torch_tab = st.tabs(["Three forms", "What PyTorch computes"], key="approx_view", bind="query-params")
with forms_tab:
    three_forms(bool(forms_tab.open))
with torch_tab:
    what_pytorch_computes(bool(torch_tab.open))
