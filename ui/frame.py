"""The furniture every page shares, drawn with Streamlit: the page guard, the link check, the share link,
the presenter view, the lesson around each page, the code for each view, and one way to draw a chart.  The
rest of ui/ is Streamlit-free.

* ``require_app_frame()``: while a folder named ``pages/`` sits beside the main script, Streamlit runs a deep
  link's page on its own (no page config, no frame) until some session has run ``st.navigation``
  (``PagesManager.uses_pages_directory``).  Every page calls this first: it clears the flag and reruns
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
from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.scriptrunner import get_script_run_ctx

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
    ctx = get_script_run_ctx()
    return ctx.session_id if ctx else None


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
        ctx = get_script_run_ctx()
        if ctx is not None and ctx.fragment_ids_this_run and (st.session_state.get(CODE_OPEN)
                                                              or st.session_state.get(LINK_NOTE)):
            st.rerun()
        return function(*args, **kwargs)

    return run


def require_app_frame() -> None:
    """Rerun through app.py if Streamlit ran this page on its own (legacy pages/ mode)."""
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


# ------------------------------------------------------------------ the link check

def _drop_url_values(keys) -> None:
    """Remove parameters from the session's URL (and the browser's address bar) before any widget reads them.

    Streamlit seeds a bound widget from the URL it was opened with (``QueryParams._initial_query_params``) and
    offers no public way to retract a value, so this reaches one private attribute; ``tests/test_links.py``
    fails if a Streamlit release changes it.
    """
    ctx = get_script_run_ctx()
    if ctx is None:
        return
    with ctx.session_state.query_params() as query:
        for key in keys:
            query.remove_param(key)  # also tells the browser to drop it from the address bar
            query._initial_query_params.pop(key, None)


def _rename_url_values(renamed: Mapping[str, str]) -> None:
    """An old link's parameters under their controls' keys now, before any widget reads them (the same private
    attribute as ``_drop_url_values``); where a link holds both names, the new one's values stand."""
    ctx = get_script_run_ctx()
    if ctx is None:
        return
    with ctx.session_state.query_params() as query:
        for old, new in renamed.items():
            if not query.has_param(old):
                continue
            if not query.has_param(new):
                values = query.get_all(old)
                query.set_with_no_forward_msg(new, values)
                query._initial_query_params[new] = values
            query.remove_param(old)  # tells the browser the address with the new key
            query._initial_query_params.pop(old, None)


def check_link(controls: PageControls | None) -> None:
    """Read an old link's keys as the new ones, then drop every URL value this page's controls cannot take, with
    one short note naming each."""
    if controls is None:
        return
    if any(old in st.query_params for old in controls.renamed):
        _rename_url_values(controls.renamed)
    query = {key: st.query_params.get_all(key) for key in st.query_params}
    problems = controls.url_problems(query)
    st.session_state[LINK_NOTE] = bool(problems)
    if not problems:
        return
    _drop_url_values(problems)
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

_SHARE_SCRIPT = """
<script>
(() => {
  const root = document.currentScript.closest(".gelu-share") || document;
  const box = root.querySelector(".gelu-share-url"), note = root.querySelector(".gelu-share-note");
  const hide = JSON.parse(root.dataset.hide || "[]");
  const linkFor = (present) => {
    const url = new URL(window.location.href);
    for (const key of ["present", "hide", "teacher"]) url.searchParams.delete(key);
    if (present) {
      url.searchParams.set("present", "true");
      for (const key of hide) url.searchParams.append("hide", key);
    }
    return url.toString();
  };
  const show = () => {  // written only when the address changed: writing an input's value repaints it
    const link = linkFor(false);
    if (document.activeElement !== box && box.value !== link) box.value = link;
  };
  clearInterval(window.__geluShareTimer);
  window.__geluShareTimer = setInterval(show, 400);
  show();
  const copy = async (present) => {
    const text = linkFor(present);
    box.value = text;
    try {
      await navigator.clipboard.writeText(text);
    } catch (err) {  // plain http on a school network has no clipboard API: select it for Ctrl+C
      box.focus(); box.select();
      try { document.execCommand("copy"); } catch (e) {}
    }
    note.textContent = present ? "Presenter link copied." : "Link copied.";
  };
  root.querySelector(".gelu-copy").addEventListener("click", () => copy(false));
  root.querySelector(".gelu-copy-present").addEventListener("click", () => copy(true));
})();
</script>
"""

