"""The training race live, as a student's browser shows it: frames a second of the border and the loss moving.

    python benchmarks/bench_live.py [--steps 1000] [--races 3] [--tabs 1] [--phone]

A fresh server (``--ready``: its imports done), headless Chromium, one tab per race, each its own seed
(``--tabs`` races opened at once, ``--races`` of them in all).  The page draws the finished race and plays its
film over the charts (ui/race_player.py); the player notes the time of each frame it draws, and
requestAnimationFrame is counted meanwhile (how often the browser painted: a frame it could not draw in time
shows as a lower paint rate).  Printed per race: the frames drawn and the film's length, the time from first to
last, frames a second (target >= 10), paints a second during the film, the longest gap between two frames,
and the time from opening the link to the first frame drawn.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.results import printed, record  # noqa: E402
from harness import browser as driver  # noqa: E402

TARGET_FPS = 10.0
RESULT_JS = """() => {
  const s = window.__geluRace || { shown: [], ticks: [] };
  return { shown: s.shown.map((e) => e.t), ticks: s.ticks };
}"""


def open_race(browser, base_url: str, steps: int, seed: int, viewport: dict):
    page = driver.new_page(browser, viewport=viewport)
    page.goto(f"{base_url}/training?training_steps={steps}&training_seed={seed}", wait_until="commit")
    return page, time.perf_counter()


def finish(page, opened: float) -> tuple[dict, float]:
    page.wait_for_function("() => window.__geluRace && window.__geluRace.shown.length > 0", timeout=180_000)
    first_s = time.perf_counter() - opened
    page.wait_for_function("() => { const s = window.__geluRace; const k = s.shown.length;"
                           " return k > 1 && performance.now() - s.shown[k - 1].t > 1000; }", timeout=60_000)
    result = page.evaluate(RESULT_JS)
    page.context.close()
    return result, first_s


def summary(result: dict) -> dict:
    shown = result["shown"]
    span = (shown[-1] - shown[0]) / 1e3
    ticks = [t for t in result["ticks"] if shown[0] <= t <= shown[-1]]
    gaps = [b - a for a, b in zip(shown, shown[1:], strict=False)]
    return {"frames": len(shown), "span": span, "fps": (len(shown) - 1) / span if span else float("nan"),
            "paints": (len(ticks) - 1) / span if span else float("nan"), "gap_ms": max(gaps, default=float("nan"))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--races", type=int, default=3)
    parser.add_argument("--tabs", type=int, default=1, help="races opened at once (each its own tab)")
    parser.add_argument("--phone", action="store_true", help="a phone's viewport (390 x 844) instead of a desktop's")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    from gelu_core.training import RaceConfig
    from hosting.races import film_every

    config = RaceConfig(steps=args.steps)
    film_frames = len(range(0, args.steps, film_every(config))) + 1
    viewport = driver.PHONE if args.phone else driver.DESKTOP
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the start")
    rates = []
    with driver.Server() as server, sync_playwright() as p:
        print(f"(server ready {driver.wait_ready(server.base_url):.1f} s after health)")
        browser = driver.launch(p)
        for start in range(0, args.races, args.tabs):
            seeds = [500 + i for i in range(start, min(start + args.tabs, args.races))]
            opened = [open_race(browser, server.base_url, args.steps, seed, viewport) for seed in seeds]
            for seed, (page, at) in zip(seeds, opened, strict=True):
                result, first_s = finish(page, at)
                s = summary(result)
                rates.append(s["fps"])
                print(f"race seed {seed} ({args.steps:,} steps, {len(seeds)} tab(s) at once): {s['frames']} of "
                      f"{film_frames} frames drawn over {s['span']:.2f} s = {s['fps']:.1f} frames/s; paints "
                      f"{s['paints']:.0f}/s meanwhile, longest gap {s['gap_ms']:.0f} ms; link to first frame "
                      f"{first_s:.2f} s")
        browser.close()
    median, worst = statistics.median(rates), min(rates)
    verdict = "met" if worst >= TARGET_FPS else "NOT met"
    print(f"frames a second: median {median:.1f}, lowest {worst:.1f} (target >= {TARGET_FPS:g} for every race: "
          f"{verdict}); machine load average {os.getloadavg()[0]:.2f} at the end")
    return 0


if __name__ == "__main__":
    with printed() as lines:
        status = main()
    record("bench_live", None, lines)
    sys.exit(status)
