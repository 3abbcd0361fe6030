"""Every chart in words: an accessible name, a short summary and the data as a table, read from the figure itself.

A screen reader hears nothing of a Plotly chart (plotly.js gives its SVG no name and no description), so
``draw.frame.chart`` puts these beside each one.  They are computed from the very traces the chart draws, never
written by hand, so they cannot drift from it: the points a chart marks (a probe, a minimum, the largest error)
with their values, the labels it writes on itself, where each curve is lowest and highest, each histogram's
tallest bar.  Numbers are written as the page writes them (``ui.format.fixed``, four decimals, trailing zeros
dropped: "GELU(-1.00) at x = -1 is -0.1588").  Streamlit-free; tests/test_describe.py checks it against the traces.
"""

from __future__ import annotations

import base64
import html
import math
import re
from dataclasses import dataclass, field

import numpy as np

from gelu_core.shared import memo
from ui import plain as plain_numbers
from ui.format import local, sci
from ui.i18n import _
from ui.i18n import memo as words_memo

TABLE_SAMPLES = 11  # points of each curve in the table: evenly spaced indices, the first and the last included
MAX_POINTS_SAID = 6  # a trace with more points than this is a cloud: its extent is said, a sample tabled

_DTYPES = {"f8": np.float64, "f4": np.float32, "i1": np.int8, "u1": np.uint8, "i2": np.int16, "u2": np.uint16,
           "i4": np.int32, "u4": np.uint32}


def number(value) -> str:
    """A value as the summary says it: four decimals without trailing zeros, very small or large ones in
    scientific notation; "none" for a gap.

    >>> number(-0.158808), number(-1.0), number(0.0), number(1.5e-7), number(2.5e6), number(float("nan"))
    ('-0.1588', '-1', '0', '1.500e-07', '2.500e+06', 'none')
    """
    try:
        v = float(value)
    except (TypeError, ValueError):
        return str(value)
    if not math.isfinite(v):
        return _("none") if math.isnan(v) else (_("infinity") if v > 0 else _("minus infinity"))
    if v != 0 and (abs(v) < 5e-4 or abs(v) >= 1e6):
        return sci(v)
    text = plain_numbers.fixed(v, 4)
    return local(text.rstrip("0").rstrip(".") if "." in text else text)


def values(spec) -> np.ndarray:
    """A trace's x or y as a 1-D array (read only), whether a list, a numpy array or Plotly's typed-array spec
    ({"dtype": "f8", "bdata": base64})."""
    if spec is None:
        return np.empty(0)
    if isinstance(spec, dict) and "bdata" in spec:
        return _decoded(*_key(spec)) if _typed(spec) else _decode(*_key(spec))
    try:
        return np.asarray(spec, dtype=float)
    except (TypeError, ValueError):
        return np.asarray(spec, dtype=object)


KEPT_BDATA = 16 * 1024  # characters: a typed array this long or shorter (2,048 float64s) is decoded once and kept


def _decode(bdata: str, dtype: str, shape) -> np.ndarray:
    out = np.frombuffer(base64.b64decode(bdata), dtype=_DTYPES[dtype])
    return out.reshape([int(s) for s in str(shape).split(",")]) if shape else out


@memo(entry_bytes=48 * 1024)  # 42 KB measured at KEPT_BDATA, the key included: tests/test_memo.py
def _decoded(bdata: str, dtype: str, shape) -> np.ndarray:
    """``_decode``, kept: a chart's curves are the same at every move of its control (a page's memo makes them),
    and the words under it read them again each time."""
    return _decode(bdata, dtype, shape)


def plain(text) -> str:
    """Plotly's rich text as plain words: <br> a space, every other tag dropped, entities read."""
    text = re.sub(r"<br\s*/?>", " ", str(text or ""), flags=re.I)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", text)).split())


