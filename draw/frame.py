"""The furniture every page shares, drawn with Streamlit: the page guard, the link check, the share link,
the presenter view, the lesson around each page, the code for each view, and one way to draw a chart.

* ``require_app_frame()``: while a folder named ``pages/`` sits beside the main script, Streamlit runs a deep
  link's page on its own (no page config, no frame) until some session has run ``st.navigation``
  (``hosting.internals.in_pages_directory_mode``).  Every page calls this first: it clears the flag and reruns
  through app.py, which routes to the same page with the same URL parameters.
* ``check_link(controls)``: an old link's keys are read as their controls' keys now (``PageControls.renamed``);
  a URL value a control cannot take is dropped before the widget reads it, and the page says which and shows
  the default.
* ``share_link()``: the page's URL holds every bound control, so the link is copied from the browser's
  address bar when the button is pressed.
* ``presenting()``: ``?present=true`` hides the sidebar and the lesson around the page and enlarges the type,
  charts' text too (``enlarged``); ``&hide=<key>`` (repeatable) also hides those controls, which still hold their
  URL values.  Its links to other pages keep the view, a class and its teacher key (``carried``).
* ``part``: a page's control and what it moves as an ``st.fragment``: a move reruns that part alone, not the page
  and the frame around it, unless something outside the part shows the controls' values or the link's note.  The
  page makes the part's places (columns, titles, rows: what no move changes) and the part fills them; what a
  move's rerun need not send (a live layer's table the same at every value, charts whose view or probes the layer
  sets, downloads that make their table at the click: ``latest``) the page draws (``whole_page_when_changed``: the
  whole page reruns when a move changes what it drew).
"""

from __future__ import annotations

import functools
import html
import json
from collections.abc import Callable, Mapping

import streamlit as st

from draw.assets import text
from hosting import internals
from ui import describe
from ui import pages as table
from ui.controls import PageControls
from ui.i18n import N_, SOURCE, _, current

PRESENT, HIDE = "present", "hide"  # the presenter view's URL parameters (no widget binds them)
CODE_OPEN = "code_open"  # the code for this view's expander (its state: open or not)
LINK_NOTE = "gelu_link_note"  # session state: the last full run showed the link check's note
CLASS, TEACHER = "class", "teacher"  # the class poll's URL parameters (draw/class_poll.py)
CARRIED = (PRESENT, CLASS, TEACHER, "form", "lang")  # what the presenter view's links to another page keep


_LINK_TARGETS: dict[str, object] = {}  # url path -> an st.Page used only as a link target


def page_link(url_path: str, **kwargs) -> None:
    """st.page_link to one of the app's pages by its url path; in the presenter view it keeps the view (``carried``).

    Each target is an st.Page built once per process, used only as a link: st.page_link given a file path
    looks it up on the disk in every run, system calls that a class's sessions would each wait on."""
    target = _LINK_TARGETS.get(url_path)
    if target is None:
        row = table.PAGES[url_path]
        target = _LINK_TARGETS[url_path] = st.Page(row.file, url_path=url_path, default=row.default)
    st.page_link(target, query_params=carried(), **kwargs)


def session_owner() -> str | None:
    """This session's id, the owner a shared result remembers (hosting.runs: given back once its owners have
    all left); None outside a script run."""
    return internals.session_id()


def part(function: Callable) -> Callable:
    """``st.fragment`` for a page's control and everything it moves: a move reruns the part alone, not the page and
    the frame around it, so the server's work for a move is the part's.  The page around it is a fragment too
    (draw.lesson.page_body): a run of the page draws its parts as a full run does (``rerun_alone`` is false in them).

    Everything the part's controls change must be drawn by it, in its own place or in places the page made before
    calling it (its arguments are what the page's last full run gave it: values of controls outside the part, which
    rerun the whole page), or be drawn by the page at the control's value and set in the browser by a live layer
    exactly as the page would draw it: a move then sends none of it (tests/test_parts.py holds what each move
    draws).  Two things outside it follow the controls, so a move reruns the whole page while either shows: the code
    for this view (built from every control's value, below the page) when open, and the link check's note (a full
    run after a bad link drops it)."""
    @st.fragment
    @functools.wraps(function)
    def run(*args, **kwargs):
        fragment_start(code_outside=True)
        return function(*args, **kwargs)

    return run


