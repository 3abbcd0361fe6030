"""Curves: ReLU and GELU on one shared range, a probe that reads both, other activations on top."""

import streamlit as st

import gelu_core
from draw.frame import chart, part, require_app_frame, whole_page_when_changed
from draw.lesson import ask_first, lesson_form
from draw.live import follow
from ui.controls import ordered_range
from ui.curves import CONTROLS as CURVES
from ui.curves import (
    OVERLAY_PARAMS,
    READOUT,
    curves_figure,
    probe_live_table,
    readout_texts,
    shape_words,
    table_points,
    values_tables,
)
from ui.format import fixed
from ui.i18n import SOURCE, _, current
from ui.live import as_json

require_app_frame()  # first of all: a deep link on a fresh server must run inside app.py's frame

st.title(_("Curves"))
approximate = lesson_form()
st.markdown(_("ReLU and GELU drawn together over a range of x: where they agree, where they part, and how GELU "
              "treats a large positive number."))

ask_first("curves")  # the chart, the probe and the sentences quote GELU(3): they wait for the prediction

st.markdown(shape_words(approximate))
# The probe and the chart it moves sit together (on a phone the chart follows the probe directly);
# the range, the point count and the overlays come after.
probe_col, chart_col = st.columns([1, 2.4], gap="large")
with probe_col:
    probe_box = st.container()  # the probe x, drawn by ``probe`` below with the words of the chart it moves
with st.expander(_("Range, points and other activations"), expanded=True):
    r1, r2 = st.columns(2)
    lo, hi = r1.slider(**CURVES["range"].kwargs())
    n = r2.slider(**CURVES["n"].kwargs())
    overlays = st.multiselect(**CURVES["more"].kwargs())
    params = {}
    for col, (name, (control, param)) in zip(st.columns(2), OVERLAY_PARAMS.items(), strict=True):
        if name in overlays:
            params[name] = {param: col.slider(**CURVES[control].kwargs())}


with chart_col:
    if lo == hi:
        st.info(_("The range is a single point, so the chart shows {low} … {high}.").format(
            low=fixed(lo - 1, 1), high=fixed(hi + 1, 1)))
    chart_box = st.container()
lo_hi = ordered_range(lo, hi)  # the chart's view of x
PROBE_IN_VIEW = "curves_probe_in_view"  # session state: the page's last full run drew the probe inside the view


def figure_at(x: float):
    """The chart with its probe at x, over the range, points and overlays chosen."""
    return curves_figure(*lo_hi, n, approximate, x, overlays, params)


@part
def probe():
    """The probe x in its place, drawn once the range, the point count and the overlays are read: a move of x reruns
    this alone.  The chart, its words and the readouts under it are the page's, which the live layer moves and writes.
    The words say the probe only while it is in the range's view: a move into or out of it reruns the whole page."""
    with probe_box:
        x = st.slider(**CURVES["x"].kwargs())
    whole_page_when_changed(PROBE_IN_VIEW, lo_hi[0] <= x <= lo_hi[1])
    return x


def at_x(x: float, approximate: str) -> None:
    """The chart and its words, and ReLU, GELU and the gate at x: the page's, at the probe's value (a move moves and
    writes them in the browser)."""
    with chart_box:
        chart(figure_at(x), "curves", said=True)
    t = readout_texts(x, approximate)
    c1, c2, c3 = st.container(key=READOUT).columns(3)
    c1.metric(t["relu_label"], t["relu"])
    c2.metric(t["gelu_label"], t["gelu"], help="GELU(x) = x · gate(x)")
    c3.metric(t["gate_label"], t["gate"], help=_("How open GELU's door is at this x, from 0 to 1."))


x = probe()
with chart_col:  # the above, moved by the thumb as it goes: one table for every x at this range, the page's
    at_x(x, approximate)
    follow(as_json(probe_live_table, approximate, *lo_hi), "curves_x_live")

f1, f2 = st.columns(2)
f1.latex(gelu_core.get_activation("relu").latex)
f2.latex(gelu_core.get_activation(gelu_core.GELU_FORMS[approximate]).latex)
others = [name for name in overlays if name != gelu_core.GELU_FORMS[approximate]]
if others:
    with st.expander(_("The overlaid activations")):
        for name in others:
            other = gelu_core.get_activation(name)
            st.latex(other.latex)
            st.caption(_(other.description))

st.subheader(_("Values at chosen points"))
points_text = st.text_input(**CURVES["points"].kwargs())
points, problem = table_points(points_text)
if problem:
    st.info(problem)
tables = values_tables(points, approximate, overlays, params)
for row in range(0, len(tables), 2):  # two side by side on a desktop; one under the other on a phone
    for col, (i, table) in zip(st.columns(2), enumerate(tables[row:row + 2], start=row), strict=False):
        if current() == SOURCE:
            col.dataframe(table, hide_index=True, key="curves_table" if i == 0 else f"curves_table_{i}",
                          column_config={k: st.column_config.NumberColumn(k, format="%.4f") for k in table})
        else:  # the grid's own number format is English's: the reader's, as text
            col.dataframe({k: [fixed(v) for v in column.tolist()] for k, column in table.items()}, hide_index=True,
                          key="curves_table" if i == 0 else f"curves_table_{i}")
