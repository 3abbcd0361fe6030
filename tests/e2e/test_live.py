"""Live controls in a real browser: while a slider is dragged (mouse, finger) or stepped by keys, the readouts and
the chart's probe follow without the server, and show gelu_core's numbers as the page formats them.

Reference: mpmath at 50 digits (tests.test_ui_explorer_pages.gelu_ref / gate_ref, the textbook formulas),
formatted as the correctly rounded 4-decimal string (``shown``); the labels' x as the thumb's own value to two
decimals.  Read from the DOM at each position, compared exactly as strings.  The chart's markers: where Plotly's
own point is drawn (its transform, back through the drawn x axis's ``p2c``), within 0.01 px of the thumb's
value (Plotly rounds its pixels to 0.01);
hidden when the probe lies outside the plotted range.  The gate's bell: the shaded area's right edge and last point
against x and mpmath's density there (``check_fill``).  Websocket frames are counted by Playwright's
``framesent`` events; script runs by harness.browser's counter of the server's "script finished" messages.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

import pytest

from harness import browser as driver
from harness import drag as hand
from tests.conftest import sweep
from tests.test_ui_explorer_pages import gate_ref, gelu_ref, grad_ref, shown

pytestmark = pytest.mark.e2e

READ_JS = """([control, readout, chart, exact]) => {
  const q = (s) => [...document.querySelectorAll(s)].map((e) => e.textContent);
  // a chart's plot: the first (a rerun's redraw may hold two for a moment)
  const plot = (key) => (key ? document.querySelector(`.st-key-${key} .js-plotly-plot`) : null);
  const view = (key) => {  // the chart's axes as Plotly holds them now
    const fl = plot(key)?._fullLayout;
    return { xrange: fl?.xaxis?.range ?? null, yrange: fl?.yaxis?.range ?? null };
  };
  const slider = document.querySelector(`.st-key-${control} input[type=range]`);
  return { thumb: Number(slider.value), valuetext: slider.getAttribute("aria-valuetext"),
           valuenow: Number(slider.getAttribute("aria-valuenow")),
           labels: q(`${readout} [data-testid='stMetricLabel'] p`),
           values: q(`${readout} [data-testid='stMetricValue'] p`),
           sentence: q(`${readout} [data-testid='stMarkdownContainer'] p`)[0],
           caption: q(`${readout} [data-testid='stCaptionContainer'] p`)[0] || null,
           cells: [...document.querySelectorAll(`${readout} [data-testid='stTable'] tbody tr`)]
             .map((tr) => [...tr.querySelectorAll("td")].slice(1).map((td) => td.textContent)),
           label: chart ? document.querySelector(`.st-key-${chart} .annotation-text`)?.textContent ?? null : null,
           exact: exact ? document.querySelector(exact).value : null,
           marks: chart ? window.__dragMarks(chart) : [],
           legend: [...(plot(chart)?.querySelectorAll(".legend .traces .legendtext") ?? [])].map((e) => e.textContent),
           ...view(chart) };
}"""
# The bell chart's shaded area (the trace whose meta is "area", filled to y = 0) and its edge line (shape 0), read
# back from the paths drawn into data units through the drawn axes' p2c: the area's vertices along the curve, its
# base's right end, and the edge line's foot and top; with the 0.01 px Plotly rounds its paths to, in data units.
FILL_JS = """(chart) => {
  const gd = document.querySelector(`.st-key-${chart} .js-plotly-plot`), fl = gd && gd._fullLayout;
  if (!fl || !fl.xaxis || !fl.xaxis.p2c) return null;
  const xa = fl.xaxis, ya = fl.yaxis, nums = (d) => (d.match(/-?[0-9.]+/g) || []).map(Number);
  const g = [...gd.querySelectorAll(".scatterlayer .trace")].find((t) => t.__data__[0].trace.meta === "area");
  const d = nums(g.querySelector("path.js-fill").getAttribute("d"));
  const line = nums(gd.querySelector('.shapelayer path[data-index="0"]').getAttribute("d"));
  const points = [];
  for (let i = 4; i < d.length; i += 2) points.push([xa.p2c(d[i]), ya.p2c(d[i + 1])]);
  return { base: [xa.p2c(d[0]), ya.p2c(d[1])], points,
           edge: [xa.p2c(line[0] - xa._offset), ya.p2c(line[1] - ya._offset), xa.p2c(line[2] - xa._offset),
                  ya.p2c(line[3] - ya._offset)],
           label: gd.querySelector(".annotation-text").textContent,
           tol: [0.01 / Math.abs(xa._m), 0.01 / Math.abs(ya._m)] };
}"""
FRAMES_2 = "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))"


def frames_2(page, timeout_ms: float = 30_000) -> None:
    """Two frames of the page; a TimeoutError if none come within timeout_ms (a page whose main thread never comes
    free, as Plotly redrawing without end left one: ``page.evaluate`` would wait for ever)."""
    page.wait_for_function(FRAMES_2, timeout=timeout_ms)


def _at(x: float) -> str:
    return f"{x:.2f}".replace("-0.00", "0.00")


def curves_expected(x: float, form: str = "tanh", lo: float = -3.0, hi: float = 3.0) -> dict:
    word = {"none": "exact"}.get(form, form)
    return {"labels": [f"ReLU({_at(x)})", f"GELU({_at(x)}), {word}", f"gate({_at(x)}), {word}"],
            "values": [shown(max(x, 0.0)), shown(gelu_ref(x, form)), shown(gate_ref(x, form))],
            "note": "" if lo <= x <= hi else
            f"The probe x = {_at(x)} lies outside the plotted range: widen the range to see it."}


def slopes_expected(x: float, form: str = "tanh") -> dict:
    """The caption's words are the page's own rule (ui.derivative.gradient_words, doctested) applied to the
    numbers the metrics show, which are mpmath's."""
    from ui.derivative import gradient_words

    relu, gelu = (1.0 if x > 0 else 0.0), float(grad_ref(x, form))
    return {"labels": ["passed back by ReLU", f"passed back by GELU ({'exact' if form == 'none' else form})"],
            "values": [shown(relu), shown(gelu)],
            "sentence": f"The gradient flowing back through one unit whose input is x = {_at(x)}, when the gradient "
                        "arriving from the layer above is 1:",
            "caption": gradient_words(relu, gelu)}


def gate_expected(x: float, form: str = "tanh") -> dict:
    """The gate's metrics in the lesson's form and its chart's label, Φ itself: mpmath's gate as ui.format.percent
    writes a probability (its rule doctested and checked against mpmath in tests/test_ui_explorer_pages.py), GELU
    and ReLU to 4 decimals."""
    from ui.format import percent

    labels = ([f"gate Φ({_at(x)})", f"GELU({_at(x)}) = x · Φ(x)"] if form == "none"
              else [f"gate at {_at(x)}, {form} form", f"GELU({_at(x)}), {form} form"])
    return {"labels": [*labels, f"ReLU({_at(x)})"],
            "values": [percent(float(gate_ref(x, form))), shown(gelu_ref(x, form)), shown(max(x, 0.0))],
            "label": f"Φ({_at(x)})= {percent(float(gate_ref(x)))}"}  # the chart's label: its lines run together