@dataclass
class Description:
    """What a chart says: ``name`` (its accessible name), ``summary`` (sentences), ``rows`` (series, x, y).

    ``pieces``: the summary as (text, said) pieces, joined it is ``summary``; ``said`` names the piece that a live
    layer may write at rest (``live_words``): "<meta>:name" for a marked trace's name, "<meta>:<i>" for what it says of
    its point i, "<meta>:curve" for the sentence of a shaded area (the gate's bell) or of a curve that reaches beyond
    the chart's view (Step by step's), "label:<i>" for the layout's annotation i; None for the rest.  ``said_rows``:
    for each row of ``rows``, a marked trace's point i: "<meta>:<i>"; each of such a curve's rows: "<meta>:rows"; or
    None."""

    name: str
    summary: str
    columns: tuple[str, str, str] = ("Series", "x", "y")
    rows: list[tuple[str, str, str]] = field(default_factory=list)
    pieces: list[tuple[str, str | None]] = field(default_factory=list)
    said_rows: list[str | None] = field(default_factory=list)


def _title(axis) -> str:
    title = (axis or {}).get("title") or {}
    return plain(title.get("text") if isinstance(title, dict) else title)


def _sample(n: int) -> list[int]:
    if n <= TABLE_SAMPLES:
        return list(range(n))
    return sorted({round(i * (n - 1) / (TABLE_SAMPLES - 1)) for i in range(TABLE_SAMPLES)})


def _x_view(layout) -> tuple[float, float] | None:
    """The x axis's fixed range, when the layout sets one (the Approximations charts hold their curves over the
    range slider's whole span and show the chosen range)."""
    axis = layout.get("xaxis") or {}
    ends = axis.get("range")
    if axis.get("autorange") is True or not isinstance(ends, (list, tuple)) or len(ends) != 2:
        return None
    try:
        lo, hi = sorted(float(v) for v in ends)
    except (TypeError, ValueError):
        return None
    return (lo, hi) if axis.get("type") in (None, "-", "linear") else None


def describe(fig, *, keep: bool = True) -> Description:
    """The name, summary and table of a Plotly figure (a go.Figure, or its dict).  ``keep``: a curve's words are
    kept for the next call (``_kept_words``); off where many views of the same curves are described once (a live
    table's every step), which would crowd out the pages' own."""
    spec = _spec(fig)  # read only
    layout = spec.get("layout") or {}
    x_word, y_word = _title(layout.get("xaxis")) or "x", _title(layout.get("yaxis")) or _("value")
    chart_title = _title(layout)

    view = _x_view(layout)
    shown: list[str] = []  # the series a legend would list
    marks: list = []  # each a sentence, or a marked trace's (name, what it says of each point)
    curves: list[str] = []
    rows: list[tuple[str, str, str]] = []
    said_rows: list[str | None] = []
    metas: list = []  # each mark's trace's meta
    curve_said: list[str | None] = []  # each curve sentence's name for the live layer, or None
    for t in spec.get("data") or ():
        if t.get("visible", True) not in (True, None):
            continue
        kind, mode = t.get("type", "scatter"), t.get("mode") or ("lines" if t.get("type", "scatter") == "scatter"
                                                              else "")
        x, y, legend = t.get("x"), t.get("y"), t.get("showlegend", True) is not False
        if keep and _typed(x) and _typed(y):  # a curve as a page's memo made it, the same at every move: words kept
            words = _kept_words(kind, mode, t.get("name"), legend, _key(x), _key(y), view, x_word, y_word)
        else:
            words = _trace_words(kind, mode, t.get("name"), legend, values(x), values(y), view, x_word, y_word)
        meta = t.get("meta") if isinstance(t.get("meta"), str) else None
        # a curve whose words a control may change: a shaded area (its extent) or a curve that reaches beyond the
        # chart's view (Step by step's view follows x)
        area = meta if meta and words[2] and (t.get("fill") not in (None, "none") or _beyond(values(x), view)) else None
        if words[1] and meta and isinstance(words[1][0], tuple):  # marked points: each row is one
            said_rows += [f"{meta}:{i}" for i in range(len(words[3]))]
        else:  # such a curve's rows (the page names the first: ``as_html``)
            said_rows += [f"{area}:rows" if area else None] * len(words[3])
        metas += [meta] * len(words[1])
        curve_said += [f"{area}:curve" if area else None] * len(words[2])
        for kept, more in zip((shown, marks, curves, rows), words, strict=True):
            kept += more

    labels = [(i, text) for i, text in ((i, plain(a.get("text"))) for i, a in enumerate(layout.get("annotations") or ())
                                        if a.get("visible", True) is not False) if text]
    about = chart_title or _("{y} against {x}").format(y=y_word, x=x_word)
    name = (_("Chart: {about}, showing {series}").format(about=about, series=", ".join(shown)) if shown
            else _("Chart: {about}").format(about=about))
    sentences = [_pieces(_("{name} {points}."), name=[(m[0], f"{meta}:name" if meta else None)],
                         points=_joined([(said, f"{meta}:{i}" if meta else None) for i, said in enumerate(m[1])]))
                 if isinstance(m, tuple) else [(m, None)] for m, meta in zip(marks, metas, strict=True)]
    if labels:
        sentences.append(_pieces(_("Labels on the chart: {labels}."),
                                 labels=_joined([(text, f"label:{i}") for i, text in labels])))
    sentences += [[(c, said)] for c, said in zip(curves, curve_said, strict=True)]
    pieces = _joined(sentences, sep=" ") if sentences else []
    return Description(name=name, summary="".join(text for text, _said in pieces),
                       columns=(_("Series"), x_word, y_word), rows=rows, pieces=pieces, said_rows=said_rows)


