"""The Derivative script: the gradient each activation passes back at x, the nudge across 0, GELU's minimum and the
extremes of its slope (scipy's root finder and minimiser)."""

from __future__ import annotations

import gelu_core
from gelu_core import activations
from gelu_core.activations import ACTIVATIONS, GATE_SLOPES, GATES
from gelu_core.analysis import MINIMUM_BRACKET, SLOPE_EXTREME_BRACKETS
from ui.code_export.common import Values, fill, number, settings, source
from ui.controls import DERIVATIVE
from ui.derivative import change_words
from ui.format import fixed

TEMPLATE = '''
"""GELU Explorer, Derivative: the gradient ReLU and GELU ($form form) pass back, GELU's minimum and slope extremes."""

$imports

# GELU Explorer's own formulas (gelu_core, here for float64 numpy), the page's words and number format
$code


def gelu(x):
    return gelu_of(x, gate)


def gelu_slope(x):
    return gelu_slope_of(x, gate, gate_slope)


# The chain rule at one unit: dL/dx = dL/dy * act'(x), with a gradient dL/dy = 1 arriving from above
x = $x  # the unit's input
print(f"passed back by ReLU: {fixed(1.0 * relu_grad(x))}")  # ReLU'(0) = 0, as PyTorch's autograd
print(f"passed back by GELU ($form): {fixed(1.0 * gelu_slope(x))}")

# Smoothness: the slopes just left and right of 0
h = $h  # the nudge
left, right = gelu_slope(-h), gelu_slope(h)
jump = relu_grad(h) - relu_grad(-h)  # ReLU's slope jumps from 0 to 1
print(f"ReLU′ jumps: {fixed(relu_grad(-h), 0)} → {fixed(relu_grad(h), 0)} (+{fixed(jump, 0)})")
print(f"GELU′ ($form) {change_words(abs(right - left), jump)}: {fixed(left)} → {fixed(right)} ({right - left:+.4f})")

# Where GELU bottoms out: its slope crosses 0
bottom = brentq(gelu_slope, $minimum_bracket, xtol=1e-15)
print(f"GELU's minimum: {fixed(gelu(bottom))} at x = {fixed(bottom)}")

# The slope's extremes: where GELU'' = 0 (for the exact form at -sqrt(2) and sqrt(2))
lowest = minimize_scalar(gelu_slope, bounds=$low_bounds, method="bounded", options={"xatol": 1e-12}).x
highest = minimize_scalar(lambda t: -gelu_slope(t), bounds=$high_bounds, method="bounded", options={"xatol": 1e-12}).x
print(f"Lowest slope, GELU′: {fixed(gelu_slope(lowest))} at x = {fixed(lowest)}$left_root")
print(f"Highest slope, GELU′: {fixed(gelu_slope(highest))} at x = {fixed(highest)}$right_root")
'''


def script(values: Values) -> str:
    v = settings(DERIVATIVE, values)
    gate, slope = GATES[v["form"]], GATE_SLOPES[v["form"]]
    exact = v["form"] == "none"
    low, high = (f"({number(a)}, {number(b)})" for a, b in SLOPE_EXTREME_BRACKETS)  # the page's own brackets
    return fill(TEMPLATE, form=gelu_core.form_word(v["form"]), x=number(v["x"]), h=number(v["nudge"]),
                minimum_bracket=", ".join(number(e) for e in MINIMUM_BRACKET), low_bounds=low, high_bounds=high,
                left_root=" = -√2" if exact else "", right_root=" = √2" if exact else "",
                code=source(change_words, fixed, backend="numpy",
                            names={"relu_grad": ACTIVATIONS["relu"].slope_formula, "gate": gate, "gate_slope": slope,
                                   "gelu_of": activations._gelu_of, "gelu_slope_of": activations._gelu_slope_of}))
