"""The server's own guards (hosting/), without a server: the ASGI middleware and the janitor, driven directly.

References: ASGI messages and Streamlit's ForwardMsg built in the test; a stand-in for Streamlit's runtime that
holds the same attributes the guards read (uploaded_file_mgr.file_storage, the session manager's active list).
The same guards are checked on a running server by tests/e2e/test_hosting.py and tests/e2e/test_memory.py.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from harness.streamlit_client import run_sync
from hosting import guard
from hosting.guard import Guard, shortened
from hosting.janitor import Janitor
from hosting.runs import SharedRuns


def call(app, scope, body_chunks=(b"",)):
    """Drive an ASGI app once: (status, response body, the request body the inner app received)."""
    chunks = list(body_chunks)
    sent = []

    async def receive():
        if chunks:
            body = chunks.pop(0)
            return {"type": "http.request", "body": body, "more_body": bool(chunks)}
        return {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    run_sync(app(scope, receive, send))  # not asyncio.run: Playwright's loop may be running in this thread
    start = next((m for m in sent if m["type"] == "http.response.start"), None)
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return (start or {}).get("status"), body


class Inner:
    """An app behind the guard that reads the whole request body and answers 204."""

    def __init__(self):
        self.received = b""

    async def __call__(self, scope, receive, send):
        while True:
            message = await receive()
            self.received += message.get("body", b"")
            if not message.get("more_body"):
                break
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})


def http(path: str, method: str = "GET", headers=()):
    return {"type": "http", "method": method, "path": path, "headers": list(headers), "query_string": b""}


def test_metrics_are_not_served_to_strangers():
    inner = Inner()
    status, body = call(Guard(inner), http("/_stcore/metrics"))
    assert status == 404 and inner.received == b""
    assert call(Guard(Inner()), http("/_stcore/health"))[0] == 204  # everything else passes


@pytest.mark.parametrize("path, query, target", [
    ("/pages/ffn.py", b"ffn_seed=3", "/ffn?ffn_seed=3"), ("/pages/home.py", b"", "/"), ("/app.py", b"", "/"),
    ("/pages/curves.py/", b"", "/curves"), ("/pages/nothing.py", b"", "/"),
])
def test_a_script_path_typed_as_a_url_goes_to_its_page(path, query, target):
    sent = []

    async def receive():
        return {"type": "http.request", "body": b""}

    async def send(message):
        sent.append(message)

    scope = {**http(path), "query_string": query}
    run_sync(Guard(Inner())(scope, receive, send))
    start = sent[0]
    assert start["status"] == 308 and dict(start["headers"])[b"location"].decode() == target


def test_a_downloaded_script_is_served_not_redirected():
    # the code export's "Download the script" is /media/<id>.py: redirected, the browser saved the home page's HTML
    status, _ = call(Guard(Inner()), http("/media/f1e0d32fc20cee65c1a05764d279bd4d.py"))
    assert status == 204  # reached the app behind the guard, not a 308


def test_ready_only_once_the_start_up_imports_are_done(monkeypatch):
    from hosting import warm

    monkeypatch.setattr(warm, "ready", lambda: False)
    assert call(Guard(Inner()), http("/readyz")) == (503, b"warming up")
    monkeypatch.setattr(warm, "ready", lambda: True)
    assert call(Guard(Inner()), http("/readyz")) == (200, b"ready")


def test_the_server_path_is_replaced_by_the_script_name():
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    g = Guard(Inner())
    msg = ForwardMsg()
    msg.new_session.main_script_path = g.full_path
    msg.new_session.name = "x"
    out = ForwardMsg()
    out.ParseFromString(g.hide_path(msg.SerializeToString()))
    assert out.new_session.main_script_path == "app.py" and g.full_path.encode() not in out.SerializeToString()


def multipart(name: bytes, payload: bytes = b"DATA") -> bytes:
    """A body as Streamlit's uploader sends it: the file name as the field's name too."""
    return (b"------B\r\nContent-Disposition: form-data; name=\"" + name + b"\"; filename=\"" + name
            + b"\"\r\nContent-Type: application/octet-stream\r\n\r\n" + payload + b"\r\n------B--\r\n")


@pytest.mark.parametrize("split", [1, 7, 1000])
def test_a_name_too_long_reaches_the_app_cut_to_fit(monkeypatch, split):
    monkeypatch.setattr(guard, "held_by", lambda session: (0, 0))
    body = multipart(b"a" * 4000 + b".npy", b"\x93NUMPY" + b"x" * 3000)
    inner = Inner()
    chunks = [body[i:i + split] for i in range(0, len(body), split)]
    status, _ = call(Guard(inner), http("/_stcore/upload_file/s1/f1", "PUT"), chunks)
    assert status == 204
    head = inner.received.split(b"\r\n\r\n", 1)[0]
    assert len(head) < 4096  # python-multipart's limit for one header line (4224)
    for field in (b' name="', b'filename="'):
        name = head.split(field, 1)[1].split(b'"', 1)[0].decode()
        assert len(name) <= guard.MAX_NAME and name.endswith("(name cut from 4,004 characters).npy")
    assert inner.received.endswith(b"\x93NUMPY" + b"x" * 3000 + b"\r\n------B--\r\n")  # the data untouched


def test_a_short_name_passes_untouched(monkeypatch):
    monkeypatch.setattr(guard, "held_by", lambda session: (0, 0))
    body = multipart(b"acts.npy")
    inner = Inner()
    call(Guard(inner), http("/_stcore/upload_file/s1/f1", "PUT"), [body])
    assert inner.received == body


def test_shortened_keeps_the_extension_and_fits():
    for name in (b"x" * 300, b"y" * 300 + b".safetensors", "é".encode() * 400 + b".csv"):
        out = shortened(name).decode()
        assert len(out) <= guard.MAX_NAME and "name cut from" in out
        assert out.endswith(name.decode().rpartition(".")[2]) or "." not in name.decode()


@pytest.mark.parametrize("held, coming, refused", [
    ((0, 0), 10 * 2**20, False), ((1, 30 * 2**20), 30 * 2**20, False), ((guard.SESSION_FILES, 100), 100, True),
    ((2, 70 * 2**20), 40 * 2**20, True),
])
def test_a_session_cannot_park_more_than_its_share(monkeypatch, held, coming, refused):
    """Reference: the share is SESSION_FILES files and twice the upload cap (40 MiB here) in bytes."""
    monkeypatch.setattr(guard, "held_by", lambda session: held)
    monkeypatch.setattr(guard, "upload_limit_bytes", lambda: 40 * 2**20)
    inner = Inner()
    status, body = call(Guard(inner), http("/_stcore/upload_file/s1/f9", "PUT",
                                           [(b"content-length", str(coming).encode())]), [b"x"])
    assert (status == 413) == refused
    assert (inner.received == b"") == refused


class FakeRuntime:
    """What the janitor reads of Streamlit's runtime: the active sessions and the uploaded files by session."""

    def __init__(self):
        self.active: set[str] = set()
        self.uploaded_file_mgr = SimpleNamespace(file_storage={}, remove_session_files=self._remove)
        self.closed: list[str] = []
        self._session_mgr = SimpleNamespace(list_active_sessions=lambda: [
            SimpleNamespace(session=SimpleNamespace(id=s)) for s in sorted(self.active)],
            close_session=self.closed.append)

    def _remove(self, session_id):
        self.uploaded_file_mgr.file_storage.pop(session_id, None)


