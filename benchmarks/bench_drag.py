"""A drag as a student feels it: each pointer, finger or key event to the frame that shows its value in the
readouts and the chart, on every live control, against a bare ``st.slider`` + ``st.plotly_chart`` page in the
same run, and (mouse, touch) against this rig's floor, "bare html": the browser's own ``<input type=range>`` with
one listener writing its value (no Streamlit, no Plotly).

    python benchmarks/bench_drag.py [--pages curves] [--moves 36] [--seconds 1.5]

Per page and gesture (mouse: ``--moves`` moves over ``--seconds``, out to the track's right and half way back;
touch: the same with one finger, through Chrome DevTools' touch events; key: an arrow key held, 30 auto-repeats
over 1 s), with harness/drag.py's in-page recorder (a ``requestAnimationFrame`` loop that reads the thumb, the
readouts' text and the chart's probe markers each frame):

- event -> drawn, median and p95 in ms: from each event that moved the thumb (its ``timeStamp``) to the first
  frame in which both the readouts and the chart's markers had changed; "never" counts the moves whose value was
  not shown before the release (the reference page shows nothing until it reruns); "end": the gesture's last
  frame has the markers at the thumb's value;
- fps through the gesture (frames the page drew per second) and its longest frame;
- websocket frames the page sent and received during the gesture (the target: none);
- release -> settled: from the release to the rerun drawn, the reruns it caused and the URL's value after it;
- KB: what the page's live layer is sent once (its table of strings, as JSON) and the whole first load over the
  websocket.

Needs Debian's Chromium.  The machine's 2 cores run the server, the browser and this script, and other work may
run beside it: compare the live page with the reference of the same run, not with another run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.results import printed, record  # noqa: E402
from harness import browser as driver  # noqa: E402
from harness import drag as hand  # noqa: E402

REFERENCE_APP = """
import plotly.graph_objects as go
import streamlit as st

x = st.slider("Probe x", -10.0, 10.0, -1.0, 0.1, key="ref_x", format="%.2f")
grid = [i / 20 for i in range(-60, 61)]
with st.container(key="ref_readout"):
    st.metric(f"ReLU({x:.2f})", f"{max(x, 0.0):.4f}")
fig = go.Figure([go.Scatter(x=grid, y=[max(g, 0.0) for g in grid], mode="lines"),
                 go.Scatter(x=[x], y=[max(x, 0.0)], mode="markers", meta="marker:x")])
