"""What crosses the wire: a TCP proxy on loopback that counts the bytes of every connection through it.

A browser or a websocket client pointed at ``Wire(port).base_url`` reaches the server on ``port`` as before;
``counts`` holds the bytes the server sent (``"http"`` and ``"ws"``) and received (``"http_up"``,
``"ws_up"``), as they crossed the socket: headers, bodies and websocket frames, compressed where the two sides
agreed to compress.  A connection is counted as ``ws`` when its first request asks for a websocket upgrade.
Chromium's own network events give no such figure for a websocket (only each message, decoded), which is why
this exists.

With ``rate`` (bytes per second) the proxy is also one student's share of a shaped link: everything it
carries, in each direction, all its connections together, passes at most at that rate (a token bucket, in
chunks of ``PACED_CHUNK``), and each new connection waits ``latency_s`` before it reaches the server, as a
round trip would.  That is a shaped loopback: benchmarks/bench_firstvisit.py gives each student's browser
context a ``Wire`` of its own instead of Chromium's emulated throttling, which, with a class's contexts on
one busy machine, can hold requests unsent for minutes.  Used there and by the hosting tests; nothing here
leaves 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import collections
import threading

from harness.browser import free_port

CHUNK = 1 << 16
PACED_CHUNK = 1 << 13  # with a rate: a student's share of 30 Mbit/s between 30 carries 8 KiB in 66 ms


class Wire:
    """Context manager: a counting (and, with ``rate``, shaping) proxy to 127.0.0.1:``target_port``, served from a
    thread of its own."""

    def __init__(self, target_port: int, rate: float | None = None, latency_s: float = 0.0):
        self.target_port, self.port = target_port, free_port()
        self.rate, self.latency_s = rate, latency_s
        self._next = {"down": 0.0, "up": 0.0}  # when each direction's bucket may send again (loop time)
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.counts: collections.Counter[str] = collections.Counter()
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="wire", daemon=True)
        self._open: set[asyncio.StreamWriter] = set()

    def reset(self) -> None:
        self.counts.clear()

    def __enter__(self) -> Wire:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the counting proxy did not start")
        return self

    def __exit__(self, *exc) -> None:
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._main())
        self._loop.close()

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        server = await asyncio.start_server(self._handle, "127.0.0.1", self.port)
        self._ready.set()
        await self._stop.wait()
        server.close()
        for writer in list(self._open):  # connections still open: closed here, so each pump ends on its own
            writer.close()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        if tasks:
            await asyncio.wait(tasks, timeout=5)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            writer.close()
            return
        self._open.update((writer, upstream_writer))
        first = await reader.read(CHUNK)
        kind = "ws" if b"upgrade: websocket" in first.lower() else "http"
        self.counts[f"{kind}_up"] += len(first)
        upstream_writer.write(first)
        await asyncio.gather(self._pump(reader, upstream_writer, f"{kind}_up"),
                             self._pump(upstream_reader, writer, kind))  # fmt: skip
        self._open.difference_update((writer, upstream_writer))

    async def _pace(self, direction: str, size: int) -> None:
        """Wait until ``size`` more bytes fit the rate, in ``direction``, over all this proxy's connections."""
        now = asyncio.get_running_loop().time()
        self._next[direction] = max(self._next[direction], now) + size / self.rate
        await asyncio.sleep(self._next[direction] - now)

    async def _pump(self, source: asyncio.StreamReader, sink: asyncio.StreamWriter, key: str) -> None:
        direction = "up" if key.endswith("_up") else "down"
        try:
            while data := await source.read(PACED_CHUNK if self.rate else CHUNK):
                if self.rate:
                    await self._pace(direction, len(data))
                self.counts[key] += len(data)
                sink.write(data)
                await sink.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            sink.close()  # the other direction's read then ends too
