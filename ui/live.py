"""Live under the finger: the tables the live layer (draw/live.py) reads while a student drags a slider.

The slider stays Streamlit's own (its label, range, step, default, URL binding, link check, keyboard, touch and
``role="slider"`` are unchanged), and Streamlit still reruns the page once, on release.  Between, the component in
the page reads one of these tables: the page's numbers at every step of the slider's grid, already formatted by
``ui/format`` (the browser selects a row, it neither computes nor formats).  On each move it writes the row's
strings into the readouts the page drew (the text nodes of ``st.metric`` and the like, so the next rerun writes the
same strings over them) and moves the chart's probe traces in the SVG Plotly drew, as Plotly places them (a figure
with live probes fixes its axes' ranges, so nothing else moves); a chart the page draws, the layer brings to the row
at rest (``chart_spec``'s ``settle``).

A table is a plain dict (JSON): see ``live_table``.  Pure: no Streamlit, no server.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ui.i18n import memo
from ui.plain import fixed as _fixed  # a control's own values: Streamlit writes them with a dot in every language


def grid(lo: float, hi: float, step: float) -> np.ndarray:
    """Every value a slider from ``lo`` to ``hi`` in ``step`` can take, as the thumb reports it (rounded to 12
    digits, so that -0.30000000000000004 is -0.3, what the URL holds).

    >>> grid(-1.0, 1.0, 0.5).tolist()
    [-1.0, -0.5, 0.0, 0.5, 1.0]
    """
    count = int(round((hi - lo) / step)) + 1
    return np.round(lo + step * np.arange(count), 12) + 0.0  # + 0.0: no -0.0


def live_table(control: Mapping[str, Any], *, texts: Sequence[tuple],
               chart_key: str | None = None, traces: Mapping[str, Mapping[str, Sequence]] | None = None,
               lines: Mapping[int, Sequence[float]] | None = None,
               annotations: Mapping[int, Sequence[Sequence[str]]] | None = None,
               note: Sequence[str] | None = None, exact: str | None = None, thumbs: int = 1,
               views: Mapping[str, Mapping[str, Sequence]] | None = None, pack: bool = False,
               spoken: Sequence[str] | None = None, number_input: bool = False,
               charts: Sequence[Mapping[str, Any]] = (), steady: Sequence[str] = (),
               labels: Mapping[int, Sequence[str]] | None = None, settle: bool = False,
               words: Mapping[str, Any] | None = None) -> dict:
    """What the component needs for one slider (``control``: a ``Control``'s ``options`` plus its ``key``).

    ``texts``: (CSS selector, which match, one string per grid step[, which child node]) for each readout (the
    child, 0 unless given, must be a text node: the part of a sentence that follows a bold word); ``traces``: for each
    one-point marker trace of the chart (by its ``meta``), its ``x`` and ``y`` at each step; ``lines``: the
    index of a vertical line among the layout's shapes -> its x at each step (the figure must fix its axes'
    ranges: the moved probe must not change them); ``annotations``: the index of a label among the layout's
    annotations -> one column per piece of its text as Plotly draws it (``annotation_pieces``; the label keeps
    its place until the rerun); ``note``: a
    sentence per step shown under the readouts ("" for none); ``exact``: when the slider is a coarse pick beside
    an input that holds the page's own value, that input's CSS selector: while its value is not the thumb's (typed
    off the grid), the layer writes nothing until a pointer or key on the slider leads (the input itself, React's,
    shows its own value until the rerun on release).  ``thumbs``: 2 for a range slider, whose positions are the
    pairs of its thumbs' grid steps (lo's step × count + hi's).  ``views``: a chart's key -> its view's layout
    keys, dotted as ``Plotly.relayout``'s ("xaxis.range", "yaxis.tickvals", "annotations[0].x", ...) -> the value
    at each position (None: leave the view as it is).  A column of texts (or views) may hold None where nothing is
    written; ``pack``: a column of them with repeats is sent as its distinct values and an index (``_packed``; the
    layer's script reads it).
    ``spoken``: what a screen reader says of each thumb (``spoken_values``; "x = {}" unless given).
    ``number_input``: the control is a number input, not a slider (its steps are the grid; a trace may then name
    which of its points is this input's, ``point``, and which segment of a line trace, ``segment`` with ``y0`` and
    ``y1``).  ``charts``: more charts the same control moves (``chart_spec``), besides ``chart_key``'s.
    ``steady``: keys of ``views``' charts whose view changes no tick label's width: while the layer sets their view it
    holds their margins where the page's draw put them (no auto-margin pass: a relayout costs less than half).
    ``labels``, ``settle`` and ``words``: ``chart_spec``'s, for ``chart_key``'s chart.
    A table may also carry ``joint`` (Home's: ``ui.home.joint_table``): what depends on several controls at once,
    indexed by picks among them as they stand.
    """
    def packed(values: Sequence) -> list | dict:
        return _packed(_column(values)) if pack else _column(values)

    return {
        "control": control["key"], "min": float(control["min_value"]), "step": float(control["step"]),
        "count": len(grid(control["min_value"], control["max_value"], control["step"])),
        "texts": [[t[0], t[1], packed(t[2]), *t[3:]] for t in texts],
        "chart": chart_spec(chart_key, traces=traces, lines=lines, annotations=annotations, labels=labels,
                            settle=settle, pack=pack, words=words),
        "charts": list(charts),
        "note": packed(note) if note is not None else None, "exact": exact, "thumbs": thumbs,
        "views": {k: {key: packed(c) for key, c in v.items()} for k, v in (views or {}).items()},
        **({"steady": list(steady)} if steady else {}),
        "grid": grid(control["min_value"], control["max_value"], control["step"]).tolist(),
        "spoken": [] if number_input else spoken_values(control, spoken or ["x = {}"] * thumbs),
        **({"kind": "number", "input": "input", "values": shown_values(control)} if number_input else {}),
    }


def chart_spec(key: str | None, *, traces: Mapping[str, Mapping[str, Sequence]] | None = None,
               lines: Mapping[int, Sequence[float]] | None = None,
               annotations: Mapping[int, Sequence[Sequence[str]]] | None = None,
               fills: Mapping[str, Mapping[str, Any]] | None = None,
               labels: Mapping[int, Sequence[str]] | None = None, settle: bool = False, pack: bool = False,
               words: Mapping[str, Any] | None = None) -> dict:
    """One chart the layer moves, by its Streamlit key: ``traces``, ``lines`` and ``annotations`` as ``live_table``
    says (a one-point trace may also give its ``name`` and its ``customdata`` at each step); ``fills``: for a trace
    filled to y = 0 (by its ``meta``), the trace whose points it shades (``of``, by its ``meta``) and how many of them,
    from the first, at each step (``n``: the area ends on that trace's own point, its values as the server sent them;
    the browser picks them, it computes none), ``edge``, the index of a vertical line among the layout's shapes drawn
    from y = 0 up to the area's last point, and ``name``, the area's name at each step (for ``settle``).

    ``settle``: the page draws this chart at the control's value, and a move's rerun does not send it again, so at
    rest (no pointer or key held) the layer writes the row into the plot's own data and layout, as the page's figure
    at that value holds them: the one-point traces' ``x``, ``y``, ``name`` and ``customdata`` (what a hover label
    may quote), the filled areas' points and edge line, the lines' ``x``, and each label's text, ``labels``:
    annotation index -> its text with its markup at each step.  Plotly then draws them itself, and its hover labels
    and PNG export show the value the view shows.  ``words`` (``ui.describe.live_words``): the chart's words, drawn by
    the page beside it, whose marked points and labels the layer writes at rest too, so that a move's rerun sends
    none of them (the page's full run draws them at the control's value, with what no move changes)."""
    def packed(values: Sequence) -> list | dict:
        return _packed(_column(values)) if pack else _column(values)

    return {"key": key,
            "traces": {m: {a: v if isinstance(v, int) else _column(v) for a, v in t.items()}
                       for m, t in (traces or {}).items()},
            "lines": {str(i): _column(v) for i, v in (lines or {}).items()},
            "annotations": {str(i): [packed(p) for p in v] for i, v in (annotations or {}).items()},
            **({"labels": {str(i): packed(v) for i, v in (labels or {}).items()}, "settle": True} if settle else {}),
            **({"words": _packed_words(words, packed)} if words else {}),
            "fills": {m: {"of": f["of"], "n": [int(n) for n in f["n"]],
                          **({"edge": int(f["edge"])} if f.get("edge") is not None else {}),
                          **({"name": packed(f["name"])} if f.get("name") is not None else {})}
                      for m, f in (fills or {}).items()}}


def _packed_words(words: Mapping[str, Any], packed: Callable[[Sequence], list | dict]) -> dict:
    """``ui.describe.live_words``' columns as the layer reads them (``packed``)."""
    marks = {m: {**w, **{a: packed(w[a]) for a in ("name", "x", "y") if w[a] is not None}}
             for m, w in words["marks"].items()}
    out = {**words, "marks": marks, "labels": {str(i): packed(v) for i, v in words["labels"].items()}}
    if "names" in words:
        out["names"] = packed(words["names"])
        out["curves"] = {m: {a: packed(c) for a, c in curve.items()} for m, curve in words["curves"].items()}
    return out


def _column(values: Sequence) -> list:
    return [v.item() if isinstance(v, np.generic) else v for v in values]


def spoken_values(control: Mapping[str, Any], templates: Sequence[str]) -> list[list[str]]:
    """Each thumb's ``aria-valuetext`` at each step: its template around the value as the slider shows it (its
    format's decimals, two unless it says), with a true minus sign (read "minus", where "-" may be read "dash").

    >>> [column[:2] for column in spoken_values(dict(min_value=-6.0, max_value=6.0, step=0.5),
    ...                                         ["x from {}", "x to {}"])]
    [['x from −6.00', 'x from −5.50'], ['x to −6.00', 'x to −5.50']]
    """
    return [[template.format(v.replace("-", "\u2212")) for v in shown_values(control)] for template in templates]


def shown_values(control: Mapping[str, Any]) -> list[str]:
    """Each step's value as the control writes it: its format's decimals, two unless it says.

    >>> shown_values(dict(min_value=-1.0, max_value=1.0, step=0.5, format="%.1f"))
    ['-1.0', '-0.5', '0.0', '0.5', '1.0']
    """
    found = re.search(r"\.(\d+)f", str(control.get("format", "")))
    digits = int(found.group(1)) if found else 2
    return [_fixed(v, digits) for v in grid(control["min_value"], control["max_value"], control["step"]).tolist()]


def _packed(values: list) -> list | dict:
    """A column as the layer reads it: the list itself, or, when that is less than half the size, its distinct
    values (``u``) and each position's index among them (``i``, -1 for None).

    >>> _packed(["one sentence"] * 4 + [None]), _packed(["a", "b"])
    ({'u': ['one sentence'], 'i': [0, 0, 0, 0, -1]}, ['a', 'b'])
    """
    # Each distinct object's key made once (a column often holds one object many times: Home's views), and the rest
    # in C's loops (map, zip, dict): Home builds tens of thousands of cells at every rerun
    objects = dict(zip(map(id, values), values, strict=True))
    key_of = {ident: _key(value) for ident, value in objects.items()}
    keys = list(map(key_of.__getitem__, map(id, values)))
    value_of = dict(zip(reversed(keys), reversed(values), strict=True))  # each key's first value
    index = {key: n for n, key in enumerate(k for k in dict.fromkeys(keys) if k != _NONE)}
    if sum(map(len, index)) + 3 * len(values) >= sum(map(len, keys)) / 2:
        return values
    return {"u": [value_of[key] for key in index], "i": list(map({**index, _NONE: -1}.__getitem__, keys))}


_NONE = "NNone"  # None's key (``_key``): no text's key ("s" + the text) can be it


def _key(value: Any) -> str:
    """A value's identity among a column's, about as long as its JSON (cheaper to make: a table of thousands of
    cells is built at every rerun of Home)."""
    if isinstance(value, str):
        return "s" + value
    if value is None or isinstance(value, (bool, int, float)):
        return f"{type(value).__name__[0]}{value!r}"
    # a list or dict of such values: its repr tells apart every two that differ in JSON (a dict's keys in their
    # order: two equal dicts written in another order are kept apart, never two different ones merged)
    return "r" + repr(value)


def annotation_pieces(text: str) -> list[str]:
    """A Plotly label's text as the pieces it draws, one text node each (lines at ``<br>``, bold apart).

    >>> annotation_pieces("Φ(1.00)<br>= <b>84.1%</b>")
    ['Φ(1.00)', '= ', '84.1%']
    """
    return [piece for piece in re.split(r"<br>|</?b>", text) if piece]


# The largest, the Approximations range's: 195 KB measured.  A share that holds every page's tables in two forms
# and two languages at once (36, tests/test_memo.py), and more ranges of Curves: a class's first visits find them.
@memo(entry_bytes=512 * 1024, share=0.04)
def as_json(table: Callable[..., dict], *args) -> bytes:
    """The live table ``table(*args)`` as the layer receives it: its JSON, UTF-8, made once and kept (handed the
    table itself, Streamlit writes its JSON twice at every rerun).  No NaN: the browser's JSON.parse reads none."""
    return json.dumps(table(*args), ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def rows(values: np.ndarray, *functions: Callable[[float], Any]) -> list[list[Any]]:
    """Each function at each grid value: one column per function."""
    return [[f(float(v)) for v in values] for f in functions]
