"""harness/streamlit_client.py: the light client reads Streamlit's messages and answers as the browser does.

References:
- element messages built by Streamlit itself: a small script run by AppTest (Streamlit's own test runner),
  whose element protos are wrapped in ForwardMsg deltas as the server sends them;
- the frontend's code (streamlit/static, WidgetStateManager): a slider sends double_array_value, a number
  input int_value for DataType INT and double_value for FLOAT; a rerun names the page by `page_name` (its URL
  path) until the server has told it the page's script hash;
- a real `streamlit run` server, with the repository's config, for the last test: the moved value reaches the
  script and the script's error box and exception reach the client.
"""

from __future__ import annotations

import asyncio
import shutil
from dataclasses import replace

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from harness import browser as driver
from harness.streamlit_client import (
    FINISHED_EARLY_FOR_RERUN,
    HttpResponse,
    Run,
    Session,
    _dechunk,
    first_control,
    run_sync,
    summarize,
    texts,
)

SCRIPT = """
import streamlit as st

st.slider("float", -3.0, 3.0, 0.5, 0.25, key="f")
st.slider("range", -12.0, 12.0, (-6.0, 6.0), 0.5, key="r")
st.number_input("int", 1, 1600, 768, 1, key="i")
st.number_input("float number", -10.0, 10.0, 1.0, 0.1, key="n")
st.error("an error box")
st.warning("only a warning")
st.exception(RuntimeError("boom"))
st.markdown("a readout")
"""


@pytest.fixture(scope="module")
def protos(tmp_path_factory):
    """Element protos of SCRIPT as Streamlit builds them (AppTest runs it)."""
    from streamlit.testing.v1 import AppTest

    script = tmp_path_factory.mktemp("client") / "script.py"
    script.write_text(SCRIPT)
    at = AppTest.from_file(str(script)).run()
    return {
        "float": at.slider[0].proto, "range": at.slider[1].proto, "int": at.number_input[0].proto,
        "number": at.number_input[1].proto, "error": at.error[0].proto, "warning": at.warning[0].proto,
        "exception": at.exception[0].proto, "markdown": at.markdown[0].proto,
    }  # fmt: skip


def delta(field: str, proto, path: list[int], *, cacheable: bool = False, hash_: str = "") -> ForwardMsg:
    msg = ForwardMsg(hash=hash_)
    msg.metadata.delta_path[:] = path
    msg.metadata.cacheable = cacheable
    getattr(msg.delta.new_element, field).CopyFrom(proto)
    return msg


def test_controls_are_read_from_streamlits_own_protos(protos):
    c = summarize(delta("slider", protos["float"], [0, 0])).control
    assert (c.kind, c.label, c.value, c.min, c.max, c.step) == ("slider", "float", (0.5,), -3, 3, 0.25)
    assert c.query_param_key == ""  # not bound: nothing goes into the URL
    r = summarize(delta("slider", protos["range"], [0, 1])).control
    assert r.value == (-6.0, 6.0) and r.default == (-6.0, 6.0)
    i = summarize(delta("number_input", protos["int"], [0, 2])).control
    assert (i.value, i.min, i.max, i.step, i.integer) == ((768.0,), 1, 1600, 1, True)
    n = summarize(delta("number_input", protos["number"], [0, 3])).control
    assert (n.value, n.integer) == ((1.0,), False)


def test_exceptions_and_error_boxes_are_trouble_and_nothing_else_is(protos):
    assert summarize(delta("exception", protos["exception"], [0, 0])).trouble.startswith("RuntimeError: boom")
    assert summarize(delta("alert", protos["error"], [0, 1])).trouble == "an error box"
    for field, name in (("alert", "warning"), ("markdown", "markdown"), ("slider", "float")):
        assert summarize(delta(field, protos[name], [0, 2])).trouble is None, name


