"""The browser's voter cookie: one random id per browser, which the class poll hashes into a voter per class.

A Streamlit session lives in one server process and ends with its websocket; a tab that reconnects (a replica
died, the network blinked) or reloads gets a new one, on whichever replica HAProxy picks, and Streamlit's
frontend re-sends the page's widget states, a quiz answer among them.  Counted under a voter id kept in the
session, that answer would count twice.  So the voter id comes from the browser instead:

* ``VoterCookie``, an ASGI middleware, sets ``gelu_voter`` (``hosting.classpoll.VOTER_COOKIE``, 128 random bits)
  on every page document (a ``text/html`` answer to a GET) whose request did not carry a well-formed one, and
  renews its lifetime (``MAX_AGE_S``) on every later one.  ``HttpOnly`` (no script on the page reads it) and
  ``SameSite=Lax``, path ``/``: the browser sends it with the websocket's upgrade request, which is what
  Streamlit's ``st.context.cookies`` holds, on every reconnect and every replica.
* ``ui.class_poll`` reads it there and votes as ``hosting.classpoll.voter_id(code, cookie)``: the same voter on
  every replica and after every reconnect, another in each class.  A client that sends no cookie (a script, a
  browser that refuses cookies) votes as its session, as before.

The cookie is set by the server, before the first websocket opens: no script of the app's runs for it, and a
tab's first answer already carries it.
"""

from __future__ import annotations

import secrets

from hosting.classpoll import CLASS_TTL_S, KEY_RE, VOTER_COOKIE

MAX_AGE_S = 2 * CLASS_TTL_S  # longer than any class, renewed at every page load


def _cookie(headers) -> str | None:
    """The request's well-formed voter cookie, or None."""
    for key, value in headers:
        if key.lower() != b"cookie":
            continue
        for part in value.decode("latin-1").split(";"):
            name, _, got = part.strip().partition("=")
            if name == VOTER_COOKIE and KEY_RE.fullmatch(got):
                return got
    return None


def set_cookie(value: str) -> bytes:
    """The Set-Cookie header's value for ``value``."""
    return f"{VOTER_COOKIE}={value}; Path=/; Max-Age={MAX_AGE_S}; HttpOnly; SameSite=Lax".encode("latin-1")


class VoterCookie:
    """Pure ASGI middleware: the voter cookie on every page document (no buffering; everything else untouched)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope.get("method") != "GET" or "/_stcore/" in scope.get("path", ""):
            await self.app(scope, receive, send)
            return
        value = _cookie(scope.get("headers") or []) or secrets.token_urlsafe(16)

        async def send_with_cookie(message):
            if message["type"] == "http.response.start":
                headers = message.get("headers") or []
                kind = next((v for k, v in headers if k.lower() == b"content-type"), b"")
                if kind.lower().startswith(b"text/html"):
                    message = {**message, "headers": [*headers, (b"set-cookie", set_cookie(value))]}
            await send(message)

        await self.app(scope, receive, send_with_cookie)