_SHARE_STYLE = """
<style>
.gelu-share { display: flex; flex-direction: column; gap: 0.4rem; }
.gelu-share-url { width: 100%; box-sizing: border-box; font: 0.8rem ui-monospace, monospace; padding: 0.35rem 0.5rem;
  color: inherit; background: transparent; border: 1px solid rgba(138, 148, 166, 0.5); border-radius: 0.5rem; }
.gelu-share-buttons { display: flex; flex-wrap: wrap; gap: 0.4rem; }
.gelu-share button { font: inherit; font-size: 0.875rem; color: inherit; background: transparent; cursor: pointer;
  border: 1px solid rgba(138, 148, 166, 0.6); border-radius: 0.5rem; padding: 0.25rem 0.75rem; }
.gelu-share button:hover { border-color: currentColor; }
.gelu-share-note { font-size: 0.8rem; opacity: 0.75; }
</style>
"""


def share_link(hide: list[str]) -> None:
    """The sidebar's share box: the page's URL, a copy button, and a presenter link that hides ``hide``."""
    st.html(
        _SHARE_STYLE
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
        + _A11Y_STYLE + _A11Y_SCRIPT,
        unsafe_allow_javascript=True,
    )


# ------------------------------------------------------------------ accessibility, page-wide
# Sent with the share box (drawn on every page, once a run); the contrast it reaches, and how that is checked:
# README, "Accessibility".  The style draws captions opaque (Streamlit's 60 % opacity is under AA on white) in the
# text colour mixed with the theme's background; draws one focus ring for every focusable, in the theme's text
# colour (Streamlit's own halo is under 3:1, and a select has none), on the box a student sees (a slider's thumb, a
# select's frame, a radio's label), not on the hidden input that has the focus; shows a table's toolbar and a
# chart's modebar while focus is in them (both show on hover only, so their buttons took focus unseen); shows or
# hides a slider's min/max labels at once (half-way through Streamlit's fade they are under AA); reflows at 200 %
# zoom on a phone (segmented controls and tabs wrap instead of scrolling sideways behind a fade, a label Streamlit
# cuts with an ellipsis wraps, a Markdown table scrolls in its own box, an x-axis title's lines and a chart's labels
# are set in 11 px to fit its plot); and stops animation for a reader who asks for reduced motion.  The script mends
# Streamlit's markup after every redraw: the sidebar navigation's sections (an <li> in a <div> in the <ul>) become
# lists, a slider's thumb is named once (not its label twice), Plotly's off-screen measuring SVG is hidden from a
# reader, a formula or table wider than its column is reachable by keyboard, each chart gets its name and
# description (ui/describe.py), and a changed chart summary is read out once, politely, after a control has settled.

