"""An ASGI middleware in front of Streamlit's routes: what the server must not tell or take from a stranger.

* ``/readyz`` says whether this process can serve a student at once: 200 "ready" once the start-up imports
  are complete (``hosting.warm``), 503 "warming up" before.  Streamlit's own ``/_stcore/health`` answers
  "ok" as soon as its runtime is up, seconds earlier, so a load balancer or Kubernetes that asked it would
  send the first students to a replica still importing torch.
* ``/_stcore/metrics`` answers 404: cache names, hit counts and bytes held for uploads are nobody's business
  on the open internet (Streamlit has no setting to turn the route off).
* The server's absolute path of app.py, which Streamlit sends every new session (``NewSession``), is
  replaced by the script's file name before it leaves the process.
* Uploads cannot be parked: Streamlit keeps every file PUT to ``/_stcore/upload_file/<session>/<file id>``
  in memory until the session ends, for any file id a client makes up.  A session may hold at most
  ``SESSION_FILES`` files and twice the upload cap in bytes (the lab has two uploaders); past that an upload is
  refused (413) before its body is read.
* A script's file path typed as a URL (``/pages/ffn.py``, ``/app.py``), which Streamlit's frontend would try
  to treat as a base path (a blank page, a minute of retries), is redirected to the page itself (``/ffn``); a
  download's ``/media/<id>.py`` (the code export's script) is not.
* A file name longer than ``MAX_NAME`` characters (which Streamlit's form parser refuses with a bare 400, shown
  to the student as "AxiosError") reaches the app shortened, saying so:
  ``aaaa…(name cut from 4,004 characters).npy``; its extension is kept.
"""

from __future__ import annotations

import re
from pathlib import Path

from starlette.responses import PlainTextResponse, RedirectResponse

from hosting import internals

APP_FILE = Path(__file__).resolve().parents[1] / "app.py"
PAGES_DIR = APP_FILE.parent / "pages"
HIDDEN_PATHS = ("/_stcore/metrics",)
READY_PATH = "/readyz"
UPLOAD_PATH = "/_stcore/upload_file/"
SESSION_FILES = 4  # the lab's two uploaders, each with a replacement on its way
MAX_NAME = 255  # characters of an uploaded file's name (most file systems' own limit)
_HEADER_SCAN = 64 * 1024  # bytes of an upload's body searched for its part headers
_NAMES = re.compile(rb'\b(?:file)?name="([^"\r\n]*)"')  # Streamlit's uploader sends the file name as both


def upload_limit_bytes() -> int:
    """Bytes one upload may have: Streamlit's ``server.maxUploadSize`` (MiB)."""
    import streamlit as st

    return int(st.get_option("server.maxUploadSize")) * 2**20


def held_by(session_id: str) -> tuple[int, int]:
    """(files, bytes) Streamlit holds for a session's uploads now."""
    from streamlit.runtime import Runtime

    if not Runtime.exists():
        return 0, 0
    files = list(internals.uploads_by_session(Runtime.instance()).get(session_id, {}).values())
    return len(files), sum(len(f.data) for f in files)


def shortened(name: bytes) -> bytes:
    """A file name cut to fit, saying how long it was, its extension kept.

    >>> shortened(b"a" * 4000 + b".npy")[-40:]
    b'a\\xe2\\x80\\xa6(name cut from 4,004 characters).npy'
    """
    text = name.decode("utf-8", "replace")
    stem, dot, ext = text.rpartition(".")
    if not dot or len(ext) > 16:
        stem, ext = text, ""
    note = f"…(name cut from {len(text):,} characters)"
    keep = MAX_NAME - len(note) - len(ext) - 1
    return (stem[:keep] + note + ("." + ext if ext else "")).encode()


