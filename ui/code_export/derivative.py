"""The Derivative script: the gradient each activation passes back at x, the nudge across 0, GELU's minimum and the
extremes of its slope (scipy's root finder and minimiser)."""

from __future__ import annotations

import gelu_core
from ui.code_export.common import Values, fill, number, settings
from ui.controls import DERIVATIVE

GATES = {  # approximate -> the gate and its slope, as functions of a float x
    "none": '''
def gate(x):
    """Phi(x), the standard normal CDF: the exact form's gate."""
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def gate_slope(x):
    """Phi'(x) = phi(x), the bell curve."""
    return math.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)
''',
    "tanh": '''
def gate(x):
    """The tanh form's gate (GPT-2): 0.5 * (1 + tanh(u)), u = sqrt(2/pi) * (x + 0.044715 * x^3)."""
    u = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)
    return 0.5 * (1.0 + math.tanh(u))


def gate_slope(x):
    """0.5 * (1 - tanh(u)^2) * du/dx: the chain rule through tanh."""
    u = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)
    du = math.sqrt(2.0 / math.pi) * (1.0 + 3 * 0.044715 * x**2)
    return 0.5 * (1.0 - math.tanh(u) ** 2) * du
''',
    "sigmoid": '''
def gate(x):
    """The sigmoid form's gate: sigmoid(1.702 * x)."""
    return 1.0 / (1.0 + math.exp(-1.702 * x))


def gate_slope(x):
    """1.702 * sigmoid(1.702 x) * (1 - sigmoid(1.702 x))."""
    return 1.702 * gate(x) * (1.0 - gate(x))
''',
}

TEMPLATE = '''
"""GELU Explorer, Derivative: the gradient ReLU and GELU ($form form) pass back, GELU's minimum and slope extremes."""

import math

from scipy.optimize import brentq, minimize_scalar

$gates

def gelu(x):
    return x * gate(x)


def gelu_slope(x):
    """GELU'(x) = gate(x) + x * gate'(x), the product rule."""
    return gate(x) + x * gate_slope(x)


def relu_slope(x):
    """ReLU'(x): 1 for x > 0, else 0 (ReLU'(0) = 0 by convention, as in PyTorch's autograd)."""
    return 1.0 if x > 0 else 0.0


def four(value):
    """Four decimals, no minus sign on a value that rounds to 0 (as the page)."""
    text = f"{value:.4f}"
    return text.lstrip("-") if float(text) == 0 else text


# The chain rule at one unit: dL/dx = dL/dy * act'(x), with a gradient dL/dy = 1 arriving from above
x = $x  # the unit's input
print(f"passed back by ReLU: {four(1.0 * relu_slope(x))}")
print(f"passed back by GELU ($form): {four(1.0 * gelu_slope(x))}")

# Smoothness: the slopes just left and right of 0
h = $h  # the nudge
left, right = gelu_slope(-h), gelu_slope(h)
change = abs(right - left)  # against ReLU's jump from 0 to 1
words = ("barely moves" if change < 0.05 else "moves a little" if change < 0.5
         else "moves, but less than ReLU's jump" if change < 1 else "moves more than ReLU's jump")
print(f"ReLU′ jumps: {relu_slope(-h):.0f} → {relu_slope(h):.0f} (+{relu_slope(h) - relu_slope(-h):.0f})")
print(f"GELU′ ($form) {words}: {four(left)} → {four(right)} ({right - left:+.4f})")

# Where GELU bottoms out: its slope crosses 0
bottom = brentq(gelu_slope, -2.0, -0.25, xtol=1e-15)
print(f"GELU's minimum: {four(gelu(bottom))} at x = {four(bottom)}")

# The slope's extremes: where GELU'' = 0 (for the exact form at -sqrt(2) and sqrt(2))
lowest = minimize_scalar(gelu_slope, bounds=(-3.0, -0.5), method="bounded", options={"xatol": 1e-12}).x
highest = minimize_scalar(lambda t: -gelu_slope(t), bounds=(0.5, 3.0), method="bounded", options={"xatol": 1e-12}).x
print(f"Lowest slope, GELU′: {four(gelu_slope(lowest))} at x = {four(lowest)}$left_root")
print(f"Highest slope, GELU′: {four(gelu_slope(highest))} at x = {four(highest)}$right_root")
'''


def script(values: Values) -> str:
    v = settings(DERIVATIVE, values)
    exact = v["form"] == "none"
    return fill(TEMPLATE, form=gelu_core.form_word(v["form"]), gates=GATES[v["form"]], x=number(v["x"]),
                h=number(v["nudge"]), left_root=" = -√2" if exact else "", right_root=" = √2" if exact else "")
