"""The app's pages, declared once: one row each, in the lesson's order, the asides after it.

Pure: no Streamlit, no server.  Everything that lists the pages reads this table: app.py's navigation (url path,
title, icon, section), the frame's lesson furniture (goal, question, Previous/Next, the controls), the code for
each view (``code_for``), Home's where-next cards (``card``), the tests and harness/browser.py.  A page is its
script, ``pages/<url_path>.py``, its pure module, ``ui/<url_path>.py`` (its ``CONTROLS``, ``QUESTION``, words,
figures, and ``code(values)``, the script behind its view; each optional), and its row here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

from ui import approximations, curves, derivative, ffn, gate, home, steps, training
from ui.code_export import Values
from ui.controls import LESSON_FORM, PageControls
from ui.i18n import N_
from ui.lesson import Question


@dataclass(frozen=True)
class Page:
    """One page: where it lives, how the navigation shows it, and what the frame draws around it."""

    url_path: str  # also the script's name: pages/<url_path>.py
    title: str
    icon: str  # a Material Symbols name, ":material/...:" (the font ships with Streamlit)
    goal: str  # the lesson's goal line above the page
    card: str | None  # Home's where-next card: what a visitor finds there (None: no card)
    module: ModuleType | None = None  # the page's pure module: its CONTROLS, QUESTION and code(values)
    aside: bool = False  # off the lesson's path: in the sidebar's "Aside" section
    waits: bool = False  # its run can wait long on shared work (the race and its Stop, the lab's line): it runs in
    # the app's run, which a click interrupts, not as a fragment, whose click waits for the run in progress to end

    @property
    def file(self) -> str:
        return f"pages/{self.url_path}.py"

    @property
    def question(self) -> Question | None:
        """Predict, then check: the page's question, asked before what answers it."""
        return getattr(self.module, "QUESTION", None)

    @property
    def controls(self) -> PageControls | None:
        """What a teacher sets (bound to the URL)."""
        return getattr(self.module, "CONTROLS", None)

    @property
    def code(self) -> Callable[[Values], str] | None:
        """The script behind the view, from the controls' values."""
        return getattr(self.module, "code", None)

    @property
    def live_tables(self) -> Callable[[str], list[tuple[Callable, tuple]]] | None:
        """The live tables a first visit at the controls' defaults draws, in a lesson form."""
        return getattr(self.module, "live_tables", None)

    @property
    def default(self) -> bool:
        """The page at the app's root url (the first row)."""
        return self.url_path == next(iter(PAGES))


PAGES: dict[str, Page] = {p.url_path: p for p in (
    Page("home", N_("Home"), ":material/home:",
         N_("see in one minute what GELU does that ReLU does not."),
         None,
         home),
    Page("gate", N_("The gate"), ":material/door_open:",
         N_("read GELU's gate Φ(x) as a probability, and see where it comes from."),
         N_("where Φ(x) comes from: the area under the bell curve, and the bouncer at the door."),
         gate),
    Page("curves", N_("Curves"), ":material/show_chart:",
         N_("compare the two curves over a range: where they agree, and where they part."),
         N_("both curves on one range: probe any x, overlay sigmoid, SiLU and friends."),
         curves),
    Page("derivative", N_("Derivative"), ":material/trending_up:",
         N_("see the gradient, the slope that training follows back, and why a slope of 0 stops a unit from "
            "learning."),
         N_("the gradient: ReLU passes back nothing for a negative input, GELU a little."),
         derivative),
    Page("steps", N_("Step by step"), ":material/stairs:",
         N_("follow one number through the tanh formula, one small operation at a time."),
         N_("one number through the tanh formula, line by line."),
         steps),
    Page("ffn", N_("Feed-forward lab"), ":material/hub:",
         N_("run GPT-2's feed-forward block and see what the activation changes, forwards and backwards."),
         N_("GPT-2's 768 → 3072 → 768 block on tensors you upload, forwards and backwards."),
         ffn, waits=True),
    Page("training", N_("Training race"), ":material/sprint:",
         N_("watch ReLU and GELU learn the same task from the same start, and count the units that stop "
            "learning."),
         N_("ReLU and GELU learn the same task from the same start: watch units die."),
         training, waits=True),
    Page("approximations", N_("Approximations"), ":material/compare:",
         N_("see how close the cheaper formulas come to exact GELU, and what a framework really returns."),
         N_("Exact against tanh against sigmoid, and what your framework really computes."),
         approximations, aside=True),
)}

ORDER = tuple(p.url_path for p in PAGES.values() if not p.aside)  # the lesson's path, first to last
ASIDES = tuple(p.url_path for p in PAGES.values() if p.aside)  # each returns to "steps", where it branches off

# views of the table, by url path
EXPORTS: dict[str, Callable[[Values], str]] = {p.url_path: p.code for p in PAGES.values() if p.code}


def code_for(page: str, values: Values) -> str | None:
    """The script that reproduces ``page``'s numbers for these control values (by key, as in ``ui.controls``;
    a key left out, or a value the control cannot hold, counts as its default), or None."""
    make = EXPORTS.get(page)
    return None if make is None else make(values)


def make_live_tables(form: str = LESSON_FORM.default) -> int:
    """Every page's live tables at its controls' defaults, in ``form`` and the current language, as the layer receives
    them (``ui.live.as_json``), made and kept: hosting.warm makes them on a fresh server before it says it is ready,
    so that a class's first visits find them (each is up to 300 ms of one core, the Approximations range's).  How
    many there are."""
    from ui.live import as_json

    made = 0
    for row in PAGES.values():
        for table, args in row.live_tables(form) if row.live_tables else ():
            as_json(table, *args)
            made += 1
    return made


def neighbours(page: str, available: tuple[str, ...]) -> tuple[str | None, str | None]:
    """(previous, next) url paths of ``page`` in the lesson, among the pages the app has.

    >>> neighbours("gate", ("home", "gate", "curves")), neighbours("approximations", ("home", "steps"))
    (('home', 'curves'), ('steps', None))
    """
    order = [p for p in ORDER if p in available]
    if page in order:
        i = order.index(page)
        return (order[i - 1] if i > 0 else None), (order[i + 1] if i + 1 < len(order) else None)
    if page in ASIDES and "steps" in order:  # an aside returns to where it branches off
        return "steps", None
    return None, None


def position(page: str, available: tuple[str, ...]) -> tuple[int, int] | None:
    """(n, of) for a lesson page among the pages the app has; None for an aside."""
    order = [p for p in ORDER if p in available]
    return (order.index(page) + 1, len(order)) if page in order else None
