"""Landmarks of the GELU curves: the minimum, the slope's extremes, approximation error."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from gelu_core._backend import evaluate
from gelu_core.activations import (
    GATES,
    SIGMOID_COEF,
    SQRT_2_OVER_PI,
    TANH_COEF,
    _check,
    _gaussian_gate,
    _phi,
    gelu,
    gelu_grad,
    normal_pdf,
    sigmoid_grad,
)


def _brentq(*args, **kwargs):
    """scipy's brentq, imported on first use: the pages that never ask for a landmark start faster."""
    from scipy.optimize import brentq

    return brentq(*args, **kwargs)


MINIMUM_BRACKET = (-2.0, -0.25)  # GELU's slope changes sign once in here, in every form
SLOPE_EXTREME_BRACKETS = ((-3.0, -0.5), (0.5, 3.0))  # the lowest and the highest slope, one in each


class Point(NamedTuple):
    """A landmark: where (x) and how much (value)."""

    x: float
    value: float


def gelu_minimum(approximate: str = "none") -> Point:
    """GELU's lowest point, where GELU'(x) = 0: exact form x = -0.751792, GELU = -0.169971.

    >>> p = gelu_minimum(); round(p.x, 6), round(p.value, 6)
    (-0.751792, -0.169971)
    """
    x = _brentq(lambda t: gelu_grad(t, approximate), *MINIMUM_BRACKET, xtol=1e-15, maxiter=200)
    return Point(x, gelu(x, approximate))


def _gelu_second(x: float, approximate: str) -> float:
    """GELU''(x) = 2 gate'(x) + x gate''(x), in float64; for the sigmoid-shaped gates, with gate = sigmoid(t):
    gate' = t' p and gate'' = t'' p + t'^2 p (1 - 2 sigmoid(t)), where p = sigmoid(t) sigmoid(-t)."""
    if approximate == "none":
        return normal_pdf(x) * (2.0 - x * x)
    if approximate == "tanh":
        t = 2.0 * SQRT_2_OVER_PI * (x + TANH_COEF * x * x * x)
        dt = 2.0 * SQRT_2_OVER_PI * (1.0 + 3.0 * TANH_COEF * x * x)
        d2t = 12.0 * SQRT_2_OVER_PI * TANH_COEF * x
    else:
        t, dt, d2t = SIGMOID_COEF * x, SIGMOID_COEF, 0.0
    p = sigmoid_grad(t)
    one_minus_2s = -math.tanh(0.5 * t)  # = 1 - 2 sigmoid(t), without the cancellation
    return 2.0 * dt * p + x * (d2t * p + dt * dt * p * one_minus_2s)


def gelu_grad_extremes(approximate: str = "none") -> tuple[Point, Point]:
    """The smallest and largest slope of GELU (exact: at x = -sqrt 2 and +sqrt 2, GELU'' = phi(x)(2 - x^2) = 0).

    The approximations' extremes are the roots of their GELU'', found to the last digit (a search on GELU'
    itself would stop at ~1e-8, where the curve is flat to float64).  GELU'(-x) = 1 - GELU'(x) in every form,
    so the two points mirror each other.

    >>> lo, hi = gelu_grad_extremes(); round(lo.value, 6), round(hi.value, 6)
    (-0.128904, 1.128904)
    """
    if approximate == "none":
        r = math.sqrt(2.0)
        return Point(-r, gelu_grad(-r)), Point(r, gelu_grad(r))
    (a, b), (c, d) = SLOPE_EXTREME_BRACKETS
    lo = _brentq(lambda t: _gelu_second(t, approximate), a, b, xtol=1e-15, maxiter=200)
    hi = _brentq(lambda t: _gelu_second(t, approximate), c, d, xtol=1e-15, maxiter=200)
    return Point(lo, gelu_grad(lo, approximate)), Point(hi, gelu_grad(hi, approximate))


