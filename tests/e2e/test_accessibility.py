"""WCAG 2.2 AA in a real browser: axe-core on every page, every chart's words, the lesson by keyboard alone, reflow.

References and tolerances:
* axe-core 4.12 (the copy PyPI's axe-playwright-python ships, pinned in requirements-dev.txt; nothing is fetched),
  its WCAG 2.0/2.1/2.2 A and AA rules: 0 violations on every page, light theme at desktop width (1400x900) and
  dark theme at phone width (390x844), after the page's first control has moved; the lab after an upload; the
  race after it has finished (its page is idle once the race is done).  Each rule id is printed when one appears.
  That axe does find a violation is checked on a planted one.
* Every chart: its accessible name and description are what ``ui.describe`` makes of the figure the browser drew
  (Plotly's own ``gd.data`` and ``gd.layout``, read back from the page), compared exactly; the table holds that
  description's rows; the Curves probe's readouts appear in its chart's summary as the page shows them.
* Keyboard alone: from Home to the race by Tab and Enter only (the Next links; the race's own page is reached,
  not walked), every stop's focus visible (the
  pixels around the stop differ with and without focus), no positive tabindex, the question answered with the
  arrow keys, Copy link and the code export opened with Enter, a file chosen through the lab's upload button;
  focus leaves the end of each page (no trap).
* Reflow: at 320 CSS px (a 1280 px screen at 400 %, a 640 px one at 200 %) nothing sticks out sideways and no
  element is cut, except inside its own scroll box (a table, a formula, code).
"""

from __future__ import annotations

import io
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
import pytest

from harness import browser as driver
from ui import describe

pytestmark = pytest.mark.e2e

PAGES = driver.app_pages()
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
REFLOW = {"width": 320, "height": 720}
MAX_TABS = 90  # tab stops one page may take before its Next link (Home has about 30)


def axe_source() -> str:
    try:
        import axe_playwright_python
    except ImportError:
        pytest.skip("axe-playwright-python is not installed (pip install -r requirements-dev.txt)")
    return (Path(axe_playwright_python.__file__).parent / "axe.min.js").read_text(encoding="utf-8")


