"""Drag a slider as a student does (mouse, finger, held arrow key) and record, frame by frame, what the page shows.

Shared by `benchmarks/bench_drag.py` and `tests/e2e/test_live.py`.  An init script (``FRAMES_JS``) listens to
every pointer, touch and key event (their ``timeStamp``) and, in a ``requestAnimationFrame`` loop, records for
each frame the slider's thumb value, the readouts' text and the x at which the chart's probe markers are
drawn (traces whose ``meta`` starts with ``marker:``).  ``latencies`` then pairs each event that moved the
thumb with the first frame whose readouts and chart had changed to agree with the thumb: the event -> drawn
time a student feels.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass, field

from harness import browser as driver

FRAMES_JS = r"""
window.__drag = { on: false, events: [], frames: [] };
(() => {
  const d = window.__drag;
  const note = (e) => { if (d.on) d.events.push(e.timeStamp); };
  for (const type of ["pointermove", "pointerdown", "touchmove", "keydown"])
    window.addEventListener(type, note, { capture: true, passive: true });
  // the chart's probe markers (traces whose meta starts with "marker:") where they are drawn, in data units
  window.__dragMarks = (chart) => {
    const gd = document.querySelector(`.st-key-${chart} .js-plotly-plot`);
    const xa = gd && gd._fullLayout && gd._fullLayout.xaxis, marks = [];
    for (const g of gd && xa && xa.p2c ? gd.querySelectorAll(".scatterlayer .trace") : []) {
      const trace = g.__data__ && g.__data__[0] && g.__data__[0].trace;
      const point = g.querySelector("path.point");
      const at = point && /translate\(([^,]+),([^)]+)\)/.exec(point.getAttribute("transform") || "");
      if (trace && String(trace.meta || "").startsWith("marker:") && at)
        marks.push({ meta: trace.meta, x: xa.p2c(Number(at[1])), px: [Number(at[1]), Number(at[2])],
                     visible: point.style.display !== "none", tol: 0.01 / Math.abs(xa._m) });  // 0.01 px: Plotly's
    }
    return marks;
  };
  const state = () => {
    const input = d.control && document.querySelector(`.st-key-${d.control} input`);  // a slider's thumb, a number
    const texts = d.readout ? [...document.querySelectorAll(d.readout)].map((e) => e.textContent).join("|") : "";
    const thumb = input ? Number(input.value) : NaN;
    const marks = d.chart ? window.__dragMarks(d.chart).map((m) => (Math.abs(m.x - thumb) <= m.tol ? thumb : m.x)) : [];
    // a chart with no probe whose view the control sets (Approximations' range): its x axis's range
    const fl = d.chart && !marks.length && document.querySelector(`.st-key-${d.chart} .js-plotly-plot`)?._fullLayout;
    const view = fl && fl.xaxis ? fl.xaxis.range.join(" ") : "";
    return { thumb, texts, marks, view };
  };
  // a frame loop only while recording (``Recorder.start`` calls d.run): an idle page asks for no frames
  const loop = () => {
    if (!d.on) { d.looping = false; return; }
    d.frames.push({ t: performance.now(), ...state() });
    requestAnimationFrame(loop);
  };
  d.run = () => { if (!d.looping) { d.looping = true; requestAnimationFrame(loop); } };
})();
"""


@dataclass
class Drag:
    """One recorded gesture: its events' times, its frames, the websocket frames the page sent meanwhile."""

    kind: str
    events: list[float]
    frames: list[dict]
    sent: int
    received: int
    seconds: float
    latencies: list[float] = field(default_factory=list)
    unshown: int = 0  # events that moved the thumb but whose value the readouts and chart never showed

    @property
    def fps(self) -> float:
        if len(self.frames) < 2:
            return 0.0
        return (len(self.frames) - 1) / ((self.frames[-1]["t"] - self.frames[0]["t"]) / 1000)

    @property
    def worst_gap_ms(self) -> float:
        return max((b["t"] - a["t"] for a, b in zip(self.frames, self.frames[1:], strict=False)), default=float("nan"))

    @property
    def thumb_values(self) -> list[float]:
        return sorted({f["thumb"] for f in self.frames})


