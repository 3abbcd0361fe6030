"""Landmarks of the GELU curves: the minimum, the slope's extremes, approximation error."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy import optimize

from gelu_core.activations import gelu, gelu_gate, gelu_grad


class Point(NamedTuple):
    """A landmark: where (x) and how much (value)."""

    x: float
    value: float


def gelu_minimum(approximate: str = "none") -> Point:
    """GELU's lowest point, where GELU'(x) = 0: exact form x = -0.751792, GELU = -0.169971.

    >>> p = gelu_minimum(); round(p.x, 6), round(p.value, 6)
    (-0.751792, -0.169971)
    """
    x = optimize.brentq(lambda t: gelu_grad(t, approximate), -2.0, -0.25, xtol=1e-15, maxiter=200)
    return Point(x, gelu(x, approximate))


def gelu_grad_extremes(approximate: str = "none") -> tuple[Point, Point]:
    """The smallest and largest slope of GELU (exact: at x = -sqrt 2 and +sqrt 2, GELU'' = phi(x)(2 - x^2) = 0).

    >>> lo, hi = gelu_grad_extremes(); round(lo.value, 6), round(hi.value, 6)
    (-0.128904, 1.128904)
    """
    if approximate == "none":
        r = math.sqrt(2.0)
        return Point(-r, gelu_grad(-r)), Point(r, gelu_grad(r))
    lo = optimize.minimize_scalar(lambda t: gelu_grad(t, approximate), bounds=(-4.0, 0.0), method="bounded",
                                  options={"xatol": 1e-12})
    hi = optimize.minimize_scalar(lambda t: -gelu_grad(t, approximate), bounds=(0.0, 4.0), method="bounded",
                                  options={"xatol": 1e-12})
    return (Point(float(lo.x), gelu_grad(float(lo.x), approximate)),
            Point(float(hi.x), gelu_grad(float(hi.x), approximate)))


def approximation_error(x, approximate: str):
    """(absolute, relative) error of an approximate GELU against the exact one, in float64.

    Relative error is |approx - exact| / |exact|; it is NaN at x = 0, where both are 0.
    """
    x = np.asarray(x, dtype=np.float64)
    exact = gelu(x)
    diff = np.abs(gelu(x, approximate) - exact)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(exact != 0, diff / np.abs(exact), np.nan)
    return diff, rel


def worst_error(approximate: str, lo: float = 0.0, hi: float = 10.0) -> Point:
    """Largest absolute error of an approximation on [lo, hi].

    The error is even in x (GELU(x) - GELU(-x) = x in every form), so [0, hi] covers both sides.

    >>> p = worst_error("tanh"); round(p.x, 2), f"{p.value:.2e}"
    (2.7, '4.73e-04')
    """
    grid = np.linspace(lo, hi, 4001)
    err, _ = approximation_error(grid, approximate)
    i = int(np.argmax(err))
    a, b = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    res = optimize.minimize_scalar(lambda t: -float(approximation_error(t, approximate)[0]), bounds=(a, b),
                                   method="bounded", options={"xatol": 1e-12})
    return Point(float(res.x), float(approximation_error(res.x, approximate)[0]))


def gaussian_gate(x, mu: float = 0.0, sigma: float = 1.0):
    """The generalised gate: CDF of N(mu, sigma^2) at x; sigma = 0 is the hard step (x > mu), so x * gate is ReLU.

    >>> float(gaussian_gate(2.0)), float(gaussian_gate(0.5, sigma=0.0))
    (0.9772498680518208, 1.0)
    """
    x = np.asarray(x, dtype=np.float64)
    if sigma < 0:
        raise ValueError("sigma must be >= 0")
    if sigma == 0:
        return np.where(x > mu, 1.0, 0.0)
    return gelu_gate((x - mu) / sigma)
