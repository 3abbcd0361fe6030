"""Every reliance of the app's Python on a library's private internals, in this one file.

Each is here because no public API does the job in the version named beside it (``CHECKED``);
tests/test_internals.py fails, naming the one that moved, when an upgrade changes it.  Public APIs are used
everywhere else (``st.query_params``, ``st.context``, ``st.get_option``, ``st.App``'s lifespan).  The browser's
counterpart is draw/plotly_private.js.

* Streamlit: a bound widget is seeded from the URL the session was opened with (``QueryParams._initial_query_params``)
  and nothing public retracts a value before the widget reads it (``drop_url_values``, ``rename_url_values``); the
  session a run belongs to (``session_id``); the legacy ``pages/``-folder mode that a folder named ``pages`` beside
  app.py switches on (``leave_pages_directory_mode``); the sessions still connected and closing a departed one
  (``Runtime._session_mgr``), and the uploads each session holds (``uploaded_file_mgr.file_storage``); whether
  the fragment running now reruns alone (``rerun_alone``: the run's fragments and the current one); the page
  ``st.navigation`` returned, run again by a fragment's rerun (``run_page``: ``Page._can_be_called``); a script
  run's messages handed to the event loop a burst at a time (``install_batched_events``:
  ``AppSession._on_scriptrunner_event``); and a Plotly chart's element sent from its plain spec the way
  ``st.plotly_chart`` sends it, without writing the figure through plotly's encoder twice
  (``plotly_chart_of_spec``: Streamlit's element helpers and ``DeltaGenerator._enqueue``).
* asyncio: TCP_NODELAY on accepted connections (``base_events._set_nodelay``, ``install_nodelay``).
* glibc: the allocator's mmap threshold and giving freed heap pages back (``mallopt``, ``malloc_trim``).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import logging
import socket
import threading
from collections.abc import Iterable, Mapping

CHECKED = {"streamlit": "1.67.0", "python": "3.11", "glibc": "2.36"}  # the versions each use below was read in


# ------------------------------------------------------------------ Streamlit: the URL a widget is seeded from

def _query_params():
    """The running script's query parameters as Streamlit holds them (a context manager), or None outside a run."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return None if ctx is None else ctx.session_state.query_params()


def drop_url_values(keys: Iterable[str]) -> None:
    """Remove parameters from the session's URL (and the browser's address bar) before any widget reads them."""
    params = _query_params()
    if params is None:
        return
    with params as query:
        for key in keys:
            query.remove_param(key)  # also tells the browser to drop it from the address bar
            query._initial_query_params.pop(key, None)


def rename_url_values(renamed: Mapping[str, str]) -> None:
    """An old link's parameters under their new names, before any widget reads them; where a link holds both names,
    the new one's values stand."""
    params = _query_params()
    if params is None:
        return
    with params as query:
        for old, new in renamed.items():
            if not query.has_param(old):
                continue
            if not query.has_param(new):
                values = query.get_all(old)
                query.set_with_no_forward_msg(new, values)
                query._initial_query_params[new] = values
            query.remove_param(old)  # tells the browser the address with the new key
            query._initial_query_params.pop(old, None)


def session_id() -> str | None:
    """The id of the session whose script is running on this thread; None outside a script run."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return ctx.session_id if ctx else None


def rerun_alone() -> bool:
    """True while the fragment running now reruns alone: it was asked for itself (a widget of its own, its timer),
    so nothing around it is drawn in this run.  False in a full run, and in a fragment that the rerun of a fragment
    around it draws (a page's part while the page reruns: draw/lesson.py's ``page_body``)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx
    from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState

    ctx = get_script_run_ctx()
    return bool(ctx is not None and ctx.fragment_ids_this_run
                and ThreadState.get().fragment_id in ctx.fragment_ids_this_run)


def run_page(page, again: bool) -> None:
    """Run the page ``st.navigation`` returned (``page.run()``); ``again`` in a fragment's rerun of the run that
    returned it, where Streamlit's once-a-run guard (``Page._can_be_called``) would refuse it."""
    if again:
        page._can_be_called = True
    page.run()


# ------------------------------------------------------------------ Streamlit: a chart's element from its spec

def plotly_chart_of_spec(spec: dict, key: str, config: dict) -> bool:
    """Draw a figure's plain spec (``ui.theme.plain_spec``) as ``st.plotly_chart(fig, theme="streamlit", key=key,
    config=config)`` draws the figure: the same element (tests/test_page_furniture.py holds the two equal), its
    JSON written once here from the dicts it is made of, where st.plotly_chart copies the whole figure and writes
    it through plotly's encoder twice.  False, drawing nothing, when the spec is not strict JSON (a NaN outside a
    typed array, a numpy scalar): st.plotly_chart draws that one."""
    import json

    try:
        text = json.dumps(spec, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError):
        return False
    import streamlit as st
    from streamlit.elements.lib import agent_spec
    from streamlit.elements.lib.form_utils import current_form_id
    from streamlit.elements.lib.layout_utils import LayoutConfig
    from streamlit.elements.lib.utils import compute_and_register_element_id
    from streamlit.elements.plotly_chart import _plotly_data, _resolve_content_height
    from streamlit.proto.PlotlyChart_pb2 import PlotlyChart

    dg = st._main
    proto = PlotlyChart()
    proto.theme = "streamlit"
    proto.form_id = current_form_id(dg)
    proto.spec = text
    proto.config = json.dumps(config)
    proto.id = compute_and_register_element_id(
        "plotly_chart", user_key=key, key_as_main_identity=False, dg=dg, plotly_spec=proto.spec,
        plotly_config=proto.config, selection_mode=("points", "box", "lasso"), is_selection_activated=False,
        theme="streamlit", width="stretch", height="content", alt=None)
    dg._enqueue("plotly_chart", proto, layout_config=LayoutConfig(width="stretch", height=_resolve_content_height(
        "content", spec)), agent_props=agent_spec.element("plotly_chart", key=key,
                                                          data_builder=lambda: _plotly_data(text), alt=None))
    return True


