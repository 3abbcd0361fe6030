"""Bytes a page's browser code fetches once and keeps: the live layers' scripts and tables, named by their content.

A custom component's script and data travel inside each of its elements, in the page's websocket: every mount of the
live layer carried its 47 KB of script and its table (65-240 KB of JSON), five of each on Home, so that a first visit
sent 130-600 KB a page, which the server deflated again for each student's connection (a quarter of a first visit's
server time, measured with py-spy).  Published instead, each is:

* named by the SHA-256 of its bytes (``publish``: ``<hash>.js`` or ``<hash>.json``), so a name never changes meaning
  and the browser keeps it for a year (``immutable``), across pages, reloads and sessions;
* gzipped once, when it is published, and served from that copy (``Published``, ASGI middleware) at
  ``<base>/_gelu/<name>``, where ``<base>`` is wherever Streamlit serves its own ``static/`` (the browser code reads it
  from Streamlit's script's address, so a ``server.baseUrlPath`` or a proxy's prefix is kept);
* kept while ``HELD_BYTES`` of gzipped bytes hold it, least recently published or fetched first out.  A name no longer
  kept answers 404: the next run of the page that draws it publishes it again (a replica that took over a class
  after another was lost does so at its first run), and the browser asks again (draw/loader.js).

Only what the app itself published is served: a name is looked up, never read from disk, and anything else under
``/_gelu/`` answers 404.
"""

from __future__ import annotations

import gzip
import hashlib
import re
import threading
from collections import OrderedDict

from hosting.compress import accepts_gzip

ROUTE = "/_gelu/"
KINDS = {".js": b"text/javascript; charset=utf-8", ".json": b"application/json"}
HELD_BYTES = 16 * 2**20  # gzipped; every page's tables in two forms and two languages and the scripts: ~3 MB
LEVEL = 6  # gzip's level: compressed once per name and process, a 240 KB table in ~5 ms
NAME = re.compile(r"/_gelu/([0-9a-f]{64}(?:\.js|\.json))$")
CACHE = b"public, max-age=31536000, immutable"

_kept: OrderedDict[str, bytes] = OrderedDict()  # name -> gzipped bytes
_held = 0
_lock = threading.Lock()  # publish runs in script threads, serving on the event loop


def publish(data: bytes, suffix: str) -> str:
    """``data``'s name (``<sha256>.js`` or ``.json``), kept and served from now on under ``/_gelu/<name>``."""
    global _held
    if suffix not in KINDS:
        raise ValueError(f"no kind for {suffix!r}")
    name = hashlib.sha256(data).hexdigest() + suffix
    with _lock:
        if name in _kept:
            _kept.move_to_end(name)
            return name
    packed = gzip.compress(data, compresslevel=LEVEL, mtime=0)  # outside the lock: two threads may both compress once
    with _lock:
        if name not in _kept:
            _kept[name] = packed
            _held += len(packed)
            while _held > HELD_BYTES and len(_kept) > 1:
                _, dropped = _kept.popitem(last=False)
                _held -= len(dropped)
    return name


def held() -> tuple[int, int]:
    """(names kept, gzipped bytes held)."""
    with _lock:
        return len(_kept), _held


def _found(name: str) -> bytes | None:
    with _lock:
        packed = _kept.get(name)
        if packed is not None:
            _kept.move_to_end(name)
        return packed


class Published:
    """Pure ASGI middleware: ``GET`` or ``HEAD`` ``.../_gelu/<name>`` answers what ``publish`` kept under that name
    (gzipped where the browser takes gzip, else as published), or 404; every other request passes to Streamlit."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        path = scope.get("path", "")
        if scope["type"] != "http" or ROUTE not in path:
            await self.app(scope, receive, send)
            return
        match = NAME.search(path)
        packed = _found(match.group(1)) if match and scope.get("method") in ("GET", "HEAD") else None
        if packed is None:
            await _answer(send, 404, [(b"content-type", b"text/plain; charset=utf-8"), (b"cache-control", b"no-store")],
                          b"Not found", scope)
            return
        name = match.group(1)
        headers = [(b"content-type", KINDS[name[name.index("."):]]), (b"cache-control", CACHE),
                   (b"etag", b'"' + name.encode() + b'"'), (b"vary", b"Accept-Encoding")]
        if accepts_gzip(scope):
            headers.append((b"content-encoding", b"gzip"))
            body = packed
        else:
            body = gzip.decompress(packed)
        await _answer(send, 200, headers, body, scope)


async def _answer(send, status: int, headers: list, body: bytes, scope) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [*headers, (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": b"" if scope.get("method") == "HEAD" else body,
                "more_body": False})
