"""An ASGI middleware in front of Streamlit's routes: what the server must not tell or take from a stranger.

* ``/_stcore/metrics`` answers 404: cache names, hit counts and bytes held for uploads are nobody's business
  on the open internet (Streamlit has no setting to turn the route off).
* The server's absolute path of app.py, which Streamlit sends every new session (``NewSession``), is
  replaced by the script's file name before it leaves the process.
"""

from __future__ import annotations

from pathlib import Path

from starlette.responses import PlainTextResponse

APP_FILE = Path(__file__).resolve().parents[1] / "app.py"
HIDDEN_PATHS = ("/_stcore/metrics",)


class Guard:
    """Pure ASGI middleware (no response buffering, websockets pass through with one rewrite)."""

    def __init__(self, app, app_file: Path = APP_FILE):
        self.app = app
        self.full_path = str(app_file)
        self.full_path_bytes = self.full_path.encode()
        self.shown_path = app_file.name

    async def __call__(self, scope, receive, send):
        path = scope.get("path", "")
        if scope["type"] == "http" and path.rstrip("/").endswith(HIDDEN_PATHS):
            await PlainTextResponse("Not found", status_code=404)(scope, receive, send)
            return
        if scope["type"] == "websocket" and path.endswith("/_stcore/stream"):
            await self.app(scope, receive, self._without_server_path(send))
            return
        await self.app(scope, receive, send)

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
