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
    gradient_sentence,
    gradient_words,
    landmarks,
    negative_slope_words,
    nudge,
    nudge_label,
    slopes_figure,
)
from ui.format import fixed, local
from ui.i18n import _, form_name
from ui.live import as_json

require_app_frame()  # first of all: a deep link on a fresh server must run inside app.py's frame

st.title(_("Derivative"))
approximate = lesson_form()
form = form_name(approximate)
st.markdown(_(
    "A network learns by following the **gradient**: for every weight, how much the loss would change if that "
    "weight moved a little. The gradient is computed backwards, layer by layer, and at each activation it is "
    "multiplied by the activation's **slope** at the unit's input x. ReLU's slope is exactly 0 for every "
    "negative x, so nothing flows back through that unit and the weights feeding it stop learning from that "
    "example."
))
st.latex(r"\frac{\partial L}{\partial x} = \frac{\partial L}{\partial y}\cdot \mathrm{act}'(x)")
st.caption(_("The chain rule at one unit: the gradient arriving from above, times the activation's slope."))

ask_first("derivative")  # the gradients, the slopes and the landmarks answer it: they wait for the prediction

st.markdown(negative_slope_words(approximate))


@part
def gradient_x():
    """The x slider alone: a move reruns it and nothing else (the live layer has already written the readouts at
    the thumb's value; they are the page's, drawn below at the slider's value by the page's full run)."""
    st.slider(**DERIVATIVE["x"].kwargs())


def gradient(x: float, approximate: str, form: str) -> None:
    """The gradient x passes back: a sentence, the two slopes and their words."""
    relu_slope, gelu_slope = gelu_core.relu_grad(x), gelu_core.gelu_grad(x, approximate)
    st.markdown(gradient_sentence(x))
    a, b = st.columns(2)
    a.metric(_("passed back by ReLU"), fixed(relu_slope), help="1 × ReLU′(x)")
    b.metric(_("passed back by GELU ({form})").format(form=form), fixed(gelu_slope), help="1 × GELU′(x)")
    st.caption(gradient_words(relu_slope, gelu_slope))


@part
def smoothness(approximate: str, form: str):
    """The nudge slider, the slopes chart it moves and the two slopes' change across it."""
    left, right = st.columns(2)
    with left:
        h = st.slider(**DERIVATIVE["nudge"].kwargs())
        chart(slopes_figure(approximate, h), "slopes")
    with right:
        n = nudge(approximate, h)
        st.markdown(_("From x = -{h} to x = +{h}:").format(h=local(f"{h:g}")))
        st.metric(_("ReLU′ jumps"), f"{fixed(n.relu[0], 0)} → {fixed(n.relu[1], 0)}",
                  delta=f"+{fixed(n.relu[1] - n.relu[0], 0)}", delta_color="off")
        st.metric(nudge_label(n, approximate), f"{fixed(n.gelu[0])} → {fixed(n.gelu[1])}",
                  delta=local(f"{n.gelu[1] - n.gelu[0]:+.4f}"), delta_color="off")
        st.latex(r"\mathrm{ReLU}'(x) = \begin{cases} 1 & x > 0 \\ 0 & x \le 0 \end{cases}")
        st.caption(_("At 0 ReLU has no slope; by convention (and in PyTorch's autograd) ReLU′(0) = 0."))
        if approximate == "none":
            st.latex(r"\begin{gathered} \mathrm{GELU}'(x) = \Phi(x) + x\,\varphi(x) \\ "
                     r"\mathrm{GELU}''(x) = \varphi(x)\,(2 - x^2) \end{gathered}")
        else:
            st.latex(r"\mathrm{GELU}'(x) = \mathrm{gate}(x) + x\,\mathrm{gate}'(x)")


# Each slider sits right above what it moves: on a phone the columns stack, slider, then its readouts
settings, readout = st.columns([1, 1.4], gap="medium")
with settings:
    gradient_x()
with readout, st.container(key=READOUT):
    gradient(st.session_state[DERIVATIVE["x"].key], approximate, form)
# the gradient's readouts, moved by the thumb as it goes: one table for every x, the page's
follow(as_json(gradient_live_table, approximate), "derivative_x_live")
st.markdown(_("**Smoothness.** Nudge x to either side of 0 and compare how much each slope changes."))
smoothness(approximate, form)

st.subheader(_("Where GELU bottoms out"))
marks = landmarks(approximate)
left, right = st.columns([1.4, 1])
with left:
    chart(gelu_minimum_figure(approximate), "gelu-minimum")
with right:
    st.metric(_("GELU's minimum"), fixed(marks.minimum.value),
              help=_("at x = {x}, where GELU′ = 0").format(x=fixed(marks.minimum.x, 6)))
    st.caption(_("at x = {x}, where GELU′ = 0").format(x=fixed(marks.minimum.x)))
    st.metric(_("Lowest slope, GELU′"), fixed(marks.steepest_down.value), help=fixed(marks.steepest_down.value, 6))
    st.caption(_("at x = {x}").format(x=fixed(marks.steepest_down.x) + (" = -√2" if approximate == "none" else "")))
    st.metric(_("Highest slope, GELU′"), fixed(marks.steepest_up.value), help=fixed(marks.steepest_up.value, 6))
    st.caption(_("at x = {x}").format(x=fixed(marks.steepest_up.x) + (" = √2" if approximate == "none" else "")))
st.caption(extremes_words(marks))