_A11Y_STYLE = """
<style>
[data-testid='stCaptionContainer'], .gelu-chart-data summary { opacity: 1;
  color: color-mix(in srgb, currentColor 72%, var(--gelu-background, transparent)); }
.gelu-sr-only { position: absolute !important; width: 1px; height: 1px; padding: 0; margin: -1px;
  overflow: hidden; clip: rect(0, 0, 0, 0); white-space: nowrap; border: 0; }
.gelu-chart-data { font-size: 0.875rem; margin: -0.5rem 0 0.25rem 0; }
.gelu-chart-data summary { cursor: pointer; width: fit-content; }
.gelu-chart-table { max-height: 18rem; overflow: auto; margin-top: 0.3rem; }
.gelu-chart-table table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
.gelu-chart-table th, .gelu-chart-table td { padding: 0.1rem 0.7rem 0.1rem 0; text-align: left;
  border-bottom: 1px solid rgba(138, 148, 166, 0.35); }
[data-testid='stElementToolbar']:focus-within { opacity: 1 !important; visibility: visible !important; }
[data-testid='stSliderTickBar'] { transition: none !important; }
[data-testid='stButtonGroup'] [role='radiogroup'], [data-testid='stTabs'] [role='tablist'] {
  flex-wrap: wrap; overflow-x: visible; mask-image: none; -webkit-mask-image: none; }
@media (max-width: 40rem) {
  [data-testid='stButtonGroup'] [role='radiogroup'] { column-gap: 0.25rem; }
  [data-testid='stButtonGroup'] button[data-variant='segmented_control'] { margin-right: 0;
    border-radius: 0.5rem; }
  [data-testid='stButtonGroup'] button[data-variant='segmented_control']:not([aria-checked='true']) {
    border-color: color-mix(in srgb, currentColor 20%, transparent) !important; }
}
@media (max-width: 15rem) {  /* a phone at 200 %: a plot ~90 px wide; Plotly's inline 14 px needs !important */
  .js-plotly-plot .g-xtitle text, .js-plotly-plot .annotation-text { font-size: 11px !important; }
}
.stMarkdownEllipsis, .stMarkdownEllipsis p, [data-testid='stPageLink-NavLink'] span,
[data-testid='stSidebarNavLink'] span {
  white-space: normal; text-overflow: clip; overflow: visible; overflow-wrap: anywhere; }
[data-testid='stMarkdownContainer'] > table { display: block; max-width: 100%; overflow-x: auto; }
:focus-visible:not(input, textarea, [data-testid='stMain']),
[data-testid='stApp'] :is([data-testid='stNumberInputContainer'],
  [data-testid='stTextInputRootElement'], [data-testid='stTextAreaRootElement'], [data-testid='stRadio'] label,
  [data-testid='stCheckbox'] label):has(input:focus-visible, textarea:focus-visible),
[data-testid='stMultiSelect'] div:has(> [data-testid='stMultiSelectTagsContainer'] > input:focus-visible),
[data-testid='stSelectbox'] .react-aria-ComboBox > div:has(> input:focus-visible),
[data-testid='stSlider'] div:has(> div > input:focus-visible), .gelu-share-url:focus-visible {
  outline: 2px solid var(--gelu-ring, currentColor) !important; outline-offset: 2px !important; }
.gelu-share button:focus-visible, .gelu-chart-data summary:focus-visible, .gelu-chart-table:focus-visible,
.katex-display:focus-visible, .stMarkdown table:focus-visible { border-radius: 0.25rem; }
[data-testid='stMain']:focus-visible { outline: 2px solid var(--gelu-ring, currentColor); outline-offset: -2px; }
.js-plotly-plot .modebar--hover:focus-within > :not(.watermark) { opacity: 1 !important; }
.js-plotly-plot .modebar-btn:focus-visible { outline-offset: -2px !important; }  /* the plot clips what sticks out */
.js-plotly-plot .modebar-btn:focus-visible path { fill: #ffffff !important; }
@media (prefers-reduced-motion: reduce) {
  *, *::before, *::after { animation-duration: 0.01ms !important; animation-iteration-count: 1 !important;
    transition-duration: 0.01ms !important; scroll-behavior: auto !important; }
}
</style>
"""