# ------------------------------------------------------------------ Streamlit: the pages/ folder's legacy mode

def in_pages_directory_mode() -> bool:
    """True while Streamlit would run a deep link's page on its own (no app.py, no frame)."""
    from streamlit.runtime.pages_manager import PagesManager

    return bool(PagesManager.uses_pages_directory)


def leave_pages_directory_mode() -> None:
    """Every page runs through app.py's st.navigation: the legacy mode off for the whole process."""
    from streamlit.runtime.pages_manager import PagesManager

    PagesManager.uses_pages_directory = False


# ------------------------------------------------------------------ Streamlit: sessions and their uploads

def active_session_ids(runtime) -> set[str]:
    """The ids of the sessions that still have a websocket."""
    return {info.session.id for info in runtime._session_mgr.list_active_sessions()}


def close_session(runtime, session_id: str) -> None:
    """Close a session now: its state, its downloads, its last run."""
    runtime._session_mgr.close_session(session_id)


def uploads_by_session(runtime) -> Mapping[str, Mapping[str, object]]:
    """session id -> file id -> uploaded file (``.data``: its bytes), as Streamlit holds them in memory."""
    return getattr(runtime.uploaded_file_mgr, "file_storage", {})


# ------------------------------------------------------------------ asyncio: small writes leave at once

def _set_nodelay(sock: socket.socket) -> None:
    if sock.family in {socket.AF_INET, socket.AF_INET6} and sock.type == socket.SOCK_STREAM:
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:  # a socket that is already closed
            pass


def install_nodelay() -> None:
    """Every TCP connection asyncio wraps from now on gets TCP_NODELAY, whatever protocol number it reports.

    asyncio turns Nagle's algorithm off for each TCP connection it wraps, but only when the socket says its protocol
    is TCP.  Streamlit binds its listening socket as ``socket.socket(family)``, protocol 0, so every accepted
    connection says 0 and keeps Nagle on: a response written in two pieces (headers, then body) then waits for the
    browser's delayed ACK, about 40 ms.  Runs at start-up, before the first connection is accepted.
    """
    from asyncio import base_events

    base_events._set_nodelay = _set_nodelay


# ------------------------------------------------------------------ Streamlit: a run's messages to the event loop

class _Events:
    """A session's script-run events waiting for the event loop, in order."""

    def __init__(self):
        self.lock = threading.Lock()
        self.waiting: list[tuple] = []

    def put(self, event: tuple) -> bool:
        """Add ``event``; True where none was waiting, so the loop must be woken to take them."""
        with self.lock:
            self.waiting.append(event)
            return len(self.waiting) == 1

    def take(self) -> list[tuple]:
        with self.lock:
            taken, self.waiting = self.waiting, []
            return taken


def install_batched_events() -> None:
    """Every session hands its script runs' events to the event loop a burst at a time.

    Streamlit hands each event (every element a run draws is one) to the event loop by itself, with
    ``call_soon_threadsafe``: one write to the loop's self-pipe and one wakeup of the loop a message, each a hand-over
    of the GIL between the run's thread and the loop's.  Here a run's thread puts its events in the session's queue
    and wakes the loop only when the queue was empty; the loop then takes every event queued meanwhile, in order,
    and handles each as Streamlit does (``_handle_scriptrunner_event_on_event_loop``).  What the loop does with an
    event, and the order of everything it is handed, stay as they were.  Runs at start-up, before any session."""
    from streamlit.runtime.app_session import AppSession

    def on_event(self, sender, event, **fields) -> None:
        events = self.__dict__.get("_gelu_events") or self.__dict__.setdefault("_gelu_events", _Events())
        if events.put((sender, event, fields)):
            self._call_soon_on_event_loop(lambda: _handle_all(self, events.take()))

    on_event.streamlit = streamlit_on_event(AppSession)  # Streamlit's own, for tests/test_internals.py
    AppSession._on_scriptrunner_event = on_event


def streamlit_on_event(app_session: type):
    """Streamlit's own ``AppSession._on_scriptrunner_event``, whether or not ``install_batched_events`` ran."""
    current = app_session._on_scriptrunner_event
    return getattr(current, "streamlit", current)


def _handle_all(session, events: list[tuple]) -> None:
    for sender, event, fields in events:
        try:
            session._handle_scriptrunner_event_on_event_loop(sender, event, **fields)
        except Exception:  # one event's failure, as asyncio reports a failed callback: the others still go
            logging.getLogger(__name__).exception("Streamlit's handling of a script-run event failed")


# ------------------------------------------------------------------ glibc: the allocator

def _libc():
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None


LIBC = _libc()
M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter number


def set_mmap_threshold(size: int) -> bool:
    """glibc serves blocks of ``size`` bytes and more from mmap, and stops raising that threshold; True where glibc
    took it (elsewhere nothing changes)."""
    mallopt = getattr(LIBC, "mallopt", None)
    return bool(mallopt and mallopt(M_MMAP_THRESHOLD, size))


def release_memory() -> None:
    """Collect cycles, and hand freed heap pages back to the system (glibc's malloc_trim; elsewhere it only
    collects)."""
    gc.collect()
    trim = getattr(LIBC, "malloc_trim", None)
    if trim is not None:
        trim(0)
