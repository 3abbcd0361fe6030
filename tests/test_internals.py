"""Every private internal the app's Python relies on lives in hosting/internals.py, was read in the versions it
names, and is still there: an upgrade that moves one fails here, naming it, instead of in a student's page.

References: the installed packages' versions and their source (inspect, ast) read in the test; the app's own
files' syntax trees (no other module reaches a private name of Streamlit, asyncio, torch or glibc); a real
QueryParams and a real AppTest run for the URL functions.  The browser's counterpart, draw/plotly_private.js, is
checked in a real Chromium by tests/e2e/test_plotly_private.py.
"""

from __future__ import annotations

import ast
import inspect
import platform
import re
from pathlib import Path

import pytest
import streamlit

from hosting import internals

ROOT = Path(__file__).resolve().parents[1]
APP_CODE = ("app.py", "pages", "draw", "ui", "hosting", "gelu_core")
PRIVATE_ROOTS = ("streamlit", "asyncio", "torch", "ctypes")  # whose private names the app may reach only here


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", version)[:2])


def test_the_versions_are_the_ones_it_was_read_in():
    """A new release of any of them: read each use in hosting/internals.py again, then update CHECKED."""
    now = {"streamlit": streamlit.__version__, "python": platform.python_version(),
           "glibc": platform.libc_ver()[1] or internals.CHECKED["glibc"]}
    changed = {name: f"{internals.CHECKED[name]} -> {now[name]}" for name in internals.CHECKED
               if _release(now[name]) != _release(internals.CHECKED[name])}
    assert not changed, f"hosting/internals.py was read in other versions: {changed}; re-read each use there"


def test_streamlits_private_names_are_still_there():
    from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.runtime.runtime import Runtime
    from streamlit.runtime.session_manager import SessionManager
    from streamlit.runtime.state.query_params import QueryParams

    query = QueryParams()
    assert isinstance(query._initial_query_params, dict), "QueryParams._initial_query_params"
    for method in ("remove_param", "set_with_no_forward_msg", "has_param", "get_all"):
        assert callable(getattr(query, method, None)), f"QueryParams.{method}"
    assert hasattr(PagesManager, "uses_pages_directory"), "PagesManager.uses_pages_directory"
    assert "self._session_mgr" in inspect.getsource(Runtime.__init__), "Runtime._session_mgr"
    for method in ("list_active_sessions", "close_session"):
        assert callable(getattr(SessionManager, method, None)), f"SessionManager.{method}"
    assert "self.file_storage" in inspect.getsource(MemoryUploadedFileManager.__init__), "file_storage"
    from streamlit.delta_generator import DeltaGenerator
    from streamlit.elements import plotly_chart
    from streamlit.runtime.scriptrunner_utils.script_run_context import ScriptRunContext

    for name in ("_plotly_data", "_resolve_content_height"):
        assert callable(getattr(plotly_chart, name, None)), f"streamlit.elements.plotly_chart.{name}"
    assert callable(getattr(DeltaGenerator, "_enqueue", None)), "DeltaGenerator._enqueue"
    assert "fragment_ids_this_run" in ScriptRunContext.__dataclass_fields__, "ScriptRunContext.fragment_ids_this_run"
    assert hasattr(streamlit, "_main"), "st._main"
    from streamlit.navigation.page import StreamlitPage
    from streamlit.runtime.app_session import AppSession
    from streamlit.runtime.scriptrunner_utils.script_run_context import FragmentThreadState, ThreadState

    assert callable(getattr(ThreadState, "get", None)), "ThreadState.get"
    assert "fragment_id" in FragmentThreadState.__dataclass_fields__, "FragmentThreadState.fragment_id"
    assert "self._can_be_called" in inspect.getsource(StreamlitPage.run), "StreamlitPage._can_be_called"
    handler = inspect.signature(AppSession._handle_scriptrunner_event_on_event_loop)
    own = internals.streamlit_on_event(AppSession)  # a server's start-up in this process may have replaced it
    assert inspect.signature(own) == handler, "AppSession._on_scriptrunner_event"
    assert "self._scriptrunner.on_event.connect(self._on_scriptrunner_event)" in inspect.getsource(AppSession), \
        "AppSession connects _on_scriptrunner_event"
    assert callable(getattr(AppSession, "_call_soon_on_event_loop", None)), "AppSession._call_soon_on_event_loop"


def test_asyncios_and_glibcs_are_still_there():
    from asyncio import base_events

    assert callable(getattr(base_events, "_set_nodelay", None)), "asyncio.base_events._set_nodelay"
    if platform.libc_ver()[0] == "glibc":
        for name in ("mallopt", "malloc_trim", "mallinfo2"):
            assert internals.LIBC is not None and hasattr(internals.LIBC, name), f"glibc's {name}"


