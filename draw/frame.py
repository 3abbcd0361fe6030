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
* ``presenting()``: ``?present=true`` hides the sidebar and the lesson around the page and enlarges the type;
  ``&hide=<key>`` (repeatable) also hides those controls, which still hold their URL values.
* ``part``: a page's control and what it moves as an ``st.fragment``: a move reruns that part alone, not the page
  and the frame around it, unless something outside the part shows the controls' values or the link's note.
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

PRESENT, HIDE = "present", "hide"  # the presenter view's URL parameters (no widget binds them)
CODE_OPEN = "code_open"  # the code for this view's expander (its state: open or not)
LINK_NOTE = "gelu_link_note"  # session state: the last full run showed the link check's note


_LINK_TARGETS: dict[str, object] = {}  # url path -> an st.Page used only as a link target


def page_link(url_path: str, **kwargs) -> None:
    """st.page_link to one of the app's pages by its url path.

    Each target is an st.Page built once per process, used only as a link: st.page_link given a file path
    looks it up on the disk in every run, system calls that a class's sessions would each wait on."""
    target = _LINK_TARGETS.get(url_path)
    if target is None:
        row = table.PAGES[url_path]
        target = _LINK_TARGETS[url_path] = st.Page(row.file, url_path=url_path, default=row.default)
    st.page_link(target, **kwargs)


def session_owner() -> str | None:
    """This session's id, the owner a shared result remembers (hosting.runs: given back once its owners have
    all left); None outside a script run."""
    return internals.session_id()


def part(function: Callable) -> Callable:
    """``st.fragment`` for a page's control and everything it moves: a move reruns the part alone, not the page and
    the frame around it, so the server's work for a move is the part's.

    Everything the part's controls change must be drawn inside it (its arguments are what the page's last full run
    gave it: values of controls outside the part, which rerun the whole page).  Two things outside it follow the
    controls, so a move reruns the whole page while either shows: the code for this view (built from every control's
    value, below the page) when open, and the link check's note (a full run after a bad link drops it)."""
    @st.fragment
    @functools.wraps(function)
    def run(*args, **kwargs):
        if internals.in_fragment_rerun() and (st.session_state.get(CODE_OPEN) or st.session_state.get(LINK_NOTE)):
            st.rerun()
        return function(*args, **kwargs)

    return run


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
    lines = [f"**{by_key[k].label}**: {problem}; it shows its default, {by_key[k].shown(by_key[k].default)}."
             for k, problem in problems.items()]
    st.info("Part of this link could not be used.\n\n" + "\n\n".join(lines), icon=":material/link_off:")


# ------------------------------------------------------------------ presenter view

def presenting() -> bool:
    """True when the URL asks for the presenter view (``?present=true``)."""
    return st.query_params.get(PRESENT, "").lower() in ("true", "1", "yes")


def presenter_style(controls: PageControls | None) -> None:
    """Hide the sidebar, the app's header and the lesson around the page, hide the controls the link names,
    and enlarge the type (everything is sized in rem)."""
    keys = {c.key for c in controls or ()}
    hidden = [k for k in st.query_params.get_all(HIDE) if k in keys]  # only real keys reach the CSS
    rules = ", ".join(f".st-key-{k}" for k in hidden)
    st.html(
        "<style>"
        "html { font-size: 125%; }"
        "[data-testid='stSidebar'], [data-testid='stSidebarCollapsedControl'], [data-testid='stHeader'],"
        " [data-testid='stExpandSidebarButton'], .st-key-lesson_goal, .st-key-lesson_footer,"
        " .st-key-code_for_view { display: none !important; }"
        + (f"{rules} {{ display: none !important; }}" if rules else "")
        + "</style>"
    )


# ------------------------------------------------------------------ the share link

_SHARE = "<style>" + text("share.css") + "</style>"  # the box's look; its script follows the box (share.js)
_SHARE_SCRIPT = "<script>" + text("share.js") + "</script>"


