"""A whole class at once: many students open the app on a freshly started server in the same few milliseconds.

Reference: the issue "A whole class at once".  On a fresh `streamlit run app.py`, sessions that ran their
first page together got error boxes: `partially initialized module 'pandas' has no attribute 'Series'` (Plotly
peeks at sys.modules['pandas'] while another session's script thread is still importing it) and the same for
torch (scipy's array-API helper peeks at sys.modules['torch']).  A student must see what they would see alone:
no exception element, no error box, and every run they asked for finished.

How: a FRESH server (harness.browser.Server: nothing imported by any page yet), three sessions per page of
harness.streamlit_client spread over every page of app.py, each first does the browser's HTTP requests and
opens its websocket; only when all are connected do all send their first rerun_script together, so every
page's first run starts within a few milliseconds of the others.  Then each moves its page's first control
once (a page whose row declares no controls is only opened).  On commit 7653b56 (before the imports moved to
the server's start) this failed with 13-15 of 21 sessions showing an exception box, on each of three runs.  No
timing is asserted.
"""

from __future__ import annotations

import asyncio
import re
import time

import pytest

from harness import browser as driver
from harness.streamlit_client import Session, run_sync
from ui.pages import PAGES as ROWS

PER_PAGE = 3  # 21 sessions on 7653b56's seven pages: enough to hit the race on every run there
STILL = {"" if p.default else p.url_path for p in ROWS.values() if p.controls is None}  # pages with nothing to move


async def arrive_together(base_url: str, paths: list[str]) -> tuple[list[Session], list[str], float]:
    """Open a session per path, then start every first run at once, then move each page's first control once.

    Returns the sessions, the failures (a session that could not connect, move or finish), and the spread in
    seconds of the first runs' send times."""
    sessions = [Session(base_url, path, timeout_s=120) for path in paths]
    failures: list[str] = []
    try:
        opened = await asyncio.gather(*(s.open() for s in sessions), return_exceptions=True)
        failures += [f"/{s.path}: could not connect: {e!r}" for s, e in zip(sessions, opened, strict=True)
                     if isinstance(e, BaseException)]  # fmt: skip
        start = asyncio.Event()

        async def student(s: Session) -> None:
            await start.wait()
            try:
                await s.run()
                if s.path not in STILL:
                    await s.move()
            except Exception as err:  # one student's failure must not hide the others'
                failures.append(f"/{s.path}: {err!r}")

        students = [asyncio.create_task(student(s)) for s in sessions if s.ws is not None]
        await asyncio.sleep(0)  # every student waits at the gate
        start.set()
        await asyncio.gather(*students)
        sent = [s.runs[0].sent_at for s in sessions if s.runs]
        spread = max(sent) - min(sent) if sent else float("nan")
    finally:
        await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)
    return sessions, failures, spread


def server_errors(log: str) -> list[str]:
    """The exception lines of a server log (the browser is shown none of it: showErrorDetails = "none")."""
    return sorted(set(re.findall(r"^\w*(?:Error|Exception)\b.*$", log, flags=re.M)))


@pytest.mark.slow  # a fresh server of its own and a class on every page: the longest of the non-browser tests
def test_a_class_arriving_at_once_on_a_fresh_server_sees_no_error():
    pages = driver.app_pages()
    paths = ["" if p.default else p.url_path for p in pages] * PER_PAGE
    assert len(paths) >= 20 and set(paths) == {"" if p.default else p.url_path for p in pages}
    started = time.perf_counter()
    with driver.Server() as server:  # fresh: this test's own server, not the session-wide one of tests/e2e
        sessions, failures, spread = run_sync(arrive_together(server.base_url, paths))
        log = server.log()
    took = time.perf_counter() - started

    troubled = {f"/{s.path} #{i}": s.troubles for i, s in enumerate(sessions) if s.troubles}
    context = (f"{len(troubled)} of {len(sessions)} sessions saw exceptions or error boxes; first runs sent within "
               f"{spread * 1e3:.0f} ms; {took:.0f} s in all; server log: {server_errors(log)}")  # fmt: skip
    assert not troubled, f"{context}\n{troubled}"
    assert not failures, f"{context}\n{failures}"
    unfinished = [f"/{s.path}" for s in sessions
                  if len(s.runs) != 1 + 2 * (s.path not in STILL)  # its first run, "Show me", a move
                  or any(r.finished_at is None for r in s.runs)]
    assert not unfinished, f"runs that did not finish: {unfinished}"
    assert not server_errors(log), server_errors(log)
