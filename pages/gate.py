"""The gate: Φ(x) and its approximations, the bell curve it comes from, and a gate you can soften or harden."""

import streamlit as st

import gelu_core
from draw.frame import chart, part, require_app_frame, whole_page_when_changed
from draw.lesson import ask_first, lesson_form
from draw.live import follow
from ui.format import fixed, percent
from ui.gate import CONTROLS as GATE
from ui.gate import (
    DRAWN,
    READOUT,
    bell_figure,
    bell_words_shape,
    bouncer_readouts,
    bouncer_words,
    gap_per_sigma,
    gate_figure,
    gate_live_table,
    generalised_figure,
    readout_texts,
)
from ui.i18n import _
from ui.live import as_json

require_app_frame()  # first of all: a deep link on a fresh server must run inside app.py's frame
form = lesson_form()

st.title(_("The gate"))
st.markdown(_(
    "GELU multiplies x by a **gate** between 0 and 1 that x computes for itself. The gate is no stored weight: "
    "it is the chance that a number drawn from the standard bell curve lands **below x**."
))
st.latex(r"\begin{gathered} \mathrm{GELU}(x) = x \cdot \Phi(x) \\ \Phi(x) = P(Z \le x),\quad Z \sim \mathcal{N}(0, 1) "
         r"\end{gathered}")

ask_first("gate")  # the bouncer, the readouts and the charts answer the question: they wait for the prediction

st.markdown(_("**The bouncer.** Show him a card; he opens the door by the chance a bell-curve sample is below it."))
cards = bouncer_readouts()
for col, (x, gate) in zip(st.columns(len(cards)), cards, strict=True):
    col.metric(_("card {x}").format(x=fixed(x, 0)), _("{open} open").format(open=percent(gate)),
               help=f"Φ({fixed(x, 0)}) = {fixed(gate, 6)}")
st.caption(bouncer_words(cards))


# The slider, then the two charts it moves side by side (on a phone the bell curve follows the slider directly), then
# the readouts: their places and the charts' titles are drawn here, once a page run; a move reruns ``probe`` alone,
# which fills the places of what the live layer cannot keep.
slider_box = st.container()
bell, curves = st.columns(2)
bell.markdown(_("**Where the gate comes from**: the shaded area under the bell curve."))
curves.markdown(_("**The gate itself**, exact and the two cheaper look-alikes."))
bell_chart, gate_chart = bell.container(), curves.container()
readout = st.container(key=READOUT).columns(3)
layer = st.container()  # the live layer's (below)


@part
def probe():
    """The slider and what it moves that the live layer cannot keep, in its place: the gate's readout, whose help holds
    its digits.  The charts, their words and the other two readouts are the page's, which the live layer moves and
    writes.  The gate's label changes corner with x's sign, and the shaded area's words have fewer rows near the left
    end: a move that changes either reruns the whole page."""
    with slider_box:
        x = st.slider(**GATE["x"].kwargs())
    whole_page_when_changed(DRAWN, (x <= 0, bell_words_shape(x)))
    (gate_label, gate_text), _gelu, _relu = readout_texts(x, form)
    readout[0].metric(gate_label, gate_text, help=fixed(gelu_core.gelu_gate(x, approximate=form), 6))  # its help too
    return x


def at_x(x: float) -> None:
    """The two charts and their words, and GELU and ReLU beside the gate: the page's, at the slider's value (a move
    moves and writes them in the browser)."""
    with bell_chart:
        chart(bell_figure(x), "gate-bell", said=True)
    with gate_chart:
        chart(gate_figure(x), "gate", said=True)
    _gate, (gelu_label, gelu_text), (relu_label, relu_text) = readout_texts(x, form)
    readout[1].metric(gelu_label, gelu_text)
    readout[2].metric(relu_label, relu_text, help=_("ReLU's gate is 1 for x > 0 and 0 otherwise."))


at_x(probe())
with layer:  # the metrics and the charts' probes, moved by the thumb as it goes: one table for every x, the page's
    follow(as_json(gate_live_table, form), "gate_x_live")
st.latex(r"\begin{gathered} \Phi(x) \approx \tfrac12\left(1 + \tanh u\right), \\ "
         r"u = \sqrt{2/\pi}\,(x + 0.044715\,x^3) \\ \Phi(x) \approx \sigma(1.702\,x) \end{gathered}")

st.subheader(_("Soften or harden the gate"))
st.markdown(_(
    "Replace the standard bell curve with one centred at μ and σ wide. A wide bell gives a lazy gate; as σ "
    "shrinks the gate sharpens, and at **σ = 0** it becomes a hard step: with μ = 0, x · gate is exactly ReLU."
))
st.latex(r"\begin{gathered} \mathrm{gate}(x;\,\mu,\sigma) = \Phi\!\left(\frac{x - \mu}{\sigma}\right) \\ "
         r"\sigma = 0:\;\; \mathrm{gate} = \begin{cases} 1 & x > \mu \\ 0 & x \le \mu \end{cases} \end{gathered}")


@part
def soften():
    """μ and σ, the generalised gate's chart and its gap from ReLU."""
    m, s = st.columns(2)
    mu = m.slider(**GATE["mu"].kwargs())
    sigma = s.slider(**GATE["sigma"].kwargs())
    fig, gap = generalised_figure(mu, sigma)
    chart(fig, "gate-soften")
    # the range held together (no-break spaces): broken after "-3 …" on a phone the label read as cut by an ellipsis
    st.metric(_("Largest gap between x · gate and ReLU on {low}\u00a0…\u00a0{high}").format(low="-3", high="3"),
              fixed(gap),
              help=_("With μ = 0 the gap is {gap} · σ: it closes as σ goes to 0.").format(gap=fixed(gap_per_sigma())))


soften()