def fragment_start(code_outside: bool) -> None:
    """The start of a fragment's run (a part's, the page's: draw.lesson.page_body), which app.py does not run
    first: the session's language; then, where the fragment reruns alone, a rerun of the whole app instead while
    the frame shows something that follows the fragment's controls: the link check's note (a full run after a bad
    link drops it), and, when it is drawn outside the fragment (``code_outside``), the open code for this view."""
    from draw.i18n import use_chosen

    use_chosen()
    follows = st.session_state.get(LINK_NOTE) or (code_outside and st.session_state.get(CODE_OPEN))
    if follows and internals.rerun_alone():
        st.rerun()


def latest(name: str) -> dict:
    """A dict the session keeps under ``name``: a part writes its controls' values into it at each run, and what the
    page drew for them reads them when it is used, outside any script run (``csv_button``'s table at the click: the
    page draws the button once, and a move sends none)."""
    return st.session_state.setdefault(f"gelu_latest_{name}", {})


def whole_page_when_changed(key: str, value) -> None:
    """For a part whose move can change what the page draws outside it (Approximations' charts appear or go with a
    range too narrow to show): the page's full run notes ``value`` under ``key`` in the session; a part's own rerun
    that finds another value reruns the whole page, which draws it."""
    if not internals.rerun_alone():
        st.session_state[key] = value
    elif st.session_state.get(key) != value:
        st.rerun()


def whole_page_while(needed: bool) -> None:
    """For a part whose move can leave the page's own drawing behind (Step by step's number typed off its pick's grid,
    which the live layer does not show): its rerun reruns the whole page while ``needed``."""
    if needed and internals.rerun_alone():
        st.rerun()


def require_app_frame() -> None:
    """Rerun through app.py if Streamlit ran this page on its own (legacy pages/ mode)."""
    if internals.in_pages_directory_mode():
        internals.leave_pages_directory_mode()
        st.rerun()


# ------------------------------------------------------------------ the link check

def check_link(controls: PageControls | None) -> None:
    """Read an old link's keys as the new ones, then drop every URL value this page's controls cannot take, with
    one short note naming each."""
    if controls is None:
        return
    if any(old in st.query_params for old in controls.renamed):
        internals.rename_url_values(controls.renamed)
    query = {key: st.query_params.get_all(key) for key in st.query_params}
    problems = controls.url_problems(query)
    st.session_state[LINK_NOTE] = bool(problems)
    if not problems:
        return
    internals.drop_url_values(problems)
    by_key = {c.key: c for c in controls}
    lines = [_("**{label}**: {problem}; it shows its default, {default}.").format(
        label=_(by_key[k].label), problem=problem, default=by_key[k].shown(by_key[k].default))
        for k, problem in problems.items()]
    st.info("\n\n".join([_("Part of this link could not be used."), *lines]), icon=":material/link_off:")


# ------------------------------------------------------------------ presenter view

def presenting() -> bool:
    """True when the URL asks for the presenter view (``?present=true``)."""
    return st.query_params.get(PRESENT, "").lower() in ("true", "1", "yes")


def carried() -> dict[str, str] | None:
    """In the presenter view, what a link to another page keeps: the view itself, the class and its teacher key,
    the lesson's form (a page's own settings stay behind); None elsewhere (Streamlit then clears the URL, and the
    class follows the session)."""
    if not presenting():
        return None
    return {key: st.query_params[key] for key in CARRIED if key in st.query_params}


def presenter_style(controls: PageControls | None) -> None:
    """Hide the sidebar, the app's header and the lesson around the page, hide the controls the link names,
    and enlarge the type (everything is sized in rem)."""
    keys = {c.key for c in controls or ()}
    hidden = [k for k in st.query_params.get_all(HIDE) if k in keys]  # only real keys reach the CSS
    rules = ", ".join(f".st-key-{k}" for k in hidden)
    st.html(
        "<style>"
        "html { font-size: 125%; }"
        "[data-testid='stMainBlockContainer'] { padding-top: 1.5rem; }"
        "[data-testid='stSidebar'], [data-testid='stSidebarCollapsedControl'], [data-testid='stHeader'],"
        " [data-testid='stExpandSidebarButton'], .st-key-lesson_goal, .st-key-lesson_footer,"
        " .st-key-code_for_view { display: none !important; }"
        + (f"{rules} {{ display: none !important; }}" if rules else "")
        + "</style>"
    )


# ------------------------------------------------------------------ the share link

_SHARE = "<style>" + text("share.css") + "</style>"  # the box's look; its script follows the box (share.js)
_SHARE_SCRIPT = "<script>" + text("share.js") + "</script>"


