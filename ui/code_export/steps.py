"""The Step-by-step script: one number through the tanh formula, a line per operation, and the exact form beside it.

Plain Python floats (the page's own arithmetic, float64), numpy's exp and scipy's erfc: the seven values and the
three readouts come out bit for bit as the page computes them, so even the full-precision column matches.
"""

from __future__ import annotations

from ui.code_export.common import Values, fill, number, settings
from ui.controls import STEPS

TEMPLATE = '''
"""GELU Explorer, Step by step: x through GELU's tanh form, one operation a line, and the exact form beside it."""

import math

import numpy as np
from scipy.special import erfc


def six(value):
    """Six decimals, no minus sign on a value that rounds to 0 (as the page)."""
    text = f"{value:.6f}"
    return text.lstrip("-") if float(text) == 0 else text


def readable(value):
    """Six decimals, or scientific notation where six decimals would show a non-zero number as 0."""
    return six(value) if value == 0 or abs(value) >= 5e-7 else f"{value:.3e}"


x = $x

cube = x * x * x  # x³
inner = x + 0.044715 * cube  # x + 0.044715·x³, the cubic correction
constant = math.sqrt(2.0 / math.pi)  # √(2/π)
u = constant * inner  # u = √(2/π) · (x + 0.044715·x³)
t = math.tanh(u)  # tanh(u), in (-1, 1)
# gate = 0.5 · (1 + tanh(u)) = sigmoid(2u), written so that it never computes 1 + tanh(u) ≈ 1 - 1 far left
# (x below about -9, where that sum cancels to 0 and the tiny true gate would be lost)
e = float(np.exp(-abs(2.0 * u)))  # in (0, 1]; numpy's exp, as the page (math.exp may differ in the last digit)
gate = 1.0 / (1.0 + e) if u >= 0 else e / (1.0 + e)
gelu = x * gate  # GELU(x) = x · gate

steps = {
    "x³": cube,
    "x + 0.044715·x³": inner,
    "√(2/π)": constant,
    "u = √(2/π) · (x + 0.044715·x³)": u,
    "tanh(u)": t,
    "gate = 0.5 · (1 + tanh(u))": gate,
    "GELU(x) = x · gate": gelu,
}
for label, value in steps.items():
    print(f"{label}: {six(value)}$full")$full_note

exact = x * 0.5 * erfc(-x / math.sqrt(2.0))  # x·Φ(x), Φ the standard normal CDF
print(f"tanh form: {readable(gelu)}")
print(f"exact  x·Φ(x): {readable(exact)}")


def gates_at(z):
    """(tanh gate, exact gate Φ) at z."""
    e = float(np.exp(-abs(2.0 * constant * (z + 0.044715 * z**3))))
    tanh_gate = 1.0 / (1.0 + e) if z >= 0 else e / (1.0 + e)
    return tanh_gate, 0.5 * erfc(-z / math.sqrt(2.0))


# The difference x · (gate(x) - Φ(x)): for x > 0 both gates are near 1 and subtracting them loses the digits
# that matter, so it is taken at -x, where the gates are small: gate(-x) = 1 - gate(x) for both forms.
tanh_gate, phi = gates_at(-abs(x))
difference = -abs(x) * (tanh_gate - phi) if x > 0 else x * (gate - 0.5 * erfc(-x / math.sqrt(2.0)))
print(f"difference (tanh − exact): {difference:.3e}")
'''


def script(values: Values) -> str:
    v = settings(STEPS, values)
    full = "  {value!r}" if v["full"] else ""  # "Show every digit": the float64 value in full
    note = "  # six decimals, as the page; then every digit of the float64 value" if v["full"] else ""
    return fill(TEMPLATE, x=number(v["x"]), full=full, full_note=note)
