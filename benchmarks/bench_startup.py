"""How fast the app starts: `streamlit run app.py` to the first page drawn in a browser, and where the time goes.

    python benchmarks/bench_startup.py [--runs 5] [--against DIR]

``--against DIR``: another checkout of the app (``git archive main | tar -x -C /tmp/main``) cold-started in the
same run, its runs alternating with this one's, so that a change is judged before and after under the same load.

1. Cold start, several runs, median: a fresh `streamlit run app.py` (the repository's config) until
   /_stcore/health answers, then Chromium opens the home page until its first run is drawn (title and
   chart); the time is from launching the process, as a ratio to the 3 s target.  The browser is launched
   once, before the clock.  Two floors measured the same way in the same run, with the same config: a bare
   one-slider app, and a one-slider app with one Plotly chart (Plotly's own code is a large lazy chunk that
   the browser loads and runs on the first chart).  Browser and server share this machine's cores here; a
   student's browser runs on the student's machine.
2. Where it goes: the server's own line "imports ready in ... s" (hosting.warm: every heavy module imported
   once, in the background, from start-up; the first script run waits for the first part, torch waits for
   the server to be quiet), per module, and when /readyz said so (after the page was drawn, off the clock).
3. The browser's share: on a server whose imports are all done (``/readyz``), a fresh browser context opens
   the home page until it is drawn, several times, median.
4. Every other page's first load on a fresh server, in order.

Needs Debian's Chromium.  Figures are wall-clock on this machine; compare runs, not machines.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_browser import BASELINE_APP, PLOTLY_APP  # noqa: E402
from benchmarks.results import printed, record  # noqa: E402
from harness import browser as driver  # noqa: E402

TARGET_S = 3.0


def open_first_page(browser, base_url: str, since: float, wait_for: str = "stPlotlyChart") -> float:
    """A fresh browser context opens the app until its first run is drawn (``wait_for`` in the main area): the
    seconds from ``since`` (a perf_counter reading) to then; the context is closed after, off the clock."""
    page = driver.new_page(browser)
    driver.open_app(page, base_url)
    page.locator(f"{driver.MAIN} [data-testid='{wait_for}']").first.wait_for()
    drawn = time.perf_counter() - since
    page.context.close()
    return drawn


def cold_start(browser, app_dir: Path = ROOT, wait_for: str = "stPlotlyChart") -> tuple[float, float, str]:
    """(seconds to health, seconds to the first page drawn, the server's warm-up line) for one fresh server."""
    start = time.perf_counter()
    with driver.Server(app_dir) as server:
        healthy = time.perf_counter() - start
        drawn = open_first_page(browser, server.base_url, start, wait_for)
        if app_dir != ROOT:
            return healthy, drawn, ""
        driver.wait_ready(server.base_url)  # torch, imported once the server was quiet; off the clock
        ready = time.perf_counter() - start
        warm = re.search(r"imports ready in .*", server.log())
        return healthy, drawn, f"{warm.group(0) if warm else '(no warm-up line)'}; /readyz at {ready:.1f} s"


def warm_server_home(browser, runs: int) -> float:
    """Median seconds for a fresh browser context to draw the home page of a server already warm."""
    with driver.Server() as server:
        driver.wait_ready(server.base_url)
        return statistics.median(open_first_page(browser, server.base_url, time.perf_counter()) for _ in range(runs))


def floor(browser, source: str, wait_for: str, runs: int) -> float:
    """Median cold start of a one-file app served with the repository's config."""
    with driver.one_file_app(source) as folder:
        return statistics.median(cold_start(browser, folder, wait_for)[1] for _ in range(runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--against", type=Path, default=None, help="another checkout, cold-started in turn")
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = driver.launch(playwright)
        results, others = [], []
        for _ in range(args.runs):
            results.append(cold_start(browser))
            if args.against:
                others.append(cold_start(browser, args.against.resolve())[1])
        if args.against:
            this, that = statistics.median(r[1] for r in results), statistics.median(others)
            print(f"Home page drawn from launch, alternating runs: this checkout {this:.2f} s, {args.against} "
                  f"{that:.2f} s (this / that: {this / that:.2f}; runs {', '.join(f'{v:.2f}' for v in others)})")
        healthy = statistics.median(r[0] for r in results)
        drawn = statistics.median(r[1] for r in results)
        bare = floor(browser, BASELINE_APP, "stSlider", args.runs)
        plotly = floor(browser, PLOTLY_APP.replace("CHARTS", "1"), "stPlotlyChart", args.runs)
        print(f"Cold start, {args.runs} runs: `streamlit run app.py` -> /_stcore/health: median {healthy:.2f} s; "
              f"-> home page drawn in Chromium: median {drawn:.2f} s, {drawn / TARGET_S:.2f} of the {TARGET_S:g} s "
              f"target (runs: {', '.join(f'{r[1]:.2f}' for r in results)})")
        print(f"Floors, the same way: a one-slider app {bare:.2f} s; a one-slider app with one Plotly chart "
              f"{plotly:.2f} s (the app: {drawn / plotly:.2f} x that)")
        print(f"Server: {results[len(results) // 2][2]}")
        print(f"The browser's share: on a warm server (/readyz), a fresh browser context draws the home page in "
              f"{warm_server_home(browser, args.runs):.2f} s (median)")

        print("\nEach page's first load on a fresh server, in order (s)")
        with driver.Server() as server:
            page = driver.new_page(browser)
            for app_page in driver.app_pages():
                start = time.perf_counter()
                driver.open_app(page, f"{server.base_url}/{'' if app_page.default else app_page.url_path}")
                print(f"  {app_page.url_path:<16}{time.perf_counter() - start:6.2f}")
            page.context.close()
        browser.close()


if __name__ == "__main__":
    with printed() as lines:
        main()
    record("bench_startup", None, lines)
