"""What a student feels in the browser: a slider move until the redraw, and what the server holds in memory.

    python benchmarks/bench_browser.py [--moves 15] [--skip-memory]

1. Latency: for each page, its first control (slider, else number input; the same the browser tests
   move) is stepped by keyboard `--moves` times, back and forth; each time is from the key press to the
   rerun finished and drawn in Chromium (no skeleton, nothing stale).  Median and p90 per page, and the
   ratio of the median to 100 ms, the usual limit for a response to feel instant.
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

from tests.e2e import driver  # noqa: E402

INSTANT_MS = 100.0


def latency(page, moves: int) -> list[float]:
    control = driver.first_control(page)
    times = []
    for i in range(moves):
        key_up, key_down = (
            ("ArrowRight", "ArrowLeft") if control.get_attribute("type") == "range" else ("ArrowUp", "ArrowDown")
        )
        key = key_up if i % 2 == 0 else key_down
        control.focus()
        before = driver.runs(page)
        start = time.perf_counter()
        control.press(key)
        if control.get_attribute("type") != "range":
            control.press("Enter")
        driver.wait_idle(page, after=before)
        times.append((time.perf_counter() - start) * 1e3)
    return times


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
        print(f"Slider move -> redraw in Chromium, {args.moves} moves per page")
        print(f"{'page':<16}{'median ms':>10}{'p90 ms':>9}{'/100 ms':>9}")
        for app_page in pages:
            page = driver.new_page(browser)
            driver.open_app(page, f"{server.base_url}/{'' if app_page.default else app_page.url_path}")
            if driver.first_control(page) is None:
                print(f"{app_page.url_path:<16}  (no slider or number input)")
                continue
            times = latency(page, args.moves)
            median = statistics.median(times)
            p90 = statistics.quantiles(times, n=10)[-1] if len(times) > 1 else times[0]
            print(f"{app_page.url_path:<16}{median:>10.0f}{p90:>9.0f}{median / INSTANT_MS:>9.2f}")
            page.context.close()
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
            target = page.locator(f"{driver.MAIN} [data-testid='stFileUploader'] input[type=file]").first
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
    main()
