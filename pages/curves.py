"""Curves: ReLU and GELU on one shared range, a probe that reads both, other activations on top."""

import streamlit as st

import gelu_core
from ui.controls import CURVES, fmt, ordered_range, parse_points
from ui.curves import FORM_LATEX, curves_figure, gelu_key, probe_readout, values_table
from ui.frame import require_app_frame

require_app_frame()  # first of all: a deep link on a fresh server must run inside app.py's frame

st.title("Curves")
st.markdown(
    "ReLU lies flat on zero for every negative x and follows x for every positive one. GELU dips a little below "
    "zero, turns smoothly through the origin and only slowly joins the line y = x."
)

controls, chart = st.columns([1, 2.4], gap="large")
with controls:
    x = st.slider(**CURVES["x"].kwargs())
    form = st.segmented_control(**CURVES["form"].kwargs())
    lo, hi = st.slider(**CURVES["range"].kwargs())
    n = st.slider(**CURVES["n"].kwargs())
    overlays = st.multiselect(**CURVES["more"].kwargs())
    params = {}
    if "leaky_relu" in overlays:
        params["leaky_relu"] = {"negative_slope": st.slider(**CURVES["slope"].kwargs())}
    if "elu" in overlays:
        params["elu"] = {"alpha": st.slider(**CURVES["alpha"].kwargs())}

if lo == hi:
    st.info(f"The range is a single point, so the chart shows {fmt(lo - 1, 1)} … {fmt(hi + 1, 1)}.")
lo, hi = ordered_range(lo, hi)

with chart:
    r = probe_readout(x, form)
    c1, c2, c3 = st.columns(3)
    c1.metric(f"ReLU({fmt(x, 2)})", fmt(r["relu"]))
    c2.metric(f"GELU({fmt(x, 2)}), {form}", fmt(r["gelu"]), help="GELU(x) = x · gate(x)")
    c3.metric(f"gate({fmt(x, 2)}), {form}", fmt(r["gate"]), help="How open GELU's door is at this x, from 0 to 1.")
    st.plotly_chart(curves_figure(lo, hi, n, form, x, overlays, params), theme="streamlit",
                    config={"displayModeBar": False})
    if not lo <= x <= hi:
        st.caption(f"The probe x = {fmt(x, 2)} lies outside the plotted range: widen the range to see it.")

f1, f2 = st.columns(2)
f1.latex(gelu_core.get_activation("relu").latex)
f2.latex(FORM_LATEX[form])
others = [name for name in overlays if name != gelu_key(form)]
if others:
    with st.expander("The overlaid activations"):
        for name in others:
            other = gelu_core.get_activation(name)
            st.latex(other.latex)
            st.caption(other.description)

st.subheader("Values at chosen points")
points_text = st.text_input(**CURVES["points"].kwargs())
try:
    points = parse_points(points_text)
except ValueError as err:
    st.info(f"{err} Meanwhile the table shows the default points.")
    points = parse_points(CURVES["points"].default)
table = values_table(points, form, overlays, params)
st.dataframe(table, hide_index=True, column_config={k: st.column_config.NumberColumn(k, format="%.4f") for k in table})
