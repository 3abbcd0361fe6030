"""Every word written inside a chart, as the browser draws it on a phone (390 px) and a desktop (1400 px): whole
(not cut by the plot's edge), and clear of every gridline, zero line, curve and marker, and of the other labels.

Reference: the rectangles Chromium reports for Plotly's drawn text (``getBoundingClientRect``), against the pixel
positions Plotly's own axes give each gridline, curve point and marker (``l2p`` of the drawn axes).  Tolerance:
1 px; curves are followed every 2 px between their points, markers by their drawn radius.
"""

from __future__ import annotations

import pytest

from harness import browser as driver
from tests.conftest import across, sweep

pytestmark = pytest.mark.e2e

# The views whose charts carry labels, at the places where a label is most likely to run into something.
VIEWS = [
    "",  # Home: the most negative GELU named over its stub
    "?home_x1=-2.5&home_x2=-0.25&home_x5=20",
    "?home_x1=-12&home_x2=-11.5",
    "gate",  # the bell's area and the gate's percentage
    "gate?gate_x=-3",
    "gate?gate_x=-3.9",
    "gate?gate_x=0.1",
    "gate?gate_x=4",
    "derivative",  # GELU' = 0, its extremes, GELU's minimum
    "derivative?form=tanh&derivative_nudge=1",
    "derivative?form=sigmoid",
]

CHART_TEXT_JS = r"""() => {
  const found = [];
  for (const gd of document.querySelectorAll("[data-testid='stMain'] .js-plotly-plot")) {
    const fl = gd._fullLayout;
    if (!fl) continue;
    const svg = gd.querySelector(".main-svg").getBoundingClientRect();
    const size = fl._size;
    const area = {left: svg.left + size.l, top: svg.top + size.t, right: svg.left + size.l + size.w,
                  bottom: svg.top + size.t + size.h};
    const box = (r) => ({left: r.left, top: r.top, right: r.right, bottom: r.bottom});
    const texts = [...gd.querySelectorAll(".annotation-text-g text, .textpoint text")]
      .filter((t) => t.textContent.trim())
      .map((t) => ({text: t.textContent, ...box(t.getBoundingClientRect())}));
    const lines = [...gd.querySelectorAll(".gridlayer path, .zerolinelayer path")]
      .map((p) => box(p.getBoundingClientRect()))
      .filter((r) => r.right - r.left > 0 || r.bottom - r.top > 0);
    const points = [];  // [x, y, radius]: curve points every 2 px, markers with their radius
    for (const t of gd._fullData) {
      if (t.visible !== true || t.type !== "scatter" || !t.x) continue;
      const xa = fl[t.xaxis === "x" ? "xaxis" : "xaxis" + t.xaxis.slice(1)];
      const ya = fl[t.yaxis === "y" ? "yaxis" : "yaxis" + t.yaxis.slice(1)];
      const px = (v) => svg.left + xa._offset + xa.l2p(xa.d2l(v));
      const py = (v) => svg.top + ya._offset + ya.l2p(ya.d2l(v));
      const ok = (v) => v !== null && v !== undefined && Number.isFinite(+v) && !(ya.type === "log" && +v <= 0);
      const width = (t.line && t.line.width) || 0;
      let last = null;
      for (let i = 0; i < t.x.length; i++) {
        if (!ok(t.x[i]) || !ok(t.y[i])) { last = null; continue; }
        const p = [px(t.x[i]), py(t.y[i])];
        if (t.mode.includes("markers")) points.push([p[0], p[1], (t.marker.size || 6) / 2 + 1]);
        if (t.mode.includes("lines") && width > 0) {
          if (last) {
            const n = Math.ceil(Math.hypot(p[0] - last[0], p[1] - last[1]) / 2);
            for (let k = 1; k <= n; k++) {
              points.push([last[0] + (p[0] - last[0]) * k / n, last[1] + (p[1] - last[1]) * k / n, width / 2]);
            }
          } else points.push([p[0], p[1], width / 2]);
          last = p;
        }
      }
    }
    found.push({chart: gd.closest("[class*='st-key-chart_']")?.className.match(/st-key-(chart_\S+)/)?.[1] || "?",
                area, texts, lines, points});
  }
  return found;
}"""