def steps_expected(x: float) -> dict:
    """Step by step's metrics and step table: mpmath's seven steps at 50 digits (the source's unfolding), each
    number as six correctly rounded decimals in the page's wording; the metrics as ui.format.readable / sci write
    mpmath's tanh form, exact GELU and their difference (rules doctested there).  The table's step column names the
    steps and does not move."""
    from tests.test_ui_approximations_steps import mp_steps
    from ui.format import readable, sci

    cube, inner, c, u, t, gate, y = values = mp_steps(x)

    def six(v):
        return shown(v, 6)

    def op(v):
        return f"({six(v)})" if v < 0 else six(v)

    worked = [f"{op(x)}³", f"{six(x)} + 0.044715 × {op(cube)}", "√(2 / π)", f"{six(c)} × {op(inner)}",
              f"tanh({six(u)})", f"0.5 × (1 + {op(t)})", f"{six(x)} × {op(gate)}"]
    return {"values": [readable(float(y)), readable(float(gelu_ref(x))), sci(float(y - gelu_ref(x)))],
            "cells": [[w, six(v)] for w, v in zip(worked, values, strict=True)],
            # the chart: its probes' legend entries (mpmath's gate and GELU as the metrics write them), and its view,
            # -4 ... 4 stretched to keep x one unit inside (the page's rule)
            "legend": ["GELU (tanh form)", "gate =0.5·(1 + tanh u)", f"gate(x) = {readable(float(gate))}",
                       f"GELU(x) = {readable(float(y))}"],
            "xrange": [min(-4.0, x - 1.0), max(4.0, x + 1.0)]}


@dataclass(frozen=True)
class Live:
    """A live control: its page, the container of the readouts it moves, its chart and what the page must show."""

    path: str
    control: str
    readout: str
    chart: str
    markers: int
    expected: Callable[[float], dict]
    lo: float = -3.0  # the plotted range at the page's defaults (markers outside it are hidden)
    hi: float = 3.0
    url_key: str = ""  # the URL's key for the value, when it is not the slider's own (a pick beside an exact input)
    fill: str = ""  # a chart whose area left of x is shaded under the bell curve (read by FILL_JS, checked by check)


LIVE = [Live("curves", "curves_x", ".st-key-curves_readout", "chart_curves", 2, curves_expected),
        Live("derivative", "derivative_x", ".st-key-derivative_readout", "", 0, slopes_expected),
        Live("gate", "gate_x", ".st-key-gate_readout", "chart_gate", 1, gate_expected, -4.0, 4.0,
             fill="chart_gate-bell"),
        Live("steps", "steps_pick", ".st-key-steps_readout", "chart_steps", 2, steps_expected, -6.0, 6.0,
             url_key="steps_x")]


def read(page, live: Live) -> dict:
    """What the page shows two frames from now; read again, for up to 3 s, while the chart has no markers
    (a rerun redrawing it: keys send each step to the server, and on a loaded machine that rerun's redraw can land
    a few hundred ms after the key) or they are not at the thumb (the layer shows a pointer's value before React
    draws the thumb there)."""
    deadline = time.monotonic() + 3.0
    while True:
        frames_2(page)
        exact = f".st-key-{live.url_key} input" if live.url_key else ""
        state = page.evaluate(READ_JS, [live.control, live.readout, live.chart, exact])
        state["fill"] = page.evaluate(FILL_JS, live.fill) if live.fill else None
        fill = state["fill"]
        if len(state["marks"]) == live.markers and all(abs(m["x"] - state["thumb"]) <= m["tol"]
                                                        for m in state["marks"]) \
                and (not live.fill or fill and abs(fill["base"][0] - state["thumb"]) <= fill["tol"][0]) \
                or time.monotonic() > deadline:
            break
    # the note is in the component's shadow root
    state["note"] = page.locator(f".st-key-{live.control}_live .gelu-live-note").text_content()
    return state


def check(state: dict, live: Live) -> None:
    x = state["thumb"]
    assert state["valuetext"] == f"x = {_at(x)}".replace("-", "\u2212") and state["valuenow"] == x  # "x = −1.00"
    want = live.expected(x)
    assert {k: state[k] for k in want} == want, x
    if "note" not in want:
        assert state["note"] == ""
    assert len(state["marks"]) == live.markers
    for mark in state["marks"]:
        assert mark["x"] == pytest.approx(x, abs=mark["tol"]) and mark["visible"] == (live.lo <= x <= live.hi), mark
    if live.fill:
        check_fill(state["fill"], x)


def density_ref(x: float) -> float:
    """The standard normal density, exp(-x²/2) / √(2π), by mpmath at 50 digits."""
    import mpmath

    with mpmath.workdps(50):
        return float(mpmath.exp(-mpmath.mpf(x) ** 2 / 2) / mpmath.sqrt(2 * mpmath.pi))


def check_fill(fill: dict, x: float) -> None:
    """The shaded area ends at x (its base's right end, its last vertex, the edge line), as high as the bell's density
    there (mpmath), and runs along the bell: each vertex is one of the curve's samples (every 0.02 from -4), at its
    density; all within the 0.01 px Plotly rounds to, in data units.  Its label is Φ(x) as a percentage."""
    from ui.format import percent

    tx, ty = fill["tol"]
    (bx, by), (lx, ly), (ex0, ey0, ex1, ey1) = fill["base"], fill["points"][-1], fill["edge"]
    assert [bx, lx, ex0, ex1] == pytest.approx([x] * 4, abs=tx), (x, fill)
    assert [by, ey0] == pytest.approx([0.0, 0.0], abs=ty) and [ly, ey1] == pytest.approx([density_ref(x)] * 2, abs=ty)
    assert fill["points"][0][0] == pytest.approx(-4.0, abs=tx)
    for px, py in fill["points"]:
        sample = round((px + 4) / 0.02) * 0.02 - 4
        assert px == pytest.approx(sample, abs=tx) and py == pytest.approx(density_ref(sample), abs=ty), (x, px)
    assert fill["label"] == f"area leftof {_at(x)}= {percent(float(gate_ref(x)))}"  # three lines, joined


SHOWN = ("thumb", "labels", "values", "note", "sentence", "caption", "label", "cells", "legend", "xrange", "yrange")


IDS = [live.control for live in LIVE]


def one_live(kept: int) -> list:
    """Every live control, for a test of each; the default run takes the one at ``kept`` (each test another, so each
    control is met there), CI all of them (tests.conftest.sweep)."""
    return sweep(LIVE, IDS, kept=[kept])


@pytest.fixture
def opened(browser, server):
    pages = []

    def _open(live: Live):
        page = driver.kept_page(browser, touch=True, scripts=(hand.FRAMES_JS,))
        pages.append(page)
        recorder = hand.Recorder(page)
        driver.open_app(page, f"{server.base_url}/{live.path}")
        return page, recorder

    yield _open
    for page in pages:
        page.close()


