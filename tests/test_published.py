"""hosting.published: what the browser code fetches once (the live layers' scripts and tables), named by content.

References: hashlib's SHA-256 and gzip's decompression of the bytes served, against the bytes published here; the
tables a page's run publishes against ui.live.as_json's JSON of the same tables; a stand-in app behind the
middleware for what passes through.
"""

from __future__ import annotations

import gzip
import hashlib

import pytest

from hosting import published
from hosting.published import Published, publish
from tests.test_server_guards import fetch


class Inner:
    """The app behind the middleware: answers 204 and counts what reached it."""

    def __init__(self):
        self.calls = 0

    async def __call__(self, scope, receive, send):
        self.calls += 1
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def get(path: str, method: str = "GET", gzip_ok: bool = True, inner: Inner | None = None):
    """(status, headers as a dict, body) of one request through ``Published`` (tests/test_server_guards.py's fetch)."""
    headers = [(b"accept-encoding", b"gzip, deflate, br")] if gzip_ok else []
    return fetch(Published(inner or Inner()), path, method, headers)


@pytest.fixture(autouse=True)
def empty(monkeypatch):
    """A registry of its own for each test."""
    monkeypatch.setattr(published, "_kept", type(published._kept)())
    monkeypatch.setattr(published, "_held", 0)


TABLE = b'{"grid":[' + b",".join(str(i).encode() for i in range(5000)) + b"]}"


def test_a_published_table_is_served_gzipped_under_its_hash_for_a_year():
    name = publish(TABLE, ".json")
    assert name == hashlib.sha256(TABLE).hexdigest() + ".json" and publish(TABLE, ".json") == name
    status, headers, body = get(f"/_gelu/{name}")
    assert status == 200 and gzip.decompress(body) == TABLE and len(body) < len(TABLE) / 2
    assert headers[b"content-encoding"] == b"gzip" and headers[b"content-type"] == b"application/json"
    assert headers[b"cache-control"] == b"public, max-age=31536000, immutable"
    assert headers[b"content-length"] == str(len(body)).encode() and headers[b"vary"] == b"Accept-Encoding"


def test_a_browser_that_takes_no_gzip_gets_the_bytes_as_published_and_a_script_its_type():
    code = b"export default function () {}\n"
    name = publish(code, ".js")
    status, headers, body = get(f"/_gelu/{name}", gzip_ok=False)
    assert status == 200 and body == code and b"content-encoding" not in headers
    assert headers[b"content-type"] == b"text/javascript; charset=utf-8"
    status, headers, body = get(f"/_gelu/{name}", method="HEAD")
    assert status == 200 and body == b"" and headers[b"content-length"] == str(len(get(f"/_gelu/{name}")[2])).encode()


def test_behind_a_base_path_the_same_name_is_served():
    name = publish(TABLE, ".json")
    assert get(f"/teacher/gelu/_gelu/{name}")[0] == 200


@pytest.mark.parametrize("path", [
    "/_gelu/" + "0" * 64 + ".json",  # a name nothing was published under
    "/_gelu/../app.py", "/_gelu/app.py", "/_gelu/" + "a" * 63 + ".js", "/_gelu/",
])
def test_anything_else_under_the_route_is_not_found_and_not_kept(path):
    publish(TABLE, ".json")
    inner = Inner()
    status, headers, body = get(path, inner=inner)
    assert status == 404 and headers[b"cache-control"] == b"no-store" and inner.calls == 0


def test_only_get_and_head_are_answered_and_other_paths_pass_to_streamlit():
    name = publish(TABLE, ".json")
    assert get(f"/_gelu/{name}", method="POST")[0] == 404
    inner = Inner()
    assert get("/curves", inner=inner)[0] == 204 and inner.calls == 1


def test_the_registry_keeps_its_bound_and_a_name_published_again_is_served_again(monkeypatch):
    """Reference: the gzipped sizes summed here; the least recently published or served goes first."""
    tables = [TABLE + b" " * i for i in range(4)]  # each its own name, of about the same size gzipped
    sizes = [len(gzip.compress(t, compresslevel=published.LEVEL, mtime=0)) for t in tables]
    monkeypatch.setattr(published, "HELD_BYTES", 3 * max(sizes))  # any three fit, no four
    assert 4 * min(sizes) > published.HELD_BYTES
    names = [publish(t, ".json") for t in tables[:3]]
    assert get(f"/_gelu/{names[0]}")[0] == 200  # served: now the most recently used
    publish(tables[3], ".json")
    kept, held = published.held()
    assert kept == 3 and held <= published.HELD_BYTES
    assert get(f"/_gelu/{names[1]}")[0] == 404 and get(f"/_gelu/{names[0]}")[0] == 200
    assert publish(tables[1], ".json") == names[1] and get(f"/_gelu/{names[1]}")[0] == 200


def test_a_name_with_no_kind_is_refused():
    with pytest.raises(ValueError):
        publish(TABLE, ".html")


def test_a_page_run_publishes_its_layers_tables_and_script(app):
    """Home's run mounts five live layers: each publishes its table (ui.live.as_json's JSON, byte for byte) and the
    layer's script (draw/live.js after plotly_private.js, as draw.assets joins them)."""
    from draw.assets import text
    from tests.conftest import open_page
    from ui.home import input_live_json

    open_page(app, "pages/home.py")
    for i in range(5):
        table = input_live_json(i, "tanh")
        assert gzip.decompress(get(f"/_gelu/{hashlib.sha256(table).hexdigest()}.json")[2]) == table
    script = text("plotly_private.js", "live.js").encode()
    assert get(f"/_gelu/{hashlib.sha256(script).hexdigest()}.js")[0] == 200