def _overlap(a: dict, b: dict, pad: float = 1.0) -> bool:
    return (a["left"] + pad < b["right"] and b["left"] + pad < a["right"]
            and a["top"] + pad < b["bottom"] and b["top"] + pad < a["bottom"])


def problems(charts: list[dict]) -> list[str]:
    """What runs into what, in words."""
    found = []
    for chart in charts:
        area, texts = chart["area"], chart["texts"]
        for t in texts:
            name = f"{chart['chart']}: “{t['text']}”"
            if (t["left"] < area["left"] - 1 or t["right"] > area["right"] + 1 or t["top"] < area["top"] - 1
                    or t["bottom"] > area["bottom"] + 1):
                found.append(f"{name} runs past the plot's edge")
            if any(_overlap(t, line) for line in chart["lines"]):
                found.append(f"{name} is crossed by a gridline or zero line")
            hit = [p for p in chart["points"] if t["left"] - p[2] + 1 < p[0] < t["right"] + p[2] - 1
                   and t["top"] - p[2] + 1 < p[1] < t["bottom"] + p[2] - 1]
            if hit:
                found.append(f"{name} is crossed by a curve or marker at ({hit[0][0]:.0f}, {hit[0][1]:.0f})")
        for i, a in enumerate(texts):
            for b in texts[i + 1:]:
                if _overlap(a, b, pad=0.0) and a["text"] != b["text"]:
                    found.append(f"{chart['chart']}: “{a['text']}” overlaps “{b['text']}”")
    return found


# each view at both widths; the default run takes the first view of each page and every other view, each at one
# width, phone and desktop in turn (tests.conftest.across)
@pytest.mark.parametrize("view, viewport", across(VIEWS, [v or "home" for v in VIEWS],
                                                  [driver.PHONE, driver.DESKTOP], ["phone", "desktop"],
                                                  kept_rows=[0, 2, 3, 5, 7, 8, 10]))
def test_chart_labels_are_whole_and_clear(shared_tabs, view, viewport):
    tab = shared_tabs.get(view, viewport=viewport)  # the phone's load, then resized to the desktop's width
    charts = tab.page.evaluate(CHART_TEXT_JS)
    assert charts, "no chart drawn"
    assert sum(len(c["texts"]) for c in charts) > 0, "no label inside any chart: nothing was checked"
    assert problems(charts) == []
    tab.assert_clean()


RACE_TITLES_JS = r"""() => {
  const chart = [...document.querySelectorAll("[data-testid='stMain'] .js-plotly-plot")].find(
    (gd) => [...gd.querySelectorAll(".annotation-text-g text")].some((t) => t.textContent.endsWith("testaccuracy")));
  if (!chart) return null;
  const box = (e) => { const r = e.getBoundingClientRect(); return {left: r.left, right: r.right, top: r.top,
                                                                   bottom: r.bottom}; };
  return {svg: box(chart.querySelector(".main-svg")),
          titles: [...chart.querySelectorAll(".annotation-text-g text")].map(t => ({
            text: [...t.querySelectorAll("tspan.line")].map((l) => l.textContent).join(" "), ...box(t)}))};
}"""


@pytest.mark.parametrize("viewport", sweep([driver.PHONE, driver.DESKTOP], ["phone", "desktop"], kept=[0]))
def test_the_race_titles_are_whole_and_apart(shared_tabs, viewport):
    """The decision regions' two titles (a network's activation over its test accuracy) side by side: inside the
    chart and apart from each other, on a phone too.  Reference: Chromium's rectangles of the drawn text."""
    tab = shared_tabs.get("training", viewport=viewport)
    found = tab.page.evaluate(RACE_TITLES_JS)
    assert found is not None, "no decision-regions chart drawn"
    svg, titles = found["svg"], found["titles"]
    assert len(titles) == 2 and all("test accuracy" in t["text"] for t in titles), titles
    for t in titles:
        assert svg["left"] - 1 <= t["left"] and t["right"] <= svg["right"] + 1, f"“{t['text']}” is cut: {t}, {svg}"
        assert svg["top"] - 1 <= t["top"], f"“{t['text']}” is cut at the top: {t}, {svg}"
    assert not _overlap(titles[0], titles[1], pad=0.0), f"the titles overlap: {titles}"
    tab.assert_clean()
