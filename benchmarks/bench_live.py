"""The training race live, as a student's browser shows it: live frames a second while a race trains.

    python benchmarks/bench_live.py [--steps 3000] [--races 3]

A fresh server (`--ready`: its imports done), headless Chromium, one tab per race, each its own seed.  In the
page a MutationObserver notes the time of every change of the progress line ("Training: step 1,200 of
3,000"), which the page redraws together with the decision regions and the loss curve in each live frame,
and of every change inside a chart.  Printed per race: frames shown, the time from the first to
the last, frames a second (target >= 10), and the time from opening the link to the verdict drawn.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness import browser as driver  # noqa: E402

TARGET_FPS = 10.0

OBSERVER_JS = """
document.addEventListener("DOMContentLoaded", () => {
  window.__frames = [];
  window.__charts = [];
  let last = "";
  const observer = new MutationObserver(() => {
    const bar = document.querySelector("[data-testid='stProgress']");
    const text = bar ? bar.innerText : "";
    if (text && text !== last) { last = text; window.__frames.push([performance.now(), text]); }
  });
  observer.observe(document.body, {subtree: true, childList: true, characterData: true, attributes: true});
  const charts = new MutationObserver((records) => {
    for (const r of records) {
      if (r.target.closest && r.target.closest("[data-testid='stPlotlyChart']")) {
        window.__charts.push(performance.now()); break;
      }
    }
  });
  charts.observe(document.body, {subtree: true, childList: true});
});
"""


def one_race(browser, base_url: str, steps: int, seed: int) -> dict:
    page = driver.new_page(browser)
    page.context.add_init_script(OBSERVER_JS)
    started = time.perf_counter()
    page.goto(f"{base_url}/training?training_steps={steps}&training_seed={seed}", wait_until="commit")
    page.wait_for_function("() => document.body.innerText.includes('hidden units dead')", timeout=180_000)
    verdict_s = time.perf_counter() - started
    frames = page.evaluate("window.__frames || []")
    charts = page.evaluate("window.__charts || []")
    page.context.close()
    return {"frames": frames, "charts": charts, "verdict_s": verdict_s}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--races", type=int, default=3)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    rates = []
    with driver.Server() as server, sync_playwright() as p:
        print(f"(server ready {driver.wait_ready(server.base_url):.1f} s after health)")
        browser = p.chromium.launch(executable_path=driver.CHROMIUM, args=driver.LAUNCH_ARGS)
        for i in range(args.races):
            result = one_race(browser, server.base_url, args.steps, 500 + i)
            times = [t for t, _ in result["frames"]]
            span = (times[-1] - times[0]) / 1e3 if len(times) > 1 else 0.0
            fps = (len(times) - 1) / span if span else float("nan")
            rates.append(fps)
            print(f"race {i + 1} ({args.steps:,} steps, seed {500 + i}): {len(times)} live frames over {span:.2f} s "
                  f"= {fps:.1f} frames/s; link to verdict {result['verdict_s']:.2f} s")
        browser.close()
    median = statistics.median(rates)
    verdict = "met" if median >= TARGET_FPS else "NOT met"
    print(f"median {median:.1f} live frames a second (target >= {TARGET_FPS:g}: {verdict})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
