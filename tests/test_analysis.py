"""gelu_core.analysis: the landmarks of the curves, against mpmath root finding at 50 digits."""

from __future__ import annotations

import numpy as np
import pytest
from mpmath import mp

from gelu_core import gelu, gelu_gate, relu
from gelu_core.analysis import (
    approximation_error,
    gaussian_gate,
    gelu_grad_extremes,
    gelu_minimum,
    worst_error,
)
from tests import reference as ref

FORMS = ("none", "tanh", "sigmoid")
EPS = np.finfo(np.float64).eps


def _rounds_to(value, stated: str) -> bool:
    """The exact ``value`` rounds to ``stated`` at its last printed digit (decimal or e-notation)."""
    mantissa = stated.split("e")[0]
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    exponent = int(stated.split("e")[1]) if "e" in stated else 0
    return abs(value - mp.mpf(stated)) <= mp.mpf(10) ** (exponent - decimals) / 2


def mp_gelu_grad(t, form):
    return ref.mp_gelu_grad(t, form)[0]


def mp_gelu_second(t, form):
    """GELU'' at 50 digits: exact phi(x) (2 - x^2); the approximations by mpmath.diff of GELU'."""
    if form == "none":
        return ref.mp_pdf(t) * (2 - t * t)
    return mp.diff(lambda s: mp_gelu_grad(s, form), t)


@pytest.mark.parametrize("form", FORMS)
def test_gelu_minimum(form):
    """Reference: mp.findroot of GELU' (50 digits).  Tolerance: x within 1e-14 (GELU' is off by a few ulps
    of 0.2 near its root and GELU'' = 0.43 there), the value within 4 eps (the curve is flat there)."""
    with mp.workdps(ref.DPS):
        x_true = mp.findroot(lambda t: mp_gelu_grad(t, form), mp.mpf("-0.75"))
        v_true = ref.mp_gelu(x_true, form)
    p = gelu_minimum(form)
    assert abs(p.x - x_true) <= 1e-14
    assert abs(p.value - v_true) <= 4 * EPS * abs(v_true)


def test_source_minimum_of_exact_gelu():
    """The source's figure: GELU's minimum is -0.169971 at x = -0.751792 (mpmath rounds to both; so does
    gelu_core)."""
    with mp.workdps(ref.DPS):
        x_true = mp.findroot(lambda t: mp_gelu_grad(t, "none"), mp.mpf("-0.75"))
        assert _rounds_to(x_true, "-0.751792") and _rounds_to(ref.mp_gelu(x_true), "-0.169971")
    p = gelu_minimum()
    assert (f"{p.x:.6f}", f"{p.value:.6f}") == ("-0.751792", "-0.169971")


@pytest.mark.parametrize("form", FORMS)
def test_gelu_grad_extremes(form):
    """Reference: mp.findroot of GELU'' (50 digits; exact: x = +-sqrt 2).  Tolerance: x within 1e-13 (the
    root of gelu_core's GELU'', whose rounding error ~1e-16 meets a third derivative ~0.5), and within one
    ulp of sqrt 2 for the exact form; the slope value within 4 eps (relative)."""
    lo, hi = gelu_grad_extremes(form)
    for point, guess in ((lo, "-1.41"), (hi, "1.41")):
        with mp.workdps(ref.DPS):
            x_true = mp.findroot(lambda t: mp_gelu_second(t, form), mp.mpf(guess))
            v_true = mp_gelu_grad(x_true, form)
        assert abs(point.x - x_true) <= (1e-13 if form != "none" else 2.3e-16), (point, x_true)
        assert abs(point.value - v_true) <= 4 * EPS * abs(v_true)
    assert lo.value < 0 < hi.value


@pytest.mark.parametrize("form", FORMS)
def test_gelu_grad_extremes_mirror_each_other(form):
    """GELU'(-x) = 1 - GELU'(x) in every form, so the extremes sit at -x and x with values v and 1 - v
    (tolerance: 2 ulp in x, 2 eps in the values)."""
    lo, hi = gelu_grad_extremes(form)
    assert abs(lo.x + hi.x) <= 2 * np.spacing(hi.x)
    assert abs(lo.value + hi.value - 1.0) <= 2 * EPS


