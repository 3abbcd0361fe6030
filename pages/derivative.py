"""Derivative: the gradient each activation passes back, GELU′ against ReLU's jump, and where GELU bottoms out."""

import streamlit as st

import gelu_core
from draw.frame import chart, part, require_app_frame
from draw.lesson import ask_first, lesson_form
from draw.live import follow
from ui.derivative import CONTROLS as DERIVATIVE
from ui.derivative import (
    READOUT,
    extremes_words,
    gelu_minimum_figure,
    gradient_live_table,
    gradient_sentence_tail,
    gradient_words,
    landmarks,
    negative_slope_words,
    nudge,
    nudge_words,
    slopes_figure,
)
from ui.format import fixed
from ui.live import as_json

require_app_frame()  # first of all: a deep link on a fresh server must run inside app.py's frame

st.title("Derivative")
approximate = lesson_form()
form = gelu_core.form_word(approximate)
st.markdown(
    "A network learns by following the **gradient**: for every weight, how much the loss would change if that "
    "weight moved a little. The gradient is computed backwards, layer by layer, and at each activation it is "
    "multiplied by the activation's **slope** at the unit's input x. ReLU's slope is exactly 0 for every "
    "negative x, so nothing flows back through that unit and the weights feeding it stop learning from that "
    "example."
)
st.latex(r"\frac{\partial L}{\partial x} = \frac{\partial L}{\partial y}\cdot \mathrm{act}'(x)")
st.caption("The chain rule at one unit: the gradient arriving from above, times the activation's slope.")

ask_first("derivative")  # the gradients, the slopes and the landmarks answer it: they wait for the prediction

st.markdown(negative_slope_words(approximate))


@part
def gradient(approximate: str, form: str):
    """The x slider and the gradient it passes back (each slider sits right above what it moves: on a phone the
    columns stack, slider, then its readouts or chart)."""
    settings, readout = st.columns([1, 1.4], gap="medium")
    with settings:
        x = st.slider(**DERIVATIVE["x"].kwargs())
    with readout, st.container(key=READOUT):
        relu_slope, gelu_slope = gelu_core.relu_grad(x), gelu_core.gelu_grad(x, approximate)
        st.markdown(f"**The gradient flowing back**{gradient_sentence_tail(x)}")
        a, b = st.columns(2)
        a.metric("passed back by ReLU", fixed(relu_slope), help="1 × ReLU′(x)")
        b.metric(f"passed back by GELU ({form})", fixed(gelu_slope), help="1 × GELU′(x)")
        st.caption(gradient_words(relu_slope, gelu_slope))
        # the above, moved by the thumb as it goes
        follow(as_json(gradient_live_table, approximate), "derivative_x_live")


@part
def smoothness(approximate: str, form: str):
    """The nudge slider, the slopes chart it moves and the two slopes' change across it."""
    left, right = st.columns(2)
    with left:
        h = st.slider(**DERIVATIVE["nudge"].kwargs())
        chart(slopes_figure(approximate, h), "slopes")
    with right:
        n = nudge(approximate, h)
        st.markdown(f"From x = -{h:g} to x = +{h:g}:")
        st.metric("ReLU′ jumps", f"{fixed(n.relu[0], 0)} → {fixed(n.relu[1], 0)}",
                  delta=f"+{fixed(n.relu[1] - n.relu[0], 0)}", delta_color="off")
        st.metric(f"GELU′ ({form}) {nudge_words(n)}", f"{fixed(n.gelu[0])} → {fixed(n.gelu[1])}",
                  delta=f"{n.gelu[1] - n.gelu[0]:+.4f}", delta_color="off")
        st.latex(r"\mathrm{ReLU}'(x) = \begin{cases} 1 & x > 0 \\ 0 & x \le 0 \end{cases}")
        st.caption("At 0 ReLU has no slope; by convention (and in PyTorch's autograd) ReLU′(0) = 0.")
        if approximate == "none":
            st.latex(r"\begin{gathered} \mathrm{GELU}'(x) = \Phi(x) + x\,\varphi(x) \\ "
                     r"\mathrm{GELU}''(x) = \varphi(x)\,(2 - x^2) \end{gathered}")
        else:
            st.latex(r"\mathrm{GELU}'(x) = \mathrm{gate}(x) + x\,\mathrm{gate}'(x)")


gradient(approximate, form)
st.markdown("**Smoothness.** Nudge x to either side of 0 and compare how much each slope changes.")
smoothness(approximate, form)

st.subheader("Where GELU bottoms out")
marks = landmarks(approximate)
left, right = st.columns([1.4, 1])
with left:
    chart(gelu_minimum_figure(approximate), "gelu-minimum")
with right:
    st.metric("GELU's minimum", fixed(marks.minimum.value), help=f"at x = {marks.minimum.x:.6f}, where GELU′ = 0")
    st.caption(f"at x = {fixed(marks.minimum.x)}, where GELU′ = 0")
    st.metric("Lowest slope, GELU′", fixed(marks.steepest_down.value), help=f"{marks.steepest_down.value:.6f}")
    st.caption(f"at x = {fixed(marks.steepest_down.x)}" + (" = -√2" if approximate == "none" else ""))
    st.metric("Highest slope, GELU′", fixed(marks.steepest_up.value), help=f"{marks.steepest_up.value:.6f}")
    st.caption(f"at x = {fixed(marks.steepest_up.x)}" + (" = √2" if approximate == "none" else ""))
st.caption(extremes_words(marks))
