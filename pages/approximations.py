"""Approximations: exact vs tanh vs sigmoid GELU, how far apart they are, and what PyTorch computes."""

import numpy as np
import streamlit as st

from draw.frame import chart, chart_words, part, require_app_frame, whole_page_when_changed
from draw.lesson import ask_first, lesson_form
from draw.live import follow
from gelu_core import ACTIVATIONS
from ui.approximations import CONTROLS as APPROXIMATIONS
from ui.approximations import (
    DTYPES,
    LIMITS,
    POINTS,
    TABLE_X,
    cliff_words,
    digits_kept,
    dtype_limits,
    errors_words,
    forms_words,
    framework_figure,
    framework_runs,
    framework_tables,
    limits_table,
    range_live_table,
    torch_form,
    view_figures,
    worst_points,
)
from ui.format import fixed, sci
from ui.i18n import SOURCE, _, current, form_name
from ui.live import as_json

require_app_frame()  # first of all: a deep link on a fresh server must run inside app.py's frame

st.title(_("Approximations"))
st.markdown(_(
    "Exact GELU needs the normal distribution's CDF, Φ. Two cheaper formulas imitate it: "
    "the **tanh form** (GPT-2, chapter 4 of the book) and the even cheaper **sigmoid form**. "
    "How close are they, and what does a framework really return?"
))

ask_first("approximations")  # the errors' charts and figures answer it: they wait for the prediction


def three_forms_formulas():
    for key in ("gelu", "gelu_tanh", "gelu_sigmoid"):
        st.caption(ACTIVATIONS[key].label)
        st.latex(ACTIVATIONS[key].latex)


NARROW = "approximations_narrow"  # session state: whether the page's last full run found the range too narrow
CHARTS = ("approximations-forms", "approximations-absolute", "approximations-relative")


def three_forms_places() -> dict:
    """The forms tab's places, in the order they show: the range slider (and the note of a range too narrow), the
    forms chart, its words, its caption; the two error charts side by side, each with its title and words; their
    caption; the live layer; the largest errors.  The page draws the charts, their captions and what no range
    changes; the part (``three_forms``) the rest of what a move changes, the charts' words."""
    places = {"slider": st.container(), "charts": {}, "words": {}}
    places["charts"][CHARTS[0]], places["words"][CHARTS[0]] = st.container(), st.container()
    places["forms caption"] = st.container(key="approximations_forms_words")
    for name, col in zip(CHARTS[1:], st.columns(2), strict=True):
        places["charts"][name], places["words"][name] = col.container(), col.container()
    places["errors caption"] = st.container(key="approximations_errors_words")
    places["layer"], places["largest"] = st.container(), st.container()
    return places


@part
def three_forms(shown: bool, places: dict):
    """The range slider and the three charts' words (what a screen reader hears of them: the data in view), which a
    move changes.  The charts, whose data are the same for every range, and their two captions are the page's
    (``three_charts``), with the live layer: on a move it has set the view and the captions the page would draw.
    The figures at the range, on the page's full run (None: nothing to chart)."""
    with places["slider"]:
        lo, hi = st.slider(**APPROXIMATIONS["range"].kwargs())
    if not shown:
        return None  # the slider stays (it holds its URL value); the charts are drawn only on the open tab
    narrow = hi - lo < 0.5
    whole_page_when_changed(NARROW, narrow)  # the charts appear or go: the page draws them
    if narrow:
        places["slider"].info(_("Pick a range at least {width} wide: drag the two ends of the slider apart.").format(
            width=fixed(0.5, 1)))
        return None
    figures = view_figures(lo, hi, worst_points())  # the curves over the slider's whole span, the range as the view
    for name, box in places["words"].items():
        with box:
            chart_words(figures[name], name)
    return figures


def three_charts(places: dict, figures: dict, lo: float, hi: float) -> None:
    """The three charts and the two captions at the range of the page's run (the view and the captions follow the
    thumbs from then on: the live layer, one table for every range), the error charts' titles, and the largest
    error of each form, which no range changes."""
    places["forms caption"].caption(forms_words(lo, hi))
    places["errors caption"].caption(errors_words(lo))
    titles = {CHARTS[1]: _("**Absolute error**"), CHARTS[2]: _("**Relative error**")}
    for name, box in places["charts"].items():
        with box:
            if name in titles:
                st.markdown(titles[name])
            chart(figures[name], name, words=False)
    with places["layer"]:  # the charts' axes and the two captions, moved as the thumbs go
        follow(as_json(range_live_table), "approximations_range_live")
    worst = worst_points()
    for col, a in zip(places["largest"].columns(2), ("tanh", "sigmoid"), strict=True):
        at_x, value = worst[a]
        col.metric(_("Largest error, {form} form").format(form=form_name(a)), sci(value, 2),
                   help=_("{error} at x = ±{x}").format(error=sci(value, 6), x=fixed(at_x, 6)))
        col.caption(_("at x = ±{x}, marked on the absolute-error chart").format(x=fixed(at_x, 2)))