def test_source_slope_extremes():
    """GELU' ranges from -0.128904 (x = -sqrt 2) to 1.128904 (x = sqrt 2): the 50-digit values round to
    those figures, and gelu_core prints them."""
    lo, hi = gelu_grad_extremes()
    with mp.workdps(ref.DPS):
        assert _rounds_to(mp_gelu_grad(-mp.sqrt(2), "none"), "-0.128904")
        assert _rounds_to(mp_gelu_grad(mp.sqrt(2), "none"), "1.128904")
    assert (f"{lo.value:.6f}", f"{hi.value:.6f}") == ("-0.128904", "1.128904")
    assert (round(lo.x, 12), round(hi.x, 12)) == (round(-(2 ** 0.5), 12), round(2 ** 0.5, 12))


# (form, stated error, stated |x|): the source's figures
SOURCE_WORST = [("tanh", "4.73e-4", "2.70"), ("sigmoid", "2.03e-2", "2.27")]


def mp_error(t, form):
    return ref.mp_gelu(t, form) - ref.mp_gelu(t, "none")


@pytest.mark.parametrize(("form", "stated_error", "stated_x"), SOURCE_WORST)
def test_worst_error_of_each_approximation(form, stated_error, stated_x):
    """Reference: the largest |approx - exact| on [0, 10] at 50 digits: mp.findroot of its derivative,
    started at the stated |x|, and confirmed global against a 1001-point mpmath scan.  Tolerance: x within
    1e-12 (the root of the error's slope), the error within 1e-13 relative (|x| times a difference of two
    gates near 0.0035 at -|x|, each within a few ulps of 4e-19: ~1e-17 absolute, 2e-14 relative).
    The stated figures must be the 50-digit ones rounded; the error is even, so [-10, 0] mirrors it."""
    with mp.workdps(ref.DPS):
        x_true = mp.findroot(lambda t: mp_gelu_grad(t, form) - mp_gelu_grad(t, "none"), mp.mpf(stated_x))
        e_true = abs(mp_error(x_true, form))
        scan = max(abs(mp_error(mp.mpf(i) / 100, form)) for i in range(0, 1001))
        assert scan <= e_true
        assert _rounds_to(x_true, stated_x) and _rounds_to(e_true, stated_error)
        assert abs(abs(mp_error(-x_true, form)) - e_true) < mp.mpf("1e-45")
    p = worst_error(form)
    assert abs(p.x - x_true) <= 1e-12 and abs(p.value - e_true) <= 1e-13 * e_true, (p, x_true, e_true)
    assert f"{p.value:.2e}" == stated_error.replace("e-", "e-0") and f"{p.x:.2f}" == stated_x
    mirror = worst_error(form, lo=-10.0, hi=0.0)
    assert mirror.x == -p.x and mirror.value == p.value


@pytest.mark.parametrize("form", ["tanh", "sigmoid"])
def test_worst_error_at_the_end_of_a_range(form):
    """On a range that misses the interior maximum the largest error is at an end (reference: mpmath
    |approx - exact| at the two ends; tolerance 1e-13 relative, as above)."""
    p = worst_error(form, lo=3.0, hi=5.0)
    with mp.workdps(ref.DPS):
        e3, e5 = abs(mp_error(mp.mpf(3), form)), abs(mp_error(mp.mpf(5), form))
    assert e3 > e5 and p.x == 3.0 and abs(p.value - e3) <= 1e-13 * e3


@pytest.mark.parametrize("form", ["tanh", "sigmoid"])
def test_approximation_error(form):
    """(absolute, relative) error against mpmath at 50 digits on [-12, 12].  The error is |x| |gate_a - Phi|
    at -|x| (even in x), each gate within 8 (1 + x^2) ulp, so tolerance: |x| 8 (1 + x^2) eps (gate_a + Phi)
    at -|x|, plus 2 eps of the result; relative alike.  At x = 0 the relative error is NaN, as documented.
    This holds on the positive side too, where approx - exact of two numbers near x would keep no digit
    at x = 8 for the tanh form."""
    x = np.concatenate([np.linspace(-12, 12, 241), [0.0]])
    absolute, relative = approximation_error(x, form)
    with mp.workdps(ref.DPS):
        for xi, a, r in zip(x, absolute, relative, strict=True):
            t = mp.mpf(float(xi))
            true = abs(ref.mp_gelu(t, form) - ref.mp_gelu(t))
            m = -abs(t)
            tol = abs(t) * 8 * (1 + xi * xi) * EPS * (ref.mp_gate(m, form) + ref.mp_phi(m)) + 2 * EPS * true
            assert abs(a - true) <= tol + mp.mpf("1e-320"), (xi, a, true)
            if xi == 0:
                assert np.isnan(r)
            else:
                exact = abs(ref.mp_gelu(t))
                assert abs(r - true / exact) <= (tol + 4 * EPS * true) / exact, xi