@pytest.mark.parametrize("live", one_live(0))
def test_a_mouse_drag_shows_gelu_core_numbers_at_every_position_without_the_server(opened, browser, live):
    page, recorder = opened(live)
    x, y, left, right = hand.thumb_centre(page, live.control)
    page.mouse.move(x, y)
    before_runs, before_sent = driver.runs(page), recorder.sent
    page.mouse.down()
    seen = {}
    for i in range(27):  # the whole track and a little beyond both ends: both ends are reached
        page.mouse.move(left - 10 + (right - left + 20) * i / 26, y)
        state = read(page, live)
        check(state, live)
        seen[state["thumb"]] = state
    lo, hi = (float(page.locator(f".st-key-{live.control} input[type=range]").get_attribute(a)) for a in ("min", "max"))
    assert len(seen) >= 20 and min(seen) == lo and max(seen) == hi
    page.mouse.move(left + (right - left) * 0.6, y)  # end inside the plotted range
    last = read(page, live)
    check(last, live)
    assert recorder.sent == before_sent, "the page sent a websocket frame during the drag"
    assert driver.runs(page) == before_runs, "a script ran during the drag"

    driver.act(page, page.mouse.up)
    page.wait_for_timeout(400)
    assert driver.runs(page) == before_runs + 1, "the release ran the script other than once"
    after = read(page, live)
    assert {k: after[k] for k in SHOWN} == {k: last[k] for k in SHOWN}
    for moved, drawn in zip(last["marks"], after["marks"], strict=True):  # where Plotly itself draws them now
        assert moved["px"] == pytest.approx(drawn["px"], abs=0.5)
    value = parse_qs(urlsplit(page.url).query)[live.url_key or live.control]
    assert float(value[0]) == last["thumb"]

    other = driver.kept_page(browser, scripts=(hand.FRAMES_JS,))  # the share link, in a fresh session
    try:
        driver.open_app(other, page.url)
        reopened = read(other, live)
        assert {k: reopened[k] for k in SHOWN} == {k: last[k] for k in SHOWN}
    finally:
        other.close()


@pytest.mark.parametrize("live", one_live(2))
def test_keys_step_the_live_readouts_through_20_positions(opened, live):
    page, _ = opened(live)
    slider = page.locator(f".st-key-{live.control}").get_by_role("slider")  # Playwright's own ARIA role
    assert slider.count() == 1
    slider.focus()
    seen = set()
    for key in ["ArrowRight"] * 12 + ["PageUp", "PageUp", "End", "ArrowLeft", "ArrowLeft", "Home", "ArrowRight",
                                       "PageUp", "PageUp", "PageUp", "ArrowUp", "ArrowDown", "ArrowDown"]:
        page.keyboard.press(key)
        state = read(page, live)
        check(state, live)
        seen.add(state["thumb"])
    assert len(seen) >= 20


# The events on which Streamlit's chart copies its plot's figure into its React state, each copy queuing a
# Plotly.react of it (the ``triggersUpdate`` events of its PlotlyChart, streamlit/static/static/js/PlotlyChart.*.js).
# One sent while a react of Streamlit's is still queued (a rerun's new chart is drawn, then drawn again at its
# measured width) leaves two figures in that queue, and each react's end queues its own figure again behind the
# other: Plotly redraws the two in turn without end.  The live layer's Plotly.relayout of a view sent one at each
# step (CI's key-stepping test on Step by step hung 20 min); it must send none.
UPDATE_EVENTS = ["plotly_animated", "plotly_doubleclick", "plotly_redraw", "plotly_relayout", "plotly_relayouting",
                 "plotly_restyle"]
WATCH_UPDATES_JS = """(events) => {
  window.__geluUpdates = [];
  const hook = () => {
    for (const gd of document.querySelectorAll(".js-plotly-plot"))
      if (gd.on && !gd.__geluWatched) {
        gd.__geluWatched = true;
        for (const name of events) gd.on(name, () => window.__geluUpdates.push(name));
      }
  };
  hook();
  new MutationObserver(hook).observe(document.body, { childList: true, subtree: true });
}"""


def test_views_follow_keys_and_a_drag_without_an_event_streamlit_copies_a_chart_on(opened):
    """Step by step's pick stepped by keys as the key test steps it (its view follows beyond |x| = 3; Home, End and
    the page keys rerun between the layer's steps) and then dragged over its track, and Approximations' range thumb
    dragged (three charts' views): at each position the view is the page's (``check``, ``check_range``), and no
    plot emitted any of ``UPDATE_EVENTS`` (each would be a chance of the endless redraw above)."""
    steps = LIVE[-1]
    page, _ = opened(steps)
    page.evaluate(WATCH_UPDATES_JS, UPDATE_EVENTS)
    page.locator(f".st-key-{steps.control}").get_by_role("slider").focus()
    views = set()
    for key in ["End", "ArrowLeft", "ArrowLeft", "Home", "ArrowRight", "ArrowRight", "PageUp", "ArrowLeft"]:
        page.keyboard.press(key)
        state = read(page, steps)
        check(state, steps)
        views.add(tuple(state["xrange"]))
    x, y, left, right = hand.thumb_centre(page, steps.control)
    page.mouse.move(x, y)
    page.mouse.down()
    for f in (0.9, 1.0, 0.95, 0.1, 0.0, 0.05):
        page.mouse.move(left + f * (right - left), y)
        state = read(page, steps)
        check(state, steps)
        views.add(tuple(state["xrange"]))
    driver.act(page, page.mouse.up)
    check(read(page, steps), steps)
    assert len(views) >= 8, views  # the view did follow: the layer set it
    assert page.evaluate("window.__geluUpdates") == []

    page, _ = opened(Live("approximations", "approximations_range", "", "", 0, lambda x: {}))
    page.set_viewport_size(TALL)
    page.evaluate(WATCH_UPDATES_JS, UPDATE_EVENTS)
    x, y, left, right = hand.thumb_centre(page, "approximations_range")
    page.mouse.move(x, y)
    page.mouse.down()
    for f in (0.3, 0.2, 0.1, 0.0):
        page.mouse.move(left + f * (right - left), y)
        check_range(read_range(page))
    driver.act(page, page.mouse.up)
    check_range(read_range(page))
    assert page.evaluate("window.__geluUpdates") == []


@pytest.mark.parametrize("live", one_live(1))
def test_a_held_arrow_key_follows_without_the_server_and_commits_once_on_release(opened, live):
    """A held ArrowRight (25 auto-repeats, then ArrowLeft held 8): the thumb, the readouts and the chart follow
    each repeat, shown right two frames after it, with no websocket frame and no script run; the key's release
    reruns once and the URL holds the value."""
    page, recorder = opened(live)
    slider = page.locator(f".st-key-{live.control} input[type=range]")
    slider.focus()
    start = float(slider.input_value())
    before_runs, before_sent = driver.runs(page), recorder.sent
    seen = set()
    for key, repeats in (("ArrowRight", 25), ("ArrowLeft", 8)):
        for _ in range(repeats):
            page.keyboard.down(key)  # a second down() without up() is an auto-repeat
            state = read(page, live)
            check(state, live)
            seen.add(state["thumb"])
        assert recorder.sent == before_sent and driver.runs(page) == before_runs, "the held key reached the server"
        driver.act(page, lambda: page.keyboard.up(key))  # noqa: B023 (called at once)
        page.wait_for_timeout(400)
        before_runs += 1
        assert driver.runs(page) == before_runs, "the key's release ran the script other than once"
        before_sent = recorder.sent
        check(read(page, live), live)
    assert len(seen) >= 20 and state["thumb"] == pytest.approx(start + 17 * 0.1)
    assert float(parse_qs(urlsplit(page.url).query)[live.url_key or live.control][0]) == state["thumb"]