def _difference_at_minus(ops, x, gate):
    """An approximate GELU (its gate) minus the exact one at -|x|: |x| times a difference of two small gates, exact
    to the last digit (at +|x| it would be a difference of two numbers near x, losing the digits that matter: at
    x = 8, all).  The same number as at x: x · (gate(x) - Phi(x)) is even in x, every gate having
    gate(-x) = 1 - gate(x); 0 at ±inf, where both forms reach the same limits."""
    m = -ops.abs(x)
    return ops.where(ops.isinf(x), 0.0, m * (gate(ops, m) - _phi(ops, m)))


def approximation_difference(x, approximate: str):
    """approximate GELU(x) - exact GELU(x), signed, to the last digit in float64.

    It is x · (gate(x) - Φ(x)).  For x > 0 both gates are near 1 and their difference loses every digit that
    matters, so it is taken as x · (Φ(-x) - gate(-x)), the same number (gate(-x) = 1 - gate(x) for every form),
    a difference of two small gates.

    >>> f"{approximation_difference(1.0, 'tanh'):.4e}", f"{approximation_difference(9.0, 'tanh'):.4e}"
    ('-1.5276e-04', '1.0157e-18')
    """
    x = np.asarray(x, dtype=np.float64)
    diff = np.where(x == 0, x, evaluate(_difference_at_minus, x, GATES[_check(approximate)]))  # ±0 at ±0, as x · 0
    return float(diff) if diff.ndim == 0 else diff


def approximation_error(x, approximate: str):
    """(absolute, relative) error of an approximate GELU against the exact one, in float64.

    Relative error is |approx - exact| / |exact|; it is NaN at x = 0, where both are 0.
    The error is even in x, so it is taken at -|x|, exact to the last digit (``_difference_at_minus``).
    """
    x = np.asarray(x, dtype=np.float64)
    exact = gelu(x)
    diff = evaluate(_difference_at_minus, x, GATES[_check(approximate)])  # a new array: written in place below
    np.abs(diff, out=diff)  # in place: a scalar x keeps giving 0-d arrays
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(exact != 0, diff / np.abs(exact), np.nan)
    return diff, rel


def worst_error(approximate: str, lo: float = 0.0, hi: float = 10.0, points: int = 4001) -> Point:
    """Largest absolute error of an approximation on [lo, hi].

    The error is even in x (GELU(x) - GELU(-x) = x in every form), so [0, hi] covers both sides.  An interior
    maximum is the root of the error's slope, GELU_approx' - GELU', found to the last digit at -|x|.

    >>> p = worst_error("tanh"); round(p.x, 2), f"{p.value:.2e}"
    (2.7, '4.73e-04')
    """
    grid = np.linspace(lo, hi, points)  # the peak found on a grid, then refined between its neighbours
    err, _ = approximation_error(grid, approximate)
    i = int(np.argmax(err))
    left, right = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    if i in (0, grid.size - 1) or left < 0.0 < right:
        return Point(float(grid[i]), float(err[i]))  # at an end of the range (the error is 0 at x = 0)
    a, b = -max(abs(left), abs(right)), -min(abs(left), abs(right))

    def slope(t):
        return gelu_grad(t, approximate) - gelu_grad(t)

    if slope(a) * slope(b) > 0:
        return Point(float(grid[i]), float(err[i]))
    root = _brentq(slope, a, b, xtol=1e-15, maxiter=200)
    x = root if right <= 0.0 else -root
    return Point(float(x), float(approximation_error(x, approximate)[0]))


def gaussian_gate(x, mu: float = 0.0, sigma: float = 1.0):
    """The generalised gate: CDF of N(mu, sigma^2) at x; sigma = 0 is the hard step (x > mu), so x * gate is ReLU.

    >>> float(gaussian_gate(2.0)), float(gaussian_gate(0.5, sigma=0.0))
    (0.9772498680518208, 1.0)
    """
    if sigma < 0:
        raise ValueError("sigma must be >= 0")
    return evaluate(_gaussian_gate, np.asarray(x, dtype=np.float64), float(mu), float(sigma))
