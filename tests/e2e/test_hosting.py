"""The production settings of .streamlit/config.toml, checked on running servers, not read from the file.

- showErrorDetails = "none": a crashing page shows a generic box; the message reaches neither the page nor
  the websocket, only the server log.  Checked on a one-page app that raises, served with a copy of the
  repository's config (the real pages must not crash, so they cannot show it).
- fileWatcherType = "none": editing the script on disk does not offer a rerun.  The same check with
  --server.fileWatcherType poll shows the prompt (run by hand when this was written: see the README).
- enableXsrfProtection: an upload without the XSRF token is refused (403) before anything else is looked
  at; with a matching cookie and header the same request gets past that check (400: no such session).
- maxUploadSize = 40: the server itself refuses a 41 MB upload (413) sent straight to the upload URL of
  a live session with a valid token, past anything the page's uploader would stop; a small one is taken.
- CORS: a foreign Origin gets no Access-Control-Allow-Origin.
- toolbarMode = "viewer": the app menu offers the theme, print and screen recording, but no rerun,
  cache clearing or deploy.
- the agent API (Streamlit's HTTP/MCP interface for driving an app without a browser) is off.
- the frontend's files reach the browser gzipped (hosting/compress.py), decoding to Streamlit's own files, still
  cached for a year by their hashed names, and the lab still loads.
- enableWebsocketCompression = true: the server agrees to permessage-deflate when the client offers it, as
  browsers do; a page's messages then cross the wire at most half as large, and read the same.

And the app's own guards (hosting/guard.py), on the real app: /_stcore/metrics is not served, no websocket
message carries the server's path of app.py, a script's path typed as a URL (/pages/ffn.py) lands on its
page, and a file name of 4,000 characters reaches the lab cut to fit instead of failing in the uploader.
"""

from __future__ import annotations

import http.client
import shutil
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from harness import browser as driver

pytestmark = pytest.mark.e2e

SECRET = "do-not-show-this-7f3a"
CRASHING_APP = f'import streamlit as st\n\nst.title("Crashing page")\nraise RuntimeError("{SECRET}")\n'


def request(url: str, method: str = "GET", headers: dict | None = None, data: bytes | None = None):
    """(status, headers, body) of one HTTP request; errors are answers too."""
    req = urllib.request.Request(url, method=method, headers=headers or {}, data=data)
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.headers, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.headers, err.read()


