"""What every page's script is made from: the controls' values by short name, and numbers written as literals."""

from __future__ import annotations

from collections.abc import Mapping
from string import Template
from typing import Any

from ui.controls import PageControls
from ui.format import full as number  # noqa: F401  a float as a literal that reads back the same

Values = Mapping[str, Any]

_CHOICES = {"segmented_control", "selectbox", "radio", "pills", "tabs"}


def settings(controls: PageControls, values: Values) -> dict[str, Any]:
    """Each control's value by its short name (``gate_x`` -> ``x``): from ``values`` by key, else the default.

    A value the control could not hold (None, an option it does not offer) falls back to the default too.

    >>> from ui.controls import GATE
    >>> settings(GATE, {"gate_x": -2.0, "elsewhere": 1})
    {'x': -2.0, 'mu': 0.0, 'sigma': 1.0}
    """
    out = {}
    for control in controls:
        value = values.get(control.key)
        if value is None:
            value = control.default
        elif control.widget in _CHOICES and value not in control.options["options"]:
            value = control.default
        elif control.widget == "multiselect":
            value = [v for v in value if v in control.options["options"]]
        out[control.key.removeprefix(controls.page + "_")] = value
    return out


def fill(template: str, **fields: Any) -> str:
    """The template with each ``$name`` replaced (every name must be given); no trailing blank lines."""
    return Template(template).substitute(fields).strip() + "\n"
