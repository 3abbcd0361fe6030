"""A student's first visit: what each page moves on the wire, and thirty first visits at once on a school's link.

    python benchmarks/bench_firstvisit.py [--students 10 30] [--link-mbit 30] [--pages home ffn]

1. Per page, a fresh browser context (empty cache) opens the page on ``streamlit run app.py`` (the repository's
   config, nothing in front) until it is drawn, then waits a second for late chunks.  Chromium's own Network
   events count every response: bytes on the wire (``encodedDataLength``: headers and body as sent), the
   bodies as the browser decoded them (what the same visit would move uncompressed), requests, and how many
   of the frontend's files came gzipped and with a one-year ``immutable`` Cache-Control (cacheable by their
   hashed names).  The page's websocket (its first run's messages) is on the wire too: the visit goes through
   a counting proxy on loopback (``harness.wire``), since Chromium reports a websocket's messages only
   decoded.  Target: at most 3.5 MB on the wire for every page, the websocket included.
2. ``--students`` fresh contexts open the home page at the same moment, each throttled to its share of a
   ``--link-mbit`` link, 20 ms latency: seconds from the start to each page drawn (the app idle, its chart
   drawn), p50 / p95 / max (inf: not drawn within ``--limit-s``).  Each context reaches the server through a
   shaping proxy of its own on loopback (``harness.wire.Wire`` with a rate; ``--shaping loopback``, the
   default), or throttled by Chromium (CDP ``Network.emulateNetworkConditions``, ``--shaping chromium``):
   with a class's contexts on one busy machine Chromium's throttle can leave some visits' requests unsent for
   minutes (no socket open to the server, nothing pending on its side), and those are never drawn.  Every
   student's browser runs on this machine's cores, and the server beside them: a school's thirty laptops would
   each have their own.

Needs Debian's Chromium.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.results import printed, record  # noqa: E402
from harness import browser as driver  # noqa: E402
from harness.balancer import children_cpu_seconds, cpu_seconds  # noqa: E402
from harness.wire import Wire  # noqa: E402

TARGET_BYTES = 3.5e6
MOVES = 5  # keyboard steps of each page's first control, after the first visit
LATENCY_MS = 20
DRAWN_JS = (
    "() => window.__geluRuns > 0 && !!document.querySelector(\"" + driver.IDLE.replace('"', '\\"') + "\")"
    " && !document.querySelector(\"[data-testid='stSkeleton'], [data-stale='true']\")"
)
CLASS_DRAWN_JS = DRAWN_JS + " && !!document.querySelector(\"[data-testid='stPlotlyChart'] .main-svg\")"  # the chart


def watch(page):
    """Start counting the page's responses through CDP: returns the dict the events fill."""
    seen = {"wire": {}, "decoded": {}, "encoding": {}, "url": {}, "cache": {}, "ws_decoded": 0}
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")

    def response(event):
        headers = {k.lower(): v for k, v in event["response"]["headers"].items()}
        seen["url"][event["requestId"]] = event["response"]["url"]
        seen["encoding"][event["requestId"]] = headers.get("content-encoding", "")
        seen["cache"][event["requestId"]] = headers.get("cache-control", "")

    def data(event):
        seen["decoded"][event["requestId"]] = seen["decoded"].get(event["requestId"], 0) + event["dataLength"]

    cdp.on("Network.responseReceived", response)
    cdp.on("Network.dataReceived", data)
    cdp.on("Network.loadingFinished", lambda e: seen["wire"].__setitem__(e["requestId"], e["encodedDataLength"]))

    def frame(event):  # a websocket message as the page decoded it; a binary one comes base64-encoded
        payload = event["response"]["payloadData"]
        seen["ws_decoded"] += len(base64.b64decode(payload)) if event["response"]["opcode"] == 2 else len(payload)

    cdp.on("Network.webSocketFrameReceived", frame)
    return seen