def test_approximation_error_is_even():
    """|approx - exact| at x and -x are the same number (GELU(x) - GELU(-x) = x in every form), bit for bit."""
    x = np.linspace(0, 12, 1201)
    for form in ("tanh", "sigmoid"):
        np.testing.assert_array_equal(approximation_error(x, form)[0], approximation_error(-x, form)[0])


def test_gaussian_gate_with_sigma_one_is_phi():
    """mu = 0, sigma = 1 is the standard gate: equal to gelu_gate bit for bit, and to mpmath's ncdf
    within the gate's contract (8 (1 + x^2) ulp, i.e. relative 8 (1 + x^2) eps)."""
    x = np.linspace(-10, 10, 401)
    g = gaussian_gate(x)
    np.testing.assert_array_equal(g, gelu_gate(x))
    with mp.workdps(ref.DPS):
        for xi, gi in zip(x, g, strict=True):
            true = mp.ncdf(mp.mpf(float(xi)))
            assert abs(gi - true) <= 8 * (1 + xi * xi) * EPS * true


@pytest.mark.parametrize(("mu", "sigma"), [(0.5, 2.0), (-1.0, 0.25), (2.0, 0.1), (0.0, 5.0)])
def test_gaussian_gate_is_the_normal_cdf(mu, sigma):
    """Reference: mp.ncdf(x, mu, sigma) at 50 digits.  Tolerance: relative 8 (1 + z^2) eps + 4 eps for the
    standardisation z = (x - mu) / sigma (two roundings, amplified by z^2 in the tail), in ulps: an
    underflowed tail (z = -80: 1e-1393) must be 0."""
    x = np.linspace(-6, 6, 241)
    g = gaussian_gate(x, mu=mu, sigma=sigma)
    with mp.workdps(ref.DPS):
        for xi, gi in zip(x, g, strict=True):
            true = mp.ncdf(mp.mpf(float(xi)), mp.mpf(mu), mp.mpf(sigma))
            z = (xi - mu) / sigma
            assert abs(gi - true) <= 12 * (1 + z * z) * max(EPS * true, 5e-324), (xi, gi, true)
    assert gaussian_gate(mu, mu=mu, sigma=sigma) == 0.5


@pytest.mark.parametrize("sigma", [1e-2, 1e-4, 1e-8])
def test_gaussian_gate_tends_to_relu_as_sigma_shrinks(sigma):
    """With mu = 0, x * gate -> max(0, x) as sigma -> 0: |x Phi(x / sigma) - ReLU(x)| = sigma |GELU(-|x| / sigma)|,
    at most 0.169971 sigma (GELU's minimum; reference: test_gelu_minimum)."""
    x = np.concatenate([np.linspace(-3, 3, 6001), sigma * np.linspace(-3, 3, 601)])
    gap = np.abs(x * gaussian_gate(x, sigma=sigma) - relu(x))
    assert gap.max() <= 0.16998 * sigma
    assert gap.max() >= 0.1699 * sigma  # the bound is reached near x = -0.75 sigma: it is the right one


def test_gaussian_gate_with_sigma_zero_is_the_hard_step():
    """sigma = 0 is the step x > mu, so x * gate is ReLU exactly; a negative sigma is refused."""
    x = np.linspace(-3, 3, 601)
    np.testing.assert_array_equal(gaussian_gate(x, sigma=0.0), (x > 0).astype(float))
    np.testing.assert_array_equal(x * gaussian_gate(x, sigma=0.0), relu(x))
    np.testing.assert_array_equal(gaussian_gate(x, mu=1.0, sigma=0.0), (x > 1).astype(float))
    with pytest.raises(ValueError, match="sigma"):
        gaussian_gate(x, sigma=-1.0)


def test_gelu_is_x_times_the_standard_gate():
    """GELU(x) = x * gaussian_gate(x) exactly: the Gate page's bell-curve story and the curve agree."""
    x = np.linspace(-5, 5, 1001)
    np.testing.assert_array_equal(gelu(x), x * gaussian_gate(x))
