"""Live under the finger: while a student drags a slider, the readouts and the chart beside it follow at frame
rate, with no server round-trip.

The slider stays Streamlit's own (its label, range, step, default, URL binding, link check, keyboard, touch and
``role="slider"`` are unchanged), and Streamlit still reruns the page once, on release.  What this adds is a
custom component (``st.components.v2``, drawn in the page, no iframe) that sends nothing back: Python hands it
the page's numbers at every step of the slider's grid, already formatted by ``ui/format`` (the browser selects a
row, it neither computes nor formats), and the component's script watches the slider's thumb.  On each move it
writes the row's strings into the readouts the page drew (the text nodes of ``st.metric`` and the like, so the
next rerun writes the same strings over them) and moves the chart's probe traces with the Plotly the app already
ships (``window.Plotly``: ``Plotly.update`` on the marker traces and the layout paths named, so the axes
autorange exactly as the server's figure will).

A ``Live`` table is a plain dict (JSON): see ``live_table``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

JS = r"""
export default function (component) {
  const { data, parentElement } = component;
  const note = parentElement.querySelector(".gelu-live-note");
  let input = null, shown = -1, stopped = false;
  const gridIndex = () => {
    const k = Math.round((Number(input.value) - data.min) / data.step);
    return Math.max(0, Math.min(data.count - 1, k));
  };
  const chart = () => document.querySelector(`.st-key-${data.chart.key} .js-plotly-plot`);
  const apply = (k) => {
    for (const [selector, nth, column] of data.texts) {
      const el = document.querySelectorAll(selector)[nth];
      if (!el) continue;
      const node = el.firstChild;  // the text node React owns: change it in place, so a rerun updates it
      if (node && node.nodeType === 3) { if (node.nodeValue !== column[k]) node.nodeValue = column[k]; }
      else if (el.textContent !== column[k]) el.textContent = column[k];
    }
    if (note) note.textContent = data.note ? data.note[k] : "";
    const gd = chart();
    if (gd && gd._fullData && window.Plotly) {
      const idx = [], upd = {};
      const metas = Object.keys(data.chart.traces);
      gd._fullData.forEach((t, i) => { if (metas.includes(t.meta)) idx.push([i, t.meta]); });
      for (const [i, meta] of idx) {
        for (const [attr, column] of Object.entries(data.chart.traces[meta])) {
          (upd[attr] = upd[attr] || []).push(attr === "name" ? column[k] : [column[k]]);
        }
      }
      const layout = {};
      for (const [path, column] of Object.entries(data.chart.layout || {})) layout[path] = column[k];
      if (idx.length) window.Plotly.update(gd, upd, layout, idx.map(([i]) => i));
    }
    shown = k;
    window.__geluLive = { key: data.control, k, at: performance.now() };
  };
  const onChange = () => { if (input && !stopped) { const k = gridIndex(); if (k !== shown) apply(k); } };
  const watch = new MutationObserver(onChange);
  const find = () => {
    if (stopped) return;
    const found = document.querySelector(`.st-key-${data.control} input[type=range]`);
    if (found && found !== input) {
      input = found;
      watch.disconnect();
      watch.observe(input, { attributes: true, attributeFilter: ["aria-valuetext", "value"] });
      shown = gridIndex();  // the page was drawn by the server for this value
      if (note) note.textContent = data.note ? data.note[shown] : "";
    }
  };
  find();
  const again = new MutationObserver(() => { if (!input || !input.isConnected) find(); });
  again.observe(document.body, { childList: true, subtree: true });
  return () => { stopped = true; watch.disconnect(); again.disconnect(); };
}
"""

CSS = """
.gelu-live-note { margin: 0; min-height: 0; font-size: 0.875rem; color: var(--st-text-color); opacity: 0.75; }
.gelu-live-note:empty { display: none; }
"""

HTML = '<p class="gelu-live-note"></p>'

_component = None


def _mount():
    global _component
    if _component is None:
        import streamlit as st

        _component = st.components.v2.component("gelu_live", html=HTML, css=CSS, js=JS)
    return _component


def grid(lo: float, hi: float, step: float) -> np.ndarray:
    """Every value a slider from ``lo`` to ``hi`` in ``step`` can take, as the thumb reports it (rounded to 12
    digits, so that -0.30000000000000004 is -0.3, what the URL holds).

    >>> grid(-1.0, 1.0, 0.5).tolist()
    [-1.0, -0.5, 0.0, 0.5, 1.0]
    """
    count = int(round((hi - lo) / step)) + 1
    return np.round(lo + step * np.arange(count), 12) + 0.0  # + 0.0: no -0.0


def live_table(control: Mapping[str, Any], *, texts: Sequence[tuple[str, int, Sequence[str]]],
               chart_key: str, traces: Mapping[str, Mapping[str, Sequence]],
               layout: Mapping[str, Sequence] | None = None, note: Sequence[str] | None = None) -> dict:
    """What the component needs for one slider (``control``: a ``Control``'s ``options`` plus its ``key``).

    ``texts``: (CSS selector, which match, one string per grid step) for each readout; ``traces``: for each
    trace of the chart (by its ``meta``), attribute -> one value per step (``x`` and ``y`` of a one-point marker
    trace, its ``name``); ``layout``: Plotly layout path ("shapes[0].x0") -> one value per step; ``note``: a
    sentence per step shown under the readouts ("" for none).
    """
    def column(values: Sequence) -> list:
        return [v.item() if isinstance(v, np.generic) else v for v in values]

    return {
        "control": control["key"], "min": float(control["min_value"]), "step": float(control["step"]),
        "count": len(grid(control["min_value"], control["max_value"], control["step"])),
        "texts": [[sel, nth, column(col)] for sel, nth, col in texts],
        "chart": {"key": chart_key, "traces": {m: {a: column(v) for a, v in t.items()} for m, t in traces.items()},
                  "layout": {p: column(v) for p, v in (layout or {}).items()}},
        "note": column(note) if note is not None else None,
    }


def follow(table: dict, key: str) -> None:
    """Mount the live layer for one slider (once per page run, after the readouts and chart it writes into)."""
    _mount()(key=key, data=table, height="content")


def rows(values: np.ndarray, *functions: Callable[[float], Any]) -> list[list[Any]]:
    """Each function at each grid value: one column per function."""
    return [[f(float(v)) for v in values] for f in functions]