def _spec(fig) -> dict:
    """A figure as its dict: a go.Figure's, a page's quick figure's own, or the dict itself."""
    from ui.theme import plain_spec

    return fig if isinstance(fig, dict) else plain_spec(fig) or fig.to_plotly_json()


def _joined(groups: list, sep: str = "; ") -> list[tuple[str, str | None]]:
    """Pieces (or lists of pieces) one after another with ``sep`` between them."""
    out: list[tuple[str, str | None]] = []
    for n, group in enumerate(groups):
        if n:
            out.append((sep, None))
        out += group if isinstance(group, list) else [group]
    return out


def _pieces(template: str, **fields: list[tuple[str, str | None]]) -> list[tuple[str, str | None]]:
    """A translated sentence with fields as pieces: its own words (None), each field's pieces where it stands."""
    import string

    out: list[tuple[str, str | None]] = []
    for literal, field_name, _spec, _conversion in string.Formatter().parse(template):
        if literal:
            out.append((literal, None))
        if field_name is not None:
            out += fields[field_name]
    return out


def _beyond(x: np.ndarray, view) -> bool:
    """Whether a curve's x reaches beyond the chart's view (None: no fixed view)."""
    if view is None or x.size == 0 or x.dtype == object:
        return False
    return bool(np.nanmin(x) < view[0] or np.nanmax(x) > view[1])


def _typed(v) -> bool:
    """A typed array short enough to keep (``KEPT_BDATA``)."""
    return isinstance(v, dict) and "bdata" in v and len(v["bdata"]) <= KEPT_BDATA


def _key(v: dict) -> tuple:
    """A typed array's base64, dtype and shape: ``_decode``'s arguments, and a key of the words kept."""
    return v["bdata"], v["dtype"], v.get("shape")


@words_memo(entry_bytes=64 * 1024)  # 45 KB measured, the key's two arrays included: tests/test_memo.py
def _kept_words(kind: str, mode: str, name, legend: bool, x: tuple, y: tuple, view, x_word: str, y_word: str) -> tuple:
    """``_trace_words`` of a trace whose x and y are typed arrays (``_key``: their base64, dtype and shape), kept."""
    return _trace_words(kind, mode, name, legend, _decoded(*x), _decoded(*y), view, x_word, y_word)


