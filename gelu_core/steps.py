"""The tanh approximation of GELU unfolded into the small operations it is made of."""

from __future__ import annotations

import math
from dataclasses import dataclass

from gelu_core.activations import SQRT_2_OVER_PI, TANH_COEF, gelu, gelu_gate


@dataclass(frozen=True)
class Step:
    """One line of the unfolded formula: what it is, how it is computed, its value."""

    label: str
    expression: str
    value: float


def tanh_steps(x: float) -> list[Step]:
    """GELU_tanh(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), one operation a line.

    Values are float64.  The gate is the same number as 0.5 * (1 + tanh(u)) but
    is taken from ``gelu_gate`` (sigmoid(2u)), so it stays exact where
    1 + tanh(u) would cancel (x below about -9); the last line is ``gelu`` itself
    (x * gate, and 0 rather than -inf * 0 at x = -inf).

    >>> [f"{s.value:.6f}" for s in tanh_steps(1.0)]
    ['1.000000', '1.044715', '0.797885', '0.833562', '0.682384', '0.841192', '0.841192']
    """
    x = float(x)
    cube = x * x * x
    inner = x + TANH_COEF * cube
    u = SQRT_2_OVER_PI * inner
    t = math.tanh(u)
    gate = gelu_gate(x, approximate="tanh")
    return [
        Step("x³", "x · x · x", cube),
        Step("x + 0.044715·x³", "add the cubic correction", inner),
        Step("√(2/π)", "a constant", SQRT_2_OVER_PI),
        Step("u = √(2/π) · (x + 0.044715·x³)", "scale", u),
        Step("tanh(u)", "squash into (−1, 1)", t),
        Step("gate = 0.5 · (1 + tanh(u))", "shift into (0, 1): the gate", gate),
        Step("GELU(x) = x · gate", "multiply the input by its gate", gelu(x, approximate="tanh")),
    ]
