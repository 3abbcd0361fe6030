"""Live controls in a real browser: while a slider is dragged (mouse, finger) or stepped by keys, the readouts and
the chart's probe follow without the server, and show gelu_core's numbers as the page formats them.

Reference: mpmath at 50 digits (tests.test_ui_explorer_pages.gelu_ref / gate_ref, the textbook formulas),
formatted as the correctly rounded 4-decimal string (``shown``); the labels' x as the thumb's own value to two
decimals.  Read from the DOM at each position, compared exactly as strings.  The chart's markers: where Plotly's
own point is drawn (its transform, back through the drawn x axis's ``p2c``), within 0.01 px of the thumb's
value (Plotly rounds its pixels to 0.01);
hidden when the probe lies outside the plotted range.  Websocket frames are counted by Playwright's
``framesent`` events; script runs by harness.browser's counter of the server's "script finished" messages.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from harness import browser as driver
from harness import drag as hand
from tests.test_ui_explorer_pages import gate_ref, gelu_ref, shown

pytestmark = pytest.mark.e2e

READOUT = ".st-key-curves_readout"
READ_JS = """([control, readout, chart]) => {
  const q = (s) => [...document.querySelectorAll(s)].map((e) => e.textContent);
  return { thumb: Number(document.querySelector(`.st-key-${control} input[type=range]`).value),
           valuetext: document.querySelector(`.st-key-${control} input[type=range]`).getAttribute("aria-valuetext"),
           labels: q(`${readout} [data-testid='stMetricLabel'] p`),
           values: q(`${readout} [data-testid='stMetricValue'] p`),
           marks: window.__dragMarks(chart) };
}"""
FRAMES_2 = "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"


def curves_expected(x: float, form: str = "tanh", lo: float = -3.0, hi: float = 3.0) -> dict:
    at = f"{x:.2f}".replace("-0.00", "0.00")
    word = {"none": "exact"}.get(form, form)
    relu = shown(max(x, 0.0))
    return {"labels": [f"ReLU({at})", f"GELU({at}), {word}", f"gate({at}), {word}"],
            "values": [relu, shown(gelu_ref(x, form)), shown(gate_ref(x, form))],
            "note": "" if lo <= x <= hi else
            f"The probe x = {at} lies outside the plotted range: widen the range to see it."}


def read(page) -> dict:
    """What the page shows two frames from now; read again, up to 20 frames later, while the chart has no markers
    (a rerun redrawing it: keys send each step to the server) or they are not at the thumb (the layer shows a
    pointer's value before React draws the thumb there)."""
    for _ in range(10):
        page.evaluate(FRAMES_2)
        state = page.evaluate(READ_JS, ["curves_x", READOUT, "chart_curves"])
        if len(state["marks"]) == 2 and all(abs(m["x"] - state["thumb"]) <= m["tol"] for m in state["marks"]):
            break
    state["note"] = page.locator(".st-key-curves_x_live .gelu-live-note").text_content()  # in the shadow root
    return state


def check(state: dict, lo: float = -3.0, hi: float = 3.0) -> None:
    x = state["thumb"]
    want = curves_expected(x, lo=lo, hi=hi)
    assert (state["labels"], state["values"], state["note"]) == (want["labels"], want["values"], want["note"]), x
    assert len(state["marks"]) == 2
    for mark in state["marks"]:
        assert mark["x"] == pytest.approx(x, abs=mark["tol"]) and mark["visible"] == (lo <= x <= hi), (x, mark)


@pytest.fixture
def tab(browser, server):
    page = hand.new_page(browser, touch=True)
    recorder = hand.Recorder(page)
    driver.open_app(page, f"{server.base_url}/curves")
    yield page, recorder
    page.context.close()


def test_a_mouse_drag_shows_gelu_core_numbers_at_every_position_without_the_server(tab, browser, server):
    page, recorder = tab
    x, y, left, right = hand.thumb_centre(page, "curves_x")
    page.mouse.move(x, y)
    before_runs, before_sent = driver.runs(page), recorder.sent
    page.mouse.down()
    seen = {}
    for i in range(27):  # the whole track and a little beyond both ends: -10 and 10 are reached
        page.mouse.move(left - 10 + (right - left + 20) * i / 26, y)
        state = read(page)
        check(state)
        seen[state["thumb"]] = state
    assert len(seen) >= 20 and min(seen) == -10 and max(seen) == 10
    page.mouse.move(left + (right - left) * 0.6, y)  # end inside the plotted range
    last = read(page)
    check(last)
    assert recorder.sent == before_sent, "the page sent a websocket frame during the drag"
    assert driver.runs(page) == before_runs, "a script ran during the drag"

    driver.act(page, page.mouse.up)
    page.wait_for_timeout(400)
    assert driver.runs(page) == before_runs + 1, "the release ran the script other than once"
    after = read(page)
    assert {k: after[k] for k in ("thumb", "labels", "values", "note")} == \
        {k: last[k] for k in ("thumb", "labels", "values", "note")}
    for live, drawn in zip(last["marks"], after["marks"], strict=True):  # where Plotly itself draws them now
        assert live["px"] == pytest.approx(drawn["px"], abs=0.5)
    value = parse_qs(urlsplit(page.url).query)["curves_x"]
    assert float(value[0]) == last["thumb"]

    other = hand.new_page(browser)  # the share link, in a fresh session
    try:
        driver.open_app(other, page.url)
        reopened = read(other)
        assert {k: reopened[k] for k in ("thumb", "labels", "values", "note")} == \
            {k: last[k] for k in ("thumb", "labels", "values", "note")}
    finally:
        other.context.close()


def test_keys_step_the_live_readouts_through_20_positions(tab):
    page, _ = tab
    control = page.locator(".st-key-curves_x input[type=range]")
    control.focus()
    seen = set()
    for key in ["ArrowRight"] * 12 + ["PageUp", "PageUp", "End", "ArrowLeft", "ArrowLeft", "Home", "ArrowRight",
                                       "PageUp", "PageUp", "PageUp", "ArrowUp", "ArrowDown", "ArrowDown"]:
        page.keyboard.press(key)
        state = read(page)
        check(state)
        assert state["valuetext"] == f"{state['thumb']:.2f}"
        seen.add(state["thumb"])
    assert len(seen) >= 20


def test_a_finger_drag_follows_without_the_server(tab):
    page, recorder = tab
    _, _, left, right = hand.thumb_centre(page, "curves_x")
    before_runs = driver.runs(page)
    drag, lift = hand.touch_drag(page, recorder, "curves_x", left + 0.3 * (right - left), moves=24, seconds=0.6,
                                 watch=(f"{READOUT} [data-testid='stMetricValue'] p", "chart_curves"))
    check(read(page))
    assert len(drag.thumb_values) >= 5 and drag.sent == 0 and driver.runs(page) == before_runs
    assert drag.unshown == 0 and drag.latencies, "a move of the thumb never reached the readouts and the chart"
    assert hand.settled_agrees(drag.frames)
    driver.act(page, lift)
    check(read(page))


def test_a_dragged_probe_stays_clean_under_axe(tab):
    """axe-core's WCAG 2.1 A and AA rules on what this layer moves, in the middle of a drag, inside and outside the
    plotted range (where the note shows): the slider, the readouts, the note and the chart.  The page around them
    (its lesson line, the sidebar, the formulas) is the page tests' concern."""
    axe = pytest.importorskip("axe_playwright_python.sync_playwright")
    page, _ = tab
    x, y, left, right = hand.thumb_centre(page, "curves_x")
    page.mouse.move(x, y)
    page.mouse.down()
    scope = {"include": [[f".st-key-{key}"] for key in ("curves_x", "curves_readout", "curves_x_live", "chart_curves")]}
    rules = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}}
    for at in (0.55, 0.9):
        page.mouse.move(left + at * (right - left), y)
        state = read(page)
        check(state)
        result = axe.Axe().run(page, context=scope, options=rules)
        assert result.violations_count == 0, (state["thumb"], result.generate_report())
    page.mouse.up()
