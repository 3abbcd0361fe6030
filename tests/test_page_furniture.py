"""Every chart of the lesson pages is drawn through ``ui.frame.chart`` (its PNG button), every table can be taken
away as CSV (a dataframe has its own download; a static table gets ``ui.frame.csv_button``).

Reference: ``ui.frame.chart_config``, the one chart configuration, compared with what each chart sends.
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
        name = c.key.removeprefix("chart_")  # ui.frame.chart keys each chart "chart_<name>"
        assert c.key.startswith("chart_") and json.loads(c.proto.config) == chart_config(name)
    csv = [b for b in at.get("download_button") if b.key != "code_download"]  # not the code's own download
    assert len(csv) == len(at.table)  # one CSV button per static table
