"""The Step-by-step script: one number through the tanh formula, a line per operation, and the exact form beside it.

Plain Python floats and gelu_core's own gate formulas for float64 numpy (as the page computes them): the seven
values and the three readouts come out bit for bit as the page's, so even the full-precision column matches.
"""

from __future__ import annotations

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

cube = x * x * x  # x³
inner = x + TANH_COEF * cube  # x + 0.044715·x³, the cubic correction
constant = SQRT_2_OVER_PI  # √(2/π)
u = constant * inner  # u = √(2/π) · (x + 0.044715·x³)
t = math.tanh(u)  # tanh(u), in (-1, 1)
gate = float(tanh_gate(x))  # 0.5 · (1 + tanh(u)), as sigmoid(2u): never 1 + tanh(u) ≈ 1 - 1 far left
gelu = x * gate  # GELU(x) = x · gate

steps = {$steps
}
for label, value in steps.items():
    print(f"{label}: {six(value)}$full")$full_note

print(f"tanh form: {readable(gelu)}")
print(f"exact  x·Φ(x): {readable(float(x * phi(x)))}")  # Φ the standard normal CDF
# The difference x · (gate(x) - Φ(x)) is the same at -x and x (gate(-x) = 1 - gate(x) for both forms); for x > 0
# both gates are near 1 and subtracting them loses the digits that matter, so it is taken at -|x|
m = -abs(x)
difference = x if x == 0 else float(m * (tanh_gate(m) - phi(m)))
print(f"difference (tanh − exact): {sci(difference)}")
'''

NAMES = ("cube", "inner", "constant", "u", "t", "gate", "gelu")  # the script's name for each of gelu_core's steps


def script(values: Values) -> str:
    v = settings(STEPS, values)
    labels = [step.label for step in tanh_steps(0.0)]
    full = "  {value!r}" if v["full"] else ""  # "Show every digit": the float64 value in full
    note = "  # six decimals, as the page; then every digit of the float64 value" if v["full"] else ""
    names = {"tanh_gate": GATES["tanh"], "phi": GATES["none"]}
    constants = ("gelu_core.steps:TANH_COEF", "gelu_core.steps:SQRT_2_OVER_PI")  # tanh_steps' own
    return fill(TEMPLATE, x=number(v["x"]), full=full, full_note=note,
                steps="".join(f'\n    "{label}": {name},' for label, name in zip(labels, NAMES, strict=True)),
                code=source(*constants, six, readable, backend="numpy", names=names))
