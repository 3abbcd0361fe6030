"""Every control a teacher sets, on every page, declared once: widget, key (= URL parameter), default, range.

A page draws a control with ``st.<widget>(**CONTROL.kwargs())``.  Streamlit binds it to the URL itself
(``bind="query-params"``): moving it writes its value into the address bar, and a link with that value
brings it back.  So the share link is simply the page's URL (the sidebar copies it in the browser).

Each page's row in ``ui.pages`` names its controls.  The declarations serve two more readers: ``url_problem``
tells a value a link may carry from one the control cannot take (out of range, not a number, not an option,
repeated), so that the frame drops it with a note before Streamlit sees it; and the presenter view hides
controls by key.  No Streamlit import here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import gelu_core
from gelu_core import ACTIVATIONS, form_word
from ui.format import fixed, local
from ui.i18n import N_, _

# the keyword that carries a widget's initial value differs between widgets
_DEFAULT_ARG = {"multiselect": "default", "segmented_control": "default", "pills": "default", "tabs": "default"}
_CHOICE_WIDGETS = {"segmented_control", "selectbox", "radio", "pills"}


def _short(text: str, width: int = 24) -> str:
    text = text.replace("\n", " ")
    return text if len(text) <= width else text[: width - 1] + "…"


@dataclass(frozen=True)
class Control:
    """One widget a teacher sets: drawn as ``st.<widget>(**kwargs())``, bound to the URL under ``key``."""

    widget: str  # "slider", "number_input", "segmented_control", "selectbox", "multiselect", "tabs", ...
    key: str  # page-prefixed; also the URL parameter
    label: str
    default: Any
    options: Mapping[str, Any] = field(default_factory=dict)  # the widget's other keyword arguments
    bound: bool = True  # False: a helper widget that follows another (not in the URL)

    def kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``st.<widget>``: label, initial value, key, ``bind="query-params"``, options; the
        label, help and placeholder in the reader's language (a choice's words stay as the URL holds them)."""
        default = list(self.default) if isinstance(self.default, list) else self.default
        args: dict[str, Any] = {"key": self.key, **self.options}
        for words in ("help", "placeholder"):
            if isinstance(args.get(words), str):
                args[words] = _(args[words])
        if self.widget == "tabs":
            args["tabs"] = args.pop("options")
        else:
            args["label"] = _(self.label)
        if self.widget == "selectbox":
            args["index"] = tuple(self.options["options"]).index(default)
        else:
            args[_DEFAULT_ARG.get(self.widget, "value")] = default
        if self.bound:
            args["bind"] = "query-params"
        return args

    def choices(self) -> list[str]:
        """What the URL may hold for a choice widget: each option as shown (through ``format_func``)."""
        shown = self.options.get("format_func", str)
        return [shown(o) for o in self.options["options"]]

    def shown(self, value: Any) -> str:
        """A value as the page shows it (for the note that the default is back)."""
        if isinstance(value, (tuple, list)):
            return " … ".join(self.shown(v) for v in value) if value else _("none")
        if isinstance(value, bool):
            return _("on") if value else _("off")
        if isinstance(value, float):
            digits = re.search(r"\.(\d+)f", self.options.get("format", "%.2f"))
            return fixed(value, int(digits.group(1)) if digits else 2)
        if "format_func" in self.options:
            return self.options["format_func"](value)
        return str(value)

    def url_problem(self, values: list[str]) -> str | None:
        """Why these URL values cannot set this control, in a few words; None when they can.

        >>> x = Control("slider", "gate_x", "x", 1.0, dict(min_value=-4.0, max_value=4.0))
        >>> x.url_problem(["2.5"]), x.url_problem(["inf"]), x.url_problem(["1", "2"]), x.url_problem([""])
        (None, 'inf is not between -4 and 4', 'takes one value, not 2', 'is empty')
        """
        w = self.widget
        if w in ("slider", "number_input"):
            wanted = len(self.default) if isinstance(self.default, (tuple, list)) else 1
            integer = isinstance(self.options.get("min_value", self.default), int)
            return _numbers_problem(values, wanted, integer, self.options["min_value"], self.options["max_value"])
        if w in _CHOICE_WIDGETS or w == "tabs":
            if len(values) != 1:
                return _("takes one value, not {n}").format(n=len(values))
            if values[0] not in self.choices():
                return _("“{value}” is not one of {options}").format(value=_short(values[0]),
                                                                      options=", ".join(self.choices()))
            return None
        if w == "multiselect":
            if values == [""]:
                return None  # Streamlit's own way of writing "none chosen"
            unknown = [v for v in values if v not in self.choices()]
            if unknown:
                return _("“{value}” is not one of {options}").format(value=_short(unknown[0]),
                                                                      options=", ".join(self.choices()))
            if len(set(values)) != len(values):
                return _("names an option twice")
            return None
        if w == "toggle":
            return None if len(values) == 1 and values[0].lower() in ("true", "false") else _("is not true or false")
        if w == "text_input":
            if len(values) != 1:
                return _("takes one value, not {n}").format(n=len(values))
            most = self.options.get("max_chars")
            return _("is longer than {n} characters").format(n=most) if most and len(values[0]) > most else None
        raise ValueError(f"no URL rule for widget {w!r}")


