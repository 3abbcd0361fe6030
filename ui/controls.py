"""The teaching controls of each page, declared once: widget, URL key, default.

A page draws a control with ``st.<widget>(**control.kwargs())``; the sidebar
builds the share link from the same declarations (``link_params``), so the
link holds exactly the values on screen that differ from their defaults, in
the form Streamlit itself writes into the URL.  No Streamlit import here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

# the keyword that carries a widget's initial value differs between widgets
_DEFAULT_ARG = {"multiselect": "default", "segmented_control": "default", "pills": "default"}


@dataclass(frozen=True)
class Control:
    """One widget a teacher sets: drawn as ``st.<widget>(**kwargs())``, bound to the URL under ``key``."""

    widget: str  # "slider", "number_input", "multiselect", "segmented_control", "text_input", ...
    key: str  # page-prefixed; also the URL parameter
    label: str
    default: Any
    options: Mapping[str, Any] = field(default_factory=dict)  # the widget's other keyword arguments

    def kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``st.<widget>``: label, initial value, key, ``bind="query-params"``, options."""
        default = list(self.default) if isinstance(self.default, list) else self.default
        return {
            "label": self.label,
            _DEFAULT_ARG.get(self.widget, "value"): default,
            "key": self.key,
            "bind": "query-params",
            **self.options,
        }

    def url_values(self, value: Any) -> list[str]:
        """The URL values Streamlit writes for ``value`` (repeated key for lists); [] for the default."""
        if _same(value, self.default):
            return []
        fmt: Callable[[Any], str] = self.options.get("format_func", str)
        items = list(value) if isinstance(value, (list, tuple)) else [value]
        return [_url_text(v, fmt) for v in items]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _url_text(v: Any, fmt: Callable[[Any], str]) -> str:
    """Streamlit's URL form: 5.0 -> "5", 0.25 -> "0.25", True -> "true", options through format_func."""
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, float):
        return str(int(v)) if math.isfinite(v) and v == int(v) else repr(v)
    if isinstance(v, int):
        return str(v)
    return fmt(v)


@dataclass(frozen=True)
class PageControls:
    """The controls of one page, looked up by their short name (``CURVES["x"]`` is key ``curves_x``)."""

    page: str  # the page's url_path
    controls: tuple[Control, ...]

    def __getitem__(self, name: str) -> Control:
        key = f"{self.page}_{name}"
        for c in self.controls:
            if c.key == key:
                return c
        raise KeyError(key)

    def __iter__(self):
        return iter(self.controls)


def link_params(controls: Iterable[Control], state: Mapping[str, Any]) -> dict[str, list[str]]:
    """URL parameters for the values in ``state`` (session state) that differ from their control's default.

    >>> c = Control("slider", "curves_x", "x", -1.0)
    >>> link_params([c], {"curves_x": 1.5}), link_params([c], {"curves_x": -1.0})
    ({'curves_x': ['1.5']}, {})
    """
    params = {}
    for c in controls:
        if c.key in state:
            values = c.url_values(state[c.key])
            if values:
                params[c.key] = values
    return params


# ------------------------------------------------------------------ parsing

MAX_POINTS = 25
MAX_ABS_POINT = 1e6
_SEPARATORS = re.compile(r"[,;\s]+")


def parse_points(text: str | None) -> list[float]:
    """Numbers typed by a person: "-2, -1, 0, 1, 2" (commas, semicolons or spaces; − or - as minus).

    Raises ValueError with a message fit to show as is.

    >>> parse_points("−2, -1; 0 1e0 2.5")
    [-2.0, -1.0, 0.0, 1.0, 2.5]
    """
    cleaned = (text or "").replace("\u2212", "-").replace("\u2013", "-").strip()
    tokens = [t for t in _SEPARATORS.split(cleaned) if t]
    if not tokens:
        raise ValueError("Type a few numbers separated by commas, for example: -2, -1, 0, 1, 2")
    if len(tokens) > MAX_POINTS:
        raise ValueError(f"That is {len(tokens)} numbers; the table takes at most {MAX_POINTS}.")
    values = []
    for token in tokens:
        try:
            v = float(token)
        except ValueError:
            raise ValueError(f"“{token[:20]}” is not a number. Use digits, a minus sign and a dot, like -0.5") from None
        if not math.isfinite(v) or abs(v) > MAX_ABS_POINT:
            raise ValueError(f"“{token[:20]}” is too large: keep each number between -1e6 and 1e6.")
        values.append(v)
    return values


def ordered_range(lo: float, hi: float, *, widen: float = 1.0) -> tuple[float, float]:
    """A usable plotting range from a range slider's two values: swapped if reversed (a URL can hold
    ``?curves_range=2&curves_range=-1``), widened by ``widen`` on each side if both ends coincide.

    >>> ordered_range(2.0, -1.0), ordered_range(1.0, 1.0)
    ((-1.0, 2.0), (0.0, 2.0))
    """
    lo, hi = sorted((float(lo), float(hi)))
    if hi == lo:
        lo, hi = lo - widen, hi + widen
    return lo, hi