@pytest.mark.parametrize("live", one_live(3))
def test_a_finger_drag_follows_without_the_server(opened, live):
    page, recorder = opened(live)
    _, _, left, right = hand.thumb_centre(page, live.control)
    before_runs = driver.runs(page)
    drag, lift = hand.touch_drag(page, recorder, live.control, left + 0.3 * (right - left), moves=24, seconds=0.6,
                                 watch=(f"{live.readout} [data-testid='stMetricValue'] p", live.chart))
    check(read(page, live), live)
    assert len(drag.thumb_values) >= 5 and drag.sent == 0 and driver.runs(page) == before_runs
    if live.chart:
        assert drag.unshown == 0 and drag.latencies, "a move of the thumb never reached the readouts and the chart"
        assert hand.settled_agrees(drag.frames)
    driver.act(page, lift)
    check(read(page, live), live)


# A chart the page draws and the layer moves: its plots' traces as Plotly holds them (arrays decoded), its shapes and
# labels as its layout holds them (what a redraw, the hover labels and the PNG export are made from), and what the
# hover label says at each probe marker (Plotly's own Fx.hover on its point); and its words (ui/describe.py: the name,
# the summary a screen reader hears, the data table's rows), which the layer writes at rest on Curves and the gate.
PLOT_JS = """(key) => {
  const gd = document.querySelector(`.st-key-${key} .js-plotly-plot`), list = (v) => (v == null ? null : Array.from(v));
  const words = document.querySelector(`.gelu-chart-text[data-chart="${key.replace(/^chart_/, "")}"]`);
  return {
    words: words && [words.dataset.name, words.querySelector("p").textContent,
                     [...words.querySelectorAll("tbody tr")].map((tr) => [...tr.cells].map((td) => td.textContent))],
    traces: [...gd.querySelectorAll(".scatterlayer .trace")].map((g) => g.__data__[0].trace)
      .map((t) => ({ meta: t.meta, name: t.name, x: list(t.x), y: list(t.y) })),
    shapes: (gd.layout.shapes || []).map((s) => [s.x0, s.x1, s.y0, s.y1]),
    labels: (gd.layout.annotations || []).map((a) => [a.text, a.x, a.y, a.xanchor]),
    hover: gd.data.map((t, i) => [t, i]).filter(([t]) => String(t.meta).startsWith("marker:")).map(([t, i]) => {
      window.Plotly.Fx.hover(gd, [{ curveNumber: i, pointNumber: 0 }]);
      const said = [...gd.querySelectorAll(".hoverlayer text")].map((e) => e.textContent);
      window.Plotly.Fx.unhover(gd);
      return said;
    }),
  };
}"""
SETTLED = {"curves": ["chart_curves"], "gate": ["chart_gate-bell", "chart_gate"],  # charts the page draws (settle)
           "steps": ["chart_steps"], "": ["chart_home"]}


def plots(page, live: Live) -> list:
    return [page.evaluate(PLOT_JS, key) for key in SETTLED[live.path]]


def same_plots(got: list, want: list) -> None:
    """Equal, numbers within 1e-12 relative (a shaded area's points are the bell curve's own, which the page computes
    over another array)."""
    for g, w in zip(got, want, strict=True):
        assert {k: g[k] for k in ("shapes", "labels", "hover", "words")} == \
            {k: w[k] for k in ("shapes", "labels", "hover", "words")}
        for gt, wt in zip(g["traces"], w["traces"], strict=True):
            assert (gt["meta"], gt["name"]) == (wt["meta"], wt["name"])
            assert gt["x"] == pytest.approx(wt["x"], rel=1e-12) and gt["y"] == pytest.approx(wt["y"], rel=1e-12), gt


@pytest.mark.parametrize("live", [live for live in LIVE if live.path in SETTLED], ids=lambda live: live.path)
def test_after_a_release_the_chart_holds_the_value_it_shows_and_hovers_it(opened, browser, live):
    """Curves', the gate's and Step by step's charts are the page's: a move's rerun sends at most their words.  After
    the release the layer writes the row into the plots' own data and layout, so that they hold what the page's figure
    at that value holds: the probes' points and names (what their hover labels say), the shaded area, the lines and
    the labels' text; the PNG export and any redraw are made from these.  Curves' and the gate chart's words are the
    page's too, and the layer writes what they say of the probe and the label.  Reference: the page's own charts and
    words at that value, in a fresh session opened from the share link; again after a resize, where Streamlit draws
    its figure anew."""
    page, _ = opened(live)
    x, y, left, right = hand.thumb_centre(page, live.control)
    page.mouse.move(x, y)
    page.mouse.down()
    # on the same side of 0, and inside Curves' range: no whole-page rerun (test_parts.py)
    page.mouse.move(left + (right - left) * (0.6 if live.path == "curves" else 0.8), y)
    before = driver.runs(page)
    driver.act(page, page.mouse.up)
    page.wait_for_function("n => window.__geluRuns > n", arg=before)
    driver.wait_idle(page, before)
    page.wait_for_timeout(500)
    settled = plots(page, live)
    driver.resize(page, {"width": 900, "height": 900})
    page.wait_for_timeout(500)
    resized = plots(page, live)

    other = driver.kept_page(browser, viewport={"width": 900, "height": 900})
    try:
        driver.open_app(other, page.url)
        fresh = plots(other, live)
    finally:
        other.close()
    assert any(h for p in fresh for h in p["hover"]) and all(p["traces"] for p in fresh)
    same_plots(resized, fresh)
    first = driver.kept_page(browser)  # the same link at the first page's first size
    try:
        driver.open_app(first, page.url)
        same_plots(settled, plots(first, live))
    finally:
        first.close()


@pytest.mark.parametrize("live", one_live(2))
def test_a_dragged_probe_stays_clean_under_axe(opened, live):
    """axe-core's WCAG 2.1 A and AA rules on what this layer moves, in the middle of a drag, inside and outside the
    plotted range (where the note shows): the slider, the readouts, the note and the chart.  The page around them
    (its lesson line, the sidebar, the formulas) is the page tests' concern, and so is the caption's colour."""
    axe = pytest.importorskip("axe_playwright_python.sync_playwright")
    page, _ = opened(live)
    x, y, left, right = hand.thumb_centre(page, live.control)
    page.mouse.move(x, y)
    page.mouse.down()
    keys = [live.control, live.readout.removeprefix(".st-key-"), f"{live.control}_live", live.chart]
    # Streamlit's caption grey (#767c83 on white, 4.4:1) is the theme's, being fixed apart (ui/theme): not this layer's
    scope = {"include": [[f".st-key-{key}"] for key in keys if key],
             "exclude": [["[data-testid='stCaptionContainer']"]]}
    rules = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}}
    for at in (0.55, 0.9):
        page.mouse.move(left + at * (right - left), y)
        state = read(page, live)
        check(state, live)
        result = axe.Axe().run(page, context=scope, options=rules)
        assert result.violations_count == 0, (state["thumb"], result.generate_report())
    page.mouse.up()