st.plotly_chart(fig, key="chart_ref")
"""


def live_pages() -> dict[str, dict]:
    """page -> its live control, the readouts the recorder reads, the chart, the table the page sends."""
    from ui import approximations, curves, derivative, gate, home, steps

    return {
        "curves": dict(path="curves", control="curves_x", chart="chart_curves",
                       readout=f".st-key-{curves.READOUT} [data-testid='stMetricValue'] p",
                       table=lambda: curves.probe_live_table("tanh", -3.0, 3.0)),
        "derivative": dict(path="derivative", control="derivative_x", chart="",
                           readout=f".st-key-{derivative.READOUT} [data-testid='stMetricValue'] p",
                           table=lambda: derivative.gradient_live_table("none")),
        "gate": dict(path="gate", control="gate_x", chart="chart_gate",
                     readout=f".st-key-{gate.READOUT} [data-testid='stMetricValue'] p", table=gate.gate_live_table),
        "steps": dict(path="steps", control="steps_pick", chart="", url_key="steps_x",
                      readout=f".st-key-{steps.READOUT} [data-testid='stTable'] tbody td p",
                      table=lambda: steps.steps_live_table(False)),
        # the range's lower thumb, dragged left: the error charts' caption and the forms chart's x range
        "approximations": dict(path="approximations", control="approximations_range",
                               chart="chart_approximations-forms", to=0.05, key="ArrowLeft",
                               readout=approximations.ERRORS_CAPTION_AT, table=approximations.range_live_table),
        # a number input: a held ArrowUp only (no pointer gesture), x2 from -1 up to 14 (the chart's range widens
        # at each step from 3): its row of the table, and the chart's label and axes' tick labels, written in the
        # same task as its range (the chart's points move with it: tests/e2e/test_live.py)
        "home": dict(path="", control="home_x2", chart="", key="ArrowUp", gestures=("key",),
                     readout="[data-testid='stMain'] [data-testid='stTable'] tbody tr:nth-child(2) td p, "
                             ".st-key-chart_home .annotation-text, .st-key-chart_home .xtick text",
                     table=lambda: [home.input_live_table(i) for i in range(5)]),  # all five
    }


REFERENCE = dict(path="", control="ref_x", chart="chart_ref", table=None,
                 readout=".st-key-ref_readout [data-testid='stMetricValue'] p")

# The floor of this rig: no Streamlit, no Plotly, the browser's own <input type=range> and one listener writing its
# value into a text node.  Chromium's path for DevTools' touch events adds about a frame here too (a touch reaches
# the page's main thread just after a frame's requestAnimationFrame, and its rAF-aligned pointermove waits for the
# next one): what any page can do with a finger in this rig.
FLOOR_HTML = """<!doctype html><html lang="en"><body style="margin:40px;font:16px sans-serif;height:2000px">
<div class="st-key-floor"><input type="range" min="-10" max="10" step="0.01" value="-1" style="width:800px"></div>
<p class="floor-readout">-1.00</p>
<script>
const input = document.querySelector("input"), out = document.querySelector(".floor-readout");
input.addEventListener("input", () => { out.firstChild.nodeValue = Number(input.value).toFixed(2); });
</script></body></html>"""


def floor_gesture(browser, kind: str, moves: int, seconds: float) -> dict:
    """The same gesture on FLOOR_HTML (served by the test itself on http://localhost, a secure context): its row."""
    page = hand.new_page(browser, touch=kind == "touch")
    try:
        page.route("http://localhost/floor", lambda route: route.fulfill(body=FLOOR_HTML, content_type="text/html"))
        page.goto("http://localhost/floor")
        recorder = hand.Recorder(page)
        box = page.locator("input").bounding_box()
        x, y = box["x"] + 0.45 * box["width"], box["y"] + box["height"] / 2  # the thumb at -1
        to_x = box["x"] + 0.85 * box["width"]
        if kind == "mouse":
            page.mouse.move(x, y)
            recorder.start("floor", ".floor-readout", "")
            page.mouse.down()
            for px in hand.path(x, to_x, moves):
                page.mouse.move(px, y)
                page.wait_for_timeout(seconds * 1000 / moves)
            drag = recorder.stop(kind)
            page.mouse.up()
        else:
            cdp = page.context.new_cdp_session(page)
            recorder.start("floor", ".floor-readout", "")
            cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]})
            for px in hand.path(x, to_x, moves):
                cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [{"x": px, "y": y}]})
                page.wait_for_timeout(seconds * 1000 / moves)
            drag = recorder.stop(kind)
            cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
        med, p95 = hand.summary(drag.latencies)
        return dict(kind=kind, events=len(drag.events), moved=len(drag.latencies) + drag.unshown, med=med, p95=p95,
                    never=drag.unshown, fps=drag.fps, worst=drag.worst_gap_ms, sent=0, received=0,
                    settled=float("nan"), agrees=True, reruns=0, url="-", first_kb=0.0, work=[])
    finally:
        page.context.close()


class Bytes:
    """Websocket bytes a page receives."""

    def __init__(self, page):
        self.received = 0
        page.on("websocket", lambda ws: ws.on("framereceived", self._add))

    def _add(self, payload) -> None:
        self.received += len(payload)


def gesture(browser, base_url: str, spec: dict, kind: str, moves: int, seconds: float) -> dict:
    """One fresh tab, one gesture on ``spec``'s control, then its release; the figures for one row."""
    page = hand.new_page(browser, touch=kind == "touch")
    try:
        recorder, wire = hand.Recorder(page), Bytes(page)
        driver.open_app(page, f"{base_url}/{spec['path']}")
        first_kb = wire.received / 1024
        watch = (spec["readout"], spec["chart"])
        left = right = 0.0
        if kind != "key":
            _, _, left, right = hand.thumb_centre(page, spec["control"])
        to_x = left + spec.get("to", 0.85) * (right - left)
        before = driver.runs(page)
        if kind == "mouse":
            drag = hand.mouse_drag(page, recorder, spec["control"], to_x, moves=moves, seconds=seconds, watch=watch)
            release = page.mouse.up
        elif kind == "touch":
            drag, lift = hand.touch_drag(page, recorder, spec["control"], to_x, moves=moves, seconds=seconds,
                                         watch=watch)
            release = lift
        else:
            key = spec.get("key", "ArrowRight")
            drag = hand.held_key(page, recorder, spec["control"], key, watch=watch)
            release = lambda: page.keyboard.up(key)  # noqa: E731
        work = page.evaluate("(window.__geluLiveMs || []).map((c) => c[1])")  # the layer's own time per move
        t0 = time.perf_counter()
        release()
        driver.wait_idle(page, after=before)
        settled_ms = (time.perf_counter() - t0) * 1000
        page.wait_for_timeout(400)  # a second rerun would show by now
        reruns = driver.runs(page) - before
        value = parse_qs(urlsplit(page.url).query).get(spec.get("url_key", spec["control"]), ["-"])[0]
        med, p95 = hand.summary(drag.latencies)
        return dict(kind=kind, events=len(drag.events), moved=len(drag.latencies) + drag.unshown, med=med, p95=p95,
                    never=drag.unshown, fps=drag.fps, worst=drag.worst_gap_ms, sent=drag.sent,
                    received=drag.received, settled=settled_ms, agrees=hand.settled_agrees(drag.frames),
                    reruns=reruns, url=value, first_kb=first_kb, work=work)
    finally:
        page.context.close()


