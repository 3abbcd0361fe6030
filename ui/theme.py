"""One palette and one chart frame for every page.

Each function keeps its colour and dash everywhere (ReLU is always dash-dotted
vermillion, exact GELU solid blue, ...).  The first four colours are from the
Okabe-Ito colour-blind-safe set; all are mid-tones with at least 3:1 contrast
on both the light (#ffffff) and the dark (#0e1117) background, and any two are
at least 15 apart in CIEDE2000 (tests/test_ui_theme.py).  Charts keep a
transparent background so Streamlit's theme shows through.
"""

from __future__ import annotations

import base64
import json

import numpy as np
import plotly.graph_objects as go

from ui.i18n import memo

COLORS: dict[str, str] = {
    "relu": "#D55E00",  # vermillion
    "gelu": "#0072B2",  # blue: exact GELU, x * Phi(x)
    "gelu_tanh": "#009E73",  # bluish green: GPT-2's tanh form
    "gelu_sigmoid": "#CC79A7",  # reddish purple
    "sigmoid": "#9A7B00",  # dark gold
    "tanh": "#00898F",  # teal
    "silu": "#8E6BBF",  # violet
    "leaky_relu": "#D42A45",  # crimson
    "elu": "#8B5A2B",  # brown
    "softplus": "#6B8E23",  # olive
}
NEUTRAL = "#8a94a6"  # axes, guides, reference lines: mid grey on either theme

# Every activation has a dash of its own, so no curve is told from another by colour alone (a reader who does not
# see the colours, a grey printout, colours that simulated colour-vision deficiency brings close: tests/
# test_ui_theme.py); and leaky ReLU and ELU lie on ReLU for every x > 0, the three GELU forms on one another,
# sigmoid on softplus far left: the one on top never hides the one below.  Plotly's named dashes, then dash
# lengths in px.
DASHES: dict[str, str] = {
    "relu": "dashdot", "gelu": "solid", "gelu_tanh": "dash", "gelu_sigmoid": "dot", "leaky_relu": "longdash",
    "elu": "longdashdot", "silu": "12px,4px,3px,4px,3px,4px", "sigmoid": "3px,9px", "tanh": "24px,6px",
    "softplus": "2px,4px,8px,4px",
}

FONT_FAMILY = "Source Sans Pro, Inter, system-ui, sans-serif"


def color(name: str) -> str:
    """The colour of a registry activation (grey for anything unknown)."""
    return COLORS.get(name, NEUTRAL)