def test_the_janitor_gives_back_a_departed_sessions_files_and_results_after_the_grace():
    runtime = FakeRuntime()
    runtime.active = {"a", "b"}
    runtime.uploaded_file_mgr.file_storage = {"a": {"f": 1}, "b": {"g": 2}}
    shared = SharedRuns(max_entries=4)
    shared.get("mine", lambda: 1, owner="a")
    shared.get("ours", lambda: 2, owner="a")
    shared.get("ours", lambda: 2, owner="b")
    shared.get("nobody's", lambda: 3)
    janitor = Janitor(grace=30)
    assert janitor.sweep(runtime, now=0) == []
    runtime.active = {"b"}  # a leaves
    assert janitor.sweep(runtime, now=10) == []  # within the grace: a may reconnect
    assert janitor.sweep(runtime, now=31) == ["a"]
    assert set(runtime.uploaded_file_mgr.file_storage) == {"b"} and runtime.closed == ["a"]
    calls = []
    shared.get("mine", lambda: calls.append("recomputed") or 1)  # given back: computed again
    shared.get("ours", lambda: calls.append("recomputed") or 2)  # b still uses it: kept
    shared.get("nobody's", lambda: calls.append("recomputed") or 3)  # no owner: kept
    assert calls == ["recomputed"]


def test_files_of_a_session_never_seen_connected_go_after_the_grace():
    runtime = FakeRuntime()
    runtime.uploaded_file_mgr.file_storage = {"ghost": {"f": 1}}
    janitor = Janitor(grace=5)
    assert janitor.sweep(runtime, now=100) == []
    assert janitor.sweep(runtime, now=106) == ["ghost"] and runtime.uploaded_file_mgr.file_storage == {}


