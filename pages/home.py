"""Home: the story in a minute. Five inputs through ReLU and GELU, one chart, where to go next."""

import streamlit as st

import gelu_core
from draw.frame import (
    chart,
    chart_words,
    csv_button,
    latest,
    page_link,
    part,
    require_app_frame,
    text_table,
    whole_page_while,
)
from draw.lesson import ask_first, lesson_form
from draw.live import follow
from ui.home import INPUTS, PROSE, five_inputs_table, input_live_json, on_grid, on_screen, overview_figure, prose
from ui.i18n import _, form_name
from ui.pages import PAGES

require_app_frame()  # first of all: a deep link on a fresh server must run inside app.py's frame
form = lesson_form()

INPUT_WIDTH = 104  # px: "-20.00" fits; three to a row on a 390 px phone (the step buttons show from ~120 px)

st.title("GELU Explorer")
st.markdown(_(
    "Inside a transformer block (GPT-2, BERT and most large language models) every number passes through an "
    "**activation** between two linear layers, and that activation is usually GELU. ReLU is a door that is "
    "either shut or open. GELU is a door that opens **a little or a lot, depending on the number itself**."
))

left, right = st.columns(2)
with left:
    st.latex(r"\mathrm{ReLU}(x) = \max(0,\,x)")
    st.caption(_("A hard rule: a negative becomes 0, a positive passes unchanged."))
with right:
    st.latex(r"\mathrm{GELU}(x) = x \cdot \Phi(x)")
    st.caption(_("x times its gate Φ(x): the chance that a standard-normal sample falls below x."))
if form != "none":  # the form the lesson computes, when it is not the exact one
    st.latex(gelu_core.ACTIVATIONS[gelu_core.GELU_FORMS[form]].latex)
    st.caption(_("The {form} form computes a gate close to Φ(x) more cheaply; GPT-2 and the book's chapter 4 use the "
                 "tanh form. The numbers below are in this form.").format(form=form_name(form)))

ask_first("home")  # the rest of the page answers the question: it waits for the student's prediction

st.subheader(_("Five numbers through both"))
st.caption(_("Change any input; the table and the chart follow. The defaults are the five from the book's chapter 4."))


# The places of the five inputs and what they move, made once a page run.  The inputs in a row that wraps (three and
# two on a phone) rather than five columns stacked five high: the table stays close.  A move reruns
# ``inputs_and_views`` alone, which draws the inputs in their row and the chart's words in its own place, below the
# chart (a place of its own is drawn with it: one message a move fewer than a place the page made); the page fills
# the rest (the table and the paragraphs: the layer writes them as a key is held or a number typed).
inputs_row = st.container(horizontal=True, gap="small", key="home_inputs")
table_box = st.container()
st.caption(_("gate: how open GELU's door is. GELU = x · gate, both in the lesson's {form} form; the last column is "
             "GELU in the other form, for comparison.").format(form=form_name(form)))
download_box, chart_box = st.container(), st.container()


@part
def inputs_and_views(form: str) -> tuple:
    """The five inputs and what they move that the live layer cannot keep: the chart's words, here.  A number typed
    between the inputs' steps, which the layer does not show, reruns the whole page.  The inputs' values and the
    chart's figure at them (for the page's full run)."""
    with inputs_row:
        inputs = [st.number_input(**c.kwargs(), width=INPUT_WIDTH) for c in INPUTS]
    whole_page_while(not all(on_grid(x) for x in inputs))  # the page draws the table and paragraphs at them
    now["inputs"] = inputs  # the page's download makes its table at the click from them
    fig = overview_figure(inputs, form)
    chart_words(fig, "home")
    return inputs, fig


def as_columns(table: dict) -> dict[str, list]:
    """The table's columns as the CSV download writes them: plain numbers."""
    return {name: column.tolist() for name, column in table.items()}


now = latest("home")  # the five inputs as the part last read them
inputs, fig = inputs_and_views(form)
layers_box = st.container(gap=None)  # the five live layers (below), in one slot: one gap above the paragraphs
prose_box = st.container(key=PROSE)
table = five_inputs_table(inputs, form)
with table_box:  # five rows: a plain table (the interactive grid is a large chunk of code for a first page)
    text_table(on_screen(table), hide_index=True, width="content")
with download_box:
    csv_button(lambda: as_columns(five_inputs_table(now["inputs"], form)), "home")
with chart_box:  # its points, stubs, view and label: the layers' as an input moves, and at rest
    chart(fig, "home", words=False)
prose_box.markdown(prose(inputs, form))
# The five live layers: each input's row and points, the chart's view and the paragraphs, as a key is held or a
# number typed.  Their tables do not depend on the inputs' values, so the page draws them: a move sends none.
with layers_box:  # no keys: a keyed component is one more entry Streamlit reads back at each of the five inputs
    for i in range(len(INPUTS)):
        follow(input_live_json(i, form))

st.subheader(_("The lesson, step by step"))
cards = [row for row in PAGES.values() if row.card and not row.aside]
for start in range(0, len(cards), 3):
    for col, row in zip(st.columns(3), cards[start:start + 3], strict=False):
        with col:
            page_link(row.url_path, label=_(row.title), icon=row.icon)
        col.caption(_(row.card))
for row in PAGES.values():
    if row.aside:
        page_link(row.url_path, label=_("Aside: {page}").format(page=_(row.title)), icon=row.icon)
        st.caption(_(row.card))
