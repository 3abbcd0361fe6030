"""The harness itself: its count of finished script runs reads Streamlit's messages right.

Reference: ForwardMsg messages built and serialised by Streamlit's own protobuf classes, fed to the
counter's parser in Chromium; the expected answer is the status each message was built with.
"""

from __future__ import annotations

import pytest

from harness import browser as driver

pytestmark = pytest.mark.e2e


def forward_msgs():
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    status = ForwardMsg.ScriptFinishedStatus
    cases = []
    for name, value in status.items():
        msg = ForwardMsg()
        msg.metadata.delta_path[:] = [0, 1]
        msg.script_finished = value
        cases.append((f"script_finished={name}", msg, value != status.Value("FINISHED_EARLY_FOR_RERUN")))
    delta = ForwardMsg(hash="h" * 32)
    delta.metadata.delta_path[:] = [0, 300]
    delta.delta.new_element.markdown.body = "x" * 300  # lengths over 127 take two varint bytes
    cases.append(("delta", delta, False))
    status_msg = ForwardMsg()
    status_msg.session_status_changed.script_is_running = True
    cases.append(("session_status_changed", status_msg, False))
    return cases


def test_the_run_counter_reads_forward_msgs(browser):
    js = driver.RUN_COUNTER_JS
    parser = js[js.index("const finishedRun") : js.index("const Native")]
    page = browser.new_page()
    try:
        for name, msg, finished in forward_msgs():
            data = list(msg.SerializeToString())
            got = page.evaluate("(bytes) => { " + parser + " return finishedRun(new Uint8Array(bytes).buffer); }", data)
            assert got is finished, name
    finally:
        page.close()
