"""tanh_steps: the tanh formula one operation a line, held to mpmath and to the source's printout."""

from __future__ import annotations

import numpy as np
import pytest
from mpmath import mp

from gelu_core import Step, gelu, gelu_gate, tanh_steps
from tests import reference as ref

# The notes' unfolding of x = 1, line by line, to 6 decimals.
SOURCE_AT_ONE = ["1.000000", "1.044715", "0.797885", "0.833562", "0.682384", "0.841192", "0.841192"]


def mp_steps(x: float) -> list:
    """The same seven lines at 50 digits, the decimal constant 0.044715 exactly."""
    with mp.workdps(ref.DPS):
        x = mp.mpf(x)
        cube = x ** 3
        inner = x + mp.mpf(ref.TANH_COEF) * cube
        k = mp.sqrt(2 / mp.pi)
        u = k * inner
        t = mp.tanh(u)
        gate = 1 / (1 + mp.exp(-2 * u))  # = (1 + tanh u) / 2, which would cancel even at 50 digits for u < -58
        return [cube, inner, k, u, t, gate, x * gate]


def test_source_lines_at_one():
    """Each of the source's 6-decimal figures is the 50-digit value rounded (reference: mpmath), and
    gelu_core's value prints as that figure."""
    steps = tanh_steps(1.0)
    exact = mp_steps(1.0)
    assert len(steps) == len(SOURCE_AT_ONE) == 7
    for step, true, stated in zip(steps, exact, SOURCE_AT_ONE, strict=True):
        assert abs(true - mp.mpf(stated)) <= mp.mpf("0.5e-6"), (step.label, stated)
        assert f"{step.value:.6f}" == stated, (step.label, step.value)


X_VALUES = [1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 0.1, -0.1, 7.5, -7.5, -9.5, -12.0, -20.0, 1e-8, 15.0]


@pytest.mark.parametrize("x", X_VALUES)
def test_each_step_against_mpmath(x):
    """Reference: the 50-digit lines.  Tolerance, relative: 4 eps for x^3, the cubic sum, the constant, u
    and tanh(u) (a few roundings each, nothing cancels); 8 (1 + x^2) eps for the gate and GELU (the
    contract of test_accuracy: in the tail the gate is exp(2u), which turns u's rounding into |2u| eps).
    At x = -9.5 and below, 0.5 (1 + tanh u) computed literally would be 0; the gate line is not."""
    steps = tanh_steps(x)
    exact = mp_steps(x)
    eps = np.finfo(np.float64).eps
    tolerances = [4 * eps] * 5 + [8 * (1 + x * x) * eps] * 2
    for step, true, tol in zip(steps, exact, tolerances, strict=True):
        assert isinstance(step, Step) and isinstance(step.value, float)
        if true == 0:
            assert step.value == 0
        else:
            assert abs(step.value - true) <= tol * abs(true), (x, step.label, step.value, true)


@pytest.mark.parametrize("x", X_VALUES)
def test_steps_show_what_the_curve_shows(x):
    """The gate line is gelu_gate(x, 'tanh') and the last line gelu(x, 'tanh'): the same numbers the
    Curves and Gate pages draw, bit for bit."""
    steps = tanh_steps(x)
    assert steps[5].value == gelu_gate(x, "tanh")
    assert steps[6].value == gelu(x, "tanh")


def test_the_gate_survives_where_one_plus_tanh_cancels():
    """At x = -12, 1 + tanh(u) is 0 in float64 (tanh(u) = -1.0), yet the gate is 1.36e-62 (mpmath)."""
    steps = tanh_steps(-12.0)
    assert steps[4].value == -1.0 and 0.5 * (1 + steps[4].value) == 0.0
    with mp.workdps(ref.DPS):
        true_gate = mp_steps(-12.0)[5]
    assert steps[5].value > 0 and abs(steps[5].value / true_gate - 1) < 1e-12


def test_infinite_and_nan_inputs():
    """x = +-inf: the gate is 1 / 0 and the last line is GELU's limit (inf / 0, not -inf * 0 = NaN);
    NaN stays NaN."""
    up, down = tanh_steps(float("inf")), tanh_steps(float("-inf"))
    assert (up[5].value, up[6].value) == (1.0, float("inf"))
    assert (down[5].value, down[6].value) == (0.0, 0.0)
    assert all(np.isnan(s.value) for i, s in enumerate(tanh_steps(float("nan"))) if i != 2)


def test_zero_and_integer_inputs():
    """x = 0: every line 0 except the constant and the gate (1/2); ints are accepted as floats."""
    steps = tanh_steps(0)
    assert [s.value for s in steps] == [0.0, 0.0, steps[2].value, 0.0, 0.0, 0.5, 0.0]
    assert [s.value for s in tanh_steps(1)] == [s.value for s in tanh_steps(1.0)]


def test_every_line_is_labelled():
    """Each line has a label and an expression a page can show."""
    for step in tanh_steps(1.0):
        assert step.label.strip() and step.expression.strip()
    labels = [s.label for s in tanh_steps(1.0)]
    assert len(set(labels)) == len(labels)
    assert "tanh" in labels[4] and "gate" in labels[5] and "GELU" in labels[6]