SHARE_WORDS = {  # per role in a class: the box's heading, its buttons, and its note before and after each copy
    None: {
        "heading": N_("Share this view"),
        "link": N_("Copy link"), "present": N_("Copy presenter link"),
        "note": N_("The link holds every setting on this page; opening it brings back exactly what you see."),
        "copied": N_("Link copied: it opens this view exactly as you see it."),
        "copied_present": N_("Presenter link copied: it opens this view for a projector, without the sidebar and "
                             "with larger type."),
    },
    "teacher": {
        "heading": N_("Share this view with your class"),
        "link": N_("Copy students' link"), "present": N_("Copy presenter link"),
        "note": N_("The students' link holds every setting on this page and your class's code: your students open "
                   "it to join."),
        "copied": N_("Students' link copied: it opens this view in your class."),
        "copied_present": N_("Presenter link copied: it opens your presenter view with your class's answers. It "
                             "holds your teacher key: keep it to yourself."),
    },
    "student": {
        "heading": N_("Share this view"),
        "link": N_("Copy link"), "present": "",
        "note": N_("The link holds every setting on this page and your class's code."),
        "copied": N_("Link copied: it opens this view in your class."),
        "copied_present": "",
    },
}


def share_link(hide: list[str], role: str | None = None) -> None:
    """The sidebar's share box: the page's URL and a copy button; for a teacher (``role``, draw.class_poll) the
    students' link and the teacher's presenter link (with the teacher key), alone a presenter link that hides
    ``hide``; a student in a class gets no presenter link.  What the box shows is what the last button copied."""
    words = {name: _(text) if text else "" for name, text in SHARE_WORDS[role].items()}
    data = {"hide": hide, "copied": words["copied"], "copiedPresent": words["copied_present"],
            "note": words["note"], "lang": current(), "carry": current() != SOURCE}
    present = (f"<button type='button' class='gelu-copy-present'>{html.escape(words['present'])}</button>"
               if words["present"] else "")
    st.html(
        _SHARE
        + f"<div class='gelu-share' data-share='{html.escape(json.dumps(data))}'>"
        f"<strong>{html.escape(words['heading'])}</strong>"
        f"<input class='gelu-share-url' readonly aria-label='{html.escape(words['heading'])}' value=''>"
        "<div class='gelu-share-buttons'>"
        f"<button type='button' class='gelu-copy'>{html.escape(words['link'])}</button>"
        + present
        + "</div>"
        f"<div class='gelu-share-note' aria-live='polite'>{html.escape(words['note'])}</div>"
        + _SHARE_SCRIPT
        + "</div>"
        + _A11Y,
        unsafe_allow_javascript=True,
    )


# ------------------------------------------------------------------ accessibility, page-wide
# Sent with the share box (drawn on every page, once a run): a11y.css and a11y.js say what each part mends and why.
_A11Y = "<style>" + text("a11y.css") + "</style><script>" + text("a11y.js") + "</script>"


# ------------------------------------------------------------------ charts

def chart_config(name: str) -> dict:
    """Plotly's own toolbar with one button: save the chart as a PNG named after the page and chart."""
    return {
        "displaylogo": False,
        "modeBarButtons": [["toImage"]],
        "toImageButtonOptions": {"format": "png", "filename": f"gelu-explorer-{name}", "scale": 2},
    }


def chart(fig, name: str, *, frame: int | None = None, words: bool = True, said: bool = False, **kwargs) -> None:
    """Draw a Plotly figure in the app's way: Streamlit's theme, a PNG button, ``name`` as its key, and its words
    under it (``chart_words``; ``words=False``: the caller draws them, in the place after it; ``said``: the live
    layer writes what a move changes in them at rest).

    ``frame``: the drawing's number when one chart is redrawn several times in one run (training progress).
    Each drawing gets its own key: without one, Streamlit's id is a hash of the figure, and two drawings that
    come out equal (a collapsed network's flat 50 % regions) would collide.
    """
    from ui.theme import plain_spec  # Plotly's modules with it: imported by the page that draws a chart

    key = f"chart_{name}" if frame is None else f"chart_{name}_frame{frame}"
    spec = plain_spec(fig)
    if presenting():  # the room's type, charts' text too
        spec = enlarged(spec if spec is not None else fig)
    if spec is None or kwargs or not internals.plotly_chart_of_spec(spec, key, chart_config(name)):
        st.plotly_chart(fig if spec is None else spec, theme="streamlit", key=key, config=chart_config(name),
                        **kwargs)
    if words:
        chart_words(spec or fig, name, announce=frame is None, said=said)


