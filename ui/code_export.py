"""The code behind each view: a short, self-contained PyTorch/NumPy script that prints the numbers on screen.

Streamlit-free.  ``code_for(page, values)`` takes a page's url path and its controls' current values (by key,
as in ``ui.controls``) and returns the script as text, or None for a page without one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

Values = Mapping[str, Any]

EXPORTS: dict[str, Callable[[Values], str]] = {}


def code_for(page: str, values: Values) -> str | None:
    """The script that reproduces ``page``'s numbers for these control values, or None."""
    make = EXPORTS.get(page)
    return None if make is None else make(values)