def _trace_words(kind: str, mode: str, raw_name, legend: bool, x: np.ndarray, y: np.ndarray, view, x_word: str,
                 y_word: str) -> tuple[list, list, list, list]:
    """What one trace adds to a chart's words: its name among the series a legend lists, its marked points, its
    curves' sentences and its rows of the data table (``describe``'s four lists)."""
    shown: list[str] = []
    marks: list[str] = []
    curves: list[str] = []
    rows: list[tuple[str, str, str]] = []
    name = plain(raw_name) or kind
    if kind not in ("scatter", "bar") or x.size == 0 or x.size != y.size or x.dtype == object:
        if kind in ("heatmap", "contour"):
            shown.append(name)
            curves.append(_("{name}: a map over {x} and {y}.").format(name=name, x=x_word, y=y_word))
        return shown, marks, curves, rows
    y = y.astype(float)
    if view and kind == "scatter" and x.dtype != object:  # a chart whose axis shows part of its data: that part
        inside = (x.astype(float) >= view[0]) & (x.astype(float) <= view[1])
        x, y = x[inside], y[inside]
        if x.size == 0:
            return shown, marks, curves, rows
    finite = np.isfinite(y) & np.isfinite(x.astype(float))
    if kind == "bar":
        shown.append(name)
        if finite.any():
            top = int(np.flatnonzero(finite)[np.argmax(y[finite])])
            curves.append(_("{name}: {n} bars over {x} from {first} to {last}; the tallest, {top}, at {at}.")
                          .format(name=name, n=x.size, x=x_word, first=number(x[0]), last=number(x[-1]),
                                  top=number(y[top]), at=number(x[top])))
        rows += [(name, number(a), number(b)) for a, b in zip(x, y, strict=True)]
    elif "lines" in mode and x.size > 1:
        if legend:
            shown.append(name)
        if finite.any():
            lo = int(np.flatnonzero(finite)[np.argmin(y[finite])])
            hi = int(np.flatnonzero(finite)[np.argmax(y[finite])])
            xs = x[finite]
            curves.append(_("{name}, for {x} from {first} to {last}: lowest {low} at {low_x}, highest {high} at "
                            "{high_x}.").format(name=name, x=x_word, first=number(xs[0]), last=number(xs[-1]),
                                                low=number(y[lo]), low_x=number(x[lo]), high=number(y[hi]),
                                                high_x=number(x[hi])))
        rows += [(name, number(x[i]), number(y[i])) for i in _sample(x.size)]
    elif x.size > MAX_POINTS_SAID:  # a cloud of points (the race's data)
        if finite.any():
            xs, ys = x[finite].astype(float), y[finite]
            marks.append(_("{name}: {n} points, {x} from {x_low} to {x_high}, {y} from {y_low} to {y_high}.")
                         .format(name=name, n=x.size, x=x_word, x_low=number(xs.min()),
                                 x_high=number(xs.max()), y=y_word, y_low=number(ys.min()),
                                 y_high=number(ys.max())))
        rows += [(name, number(x[i]), number(y[i])) for i in _sample(x.size)]
    else:  # marked points: a probe, a minimum, the largest error
        said = [said_of(point_words(x_word), number(a), number(b)) for a, b in zip(x, y, strict=True)]
        marks.append((name, said))  # "{name} {points}.", made by ``describe`` (its pieces: ``live_words``)
        rows += [(name, number(a), number(b)) for a, b in zip(x, y, strict=True)]
    return shown, marks, curves, rows


def point_words(x_word: str) -> str:
    """What the words say of a marked point, its two numbers still to fill ({a}, {b}: ``said_of``, or the live
    layer's at rest)."""
    return _("at {x} = {a} is {b}").replace("{x}", x_word)


def said_of(template: str, a: str, b: str) -> str:
    """``point_words``' template with the point's numbers, as the layer fills it (draw/live.js, ``settleWords``)."""
    return template.replace("{a}", a).replace("{b}", b)


