"""The sidebar's share link: it holds exactly the view on screen, and opening it brings the view back.

References: the widget values in session state (what is on screen) and the page's chart JSON, compared between
the session that made the link and a fresh session opened from it; Streamlit's own URL format (floats as
"1.5", whole floats as "2", lists as repeated keys), as seen in a real browser.

A note on the ``pages/`` folder: because a folder named ``pages`` sits next to app.py, Streamlit starts every
fresh server (and every AppTest run) in its old multipage mode, which runs a page file directly, without app.py
around it (no sidebar, no page config), until some session has run ``st.navigation``. Every page calls
``ui.frame.require_app_frame()`` first, which clears that mode and reruns through app.py;
``test_first_visit_runs_the_frame`` holds that for every page, cold.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from tests.conftest import ROOT, chart_spec
from ui.controls import PAGE_CONTROLS

PAGES = {"curves": "pages/curves.py", "gate": "pages/gate.py", "derivative": "pages/derivative.py"}


@pytest.fixture
def framed(app):
    """AppTest of the whole app: each page runs inside app.py (sidebar, link), as ui.frame guarantees."""
    return app


def new_app(query: dict[str, list[str]] | None = None, page: str | None = None):
    """A fresh session opened from a link: query parameters set before the first run, then the page."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.context = {"url": "https://class.example.org"}
    if page is None:
        for k, v in (query or {}).items():
            at.query_params[k] = v
        return at.run()
    at.run()
    at.switch_page(page)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    return at.run()


def link_of(at) -> str:
    codes = at.sidebar.code
    assert len(codes) == 1, "the sidebar shows one link"
    return codes[0].value


def query_of(link: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(link).query, keep_blank_values=True)


def widget_values(at, page: str) -> dict[str, object]:
    """What is on screen: every declared control of the page that is shown, by key."""
    shown = {}
    for c in PAGE_CONTROLS[page]:
        if c.key in at.session_state:
            v = at.session_state[c.key]
            shown[c.key] = list(v) if isinstance(v, (list, tuple)) else v
    return shown


def test_defaults_give_a_bare_link(framed):
    framed.context = {"url": "https://class.example.org"}
    framed.run()
    assert link_of(framed) == "https://class.example.org"
    framed.switch_page(PAGES["gate"]).run()
    assert link_of(framed) == "https://class.example.org/gate"


def test_first_run_link_carries_the_url_values(app):
    """Without any patch: the first run of a session (app.py around Home) shows a link with the URL's values."""
    app.context = {"url": "https://class.example.org"}
    app.query_params["home_x2"] = "-0.5"
    app.run()
    assert link_of(app) == "https://class.example.org?home_x2=-0.5"


MOVES = {
    "home": [("number_input", "home_x1", 1.5), ("number_input", "home_x5", -3.0)],
    "curves": [("slider", "curves_x", 1.37), ("slider", "curves_range", (-5.0, 2.5)), ("slider", "curves_n", 250),
               ("button_group", "curves_form", "sigmoid"), ("multiselect", "curves_more", ["leaky_relu", "silu"]),
               ("slider", "curves_slope", 0.2), ("text_input", "curves_points", "0.5, -4")],
    "gate": [("slider", "gate_x", -2.0), ("slider", "gate_mu", 0.5), ("slider", "gate_sigma", 0.0)],
    "derivative": [("button_group", "derivative_form", "tanh"), ("slider", "derivative_nudge", 0.25)],
}


def move(at, kind: str, key: str, value) -> None:
    widget = getattr(at, kind)(key=key)
    (widget.input(value) if kind == "text_input" else widget.set_value(value)).run()
    assert not at.exception


@pytest.mark.parametrize("page", list(MOVES))
def test_link_restores_the_exact_view(framed, page):
    framed.context = {"url": "https://class.example.org"}
    framed.run()
    if page != "home":
        framed.switch_page(PAGES[page]).run()
    for kind, key, value in MOVES[page]:
        move(framed, kind, key, value)
    link = link_of(framed)
    query = query_of(link)
    assert urlsplit(link).path.strip("/") == ("" if page == "home" else page)
    assert set(query) == {key for _, key, _ in MOVES[page]}  # every moved control, nothing else

    reopened = new_app(query, None if page == "home" else PAGES[page])
    assert not reopened.exception
    assert widget_values(reopened, page) == widget_values(framed, page)
    charts = len(framed.get("plotly_chart"))
    assert [chart_spec(reopened, i) for i in range(charts)] == [chart_spec(framed, i) for i in range(charts)]


def test_moving_back_to_the_default_drops_the_parameter(framed):
    framed.run()
    framed.switch_page(PAGES["gate"]).run()
    framed.slider(key="gate_x").set_value(2.0).run()
    assert "gate_x" in query_of(link_of(framed))
    framed.slider(key="gate_x").set_value(1.0).run()
    assert query_of(link_of(framed)) == {}


def test_a_page_without_declared_controls_passes_the_url_through(framed):
    """Pages that do not declare controls in ui.controls get the link from the URL the browser reports."""
    framed.run()
    framed.switch_page("pages/steps.py")
    framed.query_params["steps_note"] = "from-a-teacher"  # a parameter no widget claims, so none can reject it
    framed.run()
    assert query_of(link_of(framed))["steps_note"] == ["from-a-teacher"]


@pytest.mark.parametrize("page", sorted(str(p.relative_to(ROOT)) for p in (ROOT / "pages").glob("*.py")))
def test_first_visit_runs_the_frame(app, page):
    """Reference: app.py's sidebar (the share link's st.code) is on screen, so app.py ran around the page."""
    app.run()
    app.switch_page(page).run()
    assert len(app.sidebar.code) == 1
