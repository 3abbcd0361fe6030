"""The frontend's own files reach a browser gzipped, each compressed once per process.

Streamlit 1.67 serves its static files (``/static/...``, the page document) uncompressed on purpose: its
``SelectiveGZipMiddleware`` skips them because Starlette's ``GZipMiddleware`` would compress the same bytes
again on every request.  Uncompressed, a first visit moves several megabytes (Plotly's chunk the largest part), a
long wait for a class on a school's shared link.  ``Compress`` keeps Streamlit's reasoning and fixes the cost
instead:

* a file Streamlit marks ``immutable`` (its name carries the hash of its content) is gzipped the first time
  it is asked for, in a worker thread, once even when thirty browsers ask at the same moment, and the
  compressed bytes are kept (``CACHE_BYTES`` at most, all of Streamlit's frontend gzipped is ~9 MB);
* the page document (``text/html``, 1-2 KB, ``no-cache``) is gzipped on each request, which costs microseconds;
* everything else passes untouched: websockets, uploads (PUT), media and downloads (Streamlit's own
  middleware compresses those where it pays), range requests, responses that already carry an encoding, and
  clients that do not send ``Accept-Encoding: gzip``.

A compressed response says ``Vary: Accept-Encoding``, keeps Streamlit's ``Cache-Control`` and turns a strong
``ETag`` weak (the bytes differ from the file's, the content does not), as nginx does.  Brotli is not offered:
browsers ask for it only over HTTPS, and a teacher's ``streamlit run`` serves plain HTTP.

The gzipped bytes are kept here, not in ``hosting.runs.SharedRuns`` (the app's cache of results): they are
Streamlit's own files, the same for every visitor and nothing a student computed, kept on the event loop (a
``SharedRuns`` waits by blocking its thread), and bounded by ``CACHE_BYTES``, fixed at a few times the whole
frontend gzipped, not by the budget's cache share.
"""

from __future__ import annotations

import asyncio
import gzip
from collections import OrderedDict

import anyio

LEVEL = 9  # compressed once and kept: the smallest output is worth the one-off CPU
MINIMUM = 1024  # bytes; below this gzip's header eats the gain
CACHE_BYTES = 32 * 2**20  # compressed bytes kept; far above Streamlit's whole frontend gzipped
COMPRESSIBLE = ("text/", "application/javascript", "application/json", "image/svg+xml", "application/wasm")


def _header(headers, name: bytes) -> bytes:
    for key, value in headers:
        if key.lower() == name:
            return value
    return b""


def accepts_gzip(scope) -> bool:
    """Whether the request's Accept-Encoding names gzip (with a non-zero weight).

    >>> accepts_gzip({"headers": [(b"accept-encoding", b"gzip, deflate, br")]})
    True
    >>> accepts_gzip({"headers": [(b"accept-encoding", b"identity, gzip;q=0")]})
    False
    """
    for part in _header(scope.get("headers") or [], b"accept-encoding").decode("latin-1").lower().split(","):
        coding, _, params = part.strip().partition(";")
        if coding.strip() in ("gzip", "*"):
            return params.replace(" ", "") not in ("q=0", "q=0.0", "q=0.00", "q=0.000")
    return False


def compress(data: bytes) -> bytes:
    """gzip at LEVEL, with no time stamp: the same file always gives the same bytes."""
    return gzip.compress(data, compresslevel=LEVEL, mtime=0)


class Compress:
    """Pure ASGI middleware: gzip the frontend's static responses, caching the immutable ones by path."""

    def __init__(self, app, cache_bytes: int = CACHE_BYTES):
        self.app = app
        self.cache_bytes = cache_bytes
        self._cache: OrderedDict[str, bytes] = OrderedDict()
        self._held = 0
        self._locks: dict[str, asyncio.Lock] = {}

    async def __call__(self, scope, receive, send):
        if (scope["type"] != "http" or scope.get("method") != "GET" or "/_stcore/" in scope.get("path", "")
                or _header(scope.get("headers") or [], b"range") or not accepts_gzip(scope)):
            await self.app(scope, receive, send)
            return
        state: dict = {"start": None, "body": [], "passing": False}

        async def capture(message):
            if state["passing"]:
                await send(message)
                return
            if message["type"] == "http.response.start":
                if self._wanted(message):
                    state["start"] = message
                else:
                    state["passing"] = True
                    await send(message)
                return
            if message["type"] != "http.response.body":
                await send(message)
                return
            state["body"].append(message.get("body", b""))
            if not message.get("more_body", False):
                await self._send_compressed(scope, state["start"], b"".join(state["body"]), send)

        await self.app(scope, receive, capture)

    @staticmethod
    def _wanted(start) -> bool:
        headers = start.get("headers") or []
        kind = _header(headers, b"content-type").decode("latin-1").lower()
        length = _header(headers, b"content-length")
        return (start.get("status") == 200 and not _header(headers, b"content-encoding")
                and kind.startswith(COMPRESSIBLE) and (not length.isdigit() or int(length) >= MINIMUM))

    async def _send_compressed(self, scope, start, body: bytes, send) -> None:
        headers = [(k, v) for k, v in start.get("headers") or [] if k.lower() not in (b"content-length", b"etag")]
        etag = _header(start.get("headers") or [], b"etag")
        immutable = b"immutable" in _header(headers, b"cache-control")
        packed = await self._compressed(scope["path"], body) if immutable else compress(body)
        if len(packed) >= len(body):
            packed, headers = body, list(start.get("headers") or [])
        else:
            headers += [(b"content-encoding", b"gzip"), (b"content-length", str(len(packed)).encode())]
            if etag:
                headers.append((b"etag", etag if etag.startswith(b"W/") else b"W/" + etag))
        headers.append((b"vary", b"Accept-Encoding"))
        await send({**start, "headers": headers})
        await send({"type": "http.response.body", "body": packed, "more_body": False})

    async def _compressed(self, path: str, body: bytes) -> bytes:
        """The gzip of an immutable file, from the cache or compressed once (a thread, one per path at a time)."""
        if path in self._cache:
            self._cache.move_to_end(path)
            return self._cache[path]
        lock = self._locks.setdefault(path, asyncio.Lock())
        async with lock:
            packed = self._cache.get(path)
            if packed is None:
                packed = await anyio.to_thread.run_sync(compress, body)
                self._keep(path, packed)
        self._locks.pop(path, None)
        return packed

    def _keep(self, path: str, packed: bytes) -> None:
        if len(packed) > self.cache_bytes:
            return
        self._cache[path] = packed
        self._held += len(packed)
        while self._held > self.cache_bytes:
            _, dropped = self._cache.popitem(last=False)
            self._held -= len(dropped)