def put_body(url: str, data: bytes, headers: dict) -> tuple[int, bytes]:
    """(status, body) of a PUT of ``data``; a server that answers before the body is read and stops reading it
    (a refusal) is heard out all the same."""
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        conn.putrequest("PUT", parts.path + (f"?{parts.query}" if parts.query else ""))
        for name, value in {**headers, "Content-Length": str(len(data))}.items():
            conn.putheader(name, value)
        conn.endheaders()
        try:
            conn.send(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused before the body was read: the answer is already on its way
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


@pytest.fixture(scope="module")
def crashing_server(tmp_path_factory):
    """A one-page app that raises, served with a copy of the repository's .streamlit/config.toml."""
    app_dir = tmp_path_factory.mktemp("crashing_app")
    (app_dir / ".streamlit").mkdir()
    shutil.copy(driver.ROOT / ".streamlit" / "config.toml", app_dir / ".streamlit" / "config.toml")
    (app_dir / "app.py").write_text(CRASHING_APP)
    with driver.Server(app_dir) as srv:
        yield srv


@pytest.fixture
def crashing_tab(browser, crashing_server):
    page = driver.new_page(browser)
    frames: list[bytes] = []
    page.on(
        "websocket",
        lambda ws: ws.on("framereceived", lambda f: frames.append(f if isinstance(f, bytes) else f.encode())),
    )
    driver.open_app(page, crashing_server.base_url)
    yield page, frames
    page.context.close()


def test_an_exception_shows_no_details(crashing_tab, crashing_server):
    page, frames = crashing_tab
    box = page.locator(driver.EXCEPTION)
    assert box.count() == 1, "the crash should still be announced"
    text = box.inner_text()
    for leak in (SECRET, "RuntimeError", "Traceback", "app.py", str(crashing_server.app_dir)):
        assert leak not in text, f"{leak!r} shown in the browser"
    assert frames and not any(SECRET.encode() in f for f in frames), "the message was sent to the browser"
    assert SECRET in crashing_server.log(), "the server log should keep the details"


def test_editing_the_script_does_not_offer_a_rerun(crashing_tab, crashing_server):
    page, _ = crashing_tab
    script = crashing_server.app_dir / "app.py"
    script.write_text(CRASHING_APP.replace("Crashing page", "Edited page"))
    try:
        time.sleep(2.5)  # the poll watcher notices a change within about a second
        assert page.locator("[data-testid='stStatusWidget']").filter(has_text="File change").count() == 0
    finally:
        script.write_text(CRASHING_APP)


def test_an_upload_without_the_xsrf_token_is_refused(server):
    url = f"{server.base_url}/_stcore/upload_file/no-such-session/no-such-file"
    status, _, body = request(url, "PUT", data=b"payload")
    assert status == 403, (status, body)

    _, headers, _ = request(f"{server.base_url}/_stcore/health")
    cookie = headers.get("set-cookie", "")
    assert cookie.startswith("_streamlit_xsrf="), "XSRF protection sets its cookie"
    token = cookie.split(";", 1)[0].split("=", 1)[1]
    status, _, body = request(
        url, "PUT", data=b"payload", headers={"Cookie": f"_streamlit_xsrf={token}", "X-Xsrftoken": token}
    )
    assert status == 400, (status, body)  # past the XSRF check, refused for the made-up session


def test_the_server_refuses_an_upload_over_the_cap(new_tab):
    tab = new_tab()
    tab.open("ffn?ffn_input=Upload")
    page = tab.page
    urls = []
    page.on("request", lambda req: "/_stcore/upload_file/" in req.url and req.method == "PUT" and urls.append(req.url))
    target = page.locator(driver.FILE_INPUT).first
    file = {"name": "tiny.npy", "mimeType": "application/octet-stream", "buffer": b"not a tensor"}
    driver.act(page, lambda: target.set_input_files(files=[file]))
    assert urls, "the uploader sent nothing"
    token = {c["name"]: c["value"] for c in page.context.cookies()}["_streamlit_xsrf"]

    # 41 MB sent from Python (Playwright's own request would carry it to its driver as base64 JSON: 35 s of a full run)
    status, body = put_body(urls[0], b"\0" * (41 * 2**20), {"Cookie": f"_streamlit_xsrf={token}", "X-Xsrftoken": token})
    assert status == 413, (status, body)
    small = page.request.put(urls[0], multipart={"file": file}, headers={"X-Xsrftoken": token})
    assert small.status in (200, 204), (small.status, small.text())


def test_the_menu_has_no_developer_options(new_tab):
    tab = new_tab()
    tab.open()
    tab.page.locator("[data-testid='stMainMenu']").click()
    popover = tab.page.locator("[data-testid='stMainMenuPopover']")
    popover.wait_for()
    text = popover.inner_text()
    assert "Dark" in text and "Light" in text, text  # students may pick a theme themselves
    for developer_option in ("Rerun", "Clear cache", "Deploy"):
        assert developer_option not in text, text


def test_a_foreign_origin_gets_no_cors_grant(server):
    for path in ("/_stcore/health", "/_stcore/host-config", "/"):
        _, headers, _ = request(server.base_url + path, headers={"Origin": "https://evil.example"})
        assert headers.get("Access-Control-Allow-Origin") in (None, server.base_url), path


def test_the_agent_api_is_off(server):
    status, _, body = request(
        f"{server.base_url}/_stcore/agent/interact", "POST", headers={"Content-Type": "application/json"}, data=b"{}"
    )
    assert status == 403 and b"not_available" in body, (status, body)


def test_the_server_tells_strangers_little(browser, server):
    status, _, _ = request(f"{server.base_url}/_stcore/metrics")
    assert status == 404
    page = driver.new_page(browser)
    frames: list[bytes] = []
    page.on("websocket", lambda ws: ws.on("framereceived",
                                           lambda f: frames.append(f if isinstance(f, bytes) else f.encode())))
    driver.open_app(page, f"{server.base_url}/curves")
    path = str(driver.ROOT / "app.py").encode()
    assert frames and not any(path in f for f in frames), "the server's path of app.py reached the browser"
    assert any(b"app.py" in f for f in frames)  # the new-session message still names the script
    page.context.close()


def test_a_script_path_as_a_url_lands_on_its_page(new_tab):
    tab = new_tab()
    tab.open("pages/ffn.py?ffn_d_model=8")
    page = tab.page
    assert page.url.split("?")[0].endswith("/ffn") and "ffn_d_model=8" in page.url
    assert page.locator(f"{driver.MAIN} h1", has_text="Feed-forward lab").count() == 1
    tab.assert_clean()


def test_a_file_name_too_long_is_cut_not_refused(new_tab):
    import io

    import numpy as np

    tab = new_tab()
    tab.open("ffn?ffn_input=Upload&ffn_d_model=8")
    page = tab.page
    buffer = io.BytesIO()
    np.save(buffer, np.ones((2, 8), np.float32))
    target = page.locator(driver.FILE_INPUT).first
    name = "a" * 4000 + ".npy"
    driver.act(page, lambda: target.set_input_files(
        files=[{"name": name, "mimeType": "application/octet-stream", "buffer": buffer.getvalue()}]))
    text = page.locator(driver.MAIN).inner_text()
    assert "AxiosError" not in text and "Request failed" not in text
    assert page.locator(driver.ERROR_BOX).count() == 0
    assert "(2, 8)" in text  # the file was read and run


def test_the_frontend_arrives_gzipped_and_the_app_still_loads(new_tab, server):
    """Reference: Streamlit's own files on disk (streamlit/static); gzip.decompress of what the server sends must
    give them byte for byte, with the hashed files' one-year cache kept, on every static file the lab loads."""
    import gzip

    from streamlit.file_util import get_static_dir

    tab = new_tab()
    responses = []
    tab.page.on("response", lambda r: "/static/" in r.url and responses.append(r))
    tab.open("ffn")
    tab.assert_clean()
    assert tab.page.locator(f"{driver.MAIN} [data-testid='stPlotlyChart']").count() >= 1  # drawn, Plotly and all
    from hosting.compress import MINIMUM

    def size(response) -> int:  # of the file on disk: the URL's path is "static/js/PlotlyChart....js"
        return (Path(get_static_dir()) / response.url.split("/", 3)[3]).stat().st_size

    scripts = [r for r in responses if r.url.endswith((".js", ".css")) and r.status == 200]
    worth = [r for r in scripts if size(r) >= MINIMUM]  # below that, gzip's header would eat the gain
    assert len(worth) > 20 and all(r.headers.get("content-encoding") == "gzip" for r in worth), [
        (r.url, r.headers.get("content-encoding")) for r in worth]
    uncached = [(r.url, r.headers.get("cache-control")) for r in responses  # every static file, fonts too:
                if r.status == 200 and "immutable" not in r.headers.get("cache-control", "")]  # by its hashed name
    assert responses and not uncached, uncached

    path = max(scripts, key=size).url.split("/", 3)[3]
    on_disk = (Path(get_static_dir()) / path).read_bytes()
    status, headers, body = request(f"{server.base_url}/{path}", headers={"Accept-Encoding": "gzip"})
    assert status == 200 and headers["Content-Encoding"] == "gzip" and "Accept-Encoding" in headers["Vary"]
    assert "immutable" in headers["Cache-Control"] and "max-age=31536000" in headers["Cache-Control"]
    assert len(body) < len(on_disk) / 2, (len(body), len(on_disk))
    assert gzip.decompress(body) == on_disk
    status, headers, body = request(f"{server.base_url}/{path}")  # a client that asks for no encoding
    assert status == 200 and headers.get("Content-Encoding") is None and body == on_disk
    status, headers, body = request(f"{server.base_url}/ffn", headers={"Accept-Encoding": "gzip"})
    assert status == 200 and headers["Content-Encoding"] == "gzip"
    assert gzip.decompress(body) == (Path(get_static_dir()) / "index.html").read_bytes()


def test_the_websocket_is_compressed_and_reads_the_same(server):
    """Reference: the same page and move through a client that offers no compression (websockets'
    ``compression=None``), its bytes counted on the wire by a proxy on loopback (harness.wire): the compressing
    session's server-sent bytes at most half of those, every text of the page the same, no trouble."""
    from harness.streamlit_client import Session, run_sync, texts
    from harness.wire import Wire

    async def visit(compression):
        with Wire(server.port) as wire:
            async with Session(wire.base_url, "approximations", timeout_s=90, compression=compression) as s:
                await s.run()
                await s.move()
                return (texts(s.elements), s.troubles, s.ws.response.headers.get("Sec-WebSocket-Extensions"),
                        wire.counts["ws"])  # fmt: skip

    plain_texts, plain_troubles, plain_extension, plain_bytes = run_sync(visit(None))
    texts_seen, troubles, extension, compressed_bytes = run_sync(visit("deflate"))
    assert plain_extension is None and extension and extension.startswith("permessage-deflate"), extension
    assert texts_seen == plain_texts and len(texts_seen) > 10
    assert troubles == plain_troubles == []
    assert plain_bytes > 200_000 and compressed_bytes <= plain_bytes / 2, (compressed_bytes, plain_bytes)