def test_torch_threads_follow_the_cpus_the_process_may_use(monkeypatch):
    """Reference: the process's affinity set (os.sched_getaffinity) and os.cpu_count; the environment wins."""
    import os

    from hosting import warm

    assert 1 <= warm.usable_cpus() <= len(os.sched_getaffinity(0)) <= (os.cpu_count() or 1)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    monkeypatch.setenv("MKL_NUM_THREADS", "3")
    warm.set_threads()
    assert os.environ["OMP_NUM_THREADS"] == str(warm.usable_cpus()) and os.environ["MKL_NUM_THREADS"] == "3"
    assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE"  # threads sleep while they wait: a shared server's cores
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    warm.set_threads()
    assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE"  # the environment wins


@pytest.fixture
def later(monkeypatch, tmp_path):
    """hosting.warm with its page imports done and two made-up LATER groups (modules written here), a short quiet
    time, and gc.freeze counted instead of done; warm_all() runs on a thread of its own."""
    import gc
    import sys
    import threading

    from hosting import warm

    for name in ("gelu_later_a", "gelu_later_b"):
        (tmp_path / f"{name}.py").write_text("VALUE = 1\n")
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    pages = threading.Event()
    pages.set()
    freezes = []
    monkeypatch.setattr(gc, "freeze", lambda: freezes.append(sorted(m for m in sys.modules if "gelu_later" in m)))
    monkeypatch.setattr(warm, "_pages", pages)
    monkeypatch.setattr(warm, "_done", threading.Event())
    monkeypatch.setattr(warm, "_runs", threading.Condition())
    monkeypatch.setattr(warm, "_running", 0)
    monkeypatch.setattr(warm, "_quiet_since", 0.0)
    monkeypatch.setattr(warm, "LATER", (("gelu_later_a",), ("gelu_later_b",)))
    (tmp_path / "gelu_tables.py").write_text("MADE = []\n\ndef make():\n    MADE.append(1)\n")
    monkeypatch.delitem(sys.modules, "gelu_tables", raising=False)
    monkeypatch.setattr(warm, "TABLES", ("gelu_tables", "make"))
    monkeypatch.setattr(warm, "QUIET_S", 0.3)
    monkeypatch.setattr(warm, "seconds", {})
    yield SimpleNamespace(warm=warm, freezes=freezes, start=lambda: threading.Thread(target=warm.warm_all,
                                                                                      daemon=True).start())
    warm._done.wait(5)


def test_later_imports_wait_while_students_run_scripts(later):
    """Reference: sys.modules and the warm-up's own record (``warm.seconds``), read while a script run is held
    open far longer than the quiet time; then, after it ends, everything within 5 s."""
    import sys
    import time

    with later.warm.script_run():
        later.start()
        time.sleep(1.0)  # over three times QUIET_S, a run still under way
        assert "gelu_later_a" not in sys.modules and not later.warm.ready() and later.freezes == []
    assert later.warm._done.wait(5)
    assert {"gelu_later_a", "gelu_later_b"} <= set(sys.modules) and later.freezes == [["gelu_later_a"],
                                                                                      ["gelu_later_a", "gelu_later_b"]]


def test_a_group_a_page_imported_itself_is_completed_and_frozen_at_that_runs_end(later):
    """While another student's run keeps the server busy, a run imports the second group itself: at its end the
    warm-up completes that group and freezes it, and leaves the first one for a quiet moment."""
    import importlib
    import sys
    import time

    with later.warm.script_run():  # a long run: the server is never quiet meanwhile
        later.start()
        with later.warm.script_run():
            importlib.import_module("gelu_later_b")  # the lab, say, importing torch itself
        deadline = time.monotonic() + 5
        while not later.freezes and time.monotonic() < deadline:
            time.sleep(0.02)
        assert later.freezes == [["gelu_later_b"]] and "gelu_later_b" in later.warm.seconds
        assert "gelu_later_a" not in sys.modules and not later.warm.ready()
    assert later.warm._done.wait(5) and "gelu_later_a" in sys.modules


def test_the_pages_tables_are_made_before_the_server_says_it_is_ready(later):
    """Reference: a made-up table maker (a module written here) counting its calls, read once ``ready()``: made
    once, first, before any LATER group waits for quiet; a maker that fails leaves the server ready all the same."""
    import sys

    later.start()
    assert later.warm._done.wait(5)
    assert sys.modules["gelu_tables"].MADE == [1] and list(later.warm.seconds)[0] == "live tables"


