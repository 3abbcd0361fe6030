"""Home: the story in a minute. Five inputs through ReLU and GELU, one chart, where to go next."""

import streamlit as st

from ui.controls import HOME
from ui.frame import require_app_frame
from ui.home import TABLE_COLUMNS, five_inputs_table, overview_figure

require_app_frame()  # first of all: a deep link on a fresh server must run inside app.py's frame

st.title("GELU Explorer")
st.markdown(
    "Inside a transformer block (GPT-2, BERT and most large language models) every number passes through an "
    "**activation** between two linear layers, and that activation is usually GELU. ReLU is a door that is "
    "either shut or open. GELU is a door that opens **a little or a lot, depending on the number itself**."
)

left, right = st.columns(2)
with left:
    st.latex(r"\mathrm{ReLU}(x) = \max(0,\,x)")
    st.caption("A hard rule: a negative becomes 0, a positive passes unchanged.")
with right:
    st.latex(r"\mathrm{GELU}(x) = x \cdot \Phi(x)")
    st.caption("x times its gate Φ(x): the chance that a standard-normal sample falls below x.")

st.subheader("Five numbers through both")
st.caption("Change any input; the table and the chart follow. The defaults are the five from the book's chapter 4.")
inputs = [col.number_input(**c.kwargs()) for col, c in zip(st.columns(5), HOME, strict=True)]

table = five_inputs_table(inputs)
st.dataframe(
    table,
    hide_index=True,
    column_config={name: st.column_config.NumberColumn(name, help=help_, format="%.4f")
                   for name, help_ in TABLE_COLUMNS.items()},
)
st.markdown(
    "Look at **x = −1**: ReLU gives exactly 0, GELU gives about **−0.1588** (tanh form; the exact form "
    "−0.1587). GELU shrinks a negative input hard but does not erase it. On the positive side it lets a "
    "little less than all of x through: 0.8412 of 1."
)
st.plotly_chart(overview_figure(inputs), theme="streamlit", config={"displayModeBar": False})

st.subheader("Where next")
NEXT = [
    ("pages/curves.py", "Curves", ":material/show_chart:",
     "both curves on one range: probe any x, overlay sigmoid, SiLU and friends."),
    ("pages/gate.py", "The gate", ":material/door_open:",
     "where Φ(x) comes from: the area under the bell curve, and the bouncer at the door."),
    ("pages/derivative.py", "Slopes", ":material/trending_up:",
     "why smooth matters: ReLU's slope jumps at 0, GELU's glides."),
    ("pages/approximations.py", "Approximations", ":material/compare:",
     "exact against tanh against sigmoid, and what your framework really computes."),
    ("pages/steps.py", "Step by step", ":material/stairs:", "one number through the tanh formula, line by line."),
    ("pages/ffn.py", "Feed-forward lab", ":material/hub:",
     "GPT-2's 768 → 3072 → 768 block on tensors you upload."),
]
for row in (NEXT[:3], NEXT[3:]):
    for col, (path, label, icon, teaser) in zip(st.columns(3), row, strict=True):
        col.page_link(path, label=label, icon=icon)
        col.caption(teaser)