@part
def what_pytorch_computes(shown: bool):
    intro = st.empty()  # written once the tab is open: its numbers come from torch
    with st.expander(_("Why it becomes 0, for the curious")):
        st.markdown(_(
            "PyTorch's CPU kernel computes exact GELU as ½·x·(1 + erf(x/√2)) in float32 (bfloat16 and float16 are "
            "widened to float32 for it). Once erf(x/√2) rounds to -1, the sum 1 + erf is exactly 0, and so is "
            "the answer. gelu_core, this app's own computation, writes the same function with erfc, which never "
            "subtracts two nearly equal numbers, and works in float64 before rounding once to the dtype."
        ))
        st.latex(r"\tfrac12\,x\,\bigl(1 + \operatorname{erf}(x/\sqrt2)\bigr)"
                 r"\;=\;\tfrac12\,x\,\operatorname{erfc}(-x/\sqrt2)")
        st.caption(_("Dotted lines on the chart: half a unit in the last place, the best a dtype can do with normal "
                     "numbers. The dashed line is gelu_core's own result, rounded once from float64."))
    approximate = torch_form(lesson_form())
    if approximate != lesson_form():
        st.info(_("PyTorch has no {form} form of GELU: this tab shows its exact one.").format(
            form=form_name(lesson_form())),
                icon=":material/info:")
    dtypes = st.multiselect(**APPROXIMATIONS["fw_dtypes"].kwargs())
    lo, hi = st.slider(**APPROXIMATIONS["fw_range"].kwargs())
    if not shown:
        return  # torch is imported only when this tab is open
    intro.markdown(_(
        "A framework stores numbers with a fixed number of digits: {digits}. For most inputs PyTorch's GELU is as "
        "close to the true value as those digits allow. Far to the left, though, it returns **exactly 0** from some "
        "point on, although the true GELU there is a tiny negative number that float32 could still hold. The chart "
        "shows how far PyTorch's answer is from the true value, as a share of it: 100 % means the answer is 0."
    ).format(digits=digits_kept(DTYPES)))
    if not dtypes:
        st.info(_("Pick at least one number format to compare."))
        return
    if hi - lo < 0.5:
        st.info(_("Pick a range at least {width} wide: drag the two ends of the slider apart.").format(
            width=fixed(0.5, 1)))
        return
    order = tuple(d for d in DTYPES if d in dtypes)
    with st.spinner(_("Asking PyTorch…")):
        runs = framework_runs(tuple(np.linspace(lo, hi, POINTS).tolist()), order, approximate)
        table_runs = framework_runs(TABLE_X, order, approximate)
        limits = {d: dtype_limits(d, approximate) for d in order}
    ours = runs[order.index("float32")] if "float32" in order else runs[0]
    chart(framework_figure(runs, ours=ours, roundoff={d: v["roundoff"] for d, v in limits.items()},
                           cliff=(order[0], limits[order[0]]["every"])), "approximations-pytorch")
    st.caption(_(
        "PyTorch's {form} GELU against the true value (computed in float64 at the very input PyTorch received). "
        "Dashed: this app's own {dtype} result. The axis stops at 10⁻¹²."
    ).format(form=form_name(approximate), dtype=ours.dtype))
    st.markdown(_("**Where the answer becomes 0**"))
    limits_shown = limits_table(limits)
    if current() == SOURCE:
        st.dataframe(limits_shown, hide_index=True, key="approximations_fw_limits",
                     column_config={"x": st.column_config.NumberColumn(format="%.6f")})
    else:  # the grid's own number format is English's: the reader's, as text
        st.dataframe({**limits_shown, "x": [fixed(v, 6) for v in limits_shown["x"]]}, hide_index=True,
                     key="approximations_fw_limits")
    every, some, holds = (_(label) for label, _key in LIMITS)
    st.caption(" ".join(filter(None, [
        _("Between “{every}” and “{some}”, 1 + erf(x/√2) (or 1 + tanh) is only a few units in the last place, so "
          "some inputs give 0 and their neighbours do not. “{holds}” is where even a perfect kernel must return 0, "
          "because the dtype holds nothing that small.").format(every=every, some=some, holds=holds),
        cliff_words(limits),
        _("These edges are what PyTorch computes on this server's CPU: another processor (another vector width or "
          "kernel path) can move them a little, and may give +0 where this one gives −0.")])))
    st.markdown(_("**A few inputs, digit by digit**"))
    tables = framework_tables(table_runs, ours=table_runs[order.index(ours.dtype)])
    for row in range(0, len(tables), 2):  # two tables a row on a desktop; one under the other on a phone
        for col, (name, title, table) in zip(st.columns(2), tables[row:row + 2], strict=False):
            col.caption(title)
            if current() == SOURCE:
                config = {c: st.column_config.NumberColumn(format="%.4e") for c in table if c != "x"}
                config["x"] = st.column_config.NumberColumn(format="%.1f")
                col.dataframe(table, hide_index=True, column_config=config, key=f"approximations_fw_table_{name}")
            else:  # the grid's own number format is English's: the reader's, as text
                shown = {c: [fixed(v, 1) if c == "x" else sci(v, 4) for v in values] for c, values in table.items()}
                col.dataframe(shown, hide_index=True, key=f"approximations_fw_table_{name}")
    st.caption(_("Every x in the tables is exact in each dtype, so all the error is the kernel's."))


forms_tab, torch_tab = st.tabs(**APPROXIMATIONS["view"].kwargs())
with forms_tab:
    three_forms_formulas()  # before the part: the range moves nothing in them
    places = three_forms_places()
    figures = three_forms(bool(forms_tab.open), places)
    if figures is not None:
        three_charts(places, figures, *st.session_state[APPROXIMATIONS["range"].key])
with torch_tab:
    what_pytorch_computes(bool(torch_tab.open))