def latencies(events: list[float], frames: list[dict]) -> tuple[list[float], int]:
    """(event -> the first frame in which both the readouts and the chart's markers had moved, in ms, for each
    event that moved the thumb; how many such events were never shown during the gesture).

    The live layer may show a pointer's value a frame before React draws the thumb there, so the frame is not
    required to agree with the thumb; ``settled_agrees`` checks that the gesture ends where the thumb is."""
    out, unshown = [], 0
    for te in events:
        before = [f for f in frames if f["t"] < te]
        after = [f for f in frames if f["t"] >= te]
        if not before or not after:
            continue
        prev = before[-1]
        if all(f["thumb"] == prev["thumb"] for f in after[:4]):
            continue  # this event did not move the thumb (less than a step, or at an end)
        shown = next((f for f in after if f["texts"] != prev["texts"]
                      and (f["marks"] != prev["marks"] or not prev["marks"])  # a page with no chart: texts
                      and (f.get("view") != prev.get("view") or not prev.get("view"))), None)
        if shown is None:
            unshown += 1
        else:
            out.append(shown["t"] - te)
    return out, unshown


# In the page, as settled_agrees on the frames recorded so far (the markers of the newest frame at its thumb).
SETTLED_JS = """() => { const f = window.__drag.frames, last = f[f.length - 1];
  return !!last && last.marks.every((m) => m === last.thumb); }"""


def settled_agrees(frames: list[dict]) -> bool:
    """The gesture's last frame shows the thumb's value on the chart (markers at the thumb's x; True with no
    markers to check)."""
    last = frames[-1] if frames else None
    return bool(last) and all(m == last["thumb"] for m in last["marks"])


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, max(0, math.ceil(q * len(values)) - 1))]


def summary(values: list[float]) -> tuple[float, float]:
    return (statistics.median(values), percentile(values, 0.95)) if values else (float("nan"), float("nan"))


class Recorder:
    """Counts the websocket frames a page sends and receives; arms the in-page recorder around a gesture."""

    def __init__(self, page):
        self.page, self.sent, self.received = page, 0, 0
        page.on("websocket", self._on_socket)

    def _on_socket(self, ws) -> None:
        ws.on("framesent", lambda _: self._count("sent"))
        ws.on("framereceived", lambda _: self._count("received"))

    def _count(self, which: str) -> None:
        setattr(self, which, getattr(self, which) + 1)

    def start(self, control: str, readout: str, chart: str) -> None:
        self.page.evaluate("([c, r, g]) => Object.assign(window.__drag, {control: c, readout: r, chart: g, "
                           "events: [], frames: [], on: true}).run()", [control, readout, chart])
        self.page.wait_for_timeout(50)  # a few frames before the first event
        self._t0, self._sent0, self._received0 = time.perf_counter(), self.sent, self.received

    def stop(self, kind: str) -> Drag:
        """Stop recording (before the release, so that the rerun's frames are not counted)."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        self.page.wait_for_timeout(50)  # the last move's frames
        seconds = time.perf_counter() - self._t0
        try:  # and, on a loaded machine, until a frame shows the chart's markers at the thumb (at most 3 s)
            self.page.wait_for_function(SETTLED_JS, timeout=3000)
        except PlaywrightTimeout:
            pass  # never settled: settled_agrees says so
        sent, received = self.sent - self._sent0, self.received - self._received0
        data = self.page.evaluate("() => { window.__drag.on = false; return window.__drag; }")
        drag = Drag(kind, data["events"], data["frames"], sent, received, seconds)
        drag.latencies, drag.unshown = latencies(drag.events, drag.frames)
        return drag


def new_context(browser, *, color_scheme: str = "light", viewport: dict | None = None, touch: bool = False,
                frames: bool = True):
    """harness.browser.new_context's context (its pages count script runs) whose pages also record frames (unless
    ``frames=False``), and take touch."""
    return driver.new_context(browser, color_scheme=color_scheme, viewport=viewport, touch=touch,
                              scripts=(FRAMES_JS,) if frames else ())


def new_page(browser, *, color_scheme: str = "light", viewport: dict | None = None, touch: bool = False):
    """harness.browser.new_page's page (it counts script runs) that also records frames, and takes touch."""
    return new_context(browser, color_scheme=color_scheme, viewport=viewport, touch=touch).new_page()


