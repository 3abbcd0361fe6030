"""Slopes: GELU' against ReLU's jump, where GELU bottoms out, and why smooth helps training."""

import streamlit as st

from ui.controls import DERIVATIVE, fmt
from ui.derivative import gelu_minimum_figure, landmarks, nudge, slopes_figure
from ui.frame import require_app_frame

require_app_frame()  # first of all: a deep link on a fresh server must run inside app.py's frame

st.title("Slopes")
st.markdown(
    "Training nudges numbers a little at a time and follows the **slope**. ReLU's slope is 0 on the left and 1 "
    "on the right, with a jump at 0. GELU's slope glides from one to the other."
)

settings, formulas = st.columns([1, 1.4], gap="large")
with settings:
    form = st.segmented_control(**DERIVATIVE["form"].kwargs())
    h = st.slider(**DERIVATIVE["nudge"].kwargs())
with formulas:
    st.latex(r"\mathrm{ReLU}'(x) = \begin{cases} 1 & x > 0 \\ 0 & x \le 0 \end{cases}")
    st.caption("At 0 ReLU has no slope; by convention (and in PyTorch's autograd) ReLU′(0) = 0.")
    if form == "exact":
        st.latex(r"\begin{gathered} \mathrm{GELU}'(x) = \Phi(x) + x\,\varphi(x) \\ "
                 r"\mathrm{GELU}''(x) = \varphi(x)\,(2 - x^2) \end{gathered}")
    else:
        st.latex(r"\mathrm{GELU}'(x) = \mathrm{gate}(x) + x\,\mathrm{gate}'(x)")

n = nudge(form, h)
st.markdown(f"**The nudge.** Move x from −{h:g} to +{h:g}:")
a, b = st.columns(2)
a.metric("ReLU′ jumps", f"{fmt(n.relu[0], 0)} → {fmt(n.relu[1], 0)}", delta=f"+{fmt(n.relu[1] - n.relu[0], 0)}",
         delta_color="off")
b.metric(f"GELU′ ({form}) barely moves", f"{fmt(n.gelu[0])} → {fmt(n.gelu[1])}",
         delta=f"+{fmt(n.gelu[1] - n.gelu[0])}", delta_color="off")

left, right = st.columns(2)
with left:
    st.plotly_chart(slopes_figure(form, h), theme="streamlit", config={"displayModeBar": False})
with right:
    st.plotly_chart(gelu_minimum_figure(form), theme="streamlit", config={"displayModeBar": False})

marks = landmarks(form)
c1, c2, c3 = st.columns(3)
c1.metric("GELU's minimum", fmt(marks.minimum.value), help=f"at x = {marks.minimum.x:.6f}, where GELU′ = 0")
c1.caption(f"at x = {fmt(marks.minimum.x)}, where GELU′ = 0")
c2.metric("Steepest descent, GELU′", fmt(marks.steepest_down.value), help=f"{marks.steepest_down.value:.6f}")
c2.caption(f"at x = {fmt(marks.steepest_down.x)}" + (" = −√2" if form == "exact" else ""))
c3.metric("Steepest climb, GELU′", fmt(marks.steepest_up.value), help=f"{marks.steepest_up.value:.6f}")
c3.caption(f"at x = {fmt(marks.steepest_up.x)}" + (" = √2" if form == "exact" else ""))
st.caption("GELU′ dips below 0 left of the minimum and overshoots 1 on the right: GELU is not monotone, and "
           "for a while it rises faster than x itself.")