def test_a_table_maker_that_fails_is_logged_and_the_server_is_ready_all_the_same(later, capsys):
    later.warm.TABLES = ("gelu_tables", "no_such_function")  # put back by the fixture's monkeypatch
    later.start()
    assert later.warm._done.wait(5)
    assert "tables were not made ahead (AttributeError" in capsys.readouterr().err
    assert "live tables" not in later.warm.seconds


# ---------------------------------------------------------------- hosting.compress

JS = b"export const answer = 42;\n" * 400  # 10 KB of script, compressible


class FileApp:
    """A stand-in for Streamlit's static route: one file, its headers as Streamlit sends them, in two body chunks
    (Starlette's FileResponse streams); counts how often it was asked."""

    def __init__(self, body=JS, kind=b"text/javascript; charset=utf-8", cache=b"public, immutable, max-age=31536000",
                 status=200, extra=()):
        self.body, self.kind, self.cache, self.status, self.extra = body, kind, cache, status, list(extra)
        self.calls = 0

    async def __call__(self, scope, receive, send):
        self.calls += 1
        headers = [(b"content-type", self.kind), (b"content-length", str(len(self.body)).encode()),
                   (b"cache-control", self.cache), (b"etag", b'"abc"'), *self.extra]
        await send({"type": "http.response.start", "status": self.status, "headers": headers})
        half = len(self.body) // 2
        await send({"type": "http.response.body", "body": self.body[:half], "more_body": True})
        await send({"type": "http.response.body", "body": self.body[half:], "more_body": False})