def share_link(hide: list[str]) -> None:
    """The sidebar's share box: the page's URL, a copy button, and a presenter link that hides ``hide``."""
    st.html(
        _SHARE
        + f"<div class='gelu-share' data-hide='{html.escape(json.dumps(hide))}'>"
        "<strong>Share this view</strong>"
        "<input class='gelu-share-url' readonly aria-label='Link to this view' value=''>"
        "<div class='gelu-share-buttons'>"
        "<button type='button' class='gelu-copy'>Copy link</button>"
        "<button type='button' class='gelu-copy-present'>Copy presenter link</button>"
        "</div>"
        "<div class='gelu-share-note'>The link holds every setting on this page; opening it brings back "
        "exactly what you see.</div>"
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


def chart(fig, name: str, *, frame: int | None = None, **kwargs) -> None:
    """Draw a Plotly figure in the app's way: Streamlit's theme, a PNG button, ``name`` as its key.

    ``frame``: the drawing's number when one chart is redrawn several times in one run (training progress).
    Each drawing gets its own key: without one, Streamlit's id is a hash of the figure, and two drawings that
    come out equal (a collapsed network's flat 50 % regions) would collide.
    """
    from ui.theme import plain_spec  # Plotly's modules with it: imported by the page that draws a chart

    key = f"chart_{name}" if frame is None else f"chart_{name}_frame{frame}"
    spec = plain_spec(fig)
    if spec is None or kwargs or not internals.plotly_chart_of_spec(spec, key, chart_config(name)):
        st.plotly_chart(fig, theme="streamlit", key=key, config=chart_config(name), **kwargs)
    # What a screen reader hears of it: a name, a summary the chart is described by, the data as a table
    # (ui/describe.py; a11y.js ties them to the plot).  A live chart's summary is not announced.
    st.html(describe.as_html(describe.describe(spec or fig), name, announce=frame is None))


def text_table(columns: Mapping[str, list[str]], **kwargs) -> None:
    """st.table of columns of text (the page's own formatting), handed to Streamlit as the Arrow table it sends
    (a dict would go through a pandas DataFrame at every rerun, most of what a small table costs)."""
    import pyarrow as pa

    st.table(pa.table({name: pa.array(column, pa.large_string()) for name, column in columns.items()}), **kwargs)


def csv_button(table: Mapping[str, list], name: str, label: str = "Download table (CSV)") -> None:
    """A download button for a table (columns of equal length) as CSV."""
    import csv
    import io

    def as_csv() -> str:
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(list(table))
        writer.writerows(zip(*table.values(), strict=True))
        return out.getvalue()

    st.download_button(label, data=as_csv, file_name=f"gelu-explorer-{name}.csv", mime="text/csv",
                       on_click="ignore", icon=":material/download:", key=f"csv_{name}")


# ------------------------------------------------------------------ the code behind the view

def code_for_view(page: str, controls: PageControls | None) -> None:
    """An expander with the short script that prints this view's numbers: copy button (st.code's own) and a
    download.  Built from the controls' values in this run, so it always matches the view; built only while
    the expander is open, so a slider move does not send a script nobody reads."""
    if page not in table.EXPORTS:
        return
    with st.container(key="code_for_view"):
        box = st.expander("Code for this view", icon=":material/code:", key=CODE_OPEN, on_change="rerun")
        with box:
            if not box.open:
                return
            values = {c.key: st.session_state.get(c.key, c.default) for c in controls or ()}
            code = table.code_for(page, values)
            st.caption("A short PyTorch / NumPy script that prints the numbers on this page, as they are now.")
            st.code(code, language="python", line_numbers=False)
            st.download_button("Download the script", data=code, file_name=f"gelu_explorer_{page}.py",
                               mime="text/x-python", on_click="ignore", icon=":material/download:",
                               key="code_download")