def axe(page) -> list[dict]:
    """axe-core's WCAG A/AA violations on the page as it is now; each rule id and its first targets printed."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.evaluate(axe_source())
    result = page.evaluate("o => axe.run(document, o)",
                           {"runOnly": {"type": "tag", "values": WCAG_TAGS}, "resultTypes": ["violations"]})
    for v in result["violations"]:
        print(f"axe {v['id']} ({v['impact']}, {len(v['nodes'])}x) on {page.url}: "
              + "; ".join(str(n["target"]) for n in v["nodes"][:3]))
    return result["violations"]


def page_path(app_page: driver.AppPage) -> str:
    return "" if app_page.default else app_page.url_path


def summary_of(violations: list[dict]) -> list[tuple[str, int]]:
    return [(v["id"], len(v["nodes"])) for v in violations]


# ---------------------------------------------------------------------------------------------- axe-core

def test_axe_finds_a_planted_violation(new_tab):
    tab = new_tab()
    tab.open()
    tab.page.evaluate("""() => {
      const p = document.createElement('p');
      p.textContent = 'faint words';
      p.style.cssText = 'position: fixed; top: 40%; left: 40%; z-index: 9999; color: #cccccc; background: #ffffff;';
      document.body.appendChild(p);
      const img = document.createElement('img'); img.src = 'data:,'; document.body.appendChild(img);
    }""")
    assert {"color-contrast", "image-alt"} <= {v["id"] for v in axe(tab.page)}


@pytest.mark.parametrize("scheme, viewport", [("light", driver.DESKTOP), ("dark", driver.PHONE)],
                         ids=["light-desktop", "dark-phone"])
@pytest.mark.parametrize("app_page", PAGES, ids=[p.url_path for p in PAGES])
def test_every_page_is_axe_clean_after_its_first_control_moves(new_tab, app_page, scheme, viewport):
    tab = new_tab(color_scheme=scheme, viewport=viewport)
    tab.open(page_path(app_page))
    control = driver.first_control(tab.page)
    assert control is not None
    driver.move(tab.page, control)
    assert summary_of(axe(tab.page)) == []
    tab.assert_clean()


def _npy(shape=(1, 4, 768), seed=3) -> bytes:
    out = io.BytesIO()
    np.save(out, np.random.default_rng(seed).standard_normal(shape).astype(np.float32))
    return out.getvalue()


@pytest.mark.parametrize("scheme, viewport", [("light", driver.DESKTOP), ("dark", driver.PHONE)],
                         ids=["light-desktop", "dark-phone"])
def test_the_lab_is_axe_clean_after_an_upload(new_tab, scheme, viewport):
    tab = new_tab(color_scheme=scheme, viewport=viewport)
    tab.open("ffn?ffn_input=Upload")
    page = tab.page
    target = page.locator(f"{driver.MAIN} [data-testid='stFileUploader'] input[type=file]").first
    driver.act(page, lambda: target.set_input_files(
        files=[{"name": "tokens.npy", "mimeType": "application/octet-stream", "buffer": _npy()}]))
    assert page.locator(driver.ERROR_BOX).count() == 0, page.locator(driver.ERROR_BOX).all_inner_texts()
    assert page.locator(f"{driver.MAIN} [data-testid='stPlotlyChart']").count() >= 3
    assert summary_of(axe(page)) == []
    tab.assert_clean()


# ---------------------------------------------------------------------------------------------- every chart speaks

DRAWN_JS = r"""() => [...document.querySelectorAll("[data-testid='stMain'] .js-plotly-plot")].map((gd) => {
  const arr = (v) => (v && typeof v.length === "number" && typeof v !== "string") ? Array.from(v) : v;
  const title = (a) => ({title: {text: (a && a.title && a.title.text) || ""}});
  const described = document.getElementById(gd.getAttribute("aria-describedby") || "");
  const text = described && described.closest(".gelu-chart-text");
  return {
    role: gd.getAttribute("role"), label: gd.getAttribute("aria-label"),
    description: described ? described.textContent : null,
    rows: text ? text.querySelectorAll("tbody tr").length : -1,
    figure: {
      data: gd.data.map((t) => ({type: t.type || "scatter", mode: t.mode, name: t.name, visible: t.visible,
                                 showlegend: t.showlegend, x: arr(t.x), y: arr(t.y)})),
      layout: {...title(gd.layout), xaxis: title(gd.layout.xaxis), yaxis: title(gd.layout.yaxis),
               annotations: (gd.layout.annotations || []).map((a) => ({text: a.text}))},
    },
  };
})"""


def _drawn(tab) -> list[dict]:
    charts = tab.page.evaluate(DRAWN_JS)
    for chart in charts:  # Plotly keeps a gap in an array as null
        for trace in chart["figure"]["data"]:
            for axis in ("x", "y"):
                if isinstance(trace[axis], list):
                    trace[axis] = [np.nan if v is None else v for v in trace[axis]]
    return charts


def _wait_for_chart_words(page) -> None:
    page.wait_for_function("""() => [...document.querySelectorAll("[data-testid='stMain'] .js-plotly-plot")]
                                    .every((gd) => gd.getAttribute("aria-describedby"))""")


@pytest.mark.parametrize("app_page", PAGES, ids=[p.url_path for p in PAGES])
def test_every_chart_has_a_name_and_a_text_alternative_from_its_numbers(new_tab, app_page):
    tab = new_tab()
    tab.open(page_path(app_page))
    _wait_for_chart_words(tab.page)
    charts = _drawn(tab)
    if app_page.url_path != "training":  # the race draws its charts once it has run; the others at once
        assert charts, f"{app_page.url_path}: no chart"
    for chart in charts:
        want = describe.describe(chart["figure"])
        assert chart["role"] == "figure"
        assert chart["label"] == want.name and want.name.startswith("Chart: ")
        assert chart["description"] == want.summary and want.summary
        assert chart["rows"] == len(want.rows) > 0
    tab.assert_clean()


def test_the_curves_summary_says_the_probes_readouts_and_is_announced_once_settled(new_tab):
    tab = new_tab()
    tab.open("curves?curves_x=-1")
    page = tab.page
    _wait_for_chart_words(page)
    live = page.locator("#gelu-live")
    assert live.get_attribute("aria-live") == "polite"

    def readouts() -> list[str]:
        return [v.strip() for v in page.locator(f"{driver.MAIN} [data-testid='stMetricValue']").all_inner_texts()]

    summary = page.locator(f"{driver.MAIN} .gelu-chart-text p").first
    relu, gelu = readouts()[:2]
    assert (relu, gelu) == ("0.0000", "-0.1588")  # the source texts' numbers at x = -1 (tanh form)
    assert f"at x = -1 is {describe.number(float(gelu))}" in summary.text_content()
    assert f"at x = -1 is {describe.number(float(relu))}" in summary.text_content()
    assert live.text_content() == ""  # nothing said on arrival

    driver.move(page, driver.first_control(page))
    x = driver.control_state(driver.first_control(page))[0]
    gelu = readouts()[1]
    page.wait_for_function("() => document.getElementById('gelu-live').textContent.length > 0", timeout=5000)
    said = live.text_content()
    assert f"at x = {describe.number(float(x))} is {describe.number(float(gelu))}" in said
    assert said == summary.text_content()  # the chart's summary, once (the page has one chart)
    tab.assert_clean()


# ---------------------------------------------------------------------------------------------- keyboard alone

FOCUSED_JS = r"""() => {
  const e = document.activeElement;
  if (!e || e === document.body) return null;
  const box = e.closest("[data-testid='stElementContainer'], [data-testid='stSidebarNavLinkContainer']") || e;
  const r = box.getBoundingClientRect(), own = e.getBoundingClientRect();
  const words = (e.getAttribute("aria-label") || e.innerText || e.value || "").trim().split("\n").pop();
  return {tag: e.tagName.toLowerCase(), role: e.getAttribute("role"), type: e.getAttribute("type"),
          words: words.slice(0, 60), sidebar: !!e.closest("[data-testid='stSidebar']"),
          main: !!e.closest("[data-testid='stMain']"), href: e.getAttribute("href"),
          uploader: !!e.closest("[data-testid='stFileUploader']"),
          box: {x: Math.min(r.left, own.left), y: Math.min(r.top, own.top),
                right: Math.max(r.right, own.right), bottom: Math.max(r.bottom, own.bottom)},
          visible: own.width > 0 && own.height > 0};
}"""


def _clip(page, box: dict, pad: float = 6) -> dict | None:
    vw, vh = page.viewport_size["width"], page.viewport_size["height"]
    x0, y0 = max(0, box["x"] - pad), max(0, box["y"] - pad)
    x1, y1 = min(vw, box["right"] + pad), min(vh, box["bottom"] + pad)
    return {"x": x0, "y": y0, "width": x1 - x0, "height": y1 - y0} if x1 - x0 > 2 and y1 - y0 > 2 else None


def _focus_shows(page, stop: dict) -> bool:
    """Whether the pixels around the focused element change when it loses focus (and back when it regains it)."""
    clip = _clip(page, stop["box"])
    if clip is None:
        return False
    focused = page.screenshot(clip=clip)
    page.evaluate("() => { window.__geluFocused = document.activeElement; document.activeElement.blur(); }")
    blurred = page.screenshot(clip=clip)
    page.evaluate("() => window.__geluFocused.focus()")
    return focused != blurred


def _tab_to(page, found, *, limit: int = MAX_TABS, check_focus: bool = True, reverse: bool = False) -> list[dict]:
    """Press Tab (Shift+Tab) until ``found(stop)``; every stop on the way is returned, its focus checked."""
    stops = []
    for _ in range(limit):
        page.keyboard.press("Shift+Tab" if reverse else "Tab")
        stop = page.evaluate(FOCUSED_JS)
        if stop is None:
            continue
        if check_focus:
            page.wait_for_timeout(60)  # a ring drawn by a transition
            stop["ring"] = _focus_shows(page, stop)
        stops.append(stop)
        if found(stop):
            return stops
    raise AssertionError(f"not reached in {limit} tab stops: {[s['words'] for s in stops]}")


def _is_first(stop) -> bool:
    return stop["words"] == "Skip to main content"


def _is_next(stop) -> bool:
    return stop["main"] and stop["tag"] == "a" and stop["words"].startswith("Next:")


def test_the_lesson_by_keyboard_alone(new_tab, tmp_path):
    tab = new_tab()
    tab.open()
    page = tab.page
    assert page.evaluate("() => document.querySelectorAll('[tabindex]:not([tabindex=\"0\"]):not([tabindex=\"-1\"])')"
                         ".length") == 0, "a positive tabindex reorders the page"
    # Home to the lab walked stop by stop; the race's page is reached by its Next link (while a race runs, its
    # controls take no focus: the walk there is left to the race's own tests, see README "Accessibility").
    lesson = [p for p in PAGES if p.url_path in ("home", "gate", "curves", "derivative", "steps", "ffn")]
    walked = []
    for app_page in lesson:
        assert urlsplit(page.url).path.strip("/") == page_path(app_page), page.url
        stops = _tab_to(page, _is_next)
        unseen = [s["words"] or s["tag"] for s in stops if not s["ring"] and s["visible"]]
        assert unseen == [], f"{app_page.url_path}: focus not visible on {unseen}"
        kinds = {(s["tag"], s["role"], s["type"]) for s in stops if s["main"]}
        walked.append((app_page.url_path, len(stops)))
        assert any(s["type"] in ("range", "number") or s["role"] == "slider" for s in stops if s["main"]), kinds
        assert any(s["role"] == "radio" or s["type"] == "radio" for s in stops), \
            f"{app_page.url_path}: no question in {[s['words'] for s in stops]}"

        # Answer the question with the arrow keys: back to it with Shift+Tab, then an arrow picks an answer.
        _tab_to(page, lambda s: s["type"] == "radio" or s["role"] == "radio", reverse=True, check_focus=False)
        driver.act(page, lambda: page.keyboard.press("ArrowDown"))
        feedback = page.locator(f"{driver.MAIN} .st-key-lesson_footer [data-testid='stAlert']")
        assert feedback.count() == 1, f"{app_page.url_path}: answering by keyboard showed nothing"
        # On to the next page by Enter on its link; then on round past the page's end (no trap) to its first stop,
        # where a student starts reading the new page.
        _tab_to(page, _is_next, check_focus=False)
        driver.act(page, lambda: page.keyboard.press("Enter"))
        _tab_to(page, _is_first, check_focus=False, limit=2 * MAX_TABS)
    print("tab stops per page:", walked)
    assert urlsplit(page.url).path.strip("/") == "training", page.url

    # Copy link by keyboard, in the share box: on past the page's end (focus is not trapped there) to the sidebar.
    _tab_to(page, lambda s: s["sidebar"] and s["words"] == "Copy link", limit=2 * MAX_TABS)
    page.keyboard.press("Enter")
    page.wait_for_function("() => /copied/.test(document.querySelector('.gelu-share-note').textContent)")
    tab.assert_clean()


def test_the_code_export_and_the_upload_by_keyboard(new_tab):
    tab = new_tab()
    tab.open("ffn?ffn_input=Upload")
    page = tab.page
    _tab_to(page, lambda s: s["uploader"] and s["tag"] == "button" and "Help" not in s["words"], check_focus=False)
    with page.expect_file_chooser() as chooser:
        page.keyboard.press("Space")
    driver.act(page, lambda: chooser.value.set_files(
        files=[{"name": "tokens.npy", "mimeType": "application/octet-stream", "buffer": _npy()}]))
    assert page.locator(driver.ERROR_BOX).count() == 0
    assert "(1, 4, 768)" in page.locator(f"{driver.MAIN} [data-testid='stCode']").first.inner_text()

    page.keyboard.press("Escape")
    _tab_to(page, lambda s: s["main"] and "Code for this view" in s["words"], check_focus=False)
    driver.act(page, lambda: page.keyboard.press("Enter"))
    code = page.locator(f"{driver.MAIN} .st-key-code_for_view [data-testid='stCode']")
    assert "import" in code.first.inner_text()
    stops = _tab_to(page, lambda s: s["main"] and "Download the script" in s["words"])
    assert all(s["ring"] for s in stops[-2:]), stops[-2:]
    tab.assert_clean()


# ---------------------------------------------------------------------------------------------- zoom and motion

CUT_JS = r"""() => {
  const vw = document.documentElement.clientWidth, cut = [];
  const scrolls = (e) => { for (let a = e.parentElement; a; a = a.parentElement) {
    const o = getComputedStyle(a).overflowX; if (o === "auto" || o === "scroll" || o === "hidden") return a; }
    return null; };
  for (const e of document.querySelectorAll("[data-testid='stMain'] *")) {
    const r = e.getBoundingClientRect();
    if (!r.width || !r.height || getComputedStyle(e).visibility === "hidden") continue;
    if ((r.right > vw + 1 || r.left < -1)) {
      const box = scrolls(e);
      const main = document.querySelector("[data-testid='stMain']");
      if (!box || box === main || box.contains(main)) cut.push((e.className.baseVal ?? e.className) + " " + e.tagName);
    }
  }
  const main = document.querySelector("[data-testid='stMain']");
  return {page: document.documentElement.scrollWidth - vw, main: main.scrollWidth - main.clientWidth,
          cut: cut.slice(0, 8)};
}"""


@pytest.mark.parametrize("app_page", PAGES, ids=[p.url_path for p in PAGES])
def test_every_page_reflows_at_320_css_px(new_tab, app_page):
    tab = new_tab(color_scheme="dark", viewport=REFLOW)
    tab.open(page_path(app_page))
    found = tab.page.evaluate(CUT_JS)
    assert found["page"] <= 0 and found["main"] <= 0, found
    assert found["cut"] == [], found
    tab.assert_clean()


def test_reduced_motion_stops_animation(browser, server):
    context = browser.new_context(viewport=driver.DESKTOP, reduced_motion="reduce")
    try:
        context.add_init_script(driver.RUN_COUNTER_JS)
        page = context.new_page()
        driver.open_app(page, f"{server.base_url}/curves")
        durations = page.evaluate("""() => [...document.querySelectorAll("[data-testid='stMain'] *")]
            .map((e) => getComputedStyle(e)).map((s) => [s.transitionDuration, s.animationDuration])""")
        longest = max(float(d.rstrip("ms").split(",")[0]) * (1e-3 if d.endswith("ms") else 1)
                      for pair in durations for d in pair)
        assert longest <= 1e-4, f"an animation of {longest} s under prefers-reduced-motion"
        animated = page.evaluate("""() => [...document.querySelectorAll('.js-plotly-plot')].filter((gd) =>
            gd.layout.transition || ((gd._transitionData || {})._frames || []).length).length""")
        assert animated == 0, "a chart animates (layout.transition or frames): Plotly ignores reduced motion"
    finally:
        context.close()