def rgba(hex_color: str, alpha: float) -> str:
    """A "#rrggbb" colour with an opacity, as Plotly takes it: rgba("#1f77b4", 0.35) -> "rgba(31,119,180,0.35)"."""
    r, g, b = (int(hex_color[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def separators() -> str:
    """Plotly's ``separators`` for the reader's language: its decimal sign, then its grouping sign (ui.format).

    >>> from ui.i18n import using
    >>> with using("de"):
    ...     separators()
    ',.'
    """
    from ui.format import local

    return local(".,")


def base_figure(x_title: str, y_title: str, *, height: int = 420) -> go.Figure:
    """An empty figure in the house style: labelled axes, zero lines, hover across traces."""
    fig = go.Figure()
    fig.update_layout(
        height=height,
        margin=dict(l=10, r=10, t=30, b=10),
        paper_bgcolor="rgba(0,0,0,0)",
        plot_bgcolor="rgba(0,0,0,0)",
        font=dict(family=FONT_FAMILY, size=14),
        hovermode="x unified",
        legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="left", x=0),
        dragmode=False,
        separators=separators(),
    )
    axis = dict(
        zeroline=True,
        zerolinecolor=NEUTRAL,
        zerolinewidth=1,
        gridcolor="rgba(138,148,166,0.25)",
        linecolor=NEUTRAL,
        tickfont=dict(size=13),
    )
    # a long axis title on two lines: at 320 CSS px one line of an x title is wider than the plot, and on a phone at
    # 200 % one line of a y title is longer than the plot is tall and runs into the legend above the plot
    fig.update_xaxes(title_text=short_lines(x_title, AXIS_LINE), **axis)
    fig.update_yaxes(title_text=short_lines(y_title, AXIS_LINE), **axis)
    return fig


# ---------------------------------------------------------------- fast path for pages that redraw on every move
# plotly's validators cost about 1 ms a trace and 9 ms for base_figure's layout; a page that redraws on each
# slider move assembles plain dicts instead (same look, same palette) and its tests validate the result with
# ``go.Figure(fig.to_dict())``.

@memo(entry_bytes=16 * 1024)  # a layout's JSON: 7 KB measured
def _base_layout_json(x_title: str, y_title: str, height: int) -> str:
    return base_figure(x_title, y_title, height=height).layout.to_json()


def base_layout(x_title: str, y_title: str, *, height: int = 420) -> dict:
    """base_figure's layout as a fresh dict (built once per title pair, then copied)."""
    return json.loads(_base_layout_json(x_title, y_title, height))


# Characters a line holds in a chart 163 px wide (195 CSS px, a 390 px phone at 200 %, less the page's padding), in
# 14 px type (about 6 px a character): a legend entry (after its 40 px sample), an axis title.
LEGEND_LINE, AXIS_LINE = 18, 22


def legend_name(text: str, most: int = LEGEND_LINE) -> str:
    """A legend entry's name on lines of at most ``most`` characters: ``short_lines``."""
    return short_lines(text, most)


def short_lines(text: str, most: int) -> str:
    """Text on lines of at most ``most`` characters (``<br>`` between): Plotly never wraps a legend's or an axis
    title's text, so one long line is cut at the chart's edge on a narrow screen.  A line ends after a colon or
    an equals sign where one falls within it, else at its last space; a short text is left as it is.  A ``<br>``
    already in the text (a break placed by hand, where the words' sense falls) is kept, each part cut on its own.

    >>> legend_name("GELU (exact): training")
    'GELU (exact):<br>training'
    >>> legend_name("gate = 0.5·(1 + tanh u)")
    'gate =<br>0.5·(1 + tanh u)'
    >>> legend_name("ReLU: test")
    'ReLU: test'
    >>> short_lines("activation<br>output act(h)", 22)
    'activation<br>output act(h)'
    """
    if "<br>" in text:
        return "<br>".join(short_lines(part, most) for part in text.split("<br>"))
    lines, rest = [], text
    while len(rest) > most:
        spaces = [i for i, c in enumerate(rest[:most + 1]) if c == " "]
        if not spaces:
            break
        marked = [i for i in spaces if rest[i - 1] in ":="]
        cut = (marked or spaces)[-1]
        lines.append(rest[:cut])
        rest = rest[cut + 1:]
    return "<br>".join([*lines, rest])


def line_trace(x, y, *, name: str, key: str, width: float = 3, dash: str | None = None,
               hover_format: str = ".4f", **extra) -> dict:
    """One activation's curve as a trace dict, in its house colour and dash."""
    return dict(
        type="scatter", x=x, y=y, mode="lines", name=name, meta=key,
        line=dict(color=color(key), width=width, dash=dash or DASHES.get(key, "solid")),
        hovertemplate=f"%{{y:{hover_format}}}<extra>{name}</extra>",
        **extra,
    )


def marker_trace(x, y, *, name: str, key: str, text: str | None = None, symbol: str = "circle",
                 size: int = 12, textposition: str = "top left") -> dict:
    """Points (a probe, a minimum) in the colour of the curve they sit on; ``symbol="circle-open"`` for an
    excluded end point."""
    x = list(x) if isinstance(x, (list, tuple)) else [x]
    y = list(y) if isinstance(y, (list, tuple)) else [y]
    open_ = symbol.endswith("-open")
    return dict(
        type="scatter", x=x, y=y, mode="markers+text" if text else "markers", name=name,
        text=[text] * len(x) if isinstance(text, str) else text, textposition=textposition,
        marker=dict(color=color(key), size=size, symbol=symbol,
                    line=dict(color=color(key) if open_ else "white", width=2)),
        # the name read from the trace at hover: the live layer renames a probe it moves (draw/live.js, settle)
        hovertemplate="x = %{x:.4f}<br>%{y:.4f}<extra>%{fullData.name}</extra>",
        showlegend=False, meta=f"marker:{key}",
    )


_TYPED = {"float64": "f8", "float32": "f4", "int8": "i1", "uint8": "u1", "int16": "i2", "uint16": "u2",
          "int32": "i4", "uint32": "u4"}


def typed_array(values: np.ndarray) -> dict | np.ndarray:
    """A numpy array as plotly.js's typed-array spec (what Plotly itself writes when it serialises one): dtype and
    base64 bytes, 64-bit integers narrowed as Plotly narrows them.  Done here because Plotly's own path passes every
    array through narwhals, whose per-call imports contend for Python's import lock when a class's sessions draw
    together (a fifth of the server's time under 30 students)."""
    if values.size == 0:
        return values
    if values.dtype.kind in "iu" and values.dtype.itemsize == 8:
        lo, hi = int(values.min()), int(values.max())
        for kind in ((np.uint8, np.uint16, np.uint32) if values.dtype.kind == "u" else (np.int8, np.int16, np.int32)):
            info = np.iinfo(kind)
            if info.min <= lo and hi <= info.max:
                values = values.astype(kind)
                break
    code = _TYPED.get(str(values.dtype))
    if code is None:
        return values
    spec = {"dtype": code, "bdata": base64.b64encode(np.ascontiguousarray(values)).decode("ascii")}
    if values.ndim > 1:
        spec["shape"] = str(values.shape)[1:-1]
    return spec


def typed(obj):
    """Every numeric numpy array inside a trace (or layout) as a typed-array spec, in place; a property set to None
    left out, as plotly leaves it out (a list keeps its None: a gap in a line).  A layout's template is left as it is:
    plotly's JSON, read back (``base_layout``, ``_template_json``), holds neither."""
    if isinstance(obj, dict):
        for key in [k for k, v in obj.items() if v is None]:
            del obj[key]
    items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    for key, value in items:
        if isinstance(value, np.ndarray) and value.dtype.kind in "iuf":
            obj[key] = typed_array(value)
        elif isinstance(value, (dict, list)) and key != "template":
            typed(value)
    return obj


class QuickFigure(go.Figure):
    """A Figure that keeps the plain dicts it is made of (``spec``: data and layout as plotly.js reads them) and
    builds plotly's objects from them only when something asks for those (a test's ``fig.data``, ``fig.to_dict()``).
    Drawing needs none of them (``draw.frame.chart`` draws the spec), so a page's figure never costs plotly's
    objects.  Made any other way (a copy, unpickled) it is a plain Figure."""

    def __init__(self, *args, spec: dict | None = None, **kwargs):
        if spec is None:
            super().__init__(*args, **kwargs)
        else:
            self.__dict__["_quick_spec"] = spec  # BaseFigure's own __setattr__ would look the name up first

    def __getattr__(self, name: str):
        # only for what normal lookup did not find: plotly's own state, built here on first use, from then on the
        # figure's (a change to it is plotly's to make and to draw)
        held = self.__dict__
        if "_quick_spec" not in held or held.get("_quick_building"):
            raise AttributeError(name)
        spec = held.pop("_quick_spec")
        held["_quick_building"] = True
        try:
            go.Figure.__init__(self, data=spec["data"], layout=spec["layout"], _validate=False)
        finally:
            del held["_quick_building"]
        return getattr(self, name)


def plain_spec(fig) -> dict | None:
    """A figure's data and layout as plotly.js reads them, while plotly has built no objects of its own from them
    (a ``QuickFigure``'s ``spec``, read only); None for any other figure (plotly holds it: ask plotly)."""
    return fig.__dict__.get("_quick_spec") if isinstance(fig, QuickFigure) else None


@memo(entry_bytes=16 * 1024)  # 7 KB measured
def _template_json() -> str:
    """Plotly's default template (what a Figure puts in a layout that names none), as JSON."""
    return json.dumps(go.Figure().layout.template.to_plotly_json())


def quick_figure(traces: list[dict], layout: dict) -> go.Figure:
    """A Figure from plain dicts without plotly's (slow) validation, its arrays already in Plotly's typed-array
    form (``typed_array``), a layout without a template given plotly's default one as a Figure is; validate in tests
    instead.  Plotly's own objects are built only if asked for (``QuickFigure``)."""
    if "template" not in layout:
        layout["template"] = json.loads(_template_json())
    return QuickFigure(spec={"data": [typed(t) for t in traces], "layout": typed(layout)})