def test_the_first_control_is_the_first_slider_of_the_main_area_in_drawing_order(protos):
    def seen(field, name, path):
        return tuple(path), summarize(delta(field, protos[name], path))

    elements = dict([
        seen("number_input", "int", [0, 1]),  # a number input drawn before any slider
        seen("slider", "range", [0, 10]),
        seen("slider", "float", [0, 2, 1, 0]),  # inside columns, drawn before [0, 10]
        seen("slider", "float", [1, 0]),  # the sidebar's
    ])  # fmt: skip
    assert first_control(elements).label == "float"
    del elements[(0, 2, 1, 0)]
    assert first_control(elements).label == "range"
    elements = {k: v for k, v in elements.items() if v.kind != "slider" or k[0] == 1}
    assert first_control(elements).label == "int"  # no slider in the main area: the number input


def test_a_step_is_what_the_arrow_key_does(protos):
    c = summarize(delta("slider", protos["float"], [0, 0])).control
    assert c.stepped() == (0.75,) and c.stepped(-1) == (0.25,)
    top = replace(c, value=(3.0,))
    assert top.stepped() == (2.75,)  # at the end it turns back
    r = summarize(delta("slider", protos["range"], [0, 1])).control
    assert r.stepped() == (-5.5, 6.0)  # the lower thumb
    touching = replace(r, value=(6.0, 6.0))
    assert touching.stepped() == (5.5, 6.0)  # never past the upper thumb
    tenth = replace(r, value=(0.2,), step=0.1, max=1.0)
    assert tenth.stepped() == (0.3,)  # 0.30000000000000004 would be a new URL value
    i = summarize(delta("number_input", protos["int"], [0, 2])).control
    assert i.stepped() == (769.0,)


def test_widget_states_are_those_the_frontend_sends(protos):
    c = summarize(delta("slider", protos["float"], [0, 0])).control
    state = c.state((0.75,))
    assert state.id == protos["float"].id and state.WhichOneof("value") == "double_array_value"
    assert list(state.double_array_value.data) == [0.75]
    i = summarize(delta("number_input", protos["int"], [0, 2])).control.state((769.0,))
    assert i.WhichOneof("value") == "int_value" and i.int_value == 769
    n = summarize(delta("number_input", protos["number"], [0, 3])).control.state((1.1,))
    assert n.WhichOneof("value") == "double_value" and n.double_value == 1.1


def test_the_url_gets_a_bound_value_as_the_address_bar_does(protos):
    r = summarize(delta("slider", protos["range"], [0, 1])).control
    r = replace(r, query_param_key="approximations_range")
    assert r.url_query("a=1", (-5.5, 6.0)) == "a=1&approximations_range=-5.5&approximations_range=6"
    # the default is left out
    assert r.url_query("approximations_range=-5.5&approximations_range=6&a=1", (-6.0, 6.0)) == "a=1"


def test_a_run_ends_at_the_finish_that_is_not_cut_short_and_cached_trouble_counts(protos):
    session = Session("http://127.0.0.1:1", "curves")
    first = session.rerun_message().rerun_script
    assert first.page_name == "curves" and not first.page_script_hash

    run = session._pending = Run(sent_at=0.0)
    new_session = ForwardMsg()
    new_session.new_session.page_script_hash = "abc"
    new_session.new_session.initialize.session_id = "s1"
    session.handle(new_session)
    session.handle(delta("exception", protos["exception"], [0, 0], cacheable=True, hash_="h1"))
    session.handle(delta("slider", protos["float"], [0, 1]))
    finished = ForwardMsg(script_finished=FINISHED_EARLY_FOR_RERUN)
    session.handle(finished)
    assert run.finished_at is None, "a run cut short for a rerun is not the end"
    session.handle(ForwardMsg(script_finished=0))
    assert run.finished_at is not None and run.status == 0 and len(run.troubles) == 1

    again = session.rerun_message([session.control().state((0.75,))]).rerun_script
    assert again.page_script_hash == "abc" and not again.page_name
    assert list(again.cached_message_hashes) == ["h1"]
    assert again.widget_states.widgets[0].double_array_value.data[0] == 0.75

    session._pending = Run(sent_at=0.0)
    session.handle(new_session)  # the next run starts from a blank page
    assert not session.elements
    ref = ForwardMsg(ref_hash="h1")
    ref.metadata.delta_path[:] = [0, 0]
    session.handle(ref)  # the server sends a reference to the cached exception, not the element
    assert len(session.troubles) == 2


