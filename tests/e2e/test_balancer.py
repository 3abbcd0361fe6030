"""The app behind the real load balancer, in a real browser: two replicas behind `haproxy -f deploy/haproxy.cfg`.

harness/balancer.py starts two `streamlit run app.py` on their own loopback addresses, a DNS name that
answers with both (as Docker's DNS does for a Compose service), and HAProxy on the very file Compose uses.
Through HAProxy, in Chromium:

- every page of app.py opens clean and its first control a student can see moves (opening the expander
  that holds it where need be; each page in its own browser context: its
  own student, its own sticky cookie), and the students are spread over both replicas;
- on the lab, a small .npy goes through the real file input and the lab computes on it.  Reference for
  "the upload reached the replica holding the websocket": HAProxy's log, which names for every request the
  replica that served it and the sticky cookie it carried (`capture cookie`): this student's websocket and
  upload PUT went to the same replica.  Counter-check that this matters: the same PUT sent with the other
  replica's cookie is refused by Streamlit there (400, no such session).

Skipped where haproxy is missing (apt-get install -y haproxy), unless GELU_E2E_REQUIRED=1 (CI).
"""

from __future__ import annotations

import io
import time
import urllib.error
import urllib.request

import numpy as np
import pytest

from harness import balancer
from harness import browser as driver
from tests.conftest import needs_haproxy
from ui.pages import PAGES as ROWS

pytestmark = [pytest.mark.e2e, pytest.mark.slow]  # slow: a long scenario (GELU_SLOW=1, as in CI)

PAGES = driver.app_pages()


@pytest.fixture(scope="module")
def lb():
    needs_haproxy()
    with balancer.Balancer(replicas=2) as b:
        yield b


def visible_control(page):
    """The first slider of the main area a student can see, else its first number input; a control kept in a
    collapsed expander (the training page keeps all of its sliders there) is shown by opening the expander, as a
    student would.  (harness.browser.first_control takes the first in the page, seen or not.)"""
    for selector in (driver.SLIDER, driver.NUMBER):
        control = page.locator(f"{driver.MAIN} {selector}:visible").first
        if control.count():
            return control
    for selector in (driver.SLIDER, driver.NUMBER):
        folded = page.locator(f"{driver.MAIN} [data-testid='stExpander']").filter(has=page.locator(selector)).first
        if folded.count():
            folded.locator("summary").first.click()
            control = page.locator(f"{driver.MAIN} {selector}:visible").first
            control.wait_for(state="visible")
            return control
    return None


def log_lines(lb, cookie_value: str) -> list[tuple[str, str]]:
    """(served by, request line) of every request HAProxy logged as carrying this sticky cookie value."""
    found = []
    for line in lb.log().splitlines():
        if f"{balancer.COOKIE}={cookie_value}" in line.split('"', 1)[0] and '"' in line:
            found.append((line.split()[3], line.split('"')[1]))
    return found


def test_every_page_through_haproxy_and_the_upload_stays_with_its_replica(browser, lb):
    contexts = []
    replica_of = {}
    try:
        for app_page in PAGES:
            page = driver.new_page(browser)
            contexts.append(page.context)
            console = driver.ConsoleErrors(page, lb.base_url)
            driver.open_app(page, f"{lb.base_url}/{'' if app_page.default else app_page.url_path}")
            if ROWS[app_page.url_path].controls is not None:  # a page with no controls is only opened
                control = visible_control(page)
                assert control is not None, app_page.url_path
                before = control.input_value()
                driver.move(page, control)
                assert control.input_value() != before, f"{app_page.url_path}: the move did not take"
            assert page.locator(driver.EXCEPTION).count() == 0, app_page.url_path
            assert page.locator(driver.ERROR_BOX).count() == 0, app_page.url_path
            assert not console.errors, console.errors
            replica_of[app_page.url_path] = {c["name"]: c["value"] for c in page.context.cookies()}[balancer.COOKIE]
        assert len(set(replica_of.values())) == 2, f"every student on one replica: {replica_of}"

        # the lab: a small .npy through the real file input
        page = driver.new_page(browser)
        contexts.append(page.context)
        driver.open_app(page, f"{lb.base_url}/ffn?ffn_d_model=8&ffn_input=Upload")
        puts = []
        page.on("request", lambda r: r.method == "PUT" and "/_stcore/upload_file/" in r.url and puts.append(r.url))
        x = np.random.default_rng(3).standard_normal((2, 5, 8)).astype(np.float32)
        buffer = io.BytesIO()
        np.save(buffer, x)
        target = page.locator(driver.FILE_INPUT).first
        file = {"name": "activations.npy", "mimeType": "application/octet-stream", "buffer": buffer.getvalue()}
        driver.act(page, lambda: target.set_input_files(files=[file]))
        assert page.locator(driver.EXCEPTION).count() == 0
        assert page.locator(driver.ERROR_BOX).count() == 0, page.locator(driver.ERROR_BOX).all_inner_texts()
        assert "(2, 5, 8)" in page.locator(f"{driver.MAIN} pre.gelu-flow").first.inner_text()
        assert page.locator(f"{driver.MAIN} [data-testid='stPlotlyChart']").count() >= 3
        assert puts, "the browser sent no upload"

        cookies = {c["name"]: c["value"] for c in page.context.cookies()}
        mine = cookies[balancer.COOKIE]
        token = cookies["_streamlit_xsrf"]

        def put(replica_cookie: str) -> int:
            """The browser's upload request once more, sent with the given sticky cookie."""
            request = urllib.request.Request(
                puts[0], method="PUT", data=b"--b\r\nContent-Disposition: form-data; name=\"file\"; "
                b"filename=\"a.npy\"\r\n\r\nx\r\n--b--\r\n",
                headers={"Cookie": f"{balancer.COOKIE}={replica_cookie}; _streamlit_xsrf={token}",
                         "X-Xsrftoken": token, "Content-Type": "multipart/form-data; boundary=b"},
            )  # fmt: skip
            try:
                with urllib.request.urlopen(request, timeout=10) as response:
                    return response.status
            except urllib.error.HTTPError as err:
                return err.code

        other = next(v for v in replica_of.values() if v != mine)
        assert put(mine) in (200, 204), "with its own cookie the upload reaches the session's replica"
        assert put(other) == 400, "with the other replica's cookie it reaches a replica without the session"

        page.context.close()  # HAProxy logs the websocket once it is closed
        for _ in range(50):
            served = log_lines(lb, mine)
            stream = {who for who, request in served if "/_stcore/stream" in request}
            if stream:
                break
            time.sleep(0.1)
        upload = {who for who, request in served if request.startswith("PUT /_stcore/upload_file/")}
        assert len(stream) == 1 and upload == stream, f"websocket on {stream}, uploads on {upload}"
    finally:
        for context in contexts:
            context.close()
