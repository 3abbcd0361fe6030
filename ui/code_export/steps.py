"""The Step-by-step script: one number through the tanh formula, a line per operation, and the exact form beside it.

Plain Python floats and gelu_core's own code for float64 numpy, as the page computes them (the operations from
``gelu_core.steps._unfold``, the gates' formulas, exact GELU from ``activations._gelu_of`` and the difference from
``analysis._difference_at_minus``): the seven values and the three readouts come out bit for bit as the page's, so
even the full-precision column matches.
"""

from __future__ import annotations

import gelu_core.steps
from gelu_core import activations, analysis
from gelu_core.activations import GATES
from gelu_core.steps import tanh_steps
from ui.code_export.common import Values, fill, number, settings, source
from ui.controls import STEPS
from ui.format import readable, six

TEMPLATE = '''
"""GELU Explorer, Step by step: x through GELU's tanh form, one operation a line, and the exact form beside it."""

$imports

# GELU Explorer's own formulas (gelu_core, here for float64 numpy) and number formats (ui/format.py)
$code


x = $x

cube, inner, constant, u, t, gate, gelu = unfold(x)  # each operation's value, as the page's table lists them

steps = {$steps
}
for label, value in steps.items():
    print(f"{label}: {six(value)}$full")$full_note

print(f"tanh form: {readable(gelu)}")
print(f"exact  x·Φ(x): {readable(float(gelu_of(x, phi)))}")  # Φ the standard normal CDF
difference = x if x == 0 else float(difference_at_minus(x, tanh_gate))  # ±0 at ±0, as x · 0
print(f"difference (tanh − exact): {sci(difference)}")
'''

NAMES = ("cube", "inner", "constant", "u", "t", "gate", "gelu")  # the script's name for each value unfold returns


def script(values: Values) -> str:
    v = settings(STEPS, values)
    labels = [step.label for step in tanh_steps(0.0)]
    full = "  {value!r}" if v["full"] else ""  # "Show every digit": the float64 value in full
    note = "  # six decimals, as the page; then every digit of the float64 value" if v["full"] else ""
    names = {"unfold": gelu_core.steps._unfold, "tanh_gate": GATES["tanh"], "phi": GATES["none"],  # as the page
             "gelu_of": activations._gelu_of, "difference_at_minus": analysis._difference_at_minus}
    return fill(TEMPLATE, x=number(v["x"]), full=full, full_note=note,
                steps="".join(f'\n    "{label}": {name},' for label, name in zip(labels, NAMES, strict=True)),
                code=source(six, readable, backend="numpy", names=names))
