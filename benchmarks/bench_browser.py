"""What a student feels in the browser: a slider move until the redraw, and what the server holds in memory.

    python benchmarks/bench_browser.py [--moves 15] [--skip-memory]

1. Latency: for each page, its first control (slider, else number input; the same the browser tests
   move) is stepped by keyboard `--moves` times, back and forth; each time is from the key press to the
   rerun finished and drawn in Chromium (no skeleton, nothing stale).  Median and p90 per page, as ratios
   to floors measured in the same run with the same config: a bare one-slider Streamlit page (target:
   1.4x), and one-slider pages redrawing 1, 2 or 3 Plotly charts of two 801-point curves each (the floor
   Plotly itself sets: each redrawn chart costs the browser about as much again).  The page's own floor is
   the one with as many charts as the move redrew there (counted in the page: charts whose drawing changed).
2. Memory: the server's resident set (VmRSS, and its peak VmHWM, from /proc) after start, after every
   page was opened, after the lab ran the (8, 1024, 768) demo batch, and after the lab ran an uploaded
   (8, 1024, 768) float32 .npy (25 MB) through the real file input.

One server (the repository's config) and one Chromium for everything.
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.results import printed, record  # noqa: E402
from harness import browser as driver  # noqa: E402

INSTANT_MS = 100.0
BASELINE_APP = """import streamlit as st

st.title("Baseline")
x = st.slider("x", -3.0, 3.0, 0.0, 0.1, key="base_x", bind="query-params")
st.write(x)
"""
PLOTLY_APP = """import numpy as np
import plotly.graph_objects as go
import streamlit as st

st.title("Plotly floor")
x = st.slider("x", -3.0, 3.0, 0.0, 0.1, key="base_x", bind="query-params")
grid = np.linspace(-3, 3, 801)
for i in range(CHARTS):
    shifted = grid - x
    fig = go.Figure([go.Scatter(x=grid, y=np.maximum(shifted, 0) + i),
                     go.Scatter(x=grid, y=shifted / (1 + np.exp(-1.702 * shifted)))])
    st.plotly_chart(fig, key=f"chart{i}")
"""
TARGET = 1.4  # of the bare page's median


# When the first key of a move went down and when the page next sent the server a message (the rerun
# request); latency() clears both before each move.
TIMING_JS = """
window.__benchKey = null; window.__benchSent = null; window.__chartsRedrawn = new Set();
window.__watchCharts = () => {  // which charts a move redraws: a chart whose drawing changed at all
  window.__chartsRedrawn = new Set();
  document.querySelectorAll("[data-testid='stPlotlyChart']").forEach((chart, i) => {
    new MutationObserver(() => window.__chartsRedrawn.add(i)).observe(chart, {subtree: true, childList: true,
                                                                           attributes: true});
  });
};
// on the window, capturing, and registered before the page's scripts: the live layer (draw/live.js) takes an
// arrow key there and stops it, so a listener on the document would never hear it
window.addEventListener("keydown", () => {
  if (window.__benchKey === null) window.__benchKey = performance.now();
}, true);
const nativeSend = WebSocket.prototype.send;
WebSocket.prototype.send = function (data) {
  if (window.__benchKey !== null && window.__benchSent === null) window.__benchSent = performance.now();
  return nativeSend.call(this, data);
};
"""


def latency(page, moves: int) -> list[dict[str, float]]:
    """Per move, in ms: total (key press to drawn, measured here) and, from the page's clock, the part
    before the rerun request left the browser, the server's rerun until its last message arrived, and the
    drawing after it."""
    control = driver.first_control(page)
    ranged = control.get_attribute("type") == "range"
    times = []
    for i in range(moves):
        key = ("ArrowRight" if ranged else "ArrowUp") if i % 2 == 0 else ("ArrowLeft" if ranged else "ArrowDown")
        control.focus()
        before = driver.runs(page)
        page.evaluate("window.__benchKey = null; window.__benchSent = null; window.__watchCharts()")
        start = time.perf_counter()
        control.press(key)
        if not ranged:
            control.press("Enter")
        driver.wait_idle(page, after=before)
        total = (time.perf_counter() - start) * 1e3
        t = page.evaluate("[window.__benchKey, window.__benchSent, window.__geluFinishedAt, window.__geluCountedAt, "
                          "window.__chartsRedrawn.size]")
        times.append({"total": total, "client": t[1] - t[0], "server": t[2] - t[1], "draw": t[3] - t[2],
                      "charts": t[4]})
    return times


def summary(name: str, times: list[dict[str, float]], bare: float, floors: dict[int, float]) -> str:
    med = {k: statistics.median(t[k] for t in times) for k in times[0]}
    totals = [t["total"] for t in times]
    p90 = statistics.quantiles(totals, n=10)[-1] if len(totals) > 1 else totals[0]
    charts = round(med["charts"])
    floor = floors.get(min(charts, max(floors)), bare) if charts else bare
    return (
        f"{name:<18}{med['total']:>7.0f}{p90:>7.0f}{med['total'] / bare:>8.2f}{charts:>8d}{med['total'] / floor:>8.2f}"
        f"{med['client']:>9.0f}{med['server']:>7.0f}{med['draw']:>6.0f}"
    )


def median_total(times: list[dict[str, float]]) -> float:
    return statistics.median(t["total"] for t in times)


def floor_app(browser, source: str, moves: int) -> list[dict[str, float]]:
    """A one-file app served with the repository's config, measured like a page."""
    with driver.one_file_app(source) as folder, driver.Server(folder) as server:
        return measure(browser, server.base_url, moves)