_A11Y_SCRIPT = """
<script>
(() => {
  if (window.__geluA11y) return;
  window.__geluA11y = true;
  const live = document.createElement("div");
  live.className = "gelu-sr-only";
  live.id = "gelu-live";
  live.setAttribute("aria-live", "polite");
  document.body.appendChild(live);
  const set = (el, name, value) => { if (el.getAttribute(name) !== value) el.setAttribute(name, value); };
  const said = new Map(), opened = new Set();
  let changed = [], timer = null, queued = false;
  document.addEventListener("toggle", (event) => {
    const text = event.target.closest && event.target.closest(".gelu-chart-text");
    if (text) event.target.open ? opened.add(text.dataset.chart) : opened.delete(text.dataset.chart);
  }, true);
  const mend = () => {
    const app = document.querySelector("[data-testid='stApp']");  // the theme's background, for opaque captions
    const background = app && getComputedStyle(app).backgroundColor;
    if (background && document.documentElement.style.getPropertyValue("--gelu-background") !== background) {
      document.documentElement.style.setProperty("--gelu-background", background);
    }
    const text = app && getComputedStyle(app).color;  // the focus ring: the theme's text colour, 14:1 or more
    if (text && document.documentElement.style.getPropertyValue("--gelu-ring") !== text) {
      document.documentElement.style.setProperty("--gelu-ring", text);
    }
    for (const list of document.querySelectorAll("[data-testid='stSidebarNavItems']")) {
      const sections = [...list.children].filter((c) => c.tagName !== "LI" && c.querySelector(":scope > li"));
      if (!sections.length) continue;
      set(list, "role", "none");
      for (const section of sections) {
        const header = section.querySelector(":scope > header");
        set(section, "role", "list");
        if (!header) continue;
        set(header, "role", "none");  // its words name the list instead (the icon's ligature left out)
        set(section, "aria-label", header.textContent.replace(/expand_(more|less)$/, "").trim());
      }
    }
    // Streamlit's slider names each thumb by its own aria-label and, through aria-labelledby, the group's too: a
    // reader heard "Probe x Probe x"; the thumb's own label ("Probe x", "Range of x — start") names it alone
    for (const thumb of document.querySelectorAll("[data-testid='stSlider'] input[aria-label][aria-labelledby]")) {
      thumb.removeAttribute("aria-labelledby");
    }
    const tester = document.getElementById("js-plotly-tester");  // Plotly's off-screen SVG for measuring text:
    if (tester) set(tester, "aria-hidden", "true");  // read as an unnamed image at the end of every page
    for (const wide of document.querySelectorAll(".katex-display, [data-testid='stMarkdownContainer'] > table")) {
      if (wide.scrollWidth > wide.clientWidth + 1) set(wide, "tabindex", "0");  // scrolls sideways
    }
    for (const text of document.querySelectorAll(".gelu-chart-text")) {
      const box = text.closest("[data-testid='stElementContainer']");
      const plot = box && box.previousElementSibling && box.previousElementSibling.querySelector(".js-plotly-plot");
      const summary = text.querySelector("p[id]");
      if (plot && summary) {
        set(plot, "role", "figure");
        set(plot, "aria-label", text.dataset.name);
        set(plot, "aria-describedby", summary.id);
        for (const svg of plot.querySelectorAll(".main-svg")) set(svg, "aria-hidden", "true");
      }
      const table = text.querySelector(".gelu-chart-table");
      if (table) { set(table, "tabindex", "0"); set(table, "role", "region"); set(table, "aria-label", "Chart data"); }
      const details = text.querySelector("details");
      if (details && opened.has(text.dataset.chart) && !details.open) details.open = true;
      if (summary && text.dataset.announce === "true") {
        const key = text.dataset.chart, now = summary.textContent;
        if (said.has(key) && said.get(key) !== now) changed.push(now);
        said.set(key, now);
      }
    }
    if (changed.length) {
      clearTimeout(timer);
      timer = setTimeout(() => { live.textContent = changed.join(" "); changed = []; }, 700);
    }
  };
  new MutationObserver(() => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => { queued = false; mend(); });
  }).observe(document.body, {childList: true, subtree: true, characterData: true, attributeFilter: ["class"]});
  mend();
})();
</script>
"""


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
    if spec is None or kwargs or not _plotly_chart(spec, key, chart_config(name)):
        st.plotly_chart(fig, theme="streamlit", key=key, config=chart_config(name), **kwargs)
    # What a screen reader hears of it: a name, a summary the chart is described by, the data as a table
    # (ui/describe.py; _A11Y_SCRIPT ties them to the plot).  A live chart's summary is not announced.
    st.html(describe.as_html(describe.describe(spec or fig), name, announce=frame is None))


