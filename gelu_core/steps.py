"""The tanh approximation of GELU unfolded into the small operations it is made of."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from gelu_core._backend import NumpyOps
from gelu_core.activations import SQRT_2_OVER_PI, TANH_COEF, _at_infinity, _tanh_gate


@dataclass(frozen=True)
class Step:
    """One line of the unfolded formula: what it is, how it is computed, its value."""

    label: str
    expression: str
    value: float


def tanh_steps(x: float) -> list[Step]:
    """GELU_tanh(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), one operation a line.

    Values are float64.  The gate is the same number as 0.5 * (1 + tanh(u)) but
    is the tanh form's own gate (sigmoid(2u), as ``gelu_gate``), so it stays exact
    where 1 + tanh(u) would cancel (x below about -9); the last line is GELU as
    ``gelu`` computes it (x * gate, and 0 rather than -inf * 0 at x = -inf).

    >>> [f"{s.value:.6f}" for s in tanh_steps(1.0)]
    ['1.000000', '1.044715', '0.797885', '0.833562', '0.682384', '0.841192', '0.841192']
    """
    with np.errstate(all="ignore"):  # inf and NaN go through as the formula takes them
        values = _unfold(NumpyOps, float(x))
    return [Step(label, expression, value) for (label, expression), value in zip(LINES, values, strict=True)]


LINES = (  # each operation of the unfolded formula: its label and what it does
    ("x³", "x · x · x"),
    ("x + 0.044715·x³", "add the cubic correction"),
    ("√(2/π)", "a constant"),
    ("u = √(2/π) · (x + 0.044715·x³)", "scale"),
    ("tanh(u)", "squash into (−1, 1)"),
    ("gate = 0.5 · (1 + tanh(u))", "shift into (0, 1): the gate"),
    ("GELU(x) = x · gate", "multiply the input by its gate"),
)


def _unfold(ops, x):
    """x (a float) through the tanh formula, one small operation at a time: x³, the cubic correction, √(2/π), u,
    tanh(u), the gate and GELU."""
    cube = x * x * x  # x³
    inner = x + TANH_COEF * cube  # x + 0.044715·x³, the cubic correction
    u = SQRT_2_OVER_PI * inner  # u = √(2/π) · (x + 0.044715·x³)
    t = math.tanh(u)  # tanh(u), in (-1, 1)
    gate = float(_tanh_gate(ops, x))  # 0.5 · (1 + tanh(u)), as sigmoid(2u): never 1 + tanh(u) ≈ 1 - 1 far left
    gelu = float(_at_infinity(ops, x, x * gate, 0.0, x))  # GELU(x) = x · gate (0 at x = -inf, not -inf · 0)
    return cube, inner, SQRT_2_OVER_PI, u, t, gate, gelu