def test_small_http_pieces():
    assert _dechunk(b"5\r\nhello\r\n1\r\n!\r\n0\r\n\r\n") == b"hello!"
    response = HttpResponse(200, [("Set-Cookie", "a=1; Path=/"), ("set-cookie", "GELUSRV=app2; path=/")], b"")
    assert response.set_cookies() == {"a": "1", "GELUSRV": "app2"}


LIVE_APP = """import streamlit as st

x = st.slider("x", 0.0, 1.0, 0.0, 0.1, key="x", bind="query-params")
n = st.number_input("n", 0, 10, 3, 1, key="n")
st.markdown(f"x = {x:.1f}, n = {n}")
if x > 0.15:
    st.error("x is past 0.15")
if x > 0.25:
    raise RuntimeError("past 0.25")
"""


def test_against_a_real_server(tmp_path):
    shutil.copytree(driver.ROOT / ".streamlit", tmp_path / ".streamlit")
    (tmp_path / "app.py").write_text(LIVE_APP)

    async def student(base_url):
        async with Session(base_url, "", "x=0.0", timeout_s=60) as s:
            await s.run()
            seen = [(texts(s.elements), list(s.troubles))]
            number = next(e.control for e in s.elements.values() if e.kind == "number_input")
            await s.run([number.state((4.0,))])  # as the browser sends an int number input
            seen.append((texts(s.elements), list(s.troubles)))
            for _ in range(3):
                await s.move()
                seen.append((texts(s.elements), list(s.troubles)))
            return s, seen

    with driver.Server(tmp_path) as server:
        s, seen = run_sync(student(server.base_url))
    assert "_streamlit_xsrf" in s.cookies and s.session_id
    assert seen[0] == (["x = 0.0, n = 3"], [])
    assert seen[1] == (["x = 0.0, n = 4"], [])
    assert seen[2] == (["x = 0.1, n = 4"], [])
    assert seen[3] == (["x = 0.2, n = 4"], ["x is past 0.15"])
    texts_now, troubles = seen[4]
    assert texts_now == ["x = 0.3, n = 4"] and len(troubles) == 3 and troubles[:2] == ["x is past 0.15"] * 2
    assert "past 0.25" not in troubles[2]  # showErrorDetails = "none": the message stays on the server
    assert (s.error_boxes, s.exceptions) == (2, 1)
    assert s.query_string == "x=0.3"
    assert all(r.finished_at is not None for r in s.runs) and len(s.runs) == 5


FRAGMENT_APP = """
import streamlit as st

st.session_state.full_runs = st.session_state.get("full_runs", 0) + 1
st.markdown(f"full runs {st.session_state.full_runs}")


@st.fragment
def part():
    x = st.slider("x", 0.0, 1.0, 0.0, 0.1, key="x")
    st.markdown(f"x = {x:.1f}")


part()
"""


def test_a_control_in_a_fragment_reruns_its_fragment_alone(tmp_path):
    """As the frontend does: a widget drawn by an st.fragment (Delta.fragment_id) asks for a rerun of that fragment
    (ClientState.fragment_id), and a fragment's run (its new_session names the fragment) redraws only its part."""
    shutil.copytree(driver.ROOT / ".streamlit", tmp_path / ".streamlit")
    (tmp_path / "app.py").write_text(FRAGMENT_APP)

    async def student(base_url):
        async with Session(base_url, timeout_s=60) as s:
            await s.run()
            seen = [texts(s.elements)]
            for _ in range(2):
                await s.move()
                seen.append(texts(s.elements))
            return s, seen

    with driver.Server(tmp_path) as server:
        s, seen = run_sync(student(server.base_url))
    assert s.control().fragment_id
    assert seen == [["full runs 1", "x = 0.0"], ["full runs 1", "x = 0.1"], ["full runs 1", "x = 0.2"]]


def test_run_sync_works_where_an_event_loop_already_runs():
    """The browser tests' session fixture keeps Playwright's event loop running in pytest's thread; asyncio.run
    there raises RuntimeError, run_sync does not."""

    async def answer():
        return 42

    async def inside_a_running_loop():
        refused = answer()
        with pytest.raises(RuntimeError):
            asyncio.run(refused)  # what failed in a full `python -m pytest`
        refused.close()
        return run_sync(answer())

    assert run_sync(inside_a_running_loop()) == 42