def _numbers_problem(values: list[str], wanted: int, integer: bool, lo, hi) -> str | None:
    if values == [""]:
        return _("is empty")
    if len(values) != wanted:
        if wanted == 1:
            return _("takes one value, not {n}").format(n=len(values))
        return _("takes {wanted} values, not {n}").format(wanted=wanted, n=len(values))
    for text in values:
        if len(text) > 32:  # no control's value needs more characters; int() of a huge one is slow
            return _("“{value}” is too long for a number").format(value=_short(text))
        try:
            v = int(text) if integer else float(text)
        except ValueError:
            return (_("“{value}” is not a whole number") if integer else _("“{value}” is not a number")).format(
                value=_short(text))
        if not (integer or math.isfinite(v)) or not lo <= v <= hi:
            return _("{value} is not between {low} and {high}").format(
                value=_short(text), low=local(f"{lo:g}"), high=local(f"{hi:g}"))
    return None


@dataclass(frozen=True)
class PageControls:
    """The controls of one page, looked up by their short name (``CURVES["x"]`` is key ``curves_x``)."""

    page: str  # the page's url_path
    controls: tuple[Control, ...]
    renamed: Mapping[str, str] = field(default_factory=dict)  # an old link's key -> the control's key now

    def __getitem__(self, name: str) -> Control:
        """The control named ``name`` on this page (key ``<page>_<name>``), or the lesson-wide one keyed ``name``."""
        for key in (f"{self.page}_{name}", name):
            for c in self.controls:
                if c.key == key:
                    return c
        raise KeyError(f"{self.page}_{name}")

    def __iter__(self) -> Iterator[Control]:
        return iter(self.controls)

    def url_problems(self, query: Mapping[str, list[str]]) -> dict[str, str]:
        """key -> problem for every bound control whose URL values it cannot take (others are left alone)."""
        problems = {}
        for c in self.controls:
            if c.bound and c.key in query:
                problem = c.url_problem(list(query[c.key]))
                if problem:
                    problems[c.key] = problem
        return problems


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
        raise ValueError(_("Type a few numbers separated by commas, for example: -2, -1, 0, 1, 2"))
    if len(tokens) > MAX_POINTS:
        raise ValueError(_("That is {n} numbers; the table takes at most {most}.").format(n=len(tokens),
                                                                                          most=MAX_POINTS))
    values = []
    for token in tokens:
        try:
            v = float(token)
        except ValueError:
            raise ValueError(_("“{value}” is not a number. Use digits, a minus sign and a dot, like -0.5").format(
                value=token[:20])) from None
        if not math.isfinite(v) or abs(v) > MAX_ABS_POINT:
            raise ValueError(_("“{value}” is too large: keep each number between -1e6 and 1e6.").format(
                value=token[:20]))
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

def short_label(name: str) -> str:
    return ACTIVATIONS[name].short


def param_range(activation: str, param: str) -> dict[str, float]:
    """A slider's bounds for an activation's parameter, as the registry declares them."""
    lo, hi = ACTIVATIONS[activation].param_ranges[param]
    return dict(min_value=lo, max_value=hi)


# the URL holds exact|tanh|sigmoid
GELU_FORM = dict(options=gelu_core.APPROXIMATE, format_func=form_word, required=True)

# The GELU form of the whole lesson: tanh, as GPT-2 and the book's chapter 4 compute it, until the student chooses
# another.  One control, drawn above every page whose CONTROLS include it (draw.lesson.lesson_top), kept from page
# to page and in the link (?form=exact).
LESSON_FORM = Control("segmented_control", "form", N_("GELU form, on every page"), "tanh",
                      dict(GELU_FORM, help=N_("tanh is what GPT-2 and the book's chapter 4 compute; exact is x·Φ(x); "
                                              "sigmoid is x·σ(1.702x). Every page of the lesson uses the form you "
                                              "choose here.")))
LAB_ACTIVATIONS = ("gelu_tanh", "gelu", "gelu_sigmoid", "relu", "silu", "leaky_relu", "elu", "softplus", "sigmoid",
                   "tanh")