def page_weight(browser, wire: Wire, path: str) -> dict:
    """One first visit to ``path`` through ``wire``: HTTP responses as Chromium counted them, the websocket's
    bytes as they crossed the socket (compressed, where the two sides agreed to) and as the page decoded them;
    then the websocket's bytes of each of ``MOVES`` keyboard steps of the page's first control."""
    page = driver.new_page(browser)
    seen = watch(page)
    wire.reset()
    driver.open_app(page, f"{wire.base_url}/{path}")
    page.wait_for_timeout(1000)  # chunks a drawn page still fetches (fonts, lazy elements)
    static = [r for r, u in seen["url"].items() if "/static/" in u and seen["decoded"].get(r, 0) >= 1024]
    largest = max(seen["wire"], key=seen["wire"].get)
    visit = dict(
        requests=len(seen["wire"]),
        ws=wire.counts["ws"],
        wire=sum(seen["wire"].values()) + wire.counts["ws"],
        decoded=sum(seen["decoded"].values()) + seen["ws_decoded"],
        static=len(static),
        gzipped=sum(1 for r in static if seen["encoding"].get(r) == "gzip"),
        fonts=sum(1 for r in static if seen["url"][r].endswith(".woff2")),
        cached=sum(1 for r in static if {"immutable", "max-age=31536000"} <= set(
            seen["cache"].get(r, "").replace(" ", "").split(","))),
        largest=(seen["url"][largest].rsplit("/", 1)[-1], seen["wire"][largest]),
    )
    per_move = []
    control = driver.first_control(page)
    for _ in range(MOVES if control else 0):
        before = wire.counts["ws"]
        driver.move(page, control)
        page.wait_for_timeout(200)  # the run's messages are in by its end; room for any that trail it
        per_move.append(wire.counts["ws"] - before)
    page.context.close()
    return {**visit, "move": statistics.median(per_move) if per_move else None}


async def class_arrives(server: driver.Server, students: int, link_mbit: float, limit_s: float,
                        shaping: str = "loopback") -> tuple[list[float], float]:
    """Seconds from one start to each of ``students`` throttled first visits drawn (home page), inf for a visit
    not drawn within ``limit_s``; and the CPU seconds the browsers had taken by then (the server's left out).
    ``shaping``: "loopback", each context through a ``harness.wire.Wire`` of its own at its share of the link;
    "chromium", Chromium's emulated network conditions per context (CDP)."""
    from contextlib import ExitStack

    from playwright.async_api import async_playwright

    share = link_mbit * 1e6 / 8 / students  # bytes per second each
    with ExitStack() as links:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=driver.CHROMIUM, args=driver.LAUNCH_ARGS)
            pages = []
            for _ in range(students):
                context = await browser.new_context(viewport=driver.DESKTOP)
                context.set_default_timeout(600_000)
                await context.add_init_script(driver.RUN_COUNTER_JS)
                page = await context.new_page()
                if shaping == "loopback":
                    url = links.enter_context(Wire(server.port, rate=share, latency_s=LATENCY_MS / 1000)).base_url
                else:
                    url = server.base_url
                    cdp = await context.new_cdp_session(page)
                    await cdp.send("Network.enable")
                    await cdp.send("Network.emulateNetworkConditions", {
                        "offline": False, "latency": LATENCY_MS, "downloadThroughput": share,
                        "uploadThroughput": share})  # fmt: skip
                pages.append((page, url))
            start = time.perf_counter()

            async def visit(page, url) -> float:
                try:
                    await page.goto(url, wait_until="commit", timeout=limit_s * 1000)
                    await page.wait_for_function(CLASS_DRAWN_JS, polling=100, timeout=limit_s * 1000)
                except Exception:  # Playwright's TimeoutError: not drawn in time
                    return float("inf")
                return time.perf_counter() - start

            times = await asyncio.gather(*(visit(p, u) for p, u in pages))
            cpu = children_cpu_seconds(exclude=server.proc.pid)  # before the close (children_cpu_seconds)
            await browser.close()
    return sorted(times), cpu



