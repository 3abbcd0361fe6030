"""harness.wire, the counting and shaping proxy the first-visit benchmark and the hosting tests read the wire by.

Reference: bytes made in the test, served by a plain socket server on loopback; the proxy must pass them through
unchanged, count exactly what crossed in each direction, and, with a rate, take no less than size / rate to
deliver them (a lower bound only: a slow machine may take longer, never shorter).
"""

from __future__ import annotations

import os
import socket
import socketserver
import threading
import time

import pytest

from harness.wire import Wire

BODY = os.urandom(300_000)  # incompressible, so nothing on the way could shrink it


class _Handler(socketserver.BaseRequestHandler):
    def handle(self):
        request = self.request.recv(65536)
        self.server.seen.append(request)
        self.request.sendall(BODY)


@pytest.fixture
def origin():
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Handler)
    server.seen = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def fetch(port: int, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(request)
        received = bytearray()
        while chunk := sock.recv(65536):
            received += chunk
            if len(received) >= len(BODY):
                break
        return bytes(received)


def test_the_proxy_passes_bytes_unchanged_and_counts_them_by_kind(origin):
    plain = b"GET /static/x.js HTTP/1.1\r\nHost: a\r\n\r\n"
    upgrade = b"GET /_stcore/stream HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
    with Wire(origin.server_address[1]) as wire:
        assert fetch(wire.port, plain) == BODY
        assert fetch(wire.port, upgrade) == BODY
        counts = dict(wire.counts)  # each chunk is counted before it is passed on
    assert origin.seen == [plain, upgrade]
    assert counts == {"http_up": len(plain), "http": len(BODY), "ws_up": len(upgrade), "ws": len(BODY)}


def test_a_rate_shapes_what_the_proxy_carries(origin):
    rate = 600_000  # bytes a second: BODY takes at least half a second
    request = b"GET / HTTP/1.1\r\n\r\n"
    with Wire(origin.server_address[1], rate=rate, latency_s=0.05) as wire:
        start = time.perf_counter()
        assert fetch(wire.port, request) == BODY
        took = time.perf_counter() - start
    assert took >= 0.05 + len(BODY) / rate * 0.95, took  # 5 % for the last chunk sent before its pace ends
