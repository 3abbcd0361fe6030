"""Small writes leave at once: TCP_NODELAY on every connection the server accepts.

asyncio turns Nagle's algorithm off for each TCP connection it wraps, but only when the socket says its
protocol is TCP.  Streamlit binds its listening socket itself as ``socket.socket(family)``, protocol 0, so
every accepted connection says 0 and keeps Nagle on.  A response written in two pieces (headers, then body)
then waits for the browser's delayed ACK, about 40 ms: each of the ~120 requests of a page load on a kept-alive
connection took 42-48 ms instead of 1-2, and a script run's many small websocket messages queued the same way.
``install()`` widens asyncio's check to every stream socket of the internet families; it runs at start-up,
before the first connection is accepted.
"""

from __future__ import annotations

import socket
from asyncio import base_events


def _set_nodelay(sock: socket.socket) -> None:
    if sock.family in {socket.AF_INET, socket.AF_INET6} and sock.type == socket.SOCK_STREAM:
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:  # a socket that is already closed
            pass


def install() -> None:
    """Every TCP connection asyncio wraps from now on gets TCP_NODELAY, whatever protocol number it reports."""
    base_events._set_nodelay = _set_nodelay