def live_words(fig, chart: str, traces, labels=None, steps=None) -> dict:
    """What the live layer writes into a chart's words at rest (draw/live.js, ``settleWords``), at each step of its
    control, from the columns of its live table: for each marked trace of ``traces`` (by its ``meta``: a one-point
    probe, or a trace's point ``point``), its name where the table gives one, and its point's two numbers as the words
    write them (filled into ``point_words``' template); for each label of ``labels`` (annotation index -> its text with
    its markup at each step), its plain words.  ``fig``: the chart at any step (the x axis's word).  ``steps``: for a
    chart whose curves' words a control changes (the gate's shaded area, Step by step's view), ``describe``'s words of
    the chart at each step: the chart's name (it names the area) and each such curve's sentence and rows.  The page
    draws the words at the control's value; these are the pieces ``describe`` marks in them (``pieces``,
    ``said_rows``)."""
    x_word = _title((_spec(fig).get("layout") or {}).get("xaxis")) or "x"
    marks = {meta: {"point": int(t.get("point") or 0),
                    "name": [plain(n) for n in t["name"]] if t.get("name") is not None else None,
                    "x": [number(v) for v in t["x"]], "y": [number(v) for v in t["y"]]}
             for meta, t in traces.items()}
    words = {"chart": ident(chart), "said": point_words(x_word), "marks": marks,
             "labels": {i: [plain(text) for text in column] for i, column in (labels or {}).items()}}
    if steps is not None:
        words["names"] = [d.name for d in steps]
        curves: dict[str, dict[str, list]] = {}
        one: dict = {}  # each distinct value once: a curve's words repeat from step to step (a table kept per language)
        for k, d in enumerate(steps):
            for text, said in d.pieces:
                if said and said.endswith(":curve"):
                    meta = said.removesuffix(":curve")
                    area = curves.setdefault(meta, {c: [None] * len(steps) for c in ("name", "curve", "rows")})
                    rows = tuple(row for row, r in zip(d.rows, d.said_rows, strict=True) if r == f"{meta}:rows")
                    area["curve"][k] = one.setdefault(text, text)
                    area["rows"][k] = one.setdefault(tuple(row[1:] for row in rows), [list(row[1:]) for row in rows])
                    area["name"][k] = one.setdefault(rows[0][0], rows[0][0]) if rows else None
        words["curves"] = curves
    return words


def ident(key: str) -> str:
    """A chart's name as its words' ``data-chart`` and element ids hold it."""
    return re.sub(r"[^A-Za-z0-9_-]", "-", key)


def as_html(d: Description, key: str, *, announce: bool = True, said: bool = False) -> str:
    """The description as the page carries it: a visually hidden summary the chart is described by, and a
    disclosure with the data as a table.  ``announce``: the page's polite live region reads a changed summary
    (off for a chart redrawn many times a second).  ``said``: the pieces a live layer writes at rest named in it
    (``Description.pieces``, ``said_rows``: ``data-said`` on a span of the summary, on a row), for a chart whose
    layer's table holds its words (``live_words``)."""
    e = html.escape
    chart = ident(key)
    head = "".join(f"<th scope='col'>{e(c)}</th>" for c in d.columns)
    said_rows = (d.said_rows if said else None) or [None] * len(d.rows)
    named = [said if said != before else None for said, before in zip(said_rows, [None, *said_rows], strict=False)]
    body = "".join((f"<tr data-said='{e(said)}'>" if said else "<tr>") + "".join(f"<td>{e(v)}</td>" for v in row)
                   + "</tr>" for row, said in zip(d.rows, named, strict=True))  # a curve's rows: the first named
    summary = ("".join(f"<span data-said='{e(name)}'>{e(text)}</span>" if name else e(text) for text, name in d.pieces)
               if said and d.pieces else e(d.summary))
    disclosure = e(_("Chart data as a table"))
    return (
        f"<div class='gelu-chart-text' data-chart='{e(chart)}' data-name='{e(d.name)}'"
        f" data-announce='{'true' if announce else 'false'}'>"
        f"<p class='gelu-sr-only' id='gelu-chart-summary-{e(chart)}'>{summary}</p>"
        f"<details class='gelu-chart-data'><summary>{disclosure}</summary>"
        f"<div class='gelu-chart-table'><table><caption class='gelu-sr-only'>{e(d.name)}</caption>"
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div></details></div>"
    )
