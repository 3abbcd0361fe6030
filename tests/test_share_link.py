"""Every view can be shared: its URL brings it back exactly, and the sidebar copies that URL.

Every bound control writes its value into the address bar (Streamlit's ``bind="query-params"``) and the
sidebar's "Copy link" copies the address bar itself, so a shared link is the page's URL.  What is tested here,
without a browser: a fresh session opened with the URL that a set of moves writes shows the same widget values
and the very same charts as the session that made the moves.  The reference for "the URL that a set of moves
writes" is ``url_values`` below, a model of the strings Streamlit's frontend writes (floats as "1.5", whole
floats as "2", lists as repeated keys, options as shown, booleans in lower case); ``tests/e2e/test_pages.py``
holds that model to a real browser's address bar.

A note on the ``pages/`` folder: because a folder named ``pages`` sits next to app.py, Streamlit starts every
AppTest run in its old multipage mode, which runs a page file directly, without app.py around it (no sidebar,
no page config), until some session has run ``st.navigation``.  Every page calls
``draw.frame.require_app_frame()`` first, which clears that mode and reruns through app.py;
``test_first_visit_runs_the_frame`` holds that for every page, cold.
"""

from __future__ import annotations

import math

import pytest

from tests.conftest import ROOT, chart_spec, show_me
from ui import pages as table
from ui.controls import Control

PAGES = {p.url_path: None if p.default else p.file for p in table.PAGES.values()}


def url_values(control: Control, value) -> list[str]:
    """The URL values Streamlit writes for ``value`` ([] for the default, which it leaves out)."""
    def one(v) -> str:
        if isinstance(v, bool):
            return str(v).lower()
        if isinstance(v, float):
            return str(int(v)) if math.isfinite(v) and v == int(v) else repr(v)
        if isinstance(v, int):
            return str(v)
        return control.options.get("format_func", str)(v)

    default = list(control.default) if isinstance(control.default, (list, tuple)) else control.default
    current = list(value) if isinstance(value, (list, tuple)) else value
    if current == default:
        return []
    return [one(v) for v in current] if isinstance(current, list) else [one(current)]


def new_app(query: dict[str, list[str]] | None = None, page: str | None = None):
    """A fresh session opened from a link: query parameters set before the first run, then the page."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    if page is not None:
        at.switch_page(page)
    return at.run()


def widget_values(at, page: str) -> dict[str, object]:
    """What is on screen: every bound control of the page that is shown, by key."""
    shown = {}
    for c in table.PAGES[page].controls:
        if c.bound and c.key in at.session_state:
            v = at.session_state[c.key]
            shown[c.key] = list(v) if isinstance(v, (list, tuple)) else v
    return shown


def link_of(at, page: str) -> dict[str, list[str]]:
    """The query string the moves wrote: every bound control shown whose value differs from its default."""
    query = {}
    for c in table.PAGES[page].controls:
        if c.bound and c.key in at.session_state:
            values = url_values(c, at.session_state[c.key])
            if values:
                query[c.key] = values
    return query


MOVES = {
    "home": [("number_input", "home_x1", 1.5), ("number_input", "home_x5", -3.0)],
    "curves": [("slider", "curves_x", 1.3), ("slider", "curves_range", (-5.0, 2.5)), ("slider", "curves_n", 250),
               ("button_group", "form", "sigmoid"), ("multiselect", "curves_more", ["leaky_relu", "silu"]),
               ("slider", "curves_slope", 0.2), ("text_input", "curves_points", "0.5, -4")],
    "gate": [("slider", "gate_x", -2.0), ("slider", "gate_mu", 0.5), ("slider", "gate_sigma", 0.0)],
    "derivative": [("button_group", "form", "none"), ("slider", "derivative_x", 0.5),
                   ("slider", "derivative_nudge", 0.25)],
    "approximations": [("slider", "approximations_range", (-12.0, 2.0))],
    "steps": [("number_input", "steps_x", -2.5), ("toggle", "steps_full", True)],
    "ffn": [("number_input", "ffn_d_model", 8), ("number_input", "ffn_seed", 3), ("selectbox", "ffn_act", "gelu"),
            ("selectbox", "ffn_demo", "1x16")],
    "training": [("slider", "training_steps", 200), ("slider", "training_width", 4), ("button_group", "training_task",
                 "xor"), ("selectbox", "training_a", "silu"), ("number_input", "training_seed", 5)],
}


def move(at, kind: str, key: str, value) -> None:
    widget = getattr(at, kind)(key=key)
    (widget.input(value) if kind == "text_input" else widget.set_value(value)).run()
    assert not at.exception


@pytest.mark.parametrize("page", list(MOVES))
def test_link_restores_the_exact_view(app, page):
    app.run()
    if PAGES[page]:
        app.switch_page(PAGES[page]).run()
    show_me(app)  # the student has seen the page whole, then moves its controls
    for kind, key, value in MOVES[page]:
        move(app, kind, key, value)
    query = link_of(app, page)
    assert set(query) == {key for _, key, _ in MOVES[page]}  # every moved control, nothing else

    reopened = new_app(query, PAGES[page])
    assert not reopened.exception and not reopened.info  # every value taken, no note
    assert widget_values(reopened, page) == widget_values(app, page)
    charts = len(app.get("plotly_chart"))
    assert charts and [chart_spec(reopened, i) for i in range(charts)] == [chart_spec(app, i) for i in range(charts)]


def test_moving_back_to_the_default_leaves_the_url(app):
    app.run()
    show_me(app.switch_page(PAGES["gate"]).run())
    app.slider(key="gate_x").set_value(2.0).run()
    assert link_of(app, "gate") == {"gate_x": ["2"]}
    app.slider(key="gate_x").set_value(1.0).run()
    assert link_of(app, "gate") == {}


@pytest.mark.parametrize("page", list(PAGES))
def test_the_sidebar_copies_the_address_bar(app, page):
    """The share box reads the browser's own URL when asked (no server-built link that could go stale), and
    offers the presenter link; its script is checked in a real browser by tests/e2e/test_pages.py."""
    app.run()
    if PAGES[page]:
        app.switch_page(PAGES[page]).run()
    boxes = [h for h in app.sidebar if type(h).__name__ == "Html" and "gelu-share" in h.proto.body]
    assert len(boxes) == 1
    body = boxes[0].proto.body
    assert "window.location.href" in body and "Copy link" in body and "Copy presenter link" in body


@pytest.mark.parametrize("page", sorted(str(p.relative_to(ROOT)) for p in (ROOT / "pages").glob("*.py")))
def test_first_visit_runs_the_frame(app, page):
    """Reference: app.py's sidebar (the share box) is on screen, so app.py ran around the page."""
    app.run()
    app.switch_page(page).run()
    assert any(type(h).__name__ == "Html" and "gelu-share" in h.proto.body for h in app.sidebar)
