"""The code behind each view: a short, self-contained PyTorch/NumPy script that prints the numbers on screen.

Streamlit-free.  ``code_for(page, values)`` takes a page's url path and its controls' current values (by key,
as in ``ui.controls``; a key left out, or a value the control cannot hold, counts as its default) and returns
the script as text, or None for a page without one.  One module per page, its ``script(values)`` registered in
``EXPORTS``.  The scripts import only torch, numpy and scipy (never this repository: a student copies one into
a notebook), print each number labelled as the page labels it, to the digits the page shows, and
``tests/test_code_export.py`` runs each against the page.
"""

from __future__ import annotations

from collections.abc import Callable

from ui.code_export import approximations, curves, derivative, ffn, gate, home, steps, training
from ui.code_export.common import Values

EXPORTS: dict[str, Callable[[Values], str]] = {  # by the page's url_path, as ui.controls.PAGE_CONTROLS
    "home": home.script,
    "gate": gate.script,
    "curves": curves.script,
    "derivative": derivative.script,
    "steps": steps.script,
    "ffn": ffn.script,
    "training": training.script,
    "approximations": approximations.script,
}


def code_for(page: str, values: Values) -> str | None:
    """The script that reproduces ``page``'s numbers for these control values, or None."""
    make = EXPORTS.get(page)
    return None if make is None else make(values)
