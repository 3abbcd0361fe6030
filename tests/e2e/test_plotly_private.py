"""Plotly's private fields that the live layer and the race player read (draw/plotly_private.js) are still there in
the Plotly that Streamlit serves: an upgrade that removes one fails here, naming it, before a student's drag stops
moving the chart.

Reference: the file's own check, ``plotlyPrivateMissing``, evaluated in a real Chromium on every chart of a page
with probes (Curves: scatter traces), and of the race (heatmaps and contours); and a check of that check, on a
chart whose private fields the test removes.
"""

from __future__ import annotations

import pytest

from draw.assets import text

pytestmark = pytest.mark.e2e

MISSING_JS = """([source, selector, strip]) => {
  const missing = new Function(source + "\\nreturn plotlyPrivateMissing;")();
  return [...document.querySelectorAll(selector)].map((gd) => {
    if (strip) { gd.__geluSaved = gd._fullLayout; delete gd._fullLayout; }
    const found = missing(gd);
    if (strip) gd._fullLayout = gd.__geluSaved;
    return found;
  });
}"""


@pytest.mark.parametrize("page", ["curves", "training?training_steps=100"])
def test_every_private_field_is_still_there(new_tab, page):
    tab = new_tab()
    tab.open(page)
    source, plots = text("plotly_private.js"), ".js-plotly-plot"
    found = tab.page.evaluate(MISSING_JS, [source, plots, False])
    assert found and all(missing == [] for missing in found), (
        f"Plotly no longer has {found}: update draw/plotly_private.js for this Plotly")
    assert tab.page.evaluate(MISSING_JS, [source, plots, True])[0] == ["gd._fullLayout"]
