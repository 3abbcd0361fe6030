"""Every chart of the lesson pages is drawn through ``draw.frame.chart`` (its PNG button), every table can be taken
away as CSV (a dataframe has its own download; a static table gets ``draw.frame.csv_button``).

Reference: ``draw.frame.chart_config``, the one chart configuration, compared with what each chart sends.
"""

from __future__ import annotations

import json

import pytest

from draw.frame import chart_config
from tests.conftest import open_page

# each page at a view that draws all it can: every tab's content, the optional tables
VIEWS = [
    ("pages/home.py", {}),
    ("pages/gate.py", {}),
    ("pages/curves.py", {"curves_more": ["SiLU", "ELU", "Softplus"]}),
    ("pages/derivative.py", {}),
    ("pages/steps.py", {"steps_full": "true"}),
    ("pages/approximations.py", {}),
    ("pages/approximations.py", {"approximations_view": "What PyTorch computes"}),
]


@pytest.mark.parametrize("page, query", VIEWS, ids=[f"{p.split('/')[-1]}-{len(q)}" for p, q in VIEWS])
def test_every_chart_has_its_png_button_and_every_table_its_csv(app, page, query):
    at = open_page(app, page, **query)
    charts = at.get("plotly_chart")
    assert charts
    for c in charts:
        name = c.key.removeprefix("chart_")  # draw.frame.chart keys each chart "chart_<name>"
        assert c.key.startswith("chart_") and json.loads(c.proto.config) == chart_config(name)
    csv = [b for b in at.get("download_button") if b.key != "code_download"]  # not the code's own download
    assert len(csv) == len(at.table)  # one CSV button per static table


EVERY_CHART = VIEWS + [("pages/ffn.py", {}), ("pages/training.py", {})]  # the lab's and the race's charts too


@pytest.mark.parametrize("page, query", EVERY_CHART, ids=[f"{p.split('/')[-1]}-{len(q)}" for p, q in EVERY_CHART])
def test_every_chart_is_the_element_st_plotly_chart_draws(page, query, monkeypatch):
    """``draw.frame.chart`` draws a page's figure from its plain spec (``hosting.internals.plotly_chart_of_spec``); the
    reference is the same
    page with every chart drawn by ``st.plotly_chart(fig, theme="streamlit", key=..., config=...)``: each element
    the same, field for field (the figure's JSON as the same values; its id, a hash of that JSON text, aside), with
    the same width and height."""
    from streamlit.delta_generator import DeltaGenerator
    from streamlit.testing.v1 import AppTest

    from hosting import internals
    from tests.conftest import ROOT

    sent: list = []
    enqueue = DeltaGenerator._enqueue

    def recording(self, delta_type, element_proto, layout_config=None, *args, **kwargs):
        if delta_type == "plotly_chart":
            sent[-1].append((element_proto, layout_config))
        return enqueue(self, delta_type, element_proto, layout_config, *args, **kwargs)

    monkeypatch.setattr(DeltaGenerator, "_enqueue", recording)
    drawn = []
    for way in ("spec", "st.plotly_chart"):
        if way == "st.plotly_chart":
            monkeypatch.setattr(internals, "plotly_chart_of_spec", lambda *a: False)
        sent.append([])
        open_page(AppTest.from_file(str(ROOT / "app.py"), default_timeout=60), page, **query)
        drawn.append(sent[-1])
    ours, theirs = drawn
    assert ours and len(ours) == len(theirs)
    for (a, a_layout), (b, b_layout) in zip(ours, theirs, strict=True):
        assert json.loads(a.spec) == json.loads(b.spec)
        assert (a.theme, a.config, a.form_id, a.alt, list(a.selection_mode)) == (
            b.theme, b.config, b.form_id, b.alt, list(b.selection_mode))
        assert a.id.startswith("$$ID-") and a.id.split("-", 2)[2] == b.id.split("-", 2)[2]  # "$$ID-<hash>-<key>"
        assert (a_layout.width, a_layout.height) == (b_layout.width, b_layout.height)