def row(name: str, r: dict, table_kb: float | None) -> str:
    def ms(v: float) -> str:
        return "   -" if v != v else f"{v:5.1f}"

    kb = "   -" if table_kb is None else f"{table_kb:5.1f}"
    return (f"{name:<12} {r['kind']:<6} {r['moved']:>3}/{r['events']:<3} {ms(r['med'])} {ms(r['p95'])} {r['never']:>5}"
            f" {r['fps']:5.1f} {r['worst']:6.1f} {r['sent']:>4} {r['received']:>4} {r['settled']:7.0f} {r['reruns']:>3}"
            f" {r['url']:>6} {'yes' if r['agrees'] else 'no':>4} {kb} {r['first_kb']:7.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", nargs="*", default=None, help="live pages to drag (default: all)")
    parser.add_argument("--moves", type=int, default=36)
    parser.add_argument("--seconds", type=float, default=1.5)
    parser.add_argument("--gestures", nargs="*", default=["mouse", "touch", "key"])
    args = parser.parse_args()
    pages = live_pages()
    chosen = args.pages or list(pages)
    from playwright.sync_api import sync_playwright

    from draw.assets import text

    sent = text("plotly_private.js", "live.js", "live.css")
    print(f"live layer's script and style: {len(sent) / 1024:.1f} KB (sent once per page)")
    print("event -> drawn in ms (median, p95) over the events that moved the thumb; never: moves not shown before "
          "the release;\nfps and the longest frame (ms) during the gesture; ws sent/recv: websocket frames during it; "
          "settled: release -> rerun drawn (ms);\nruns: reruns after the release; url: the value the address holds; "
          "end: the last frame of the gesture has the chart's markers at the thumb; "
          "table: live data KB; first: KB over the websocket on opening\n")
    print(f"{'page':<12} {'input':<6} {'moved':>7} {'med':>5} {'p95':>5} {'never':>5} {'fps':>5} {'worst':>6}"
          f" {'sent':>4} {'recv':>4} {'settled':>7} {'runs':>3} {'url':>6} {'end':>4} {'table':>5} {'first':>7}")
    with driver.one_file_app(REFERENCE_APP) as ref_dir, driver.Server() as app, \
            driver.Server(app_dir=ref_dir) as ref, sync_playwright() as pw:
        browser = driver.launch(pw)
        driver.wait_ready(app.base_url)
        work: list[float] = []
        for kind in args.gestures:
            if kind != "key":
                print(row("bare html", floor_gesture(browser, kind, args.moves, args.seconds), None))
            print(row("bare slider", gesture(browser, ref.base_url, REFERENCE, kind, args.moves, args.seconds), None))
            for name in chosen:
                spec = pages[name]
                if kind not in spec.get("gestures", (kind,)):
                    continue
                kb = len(json.dumps(spec["table"]())) / 1024
                result = gesture(browser, app.base_url, spec, kind, args.moves, args.seconds)
                print(row(name, result, kb))
                work.extend(result["work"])
        browser.close()
    if work:
        print(f"\nthe live layer's own work per shown step (readouts and markers written): median "
              f"{statistics.median(work):.2f} ms, max {max(work):.2f} ms over {len(work)} steps")


if __name__ == "__main__":
    with printed() as lines:
        main()
    record("bench_drag", None, lines)