def _plotly_chart(spec: dict, key: str, config: dict) -> bool:
    """Draw a figure's plain spec (``ui.theme.plain_spec``) as ``st.plotly_chart(fig, theme="streamlit", key=key,
    config=config)`` draws the figure: the same element (tests/test_page_furniture.py holds the two equal), its
    JSON written once here from the dicts it is made of, where st.plotly_chart copies the whole figure and writes
    it through plotly's encoder twice (the second time for NaN: it sends null).  False, drawing nothing, when the
    spec is not strict JSON (a NaN outside a typed array, a numpy scalar): st.plotly_chart draws that one.

    It reaches Streamlit's own element helpers (pinned in requirements.txt), as st.plotly_chart does."""
    try:
        text = json.dumps(spec, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError):
        return False
    from streamlit.elements.lib import agent_spec
    from streamlit.elements.lib.form_utils import current_form_id
    from streamlit.elements.lib.layout_utils import LayoutConfig
    from streamlit.elements.lib.utils import compute_and_register_element_id
    from streamlit.elements.plotly_chart import _plotly_data, _resolve_content_height
    from streamlit.proto.PlotlyChart_pb2 import PlotlyChart

    dg = st._main
    proto = PlotlyChart()
    proto.theme = "streamlit"
    proto.form_id = current_form_id(dg)
    proto.spec = text
    proto.config = json.dumps(config)
    proto.id = compute_and_register_element_id(
        "plotly_chart", user_key=key, key_as_main_identity=False, dg=dg, plotly_spec=proto.spec,
        plotly_config=proto.config, selection_mode=("points", "box", "lasso"), is_selection_activated=False,
        theme="streamlit", width="stretch", height="content", alt=None)
    dg._enqueue("plotly_chart", proto, layout_config=LayoutConfig(width="stretch", height=_resolve_content_height(
        "content", spec)), agent_props=agent_spec.element("plotly_chart", key=key,
                                                          data_builder=lambda: _plotly_data(text), alt=None))
    return True


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


# ------------------------------------------------------------------ the lesson around each page

def lesson_top(page: str, available: tuple[str, ...]) -> None:
    """One line above the page: where it sits in the lesson, and its learning goal."""
    row = table.PAGES.get(page)
    if row is None:
        return
    where = table.position(page, available)
    prefix = f"Step {where[0]} of {where[1]}" if where else "Aside"
    with st.container(key="lesson_goal"):
        st.caption(f"{prefix} · **Goal**: {row.goal}")


def lesson_footer(page: str, pages: Mapping[str, st.Page]) -> None:
    """Below the page: a question to answer before checking (the answer computed when asked), then
    Previous and Next through the lesson."""
    from ui import class_poll

    row = table.PAGES.get(page)
    if row is not None and row.question is not None:
        class_poll.teacher(page, row.question)  # the teacher's live tally (nothing without a teacher key)
    with st.container(key="lesson_footer"):
        if row is not None and row.question is not None:
            st.divider()
            st.markdown("**Predict, then check**")
            question = row.question
            choice = st.radio(question.text, question.choices, index=None, key=f"quiz_{page}")
            if choice is not None:
                right, why = question.reveal(choice)
                if right:
                    st.success(f"Right. {why}", icon=":material/check_circle:")
                else:
                    st.warning(f"Not quite. {why}", icon=":material/lightbulb:")
            class_poll.student(page, question, choice)  # counted, and the class's tally (only in a class)
        before, after = table.neighbours(page, tuple(pages))
        back, onward = st.columns(2)
        if before is not None:
            back.page_link(pages[before], label=f"Previous: {pages[before].title}", icon=":material/arrow_back:")
        if after is not None:
            onward.page_link(pages[after], label=f"Next: {pages[after].title}", icon=":material/arrow_forward:")


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