def test_a_dropped_url_value_no_longer_seeds_its_widget():
    """A real run: a slider bound to the URL, its value dropped before the widget reads it, shows its default."""
    from streamlit.testing.v1 import AppTest

    def script():
        import streamlit as st

        from hosting import internals

        internals.rename_url_values({"old_x": "x"})
        if st.query_params.get("drop") == "yes":
            internals.drop_url_values(["x"])
        st.slider("x", 0, 10, 3, key="x", bind="query-params")

    for query, shown in (({"x": "7"}, 7), ({"x": "7", "drop": "yes"}, 3), ({"old_x": "8"}, 8)):
        at = AppTest.from_function(script)
        for key, value in query.items():
            at.query_params[key] = value
        at.run()
        assert not at.exception and at.slider(key="x").value == shown, (query, at.slider(key="x").value)


class _Session:
    """What ``install_batched_events`` uses of an AppSession: the loop's callbacks queued (run by the test, as the
    event loop would) and the events handled."""

    def __init__(self, fail_on=None):
        self.scheduled, self.handled, self.fail_on = [], [], fail_on

    def _call_soon_on_event_loop(self, callback):
        self.scheduled.append(callback)

    def _handle_scriptrunner_event_on_event_loop(self, sender, event, **fields):
        if event == self.fail_on:
            raise RuntimeError("this one fails")
        self.handled.append((sender, event, fields))


def test_a_burst_of_run_events_wakes_the_loop_once_and_each_is_handled_in_order(monkeypatch):
    """Reference: the events as a run's thread sends them, one by one (Streamlit's own hand-over schedules one
    loop callback for each: five here, where the burst schedules one)."""
    from streamlit.runtime.app_session import AppSession

    monkeypatch.setattr(AppSession, "_on_scriptrunner_event", AppSession._on_scriptrunner_event)  # put back after
    internals.install_batched_events()
    session = _Session()
    sent = [("runner", f"event {i}", {"forward_msg": f"message {i}"} if i % 2 else {}) for i in range(5)]
    for sender, event, fields in sent:
        AppSession._on_scriptrunner_event(session, sender, event, **fields)
    assert len(session.scheduled) == 1 and session.handled == []
    session.scheduled.pop()()  # the loop runs its callback
    assert session.handled == sent
    AppSession._on_scriptrunner_event(session, "runner", "later")  # the queue was emptied: the loop is woken again
    assert len(session.scheduled) == 1
    session.scheduled.pop()()
    assert session.handled[-1] == ("runner", "later", {})


def test_an_event_whose_handling_fails_leaves_the_others_of_its_burst_handled(monkeypatch, caplog):
    from streamlit.runtime.app_session import AppSession

    monkeypatch.setattr(AppSession, "_on_scriptrunner_event", AppSession._on_scriptrunner_event)
    internals.install_batched_events()
    session = _Session(fail_on="bad")
    for event in ("first", "bad", "last"):
        AppSession._on_scriptrunner_event(session, "runner", event)
    session.scheduled.pop()()
    assert [event for _, event, _ in session.handled] == ["first", "last"]
    assert "script-run event failed" in caplog.text


def _private_reaches(source: str) -> list[str]:
    """Attributes with a leading underscore read off the libraries above, or modules of theirs imported by a
    private name, in one source file's text."""
    tree = ast.parse(source)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in PRIVATE_ROOTS:
            names = [node.module, *(alias.name for alias in node.names)]
            found += [f"import {n}" for n in names if any(p.startswith("_") for p in n.split("."))]
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            chain = ast.unparse(node.value)
            if chain.split(".")[0] in (*PRIVATE_ROOTS, "st", "dg", "ctx", "query", "runtime", "base_events",
                                       "PagesManager", "LIBC"):
                found.append(f"{chain}.{node.attr}")
    return found


def test_the_checker_finds_a_private_reach():
    sample = ("from asyncio import base_events\nfrom torch._C import _nn\nimport streamlit as st\n"
              "def f(query, runtime):\n    query._initial_query_params.pop('x')\n"
              "    return runtime._session_mgr, base_events._set_nodelay, torch._C._nn.gelu, st.query_params\n")
    assert sorted(_private_reaches(sample)) == ["base_events._set_nodelay", "import _nn", "import torch._C",
                                               "query._initial_query_params", "runtime._session_mgr", "torch._C",
                                               "torch._C._nn"]


@pytest.mark.parametrize("path", sorted(p for top in APP_CODE for p in (
    [ROOT / top] if top.endswith(".py") else (ROOT / top).rglob("*.py"))), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_other_file_reaches_a_private_internal(path):
    if path == ROOT / "hosting" / "internals.py":
        return
    found = _private_reaches(path.read_text(encoding="utf-8"))
    assert found == [], f"{path.relative_to(ROOT)}: move {found} into hosting/internals.py"
