"""A session gives back what it held: twenty uploads in one session, then the student leaves.

Reference: the server's own resident memory (VmRSS from /proc), read after a first session has run the lab on
WARM_UPLOADS files of its own and left (everything imported, every page's code loaded, the upload path and the
allocator's heaps grown as a class grows them), and again after the second session (twenty distinct
(8, 256, 768) float32 .npy files, 6 MB each, each run through the lab) has closed and the janitor's grace has
passed.  Margin: MARGIN_MIB, for the allocator's own slack; everything the session held (Streamlit's uploaded
files, the loaded tensors, blocks and lab results it alone used) must be gone.

Why the first session uploads: with a first session that only opened the lab, what the second left measured +15
to +36 MiB here, and once +86 in CI under the other worker's load.  It sat in glibc's per-thread heaps (up to 8
a core; each rerun's script thread takes one), as free memory still resident, while the live bytes in each heap
were the same before and after (read from `malloc_info` and `/proc/<pid>/smaps` after a `malloc_trim`, which
does not shrink a thread heap's top).  After a first session with five uploads: -1 and +16 MiB under the same
load.  A second session's twenty uploads, leaked, would hold 120 MB of files alone.
"""

from __future__ import annotations

import io
import time

import numpy as np
import pytest

from harness import browser as driver

pytestmark = [pytest.mark.e2e, pytest.mark.slow]  # slow: a long scenario (GELU_SLOW=1, as in CI)

GRACE_S = 2  # the janitor gives back a departed session's share after this long (GELU_SESSION_GRACE_S)
SWEEP_WAIT_S = GRACE_S + 8  # grace, plus the janitor's period (5 s), plus room
MARGIN_MIB = 60
WARM_UPLOADS = 5
SETTLE_S = 60  # then, at most this long, for the memory to come back within the margin (it never does if it leaks)


def upload(page, seed: int) -> None:
    """One .npy of its own through the lab's uploader, waited for until its run is drawn, with no error box."""
    data = npy(seed)
    target = page.locator(driver.FILE_INPUT).first
    driver.act(page, lambda: target.set_input_files(
        files=[{"name": f"acts{seed}.npy", "mimeType": "application/octet-stream", "buffer": data}]),
        timeout_ms=120_000)
    assert page.locator(driver.ERROR_BOX).count() == 0 and page.locator(driver.EXCEPTION).count() == 0


def npy(seed: int) -> bytes:
    x = np.random.default_rng(seed).standard_normal((8, 256, 768)).astype(np.float32)
    buffer = io.BytesIO()
    np.save(buffer, x)
    return buffer.getvalue()


def test_twenty_uploads_are_given_back_when_the_session_ends(browser):
    with driver.Server(env={"GELU_SESSION_GRACE_S": str(GRACE_S)}) as server:
        first = driver.new_page(browser)
        driver.open_app(first, f"{server.base_url}/ffn?ffn_input=Upload")
        for i in range(WARM_UPLOADS):
            upload(first, 1000 + i)  # not the second session's files: its results are its own
        first.context.close()
        time.sleep(SWEEP_WAIT_S)
        before = server.rss_kib()["VmRSS"]

        page = driver.new_page(browser)
        driver.open_app(page, f"{server.base_url}/ffn?ffn_input=Upload")
        for i in range(20):
            upload(page, i)
        during = server.rss_kib()
        page.context.close()
        time.sleep(SWEEP_WAIT_S)
        after = server.rss_kib()["VmRSS"]
        deadline = time.monotonic() + SETTLE_S  # on a loaded machine the sweep and the allocator's trim come later
        while (after - before) / 1024 > MARGIN_MIB and time.monotonic() < deadline:
            time.sleep(1)
            after = server.rss_kib()["VmRSS"]
        grew = (after - before) / 1024
        print(f"server RSS: {before / 1024:.0f} MiB before, {during['VmRSS'] / 1024:.0f} MiB with 20 uploads "
              f"(peak {during['VmHWM'] / 1024:.0f}), {after / 1024:.0f} MiB after the session left (+{grew:.0f})")
        assert grew <= MARGIN_MIB, f"{grew:.0f} MiB still held after the session ended (margin {MARGIN_MIB})"
