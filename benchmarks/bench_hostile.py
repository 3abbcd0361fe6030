"""What a hostile visitor can do to a real server: files, links and upload floods, case by case.

    python benchmarks/bench_hostile.py [--small] [--grace 1]

One `streamlit run app.py` (the repository's config; the janitor's grace shortened to --grace seconds so a
departed session's share is given back within a few seconds) and one Chromium.  Each case runs in a tab of
its own, which is then closed; per case the table gives:

- seconds: from the upload (or the link's opening) until the page was drawn;
- peak: the server's resident memory at its highest during the case, above what it held before
  (VmHWM, reset before each case through /proc/<pid>/clear_refs), against the memory budget
  (gelu_core.budget; the target: no case above it);
- held: resident memory once the tab closed and the janitor's grace passed, above what it held before
  (the target: nothing held, within the allocator's slack);
- healthy: whether another student could still use the app right after (a fresh tab moves Curves' probe);
- outcome: what the page said (the first words of its error box or note), and "EXCEPTION" if an exception
  box reached the page (the target: none).

Cases: every hostile file of harness.hostile_files on the uploader it targets (pickles that would run code,
zip bombs, headers that lie, a 2,410-byte block declaring d_model 2^17, a CSV whose second row holds 15 M
values, ...); links with unusable values on every page; and a flood: 20 uploads of 39 MiB each to made-up
file ids of one session, sent past the uploader with a valid XSRF token.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.results import printed, record  # noqa: E402
from gelu_core import budget  # noqa: E402
from harness import browser as driver  # noqa: E402
from harness.hostile_files import hostile_files  # noqa: E402
from harness.memory import reset_peak  # noqa: E402

LINKS = [  # (page path with a query no control can take, which control's note must show)
    "?home_x2=inf&home_x3=", "curves?curves_form=&curves_x=1e400&curves_more=Bogus", "gate?gate_x=nan&gate_sigma=-1",
    "derivative?derivative_form=&derivative_nudge=abc",
    "approximations?approximations_view=Nonsense&approximations_range=-99",
    "steps?steps_x=" + "9" * 400 + "&steps_full=maybe", "ffn?ffn_d_model=inf&ffn_seed=-Infinity&ffn_demo=3x3",
    "training?training_steps=1e9&training_task=&training_lr=7", "pages/ffn.py?ffn_d_model=8",
]


def mib(kib: int) -> float:
    return kib / 1024


def healthy(browser, base_url: str) -> bool:
    page = driver.new_page(browser)
    try:
        driver.open_app(page, f"{base_url}/curves")
        driver.move(page, driver.first_control(page))
        return page.locator(driver.EXCEPTION).count() == 0
    except Exception:  # noqa: BLE001  a server that does not answer is the finding
        return False
    finally:
        page.context.close()


def outcome(page) -> str:
    if page.locator(driver.EXCEPTION).count():
        return "EXCEPTION"
    boxes = page.locator(driver.ERROR_BOX).all_inner_texts() + page.locator("[data-testid='stAlertContentInfo']") \
        .all_inner_texts()
    return (boxes[0].replace("\n", " ")[:70] if boxes else "no message").strip()


def upload_case(browser, server, case) -> tuple[float, str]:
    page = driver.new_page(browser)
    try:
        query = "ffn_weights=File" if case.uploader == "weights" else "ffn_input=Upload&ffn_d_model=8"
        driver.open_app(page, f"{server.base_url}/ffn?{query}")
        index = 0 if case.uploader == "weights" else -1
        target = page.locator(driver.FILE_INPUT).nth(index)
        data = case.data
        start = time.perf_counter()
        try:
            driver.act(page, lambda: target.set_input_files(
                files=[{"name": case.filename, "mimeType": "application/octet-stream", "buffer": data}]),
                timeout_ms=120_000)
        except Exception:  # noqa: BLE001  the uploader itself refused it (no rerun): read what it says
            time.sleep(1)
        took = time.perf_counter() - start
        said = outcome(page)
        if said == "no message":
            said = page.locator(f"{driver.MAIN} [data-testid='stFileUploader']").nth(index).inner_text()[-70:]
        return took, said.replace("\n", " ")
    finally:
        page.context.close()


def link_case(browser, server, link: str) -> tuple[float, str]:
    page = driver.new_page(browser)
    try:
        start = time.perf_counter()
        driver.open_app(page, f"{server.base_url}/{link}")
        return time.perf_counter() - start, outcome(page)
    finally:
        page.context.close()


def flood_case(browser, server) -> tuple[float, str]:
    """20 uploads of 39 MiB to made-up file ids of one live session, with its XSRF token."""
    page = driver.new_page(browser)
    try:
        driver.open_app(page, f"{server.base_url}/ffn?ffn_input=Upload")
        urls: list[str] = []
        page.on("request", lambda r: "/_stcore/upload_file/" in r.url and r.method == "PUT" and urls.append(r.url))
        target = page.locator(driver.FILE_INPUT).first
        driver.act(page, lambda: target.set_input_files(
            files=[{"name": "tiny.npy", "mimeType": "application/octet-stream", "buffer": b"tiny"}]))
        token = {c["name"]: c["value"] for c in page.context.cookies()}["_streamlit_xsrf"]
        base = urls[0].rsplit("/", 1)[0]
        payload = {"file": {"name": "x.npy", "mimeType": "application/octet-stream", "buffer": bytes(39 * 2**20)}}
        start = time.perf_counter()
        statuses = [page.request.put(f"{base}/made-up-{i}", multipart=payload, headers={"X-Xsrftoken": token}).status
                    for i in range(20)]
        took = time.perf_counter() - start
        kept = sum(s in (200, 204) for s in statuses)
        return took, f"{kept} of 20 kept, {statuses.count(413)} refused (413)"
    finally:
        page.context.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", action="store_true", help="leave out the files of tens of megabytes")
    parser.add_argument("--grace", type=float, default=1.0, help="the janitor's grace, seconds")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    settle = args.grace + 7  # the grace, the janitor's period (5 s), room
    limit = budget.BUDGET / 2**20
    rows = []
    with tempfile.TemporaryDirectory() as marker_dir, sync_playwright() as playwright:
        marker = Path(marker_dir) / "ran"
        browser = driver.launch(playwright)
        with driver.Server(env={"GELU_SESSION_GRACE_S": str(args.grace)}) as server:
            pid = server.proc.pid
            warm = driver.new_page(browser)
            driver.open_app(warm, f"{server.base_url}/ffn")  # every page's imports done before the first case
            warm.context.close()
            time.sleep(settle)
            cases = [("file", c.name, lambda c=c: upload_case(browser, server, c))
                     for c in hostile_files(marker=marker, large=not args.small)]
            cases += [("link", link[:40], lambda link=link: link_case(browser, server, link)) for link in LINKS]
            cases += [("flood", "20 x 39 MiB to made-up file ids", lambda: flood_case(browser, server))]
            for kind, name, run in cases:
                before = server.rss_kib()["VmRSS"]
                reset_peak(pid)
                took, said = run()
                peak = server.rss_kib()["VmHWM"]
                time.sleep(settle)
                held = server.rss_kib()["VmRSS"]
                rows.append((kind, name, took, mib(peak - before), mib(held - before),
                             healthy(browser, server.base_url), said))
                print(f"{kind:<6}{name[:44]:<45}{took:>7.2f}{rows[-1][3]:>8.0f}{rows[-1][4]:>7.0f}"
                      f"{'yes' if rows[-1][5] else 'NO':>8}  {said[:60]}", flush=True)
        browser.close()
        ran = marker.exists()
    exceptions = sum("EXCEPTION" in r[6] for r in rows)
    worst_peak = max(r[3] for r in rows)
    worst_held = max(r[4] for r in rows)
    print(f"\n{len(rows)} cases: {exceptions} exception boxes; worst peak {worst_peak:.0f} MiB above the start "
          f"({worst_peak / limit:.2f} of the {limit:.0f} MiB budget); worst held after {worst_held:.0f} MiB; "
          f"unhealthy after: {sum(not r[5] for r in rows)}; a pickle ran code: {ran}")


if __name__ == "__main__":
    with printed() as lines:
        print(f"{'kind':<6}{'case':<45}{'seconds':>7}{'peak':>8}{'held':>7}{'healthy':>8}"
              "  outcome (MiB above the start)")
        main()
    record("bench_hostile", None, lines)