def test_every_digit_follows_the_pick_once_shown(opened):
    """"Show every digit" switched on (the whole page runs: the layer's table then holds every digit's rows), then
    the pick held right 6 steps: the step table shows mpmath's steps at each (steps_expected) with no script run,
    and after the release the page's own rerun writes the very cells the layer showed, every digit's rows among
    them."""
    live = next(live for live in LIVE if live.control == "steps_pick")
    page, recorder = opened(live)
    driver.act(page, lambda: page.get_by_text("Show every digit (float64)").click())
    page.wait_for_timeout(300)
    state = read(page, live)
    assert len(state["cells"]) > len(steps_expected(state["thumb"])["cells"])  # the digits' rows show
    page.locator(f".st-key-{live.control}").get_by_role("slider").focus()
    before_runs, before_sent = driver.runs(page), recorder.sent
    for _ in range(6):
        page.keyboard.down("ArrowRight")
        state = read(page, live)
        want = steps_expected(state["thumb"])["cells"]
        assert state["cells"][:len(want)] == want, state["thumb"]
    assert recorder.sent == before_sent and driver.runs(page) == before_runs, "the held key reached the server"
    driver.act(page, lambda: page.keyboard.up("ArrowRight"))
    page.wait_for_timeout(400)
    assert driver.runs(page) == before_runs + 1
    after = read(page, live)
    assert (after["thumb"], after["cells"]) == (state["thumb"], state["cells"])


def test_a_typed_x_off_the_pick_grid_stays_until_the_pick_moves(opened):
    """Step by step: the exact input holds 1.2345 (or -7.5), the pick's thumb sits at 1.2 (or -6); the layer must not
    write the thumb's numbers over the page's until the pick is dragged (then the pick's position shows)."""
    live = next(live for live in LIVE if live.control == "steps_pick")
    page, _ = opened(live)
    field = page.locator(".st-key-steps_x input")
    for typed, thumb in (("1.2345", 1.2), ("-7.5", -6.0)):  # between two steps; beyond the pick's end
        field.fill(typed)
        driver.act(page, lambda: field.press("Enter"))  # noqa: B023 (called at once)
        page.wait_for_timeout(300)
        state = read(page, live)
        want = steps_expected(float(typed))
        assert (state["thumb"], state["exact"]) == (thumb, typed) and {k: state[k] for k in want} == want
    x, y, left, right = hand.thumb_centre(page, live.control)
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(left + 0.3 * (right - left), y)
    check(read(page, live), live)
    page.mouse.up()


# ---------------------------------------------------------------- Approximations: the range sets three charts' view

RANGE_JS = """() => {
  const inputs = [...document.querySelectorAll(".st-key-approximations_range input[type=range]")];
  const thumbs = inputs.map((e) => Number(e.value)), spoken = inputs.map((e) => e.getAttribute("aria-valuetext"));
  const axes = {};
  for (const key of ["approximations-forms", "approximations-absolute", "approximations-relative"]) {
    const fl = document.querySelector(`.st-key-chart_${key} .js-plotly-plot`)?._fullLayout;
    axes[key] = fl && { x: fl.xaxis.range, y: fl.yaxis.range, ticks: fl.yaxis.tickvals ?? null,
                        text: fl.yaxis.ticktext ?? null };
  }
  const caption = (k) => document.querySelector(`.st-key-${k} [data-testid='stCaptionContainer'] p`)?.textContent;
  return { thumbs, spoken, axes, forms: caption("approximations_forms_words"),
           errors: caption("approximations_errors_words") };
}"""


def range_expected(lo: float, hi: float) -> dict:
    """What the page shows for the range lo … hi: each chart's axes as ui.approximations.view_axes sets them (the
    curves it views are gelu_core's, tests/test_live_tables.py), the captions as forms_words / errors_words write
    them (their numbers checked against mpmath in tests/test_page_approximations.py)."""
    from ui import approximations as A

    axes = {}
    for name in A.VIEW_CHARTS:
        view = A.view_axes(name, lo, hi)
        y = view["yaxis"]
        axes[name] = {"x": [lo, hi], "y": y["range"], "ticks": y.get("tickvals"), "text": y.get("ticktext")}
    return {"axes": axes, "forms": A.forms_words(lo, hi), "errors": A.errors_words(lo)}


def read_range(page) -> dict:
    """The range's thumbs and what the page shows two frames from now; again, for up to 3 s, while a chart is being
    redrawn by a rerun or its x axis is not yet at the thumbs."""
    deadline = time.monotonic() + 3.0
    while True:
        frames_2(page)
        state = page.evaluate(RANGE_JS)
        lo, hi = state["thumbs"]
        if all(state["axes"].values()) and (lo >= hi or all([float(v) for v in a["x"]] == [lo, hi]
                                                             for a in state["axes"].values())) \
                or time.monotonic() > deadline:
            return state


def check_range(state: dict) -> None:
    lo, hi = state["thumbs"]
    assert state["spoken"] == [f"x from {lo:.2f}".replace("-", "\u2212"), f"x to {hi:.2f}".replace("-", "\u2212")]
    want = range_expected(lo, hi)
    got = {k: state[k] for k in want}
    for axes in got["axes"].values():  # Plotly's own copy of a range: numbers, compared exactly
        axes["x"], axes["y"] = [float(v) for v in axes["x"]], [float(v) for v in axes["y"]]
    assert got == want, (lo, hi)


# A window tall enough for the three charts: while a pointer is held only the charts on the screen follow each move
TALL = {"width": 1400, "height": 1700}


def test_a_range_drag_moves_the_three_charts_view_without_the_server(opened, browser):
    """Both thumbs dragged, by mouse, over 20+ pairs: at each the three charts' axes and the two captions are the
    page's for that pair; no websocket frame, no script run; one rerun per release; the URL opens the same view."""
    live = Live("approximations", "approximations_range", "", "", 0, lambda x: {})
    page, recorder = opened(live)
    page.set_viewport_size(TALL)
    seen = set()
    before_runs, before_sent = driver.runs(page), recorder.sent
    for thumb, fractions in ((0, [0.25 - 0.25 * i / 11 for i in range(12)] + [0.02, 0.1, 0.2]),
                             (1, [0.9 - 0.6 * i / 12 for i in range(13)])):
        x, y, left, right = hand.thumb_centre(page, live.control, thumb)
        page.mouse.move(x, y)
        page.mouse.down()
        for f in fractions:
            page.mouse.move(left + f * (right - left), y)
            state = read_range(page)
            if state["thumbs"][0] < state["thumbs"][1]:
                check_range(state)
            seen.add(tuple(state["thumbs"]))
        assert recorder.sent == before_sent, "the page sent a websocket frame during the drag"
        assert driver.runs(page) == before_runs, "a script ran during the drag"
        last = read_range(page)
        driver.act(page, page.mouse.up)
        page.wait_for_timeout(400)
        before_runs += 1
        assert driver.runs(page) == before_runs, "the release ran the script other than once"
        after = read_range(page)
        assert after == last
        check_range(after)
        before_sent = recorder.sent
    assert len(seen) >= 20 and any(lo == -12.0 for lo, _ in seen)
    assert [float(v) for v in parse_qs(urlsplit(page.url).query)["approximations_range"]] == last["thumbs"]
    other = driver.kept_page(browser, scripts=(hand.FRAMES_JS,))  # the share link, in a fresh session
    try:
        driver.open_app(other, page.url)
        assert read_range(other) == last
    finally:
        other.close()