# ------------------------------------------------------------------ the controls of each page

GELU_FORM_OPTIONS = ("exact", "tanh", "sigmoid")
FORM_TO_APPROXIMATE = {"exact": "none", "tanh": "tanh", "sigmoid": "sigmoid"}

OVERLAY_LABELS = {  # registry name -> short label (the label is also what the URL holds)
    "sigmoid": "Sigmoid",
    "tanh": "Tanh",
    "silu": "SiLU",
    "leaky_relu": "Leaky ReLU",
    "elu": "ELU",
    "softplus": "Softplus",
    "gelu": "GELU exact",
    "gelu_tanh": "GELU tanh",
    "gelu_sigmoid": "GELU sigmoid",
}

HOME_DEFAULT_INPUTS = (-2.0, -1.0, 0.0, 1.0, 2.0)  # the source's torch.tensor([-2., -1., 0., 1., 2.])

HOME = PageControls("home", tuple(
    Control("number_input", f"home_x{i + 1}", f"x{i + 1}", v,
            dict(min_value=-20.0, max_value=20.0, step=0.5, format="%.2f"))
    for i, v in enumerate(HOME_DEFAULT_INPUTS)
))

CURVES = PageControls("curves", (
    Control("slider", "curves_range", "Range of x", (-3.0, 3.0),
            dict(min_value=-10.0, max_value=10.0, step=0.5, format="%.1f")),
    Control("slider", "curves_n", "Points on each curve", 100,
            dict(min_value=2, max_value=1000, step=1,
                 help="The source draws 100 points: torch.linspace(-3, 3, 100).")),
    Control("slider", "curves_x", "Probe x", -1.0,
            dict(min_value=-10.0, max_value=10.0, step=0.01, format="%.2f")),
    Control("segmented_control", "curves_form", "GELU form", "tanh",
            dict(options=GELU_FORM_OPTIONS, required=True,
                 help="tanh is what GPT-2 and the book's chapter 4 compute; exact is x·Φ(x).")),
    Control("multiselect", "curves_more", "Overlay other activations", [],
            dict(options=tuple(OVERLAY_LABELS), format_func=OVERLAY_LABELS.__getitem__,
                 placeholder="Sigmoid, Tanh, SiLU, ...")),
    Control("slider", "curves_slope", "Leaky ReLU slope a", 0.01,
            dict(min_value=0.0, max_value=0.5, step=0.01, format="%.2f")),
    Control("slider", "curves_alpha", "ELU α", 1.0,
            dict(min_value=0.1, max_value=3.0, step=0.1, format="%.1f")),
    Control("text_input", "curves_points", "Values at these x", "-2, -1, 0, 1, 2",
            dict(max_chars=200, help="Numbers separated by commas, at most 25.")),
))

GATE = PageControls("gate", (
    Control("slider", "gate_x", "x", 1.0, dict(min_value=-4.0, max_value=4.0, step=0.01, format="%.2f")),
    Control("slider", "gate_mu", "μ (where the gate is half open)", 0.0,
            dict(min_value=-2.0, max_value=2.0, step=0.1, format="%.1f")),
    Control("slider", "gate_sigma", "σ (how soft the gate is)", 1.0,
            dict(min_value=0.0, max_value=3.0, step=0.05, format="%.2f",
                 help="σ = 0 is the hard step: x·gate becomes ReLU.")),
))

DERIVATIVE = PageControls("derivative", (
    Control("segmented_control", "derivative_form", "GELU form", "exact",
            dict(options=GELU_FORM_OPTIONS, required=True)),
    Control("slider", "derivative_nudge", "Nudge h: compare the slopes at −h and +h", 0.01,
            dict(min_value=0.001, max_value=1.0, step=0.001, format="%.3f")),
))

PAGE_CONTROLS: dict[str, PageControls] = {p.page: p for p in (HOME, CURVES, GATE, DERIVATIVE)}


# ------------------------------------------------------------------ how numbers read on screen

def fmt(value: float, digits: int = 4) -> str:
    """A number for a reader: fixed decimals, a true minus sign, never "−0.0000".

    >>> fmt(-0.158808), fmt(-1e-9), fmt(2.0, 2)
    ('−0.1588', '0.0000', '2.00')
    """
    text = f"{value:.{digits}f}"
    if float(text) == 0:
        text = text.lstrip("-")
    return text.replace("-", "\u2212")


def percent(p: float) -> str:
    """A probability as a percentage, never rounded to a false 0 % or 100 %: two significant digits
    of the distance to the nearer end below 1 % and above 99 %, else one decimal.

    >>> percent(0.9772498680518208), percent(0.5), percent(0.0013498980316301), percent(0.99996832875816688)
    ('97.7%', '50.0%', '0.13%', '99.9968%')
    """
    pct = 100.0 * p
    if pct <= 0 or pct >= 100:
        return f"{pct:.0f}%"
    if pct < 1:
        return f"{pct:.2g}%"
    if pct > 99:
        decimals = max(1, 1 - math.floor(math.log10(100.0 - pct)))
        return f"{pct:.{decimals}f}%"
    return f"{pct:.1f}%"
