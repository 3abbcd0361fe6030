"""Step by step: one number through GPT-2's tanh GELU, one small operation a line."""

import streamlit as st

from draw.frame import chart, csv_button, latest, part, require_app_frame, text_table, whole_page_while
from draw.lesson import ask_first
from draw.live import follow
from gelu_core import ACTIVATIONS, gelu, tanh_steps
from ui.format import full
from ui.i18n import _
from ui.live import as_json
from ui.steps import (
    BOOK_X,
    READOUT,
    STEPS_PICK_LIMIT,
    digits_table,
    metric_values,
    on_screen,
    step_table,
    steps_chart,
    steps_live_table,
)
from ui.steps import CONTROLS as STEPS

require_app_frame()  # first of all: a deep link on a fresh server must run inside app.py's frame

st.title(_("Step by step"))
st.markdown(_(
    "The tanh form looks dense only because several small operations share one line. "
    "Pick a number and follow it through them, the way chapter 4's code computes it."
))
st.latex(ACTIVATIONS["gelu_tanh"].latex)

ask_first("steps")  # the readouts and the steps show both forms at x: they wait for the prediction


def _picked():
    """The slider is a coarse pick: copy it, rounded to its tenths, into the exact input."""
    st.session_state["steps_x"] = round(float(st.session_state["steps_pick"]), 1)


def _book_example():
    """x = 1, the example the book's chapter 4 unfolds (there the gate and GELU are the same number)."""
    st.session_state["steps_x"] = BOOK_X


# The places of what the number moves, made once a page run: the number and its coarse pick side by side, the chart
# right after them (on a phone it follows the slider directly), then the readouts, the book's example and the steps.
# The number input is the source of truth (and the URL's); the slider is a coarse pick that follows it.  A move of
# either reruns ``number`` alone, which fills the places of what the live layer cannot keep; the page fills the rest
# at the number's value (the layer writes them while the pick goes).
pick_col, exact_col = st.columns([3, 1], vertical_alignment="bottom")
chart_box = st.container()
readout = st.container(key=READOUT)  # what the pick slider moves as it goes
metrics = readout.columns(3)
readout.button(_("x = {x}, the book's example").format(x=f"{BOOK_X:g}"), key="steps_book", on_click=_book_example,
               icon=":material/menu_book:",
               help=_("At x = 1 the gate and GELU are the same number, so the last step, multiply by x, changes "
                      "nothing."))
with readout.container():
    show_all = st.toggle(**STEPS["full"].kwargs())  # the page's: the layer's table has every digit's rows, or none
    table_box, download_box, caption_box = st.container(), st.container(), st.container()
    digits_box, digits_download_box = st.container(), st.container()
layer = readout.container()  # the live layer's (below)


@part
def number(show_all: bool) -> float:
    """The number, its coarse pick, and what they move that the live layer cannot keep: the two forms' readouts
    (their help holds every digit).  A number typed off the pick's grid (or beyond its ends), which the layer does
    not show, reruns the whole page."""
    with exact_col:
        x = st.number_input(**STEPS["x"].kwargs())
    coarse = min(max(round(x, 1), -STEPS_PICK_LIMIT), STEPS_PICK_LIMIT)
    if st.session_state.get("steps_pick", STEPS["pick"].default) != coarse:
        st.session_state["steps_pick"] = coarse
    with pick_col:
        st.slider(**STEPS["pick"].kwargs(), on_change=_picked)
    whole_page_while(x != coarse)  # the page draws the steps at x: the layer's rows are the pick's

    steps = tanh_steps(x)
    tanh_value = steps[-1].value
    exact_value = gelu(x)
    c1, c2, _c3 = metrics
    tanh_text, exact_text, _difference = metric_values(x, steps)
    c1.metric(_("tanh form"), tanh_text, help=full(tanh_value))
    c2.metric(_("exact  x·Φ(x)"), exact_text, help=full(exact_value))
    now["x"] = x  # the page's downloads make their tables at the click from it
    return x


def steps_at(x: float, show_all: bool) -> None:
    """The chart and its words, the difference between the forms and the steps at x, and every digit when asked for,
    and their downloads (their tables made at the click, at the number the part last read): the page's."""
    steps = tanh_steps(x)
    with chart_box:
        chart(steps_chart(x, steps), "steps", said=True)
    metrics[2].metric(_("difference (tanh − exact)"), metric_values(x, steps)[2],
                      help=_("What the approximation costs at this x, in float64."))
    with table_box:
        text_table(on_screen(step_table(x, steps)), hide_index=True)
    caption_box.caption(_("The step “{gate}” is the gate; “{gelu}” multiplies the input by it. Values are rounded to "
                          "six decimals, as in the source; “Show every digit” adds each value in full float64.").format(
        gate=steps[-2].label, gelu=steps[-1].label))
    with download_box:
        csv_button(lambda: step_table(now["x"], tanh_steps(now["x"])), "steps")
    if show_all:
        digits_box.table(digits_table(steps), hide_index=True)
        with digits_download_box:
            csv_button(lambda: digits_table(tanh_steps(now["x"])), "steps-digits",
                       label=_("Download every digit (CSV)"))


now = latest("steps")  # the number as the part last read it
steps_at(number(show_all), show_all)
with layer:  # the readouts and the steps, moved by the pick as it goes: one table for every pick, the page's
    follow(as_json(steps_live_table, show_all), "steps_pick_live")