def test_keys_move_the_range_through_20_views(opened):
    """A key on a range thumb reruns the page (Streamlit commits a key at once): each view is the page's."""
    page, _ = opened(Live("approximations", "approximations_range", "", "", 0, lambda x: {}))
    seen = set()
    for thumb, keys in ((0, ["ArrowLeft"] * 10 + ["Home", "ArrowRight", "PageUp"]),
                        (1, ["ArrowLeft"] * 6 + ["PageDown", "End", "ArrowDown"])):
        page.locator(".st-key-approximations_range input[type=range]").nth(thumb).focus()
        for key in keys:
            driver.act(page, lambda: page.keyboard.press(key))  # noqa: B023 (called at once)
            state = read_range(page)
            check_range(state)
            seen.add(tuple(state["thumbs"]))
    assert len(seen) >= 20


@pytest.mark.slow  # the range by another input: the default run drags it and steps it by keys
def test_a_held_arrow_key_moves_the_range_view_and_commits_once(opened):
    page, recorder = opened(Live("approximations", "approximations_range", "", "", 0, lambda x: {}))
    page.set_viewport_size(TALL)
    before_runs, before_sent = driver.runs(page), recorder.sent
    page.locator(".st-key-approximations_range input[type=range]").nth(0).focus()
    seen = set()
    for _ in range(14):  # lo from -6 to -12 and one more (at the end the key does nothing)
        page.keyboard.down("ArrowLeft")
        state = read_range(page)
        check_range(state)
        seen.add(tuple(state["thumbs"]))
    assert state["thumbs"] == [-12.0, 6.0] and len(seen) == 12  # -6.5 … -12
    assert recorder.sent == before_sent and driver.runs(page) == before_runs
    driver.act(page, lambda: page.keyboard.up("ArrowLeft"))
    page.wait_for_timeout(400)
    assert driver.runs(page) == before_runs + 1
    check_range(read_range(page))
    assert parse_qs(urlsplit(page.url).query)["approximations_range"] == ["-12", "6"]


def test_a_chart_off_the_screen_follows_when_it_comes_into_view_or_at_the_release(opened):
    """In a window that shows the forms chart only, a held drag moves its view at each step; the error charts
    below, scrolled into view with the button still down, show the thumbs' view at once; no websocket frame
    meanwhile; after the release every chart is the page's."""
    page, recorder = opened(Live("approximations", "approximations_range", "", "", 0, lambda x: {}))
    chart = ".st-key-chart_approximations-absolute .js-plotly-plot"
    below = page.evaluate(f"() => document.querySelector('{chart}').getBoundingClientRect().top > innerHeight")
    assert below, "the error charts are on the screen: this test needs them below it"
    x, y, left, right = hand.thumb_centre(page, "approximations_range")
    page.mouse.move(x, y)
    sent = recorder.sent
    page.mouse.down()

    def forms_at_thumbs() -> bool:  # the forms chart's x range at the thumbs, within 2 s
        deadline = time.monotonic() + 2.0
        while True:
            frames_2(page)
            state = page.evaluate(RANGE_JS)
            if [float(v) for v in state["axes"]["approximations-forms"]["x"]] == state["thumbs"]:
                return True
            if time.monotonic() > deadline:
                return False

    for f in (0.3, 0.25, 0.2):
        page.mouse.move(left + f * (right - left), y)
        assert forms_at_thumbs()
    page.evaluate(f"() => document.querySelector('{chart}').scrollIntoView()")
    check_range(read_range(page))
    page.evaluate("() => document.querySelector('.st-key-chart_approximations-forms .js-plotly-plot')"
                  ".scrollIntoView()")
    page.mouse.move(left + 0.1 * (right - left), y)
    assert forms_at_thumbs()  # on the screen again, it follows; the error charts wait
    assert recorder.sent == sent
    page.mouse.up()
    check_range(read_range(page))


@pytest.mark.slow  # the range by another input: the default run drags it and steps it by keys
def test_a_finger_drag_moves_the_range_view(opened):
    page, recorder = opened(Live("approximations", "approximations_range", "", "", 0, lambda x: {}))
    page.set_viewport_size(TALL)
    _, _, left, right = hand.thumb_centre(page, "approximations_range")
    before_runs = driver.runs(page)
    drag, lift = hand.touch_drag(page, recorder, "approximations_range", left + 0.05 * (right - left), moves=24,
                                 seconds=0.6,
                                 watch=(".st-key-approximations_errors_words p", "chart_approximations-forms"))
    state = read_range(page)
    check_range(state)
    assert len(drag.thumb_values) >= 5 and drag.sent == 0 and driver.runs(page) == before_runs
    # the layer shows the finger's step before React moves the thumb there: on a loaded machine a move now and
    # then lands when React catches up with one already shown, and counts as never shown
    assert drag.latencies and drag.unshown <= len(drag.latencies) // 4
    driver.act(page, lift)
    page.wait_for_timeout(300)
    check_range(read_range(page))


@pytest.mark.slow  # the range by another input: the default run drags it and steps it by keys
def test_a_dragged_range_stays_clean_under_axe(opened):
    axe = pytest.importorskip("axe_playwright_python.sync_playwright")
    page, _ = opened(Live("approximations", "approximations_range", "", "", 0, lambda x: {}))
    page.set_viewport_size(TALL)
    x, y, left, right = hand.thumb_centre(page, "approximations_range", 1)
    page.mouse.move(x, y)
    page.mouse.down()
    keys = ["approximations_range", "approximations_range_live", "chart_approximations-forms",
            "chart_approximations-absolute", "chart_approximations-relative"]
    scope = {"include": [[f".st-key-{key}"] for key in keys],
             "exclude": [["[data-testid='stCaptionContainer']"]]}
    rules = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}}
    for at in (0.7, 0.55):
        page.mouse.move(left + at * (right - left), y)
        check_range(read_range(page))
        result = axe.Axe().run(page, context=scope, options=rules)
        assert result.violations_count == 0, result.generate_report()
    page.mouse.up()


# ---------------------------------------------------------------- Home: five number inputs

HOME_JS = """(i) => {
  const field = document.querySelector(`.st-key-home_x${i + 1} input`);
  const row = [...document.querySelectorAll("[data-testid='stMain'] [data-testid='stTable'] tbody tr")][i];
  const gd = document.querySelector(".st-key-chart_home .js-plotly-plot"), xa = gd._fullLayout.xaxis;
  const points = {};
  for (const g of gd.querySelectorAll(".scatterlayer .trace")) {
    const meta = String(g.__data__[0].trace.meta || "");
    const at = (s) => xa.p2c(Number(/translate\\(([^,]+),/.exec(s || "")?.[1]));
    if (meta.startsWith("marker:")) points[meta] = at(g.querySelectorAll("path.point")[i]?.getAttribute("transform"));
    if (meta === "gap") points.gap = xa.p2c(Number(/^M([^,]+),/.exec(g.querySelectorAll("path.js-line")[i]
                                                                    ?.getAttribute("d") || "")?.[1]));
  }
  const label = gd.querySelector(".annotation"), size = gd._fullLayout._size, box = gd.getBoundingClientRect();
  const at = (el) => { const r = el.getBoundingClientRect(); return [r.left - box.left, r.top - box.top, r.width,
                                                                     r.height].map((v) => Math.round(v * 10) / 10); };
  const ticks = (axis) => [...gd.querySelectorAll(`.${axis}tick text`)].map((t) => t.textContent)  // left to right
    .sort((a, b) => Number(a.replace("\u2212", "-")) - Number(b.replace("\u2212", "-")));
  return { value: field.value, cells: [...row.querySelectorAll("td")].map((td) => td.textContent), points,
           tol: 0.01 / Math.abs(xa._m), inside: xa.range,
           view: { x: xa.range, y: gd._fullLayout.yaxis.range, ticks: gd._fullLayout.yaxis.tickvals,
                   label: label ? label.querySelector(".annotation-text").textContent : null },
           // as drawn: the plot area (Plotly's margins), tick labels, the axis titles' and the label's boxes, its arrow
           drawn: { size: [size.l, size.r, size.t, size.b, size.w, size.h], xticks: ticks("x"), yticks: ticks("y"),
                    titles: [...gd.querySelectorAll(".g-xtitle text, .g-ytitle text")].map(at),
                    label: label ? at(label.querySelector(".annotation-text")) : null,
                    arrow: label ? label.querySelector(".annotation-arrow-g path")?.getAttribute("d") : null },
           words: [...document.querySelectorAll(".st-key-home_prose p")].map((p) => p.textContent) };
}"""