def chart_words(fig, name: str, *, announce: bool = True, said: bool = False) -> None:
    """What a screen reader hears of a chart: a name, a summary the chart is described by, the data as a table
    (ui/describe.py; a11y.js ties them to the plot by ``name``).  ``announce``: off for a chart redrawn many times a
    run (training progress), whose summary is not read out at each drawing.  ``said``: the pieces a move changes
    named for the live layer, which writes them at rest (a chart whose table holds its words: ``live_words``)."""
    st.html(describe.as_html(describe.describe(fig), name, announce=announce, said=said))


def text_table(columns: Mapping[str, list[str]], **kwargs) -> None:
    """st.table of columns of text (the page's own formatting), handed to Streamlit as the Arrow table it sends
    (a dict would go through a pandas DataFrame at every rerun, most of what a small table costs)."""
    import pyarrow as pa

    st.table(pa.table({name: pa.array(column, pa.large_string()) for name, column in columns.items()}), **kwargs)


PRESENTER_CHART_TYPE = 1.5  # the presenter view's chart type, times the page's: ticks of 13 px read at 20 px


def enlarged(fig) -> dict:
    """A copy of a figure (a go.Figure, or its dict) for the presenter view: every font size in it times
    PRESENTER_CHART_TYPE (the figure's own, its axes' ticks and titles, legend, annotations, hover labels), and its
    axes' margins grown to fit their labels and titles (automargin), so that nothing is clipped."""
    import copy

    spec = fig.to_plotly_json() if hasattr(fig, "to_plotly_json") else fig
    spec = copy.deepcopy(spec)
    layout = spec.setdefault("layout", {})
    base = layout.setdefault("font", {}).setdefault("size", 14)
    for part in ("legend", "hoverlabel"):  # Streamlit's theme gives these a size of its own where the figure does not
        layout.setdefault(part, {}).setdefault("font", {}).setdefault("size", base)

    def grow(node, in_font: bool) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                if k == "size" and in_font and isinstance(v, int | float) and not isinstance(v, bool):
                    node[k] = round(v * PRESENTER_CHART_TYPE, 1)
                else:
                    grow(v, in_font or k.endswith("font"))
        elif isinstance(node, list | tuple):
            for v in node:
                grow(v, in_font)

    grow(spec, False)
    for key, axis in layout.items():
        if key.startswith(("xaxis", "yaxis")) and isinstance(axis, dict):
            axis["automargin"] = True
    return spec


def csv_button(table: Mapping[str, list] | Callable[[], Mapping[str, list]], name: str,
               label: str | None = None) -> None:
    """A download button for a table (columns of equal length) as CSV: its values as given (numbers, not the page's
    text), so a spreadsheet or a script reads them in any language.  ``table`` may be a function that gives it, called
    at the click, outside any script run (a page's button whose table a part's control moves: ``latest``)."""
    import csv
    import io

    def as_csv() -> str:
        columns = table() if callable(table) else table
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(list(columns))
        writer.writerows(zip(*columns.values(), strict=True))
        return out.getvalue()

    st.download_button(label or _("Download table (CSV)"), data=as_csv, file_name=f"gelu-explorer-{name}.csv",
                       mime="text/csv", on_click="ignore", icon=":material/download:", key=f"csv_{name}")


# ------------------------------------------------------------------ the code behind the view

def code_for_view(page: str, controls: PageControls | None) -> None:
    """An expander with the short script that prints this view's numbers: copy button (st.code's own) and a
    download.  Built from the controls' values in this run, so it always matches the view; built only while
    the expander is open, so a slider move does not send a script nobody reads."""
    if page not in table.EXPORTS:
        return
    with st.container(key="code_for_view"):
        box = st.expander(_("Code for this view"), icon=":material/code:", key=CODE_OPEN, on_change="rerun")
        with box:
            if not box.open:
                return
            values = {c.key: st.session_state.get(c.key, c.default) for c in controls or ()}
            code = table.code_for(page, values)
            st.caption(_("A short PyTorch / NumPy script that prints the numbers on this page, as they are now."))
            st.code(code, language="python", line_numbers=False)
            st.download_button(_("Download the script"), data=code, file_name=f"gelu_explorer_{page}.py",
                               mime="text/x-python", on_click="ignore", icon=":material/download:",
                               key="code_download")