def fetch(app, path="/static/js/index.abc123.js", method="GET", headers=((b"accept-encoding", b"gzip, deflate"),)):
    """(status, headers as a dict, body) of one request through an ASGI app."""
    sent = []

    async def receive():
        return {"type": "http.request", "body": b""}

    async def send(message):
        sent.append(message)

    run_sync(app(http(path, method, headers), receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    return start["status"], dict(start["headers"]), b"".join(m.get("body", b"") for m in sent[1:])


def test_a_hashed_file_is_gzipped_once_and_decodes_to_itself():
    """Reference: gzip.decompress (the stdlib) of the body must give the file's bytes back."""
    import gzip

    from hosting.compress import Compress

    app = Compress(FileApp())
    status, headers, body = fetch(app)
    assert status == 200 and headers[b"content-encoding"] == b"gzip" and headers[b"vary"] == b"Accept-Encoding"
    assert gzip.decompress(body) == JS and int(headers[b"content-length"]) == len(body) < len(JS) // 10
    assert headers[b"cache-control"] == b"public, immutable, max-age=31536000" and headers[b"etag"] == b'W/"abc"'
    assert fetch(app)[2] == body and len(app._cache) == 1  # the second visit gets the kept bytes


def test_thirty_browsers_at_once_compress_a_file_once(monkeypatch):
    import asyncio

    from hosting import compress

    calls = []
    monkeypatch.setattr(compress, "compress", lambda data: calls.append(1) or compress.gzip.compress(data))
    app = compress.Compress(FileApp())

    async def many():
        async def one():
            sent = []

            async def send(message):
                sent.append(message)

            async def receive():
                return {"type": "http.request", "body": b""}

            await app(http("/static/js/x.js", headers=[(b"accept-encoding", b"gzip")]), receive, send)
            return b"".join(m.get("body", b"") for m in sent[1:])

        return await asyncio.gather(*(one() for _ in range(30)))

    bodies = run_sync(many())
    assert len(calls) == 1 and len(set(bodies)) == 1 and compress.gzip.decompress(bodies[0]) == JS


@pytest.mark.parametrize("request_kwargs, app_kwargs", [
    (dict(headers=()), {}),  # the client asks for no encoding
    (dict(headers=[(b"accept-encoding", b"gzip;q=0")]), {}),
    (dict(headers=[(b"accept-encoding", b"gzip"), (b"range", b"bytes=0-99")]), {}),  # a range stays a range
    (dict(method="PUT"), {}),  # an upload
    (dict(method="HEAD"), {}),
    (dict(path="/_stcore/upload_file/s/f"), {}),
    (dict(path="/media/abc.npy"), dict(kind=b"application/octet-stream", cache=b"no-cache")),  # a download
    ({}, dict(kind=b"font/woff2")),  # compressed already
    ({}, dict(extra=[(b"content-encoding", b"gzip")])),
    ({}, dict(status=304)),
    ({}, dict(body=b"x" * 500)),  # too small to gain
])
def test_what_is_not_the_frontends_text_passes_untouched(request_kwargs, app_kwargs):
    from hosting.compress import Compress

    inner = FileApp(**app_kwargs)
    status, headers, body = fetch(Compress(inner), **request_kwargs)
    assert body == inner.body and b"vary" not in headers and status == inner.status
    assert headers.get(b"content-encoding") == dict(inner.extra).get(b"content-encoding")


def test_the_page_document_is_gzipped_each_time_and_not_kept():
    import gzip

    from hosting.compress import Compress

    page = b"<!doctype html><html>" + b"<div></div>" * 300 + b"</html>"
    app = Compress(FileApp(body=page, kind=b"text/html; charset=utf-8", cache=b"no-cache"))
    status, headers, body = fetch(app, path="/ffn")
    assert headers[b"content-encoding"] == b"gzip" and gzip.decompress(body) == page and not app._cache


def test_the_kept_bytes_stay_within_their_cap():
    from hosting.compress import Compress, compress

    app = Compress(FileApp(), cache_bytes=2 * len(compress(JS)))
    for i in range(5):
        fetch(app, path=f"/static/js/f{i}.js")
    assert list(app._cache) == ["/static/js/f3.js", "/static/js/f4.js"] and app._held <= app.cache_bytes


def test_a_websocket_passes_through_untouched():
    from hosting.compress import Compress

    seen = []

    async def inner(scope, receive, send):
        seen.append(scope["type"])
        await send({"type": "websocket.send", "bytes": b"\x00" * 5000})

    sent = []

    async def send(message):
        sent.append(message)

    async def receive():
        return {"type": "websocket.connect"}

    scope = {"type": "websocket", "path": "/_stcore/stream", "headers": [(b"accept-encoding", b"gzip")]}
    run_sync(Compress(inner)(scope, receive, send))
    assert seen == ["websocket"] and sent == [{"type": "websocket.send", "bytes": b"\x00" * 5000}]


class Cycle:
    """An object in a reference cycle: only a garbage collection frees it (reference counting cannot)."""

    def __init__(self):
        self.me = self


@pytest.fixture
def no_automatic_gc():
    import gc

    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def test_the_collector_collects_after_runs_end_and_once_more_then_rests(no_automatic_gc):
    """Reference: a weakref to a cycle made in the test (dead exactly when a collection has run)."""
    import weakref

    from hosting.janitor import Collector

    ended = [0]
    collector = Collector(runs=lambda: ended[0])
    assert collector.tick() is False  # no run has ended: nothing walked
    cycle = Cycle()
    ref = weakref.ref(cycle)
    del cycle
    assert ref() is not None  # garbage, not yet collected
    ended[0] += 2  # two runs end
    assert collector.tick() is True and ref() is None
    assert collector.tick() is True  # once more: a run's module is let go just after its count
    assert collector.tick() is False and collector.tick() is False


def test_the_server_collects_the_runs_garbage_itself_streamlit_does_not(monkeypatch, no_automatic_gc):
    """Reference: .streamlit/config.toml (runner.postScriptGC off) and the server's own start-up (hosting.lifespan)
    run with a short period: a cycle is freed once a script run has ended (hosting.warm's count), not before."""
    import asyncio
    import tomllib
    import weakref
    from pathlib import Path

    import hosting
    from hosting import janitor, warm

    config = tomllib.loads((Path(__file__).resolve().parents[1] / ".streamlit" / "config.toml").read_text())
    assert config["runner"]["postScriptGC"] is False
    monkeypatch.setattr(warm, "start", lambda: None)  # no background imports in the test process
    monkeypatch.setattr(hosting.internals, "install_nodelay", lambda: None)
    monkeypatch.setattr(hosting.internals, "install_batched_events", lambda: None)  # Streamlit's own, for the rest
    monkeypatch.setattr(hosting, "tune_allocator", lambda: True)
    monkeypatch.setattr(janitor, "COLLECT_PERIOD", 0.01)

    async def serve():
        async with hosting.lifespan(None):
            await asyncio.sleep(0.05)
            cycle = Cycle()
            ref = weakref.ref(cycle)
            del cycle
            await asyncio.sleep(0.05)
            before = ref() is not None  # no run ended: not collected
            monkeypatch.setattr(warm, "_finished", warm.finished_runs() + 1)
            await asyncio.sleep(0.05)
            return before, ref() is None

    assert asyncio.run(serve()) == (True, True)