def home_expected(x: float) -> list[str]:
    """The row for input x: x, ReLU, the tanh gate, tanh GELU and exact GELU, mpmath at 50 digits to 4 decimals."""
    return [shown(x), shown(max(x, 0.0)), shown(gate_ref(x, "tanh")), shown(gelu_ref(x, "tanh")), shown(gelu_ref(x))]


def read_home(page, i: int) -> dict:
    deadline = time.monotonic() + 3.0
    while True:
        frames_2(page)
        state = page.evaluate(HOME_JS, i)
        x = float(state["value"])
        if all(abs(v - x) <= state["tol"] for v in state["points"].values()) or time.monotonic() > deadline:
            return state


def home_words(inputs) -> list[str]:
    """The two paragraphs under the table for these inputs: the most negative one and the smallest positive one
    named with mpmath's GELU (tanh form and exact) to 4 decimals, in the page's wording."""
    negative, positive = [v for v in inputs if v < 0], [v for v in inputs if v > 0]

    def four(v):  # 4 decimals, or 4 significant digits where those would print 0.0000 (x = -5: about -2.9e-7)
        return shown(v) if abs(v) >= 5e-5 else f"{float(v):.3e}"

    if negative:
        n = min(negative)
        first = (f"Look at x = {_at(n)}: ReLU gives exactly 0, GELU gives {four(gelu_ref(n, 'tanh'))} (tanh form; the "
                 f"exact form {four(gelu_ref(n))}). GELU shrinks a negative input hard but does not erase it.")
    else:
        first = "None of your inputs is negative: set one below zero to see ReLU erase it while GELU keeps a little."
    if positive:
        p = min(positive)
        second = ("On the positive side it lets a little less than all of x through: "
                  f"{shown(gelu_ref(p, 'tanh'))} of {_at(p)}.")
    else:
        second = ("None of your inputs is positive: set one above zero to see GELU let a little less than all of it "
                  "through.")
    return [first, second]


def check_home(state: dict, i: int = 1, others=None) -> None:
    """The input's row, its points, and what depends on all five (the others at ``others``, else the defaults): the
    chart's x range (-3 … 3 and every input with half a unit to spare), its y range and ticks (ui.home.overview_view's,
    the page's own), its label (the lowest tanh GELU, mpmath's; hidden when no output is negative) and the
    paragraphs."""
    from ui.home import HOME_DEFAULT_INPUTS, overview_view

    x = float(state["value"])
    assert state["cells"] == home_expected(x), x
    others = HOME_DEFAULT_INPUTS if others is None else others
    inputs = [*others[:i], x, *others[i + 1:]]
    assert state["words"] == home_words(inputs), x
    assert state["view"]["x"] == [min(-3.0, min(inputs) - 0.5), max(3.0, max(inputs) + 0.5)], x
    view = overview_view(inputs)
    assert (state["view"]["y"], state["view"]["ticks"]) == (view["yaxis.range"], view["yaxis.tickvals"]), x
    lowest = min(inputs, key=lambda v: float(gelu_ref(v, "tanh")))
    assert state["view"]["label"] == (f"GELU (tanh){shown(gelu_ref(lowest, 'tanh'))}ReLU 0" if lowest < 0
                                      else None), x
    assert set(state["points"]) == {"marker:relu", "marker:gelu_tanh", "gap"}
    assert all(v == pytest.approx(x, abs=state["tol"]) for v in state["points"].values()), state


def read_home_settled(page, i: int) -> dict:
    """``read_home`` once the chart's label and plot area have stopped changing (two reads alike; a rerun's chart
    is drawn at the measured width a frame or more after its first draw)."""
    deadline = time.monotonic() + 10.0
    state = read_home(page, i)
    while True:
        again = read_home(page, i)
        if again["drawn"] == state["drawn"] or time.monotonic() > deadline:
            return again
        state = again


def test_a_held_arrow_key_on_a_home_input_follows_without_the_server(opened, browser):
    """x2 held up 14 steps, then down 20: its row of the table, its two points and stub, the chart's view (ranges,
    ticks) and its label show each step, with no websocket frame and no script run; each release commits once, the
    rerun draws what the layer showed (the same view, plot area, tick labels, label box and arrow, to 0.1 px), no
    plot emits an event Streamlit's chart copies its figure on, and the URL opens the same view."""
    page, recorder = opened(Live("", "home_x2", "", "", 0, lambda x: {}))
    page.evaluate(WATCH_UPDATES_JS, UPDATE_EVENTS)
    field = page.locator(".st-key-home_x2 input")
    field.focus()
    seen, views = set(), set()
    before_runs, before_sent = driver.runs(page), recorder.sent
    for key, steps in (("ArrowUp", 14), ("ArrowDown", 20)):
        for _ in range(steps):
            page.keyboard.down(key)
            state = read_home(page, 1)
            check_home(state)
            seen.add(state["value"])
            views.add((tuple(state["view"]["x"]), state["view"]["label"]))
        assert recorder.sent == before_sent and driver.runs(page) == before_runs, "the held key reached the server"
        shown_live = read_home_settled(page, 1)
        driver.act(page, lambda: page.keyboard.up(key))  # noqa: B023 (called at once)
        page.wait_for_timeout(400)
        before_runs += 1
        assert driver.runs(page) == before_runs, "the key's release ran the script other than once"
        before_sent = recorder.sent
        after = read_home_settled(page, 1)
        check_home(after)
        assert after["value"] == state["value"] and after["words"] == state["words"]
        assert (after["view"], after["drawn"]) == (shown_live["view"], shown_live["drawn"])  # the rerun's own chart
    assert len(seen) >= 20 and state["value"] == "-4.00"  # -1.00 up to 6.00, down to -4.00
    assert len(views) >= 12, views  # the view and label did follow: the layer set them
    assert page.evaluate("window.__geluUpdates") == []
    assert parse_qs(urlsplit(page.url).query)["home_x2"] == ["-4"]
    other = driver.kept_page(browser, scripts=(hand.FRAMES_JS,))
    try:
        driver.open_app(other, page.url)
        reopened = read_home_settled(other, 1)
        assert reopened["cells"] == home_expected(-4.0)
        assert (reopened["view"], reopened["words"], reopened["drawn"]) == (after["view"], after["words"],
                                                                             after["drawn"])
    finally:
        other.close()