def thumb_centre(page, control: str, thumb: int = 0) -> tuple[float, float, float, float]:
    """(x, y) of the slider's thumb (``thumb``: 1 for a range slider's upper one), and the track's left and right
    ends, in page pixels."""
    page.locator(f".st-key-{control}").scroll_into_view_if_needed()  # a hand moves only what is on the screen
    values = page.locator(f".st-key-{control} [data-testid='stSliderThumbValue']")
    thumb = values.nth(thumb).locator("..").bounding_box()
    track = page.locator(f".st-key-{control} [data-testid='stSlider'] [data-orientation='horizontal']").last
    box = track.bounding_box()
    return thumb["x"] + thumb["width"] / 2, thumb["y"] + thumb["height"] / 2, box["x"], box["x"] + box["width"]


def path(x0: float, x1: float, moves: int) -> list[float]:
    """``moves`` x positions from x0 to x1 and back to the middle, as a hand sweeps."""
    half = moves * 2 // 3
    there = [x0 + (x1 - x0) * (i + 1) / half for i in range(half)]
    back = [x1 + ((x0 + x1) / 2 - x1) * (i + 1) / (moves - half) for i in range(moves - half)]
    return there + back


def mouse_drag(page, recorder: Recorder, control: str, to_x: float, *, moves: int = 36, seconds: float = 1.5,
               watch: tuple[str, str] = ("", ""), thumb: int = 0) -> Drag:
    """Press the thumb, sweep to ``to_x`` (page pixels) and back half way in ``moves`` moves over ``seconds``;
    record; the button is still down when this returns (``page.mouse.up()`` releases)."""
    x, y, _, _ = thumb_centre(page, control, thumb)
    page.mouse.move(x, y)
    recorder.start(control, *watch)
    page.mouse.down()
    for px in path(x, to_x, moves):
        page.mouse.move(px, y)
        page.wait_for_timeout(seconds * 1000 / moves)
    return recorder.stop("mouse")


def touch_drag(page, recorder: Recorder, control: str, to_x: float, *, moves: int = 36, seconds: float = 1.5,
               watch: tuple[str, str] = ("", ""), thumb: int = 0) -> tuple[Drag, object]:
    """As ``mouse_drag`` with one finger (Chrome DevTools' touch events); returns the drag and a function that
    lifts the finger."""
    cdp = page.context.new_cdp_session(page)
    x, y, _, _ = thumb_centre(page, control, thumb)
    recorder.start(control, *watch)
    cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]})
    last = x
    for px in path(x, to_x, moves):
        cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [{"x": px, "y": y}]})
        last = px
        page.wait_for_timeout(seconds * 1000 / moves)
    drag = recorder.stop("touch")
    return drag, lambda: cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []}) or last


def held_key(page, recorder: Recorder, control: str, key: str = "ArrowRight", *, presses: int = 30,
             seconds: float = 1.0, watch: tuple[str, str] = ("", ""), thumb: int = 0) -> Drag:
    """Hold an arrow key on the slider: ``presses`` auto-repeated keydowns over ``seconds``; the key is still
    down when this returns (``page.keyboard.up(key)`` releases)."""
    page.locator(f".st-key-{control} input").nth(thumb).focus()  # a slider's thumb, or a number input
    recorder.start(control, *watch)
    for _ in range(presses):
        page.keyboard.down(key)  # a second down() without up() is an auto-repeat (repeat: true)
        page.wait_for_timeout(seconds * 1000 / presses)
    return recorder.stop("key")