def pct(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, nargs="*", default=[30], help="class sizes, one after the other")
    parser.add_argument("--link-mbit", type=float, default=30.0)
    parser.add_argument("--pages", nargs="*", default=None, help="url paths (default: every page of app.py)")
    parser.add_argument("--limit-s", type=float, default=240.0, help="seconds a throttled visit may take")
    parser.add_argument("--shaping", choices=("loopback", "chromium"), default="loopback",
                        help="each student's share of the link: a shaping proxy of its own on loopback "
                        "(harness.wire), or Chromium's emulated network conditions")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    paths = args.pages or [p.url_path for p in driver.app_pages()]
    with driver.Server() as server:
        driver.wait_ready(server.base_url)
        with sync_playwright() as pw:
            browser = driver.launch(pw)
            print(f"{'page':<16}{'requests':>9}{'on the wire':>13}{'websocket':>11}{'uncompressed':>14}{'gzipped':>12}"
                  f"{'cached':>9}  largest")
            worst, moves = 0, {}
            with Wire(server.port) as wire:
                weights = {path: page_weight(browser, wire, "" if path == "home" else path) for path in paths}
            for path, w in weights.items():
                worst = max(worst, w["wire"])
                moves[path] = w["move"]
                print(f"{path:<16}{w['requests']:>9}{w['wire'] / 1e6:>10.2f} MB{w['ws'] / 1e6:>8.2f} MB"
                      f"{w['decoded'] / 1e6:>11.2f} MB"
                      f"{w['gzipped']:>6}/{w['static'] - w['fonts']:<5}{w['cached']:>5}/{w['static']:<3}  "
                      f"{w['largest'][0]} "
                      f"{w['largest'][1] / 1e6:.2f} MB")
            browser.close()
        print("(on the wire: every HTTP response, headers and body as sent, and the websocket's bytes from the "
              "server as they crossed the socket, counted by a proxy on loopback (harness/wire.py); uncompressed: the "
              "same decoded; gzipped: the frontend's files of 1 KB or more that came gzipped / all of them but the "
              ".woff2 fonts, compressed already; cached: those files that came with a one-year immutable "
              "Cache-Control, their names carrying their content's hash / all of them)")
        print(f"\nA lesson's moves on the link: the websocket's bytes of one keyboard step of each page's first "
              f"control (median of {MOVES}), and what 30 students each moving once a second ask of it")
        for path, b in moves.items():
            if b is not None:
                print(f"  {path:<16}{b / 1e3:>7.1f} KB a move   30 a second: {b * 30 * 8 / 1e6:5.1f} Mbit/s")
        print(f"heaviest page {worst / 1e6:.2f} MB = {worst / TARGET_BYTES:.2f} of the {TARGET_BYTES / 1e6} MB "
              f"target: {'met' if worst <= TARGET_BYTES else 'MISSED'}")
        home = weights.get("home")
        for students in (n for n in args.students if n):
            load = os.getloadavg()[0]
            browsers_before, server_before = children_cpu_seconds(server.proc.pid), cpu_seconds(server.proc.pid)
            times, browsers_after = asyncio.run(class_arrives(server, students, args.link_mbit, args.limit_s,
                                                              args.shaping))
            drawn = sum(t != float("inf") for t in times)
            print(f"{students} first visits at once (home), each at 1/{students} of {args.link_mbit:g} "
                  f"Mbit/s, {LATENCY_MS} ms, {args.shaping} shaping: {drawn} drawn within {args.limit_s:g} s; "
                  f"p50 {pct(times, .5):.1f} s, "
                  f"p95 {pct(times, .95):.1f} s, max {times[-1]:.1f} s (server peak "
                  f"{server.rss_kib()['VmHWM'] / 1024:.0f} MB; load average {load:.1f} before, "
                  f"{os.getloadavg()[0]:.1f} after, {os.cpu_count()} cores)")
            browsers, served = browsers_after - browsers_before, cpu_seconds(server.proc.pid) - server_before
            link = f"{home['wire'] * students * 8 / (args.link_mbit * 1e6):.1f} s" if home else "(home not weighed)"
            print(f"  floors: the link alone carries the {students} Home visits in {link}; the browsers took "
                  f"{browsers:.1f} s of CPU and the server {served:.1f} s by the last one drawn: "
                  f"{(browsers + served) / os.cpu_count():.1f} s of all {os.cpu_count()} cores (a class's own laptops "
                  "would share out the browsers' part)")


if __name__ == "__main__":
    with printed() as lines:
        main()
    record("bench_firstvisit", None, lines)