def test_a_held_key_follows_with_the_other_inputs_where_they_stand(opened):
    """x1 typed to 0.5 and x5 to 1.5 (each committed with Enter: the page's rerun), then x2 held up from -1 to 3:
    the view, the label and the paragraphs follow with the other four as they stand now (x2 is the most negative
    input and the lowest GELU until it reaches 0, then none is negative and the label hides; x1's 0.5 is the smallest
    positive until x2 ties it), with no script run; the release commits once."""
    page, recorder = opened(Live("", "home_x2", "", "", 0, lambda x: {}))
    for key, value in (("home_x1", "0.5"), ("home_x5", "1.5")):
        field = page.locator(f".st-key-{key} input")
        field.fill(value)
        driver.act(page, lambda f=field: f.press("Enter"))
        page.wait_for_timeout(300)
    others = (0.5, -1.0, 0.0, 1.0, 1.5)
    page.locator(".st-key-home_x2 input").focus()
    before_runs, before_sent, seen = driver.runs(page), recorder.sent, set()
    for _ in range(8):  # -1.00 up to 3.00
        page.keyboard.down("ArrowUp")
        state = read_home(page, 1)
        check_home(state, 1, others)
        seen.add(tuple(state["words"]))
    assert recorder.sent == before_sent and driver.runs(page) == before_runs, "the held key reached the server"
    assert len(seen) >= 2, seen  # the paragraphs changed on the way (x2 negative, then none)
    driver.act(page, lambda: page.keyboard.up("ArrowUp"))
    page.wait_for_timeout(400)
    assert driver.runs(page) == before_runs + 1
    check_home(read_home_settled(page, 1), 1, others)


def test_a_typed_number_shows_at_once_and_commits_on_enter(opened):
    """A number typed on the input's grid shows in the row and on the chart before Enter; one off the grid leaves the
    row as the page wrote it; Enter commits (one rerun) as before."""
    page, recorder = opened(Live("", "home_x4", "", "", 0, lambda x: {}))
    field = page.locator(".st-key-home_x4 input")
    before_runs, before_sent = driver.runs(page), recorder.sent
    for typed in ("2.5", "-3", "0.5", "-17.5"):
        field.fill(typed)
        state = read_home(page, 3)
        check_home(state, 3)
    field.fill("1.3")  # off the grid of 0.5 steps: the row keeps -17.5 until the page computes 1.3
    frames_2(page)
    assert page.evaluate(HOME_JS, 3)["cells"] == home_expected(-17.5)
    assert recorder.sent == before_sent and driver.runs(page) == before_runs
    driver.act(page, lambda: field.press("Enter"))
    page.wait_for_timeout(300)
    assert driver.runs(page) == before_runs + 1
    assert page.evaluate(HOME_JS, 3)["cells"] == home_expected(1.3)


@pytest.mark.slow  # axe under a held key: the default run checks it on the gate's dragged probe
def test_a_held_home_input_stays_clean_under_axe(opened):
    axe = pytest.importorskip("axe_playwright_python.sync_playwright")
    page, _ = opened(Live("", "home_x1", "", "", 0, lambda x: {}))
    page.locator(".st-key-home_x1 input").focus()
    for _ in range(5):
        page.keyboard.down("ArrowUp")
    check_home(read_home(page, 0), 0)
    scope = {"include": [[".st-key-home_inputs"], [".st-key-chart_home"], ["[data-testid='stTable']"],
                         [".st-key-home_prose"]]}
    rules = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}}
    result = axe.Axe().run(page, context=scope, options=rules)
    assert result.violations_count == 0, result.generate_report()
    page.keyboard.up("ArrowUp")


LIVE_HOME = Live("", "home_x4", "", "", 0, lambda x: {})  # Home's fourth input (its chart: SETTLED[""])


def test_after_home_s_inputs_move_the_chart_holds_their_points(opened, browser):
    """Home's chart is the page's: a move of an input sends only its words.  At rest each input's layer writes its
    own points (on ReLU and on GELU) and its stub into the plot's data; the view and the label are relaid out as the
    inputs move.  Two inputs moved, one by a typed number and Enter, one by a held arrow key: the plot then holds what
    the page's chart holds in a fresh session opened from the share link, its hover labels too."""
    page, _ = opened(LIVE_HOME)
    field = page.locator(".st-key-home_x4 input")
    field.fill("3.5")
    driver.act(page, lambda: field.press("Enter"))
    other = page.locator(".st-key-home_x1 input")
    other.focus()
    before = driver.runs(page)
    page.keyboard.down("ArrowUp")
    page.wait_for_timeout(400)
    page.keyboard.up("ArrowUp")
    page.wait_for_function("n => window.__geluRuns > n", arg=before)
    driver.wait_idle(page, before)
    page.wait_for_timeout(500)
    settled = plots(page, LIVE_HOME)
    fresh_page = driver.kept_page(browser)
    try:
        driver.open_app(fresh_page, page.url)
        fresh = plots(fresh_page, LIVE_HOME)
    finally:
        fresh_page.close()
    assert "home_x1=" in page.url and "home_x4=3.5" in page.url
    same_plots(settled, fresh)


def downloaded_csv(page, button: str, tmp_path) -> list[list[str]]:
    """The rows of the CSV a download button gives, as the browser saves it."""
    import csv

    with page.expect_download() as download_info:
        page.get_by_role("button", name=button).click()
    path = tmp_path / download_info.value.suggested_filename
    download_info.value.save_as(path)
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def test_a_download_after_a_move_holds_the_table_at_the_value_moved_to(opened, tmp_path):
    """Step by step's and Home's downloads are the page's (a move sends none): each makes its table at the click, from
    the value the move left.  Reference: mpmath at 50 digits, the source's seven steps (their values as the page's
    six decimals, ``shown``) and GELU and its gate in the tanh form at Home's five inputs (within 1e-15 relative,
    float64's own rounding)."""
    from tests.test_ui_approximations_steps import mp_steps

    page, _ = opened(LIVE[-1])  # Step by step
    pick, number = (page.locator(f".st-key-{key} input") for key in ("steps_pick", "steps_x"))
    start = float(number.input_value())
    for _ in range(3):  # three tenths up, a commit a key
        pick.focus()
        driver.act(page, lambda: pick.press("ArrowRight"))
    page.wait_for_timeout(300)
    x = float(number.input_value())
    assert x == pytest.approx(start + 0.3, abs=1e-9)
    rows = downloaded_csv(page, "Download table (CSV)", tmp_path)
    assert [row[-1] for row in rows[1:]] == [shown(v, 6) for v in mp_steps(x)], rows

    page, _ = opened(LIVE_HOME)
    field = page.locator(".st-key-home_x4 input")
    field.fill("3.5")
    driver.act(page, lambda: field.press("Enter"))
    page.wait_for_timeout(300)
    rows = downloaded_csv(page, "Download table (CSV)", tmp_path)
    header, body = rows[0], [[float(v) for v in row] for row in rows[1:]]
    assert 3.5 in [row[0] for row in body], rows
    for row in body:
        x = row[0]
        want = {"gate (tanh)": gate_ref(x, "tanh"), "GELU (tanh)": gelu_ref(x, "tanh"), "GELU (exact)": gelu_ref(x)}
        for name, value in want.items():
            assert row[header.index(name)] == pytest.approx(float(value), rel=1e-15, abs=1e-300), (x, name)
