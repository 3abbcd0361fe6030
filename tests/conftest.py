"""Shared fixtures: an AppTest of the whole app, and a way to read a chart's figure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def chart_spec(at, index: int = 0) -> dict:
    """The Plotly figure (data + layout) of the index-th chart on the page, as a dict."""
    return json.loads(at.get("plotly_chart")[index].proto.spec)


@pytest.fixture
def app():
    """A fresh AppTest of app.py, not yet run: set query_params / switch_page, then .run()."""
    from streamlit.testing.v1 import AppTest

    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
