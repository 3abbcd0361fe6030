"""Live under the finger: the component that moves a page's readouts and chart while a student drags a slider.

The slider stays Streamlit's own, and Streamlit still reruns the page once, on release.  The component (``live.js``,
drawn in the page, no iframe) sends nothing back: it reads the table that ``ui.live.live_table`` built for the
control (the page's numbers at every step of the slider's grid, already formatted), watches the slider's thumb, and
on each move writes the row's strings into the readouts the page drew and moves the chart's probe traces in the SVG
Plotly drew, as Plotly places them.
"""

from __future__ import annotations

from draw.assets import component
from hosting import published

_mount = component("gelu_live", html='<p class="gelu-live-note"></p>', css="live.css",
                   js=("plotly_private.js", "live.js"))


def follow(table: bytes | dict, key: str | None = None) -> None:
    """Mount the live layer for one slider (once per page run, after the readouts and chart it writes into), given
    its table's JSON (``ui.live.as_json``: published, and fetched by the browser once, ``hosting.published``) or the
    table itself (sent in the element); ``key``: the element's (a class ``st-key-<key>``)."""
    data = {"published": published.publish(table, ".json")} if isinstance(table, bytes) else table
    _mount(key=key, data=data, height="content")
