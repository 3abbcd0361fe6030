"""Nothing cut: every table on the lesson pages fits a phone's width (390 px) whole, with no column scrolled out
of sight, and no readout is shortened to "…", on a phone or a desktop (1400 px).

Reference: the browser's own measure of each element, ``scrollWidth`` (what its content needs) against
``clientWidth`` (what it is given); tolerance 1 px.  The views are the widest each page can be made: the
largest inputs, every overlay, every dtype, every digit.
"""

from __future__ import annotations

import pytest

from harness import browser as driver
from tests.conftest import across

pytestmark = pytest.mark.e2e

VIEWS = [
    "?home_x1=-20&home_x2=-12.5&home_x5=20",
    "gate?gate_x=-3.9&gate_sigma=3",
    "curves?form=sigmoid&curves_more=Leaky+ReLU&curves_more=ELU&curves_more=GELU+exact&curves_more=Softplus"
    "&curves_slope=0.25&curves_alpha=2.5&curves_points=-1000000,-12.5,0,0.001,999999",
    "derivative?form=sigmoid&derivative_nudge=1",
    "steps?steps_x=-10&steps_full=true",
    "steps?steps_x=-0.123456789&steps_full=true",
    "approximations?approximations_range=-12&approximations_range=-11.5",
    "approximations?approximations_view=What+PyTorch+computes&form=tanh&approximations_fw_dtypes=float32"
    "&approximations_fw_dtypes=bfloat16&approximations_fw_dtypes=float16",
]

CUT_JS = """() => {
  const cut = (e) => e.scrollWidth > e.clientWidth + 1;
  const found = [];
  for (const e of document.querySelectorAll("[data-testid='stMetricValue'], [data-testid='stMetricValue'] *"))
    if (cut(e)) found.push(`readout “${e.textContent}” shortened (${e.scrollWidth} > ${e.clientWidth} px)`);
  for (const e of document.querySelectorAll("[data-testid='stDataFrame'] .dvn-scroller"))
    if (cut(e)) found.push(`a dataframe scrolls sideways (${e.scrollWidth} > ${e.clientWidth} px)`);
  for (const e of document.querySelectorAll("[data-testid='stTable'], [data-testid='stTable'] *"))
    if (cut(e)) found.push(`a table runs past its box (${e.scrollWidth} > ${e.clientWidth} px)`);
  return found;
}"""


# each view at both widths; the default run takes one view of each page, at one width, phone and desktop in turn
# (tests.conftest.across)
@pytest.mark.parametrize("view, viewport", across(VIEWS, [v.split("&")[0] or "home" for v in VIEWS],
                                                  [driver.PHONE, driver.DESKTOP], ["phone", "desktop"],
                                                  kept_rows=[0, 1, 2, 3, 4, 6]))
def test_nothing_is_cut(shared_tabs, view, viewport):
    tab = shared_tabs.get(view, viewport=viewport)  # the phone's load, then resized to the desktop's width
    assert tab.page.evaluate(CUT_JS) == []
    assert driver.look(tab.page)["overflow"] <= 0
    tab.assert_clean()