def measure(browser, url: str, moves: int) -> list[dict[str, float]] | None:
    page = driver.new_page(browser)
    page.add_init_script(TIMING_JS)
    try:
        driver.open_app(page, url)
        return latency(page, moves) if driver.first_control(page) is not None else None
    finally:
        page.context.close()


def mib(kib: int) -> str:
    return f"{kib / 1024:7.0f} MiB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--moves", type=int, default=15)
    parser.add_argument("--skip-memory", action="store_true")
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    pages = driver.app_pages()
    with driver.Server() as server, sync_playwright() as playwright:
        browser = driver.launch(playwright)
        memory = [("started", server.rss_kib())]
        bare = floor_app(browser, BASELINE_APP, args.moves)
        plotly = {n: floor_app(browser, PLOTLY_APP.replace("CHARTS", str(n)), args.moves) for n in (1, 2, 3)}
        results = {}
        for app_page in pages:
            url = f"{server.base_url}/{'' if app_page.default else app_page.url_path}"
            results[app_page.url_path] = measure(browser, url, args.moves)
        bare += floor_app(browser, BASELINE_APP, args.moves)  # measured before and after the pages: drift shows
        floor_bare = median_total(bare)
        floors = {n: median_total(t) for n, t in plotly.items()}
        print(f"Slider move -> redraw in Chromium, {args.moves} moves per page (ms; median, and p90 of the total)")
        print(f"  /bare: ratio to a one-slider Streamlit page (target {TARGET}); charts: how many charts the move")
        print("  redrew; /floor: ratio to a one-slider page redrawing that many Plotly charts (the bare page if none).")
        print("  before: the page's own delay after the key; rerun: request sent to the run's last message received;")
        print("  draw: from then to two frames later")
        print(f"{'page':<18}{'total':>7}{'p90':>7}{'/bare':>8}{'charts':>8}{'/floor':>8}{'before':>9}{'rerun':>7}"
              f"{'draw':>6}")
        print(summary("(one-slider app)", bare, floor_bare, floors))
        for n, times in plotly.items():
            print(summary(f"(Plotly floor, {n})", times, floor_bare, floors))
        for name, times in results.items():
            print(summary(name, times, floor_bare, floors) if times else f"{name:<18}  (no control to move)")
        explorer = {k: v for k, v in results.items() if v and k not in ("ffn", "training")}
        worst = max(explorer, key=lambda k: median_total(explorer[k]))
        print(f"explorer pages (not the lab's or the race's computations): worst {worst}, "
              f"{median_total(explorer[worst]) / floor_bare:.2f} x the bare page")
        memory.append(("every page opened (and moved)", server.rss_kib()))

        if not args.skip_memory:
            page = driver.new_page(browser)
            start = time.perf_counter()
            page.goto(f"{server.base_url}/ffn?ffn_demo=8x1024", wait_until="commit")
            driver.wait_idle(page, timeout_ms=300_000)
            took = time.perf_counter() - start
            assert page.locator(driver.EXCEPTION).count() == 0
            memory.append((f"lab, demo (8, 1024, 768) batch ({took:.1f} s to draw)", server.rss_kib()))

            x = np.random.default_rng(0).standard_normal((8, 1024, 768)).astype(np.float32)
            buffer = io.BytesIO()
            np.save(buffer, x)
            driver.open_app(page, f"{server.base_url}/ffn?ffn_input=Upload")
            target = page.locator(driver.FILE_INPUT).first
            start = time.perf_counter()
            driver.act(
                page,
                lambda: target.set_input_files(
                    files=[{"name": "batch.npy", "mimeType": "application/octet-stream", "buffer": buffer.getvalue()}]
                ),
                timeout_ms=300_000,
            )
            took = time.perf_counter() - start
            errors = page.locator(driver.ERROR_BOX).all_inner_texts() + page.locator(driver.EXCEPTION).all_inner_texts()
            assert not errors, errors
            size = len(buffer.getvalue()) / 2**20
            memory.append((f"lab, uploaded {size:.0f} MB .npy (8, 1024, 768) ({took:.1f} s to draw)", server.rss_kib()))
            page.context.close()
        browser.close()

    print("\nServer memory (one Python process)")
    print(f"{'after':<62}{'VmRSS':>12}{'peak VmHWM':>14}")
    for label, kib in memory:
        print(f"{label:<62}{mib(kib['VmRSS']):>12}{mib(kib['VmHWM']):>14}")


if __name__ == "__main__":
    with printed() as lines:
        main()
    record("bench_browser", None, lines)