class Guard:
    """Pure ASGI middleware (no response buffering; websockets pass through with one rewrite)."""

    def __init__(self, app, app_file: Path = APP_FILE):
        self.app = app
        self.full_path = str(app_file)
        self.full_path_bytes = self.full_path.encode()
        self.shown_path = app_file.name

    async def __call__(self, scope, receive, send):
        path = scope.get("path", "")
        if scope["type"] == "http" and path.rstrip("/").endswith(READY_PATH):
            from hosting import warm

            ready = warm.ready()
            await PlainTextResponse("ready" if ready else "warming up", status_code=200 if ready else 503)(
                scope, receive, send)
            return
        if scope["type"] == "http" and path.rstrip("/").endswith(HIDDEN_PATHS):
            await PlainTextResponse("Not found", status_code=404)(scope, receive, send)
            return
        if (scope["type"] == "http" and path.rstrip("/").endswith(".py") and "/_stcore/" not in path
                and "/media/" not in path):  # a download named .py (the code export's script) is served as it is
            target = self.page_for_script(path)
            query = scope.get("query_string", b"").decode("latin-1")
            await RedirectResponse(target + (f"?{query}" if query else ""), status_code=308)(scope, receive, send)
            return
        if scope["type"] == "websocket" and path.endswith("/_stcore/stream"):
            await self.app(scope, receive, self._without_server_path(send))
            return
        if scope["type"] == "http" and scope.get("method") == "PUT" and UPLOAD_PATH in path:
            refusal = self._upload_refusal(scope, path)
            if refusal:
                await PlainTextResponse(refusal, status_code=413)(scope, receive, send)
                return
            receive = self._names_cut_to_fit(receive)
        await self.app(scope, receive, send)

    @staticmethod
    def page_for_script(path: str) -> str:
        """The page a script's path names: ``/pages/ffn.py`` -> ``/ffn``; the home page for anything else.

        >>> Guard.page_for_script("/pages/ffn.py"), Guard.page_for_script("/app.py"), Guard.page_for_script("/x.py")
        ('/ffn', '/', '/')
        """
        stem = Path(path.rstrip("/")).stem
        return f"/{stem}" if stem != "home" and (PAGES_DIR / f"{stem}.py").is_file() else "/"

    # ---------------------------------------------------------------- the session path

    def _without_server_path(self, send):
        async def send_message(message):
            data = message.get("bytes")
            if message["type"] == "websocket.send" and data and self.full_path_bytes in data:
                message = {**message, "bytes": self.hide_path(data)}
            await send(message)

        return send_message

    def hide_path(self, data: bytes) -> bytes:
        """A ForwardMsg with the script's absolute path replaced by its file name (NewSession.main_script_path)."""
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        msg = ForwardMsg()
        msg.ParseFromString(data)
        if msg.HasField("new_session") and msg.new_session.main_script_path == self.full_path:
            msg.new_session.main_script_path = self.shown_path
        return msg.SerializeToString()

    # ---------------------------------------------------------------- uploads

    @staticmethod
    def _upload_refusal(scope, path: str) -> str | None:
        """Why this upload must not be kept (a session over its share), or None."""
        parts = path.split(UPLOAD_PATH, 1)[1].split("/")
        if len(parts) < 2:
            return None  # not an upload Streamlit would take; its own handler answers
        files, held = held_by(parts[0])
        headers = dict(scope.get("headers") or [])
        try:
            coming = int(headers.get(b"content-length", b"0"))
        except ValueError:
            coming = 0
        if files >= SESSION_FILES or held + coming > 2 * upload_limit_bytes():
            return "This session already holds its share of uploaded files."
        return None

    @staticmethod
    def _names_cut_to_fit(receive):
        """Pass the body on, with a too-long file name in the first part's headers cut to fit."""
        state = {"scanned": False, "buffer": b""}

        async def receive_message():
            if state["scanned"]:
                return await receive()
            message = await receive()
            if message["type"] != "http.request":
                return message
            state["buffer"] += message.get("body", b"")
            more = message.get("more_body", False)
            end = state["buffer"].find(b"\r\n\r\n")
            if end < 0 and more and len(state["buffer"]) < _HEADER_SCAN:
                return {"type": "http.request", "body": b"", "more_body": True}  # keep reading the headers
            state["scanned"] = True
            body = state["buffer"]
            if end >= 0:
                head, rest = body[:end], body[end:]

                def fit(match: re.Match) -> bytes:
                    name = match.group(1)
                    if len(name.decode("utf-8", "replace")) <= MAX_NAME:
                        return match.group(0)
                    return match.group(0)[: match.start(1) - match.start(0)] + shortened(name) + b'"'

                body = _NAMES.sub(fit, head) + rest
            return {"type": "http.request", "body": body, "more_body": more}

        return receive_message
