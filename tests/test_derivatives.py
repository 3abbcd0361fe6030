"""Every derivative in the registry against mpmath.diff (50 digits), torch.autograd and finite differences.

The ulp contract of the derivatives over the whole grid is in test_accuracy.py; here each derivative is
shown to be the derivative of its function by references that never see the derivative's formula:
numerical differentiation of the mpmath function at 50 digits, PyTorch's own backward kernels, and
central differences of gelu_core's own forward.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import pytest
import torch
from mpmath import mp

from gelu_core import ACTIVATIONS, gelu_grad, relu_grad
from gelu_core.ffn import activation_module
from tests import reference as ref

PARAMS = {  # the registry defaults and a couple of others for the activations that take a parameter
    "leaky_relu": [{"negative_slope": s} for s in (*ref.LEAKY_SLOPES, 0.0)],
    "elu": [{"alpha": a} for a in (*ref.ELU_ALPHAS, 2.5)],
}
CASES = [(name, params) for name in ACTIVATIONS for params in PARAMS.get(name, [{}])]
KINKED = {"relu", "leaky_relu", "elu"}  # not differentiable (relu, leaky) or not twice (elu) at 0


def _ids(case):
    name, params = case
    return name + "".join(f"-{k}={v}" for k, v in params.items())


def _reference_key(name: str, params: dict) -> str:
    """The ``reference.MP_VALUES`` key of a registry entry."""
    forms = {"gelu": "gelu_none", "gelu_tanh": "gelu_tanh", "gelu_sigmoid": "gelu_sigmoid"}
    if name in forms:
        return forms[name]
    if name == "elu":
        return f"elu_{params['alpha']}"
    if name == "leaky_relu":
        return f"leaky_relu_{params['negative_slope']}"
    return name


def _derivative_key(name: str, params: dict) -> str:
    """gelu_none -> gelu_grad_none, elu_0.3 -> elu_grad_0.3, sigmoid -> sigmoid_grad."""
    key = _reference_key(name, params)
    for prefix in ("gelu_", "elu_", "leaky_relu_"):
        if key.startswith(prefix):
            return prefix + "grad_" + key.removeprefix(prefix)
    return key + "_grad"


def _mp_value(name: str, params: dict):
    key = _reference_key(name, params)
    if key in ref.MP_VALUES:
        return ref.MP_VALUES[key]
    # parameters outside the reference table (slope 0, alpha 2.5): the same formulas
    if name == "elu":
        a = mp.mpf(params["alpha"])
        return lambda x: x if x > 0 else a * mp.expm1(x)
    a = mp.mpf(params["negative_slope"])
    return lambda x: x if x > 0 else a * x


_rng = np.random.default_rng(7)
SMOOTH_POINTS = np.concatenate([
    _rng.uniform(-12.0, 12.0, 60), [-3.0, -2 ** 0.5, -1.0, -0.7517915, -0.01, 0.01, 0.5, 1.0, 2 ** 0.5, 3.0],
])
SMOOTH_POINTS = SMOOTH_POINTS[SMOOTH_POINTS != 0.0]


@cache
def _scale(key: str, x: float):
    """What an error of the derivative ``key`` at x is counted in ulps of (see reference.py): |f'| itself,
    or for GELU' and SiLU' the largest of |f'|, |gate| and |x gate'|, since f' cancels to 0 at a root."""
    with mp.workdps(ref.DPS):
        row = ref.mp_table_row(mp.mpf(x))
    return row[key][1] if key in row else None


@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_derivative_against_mpmath_diff(case, backend):
    """Reference: mpmath.diff of the 50-digit function (central differences at 50 digits: exact far below a
    float64 ulp), never the derivative's formula.  Tolerance: the float64 contract of test_accuracy
    (``reference.ulp_bound``: 8 (1 + x^2) ulp for GELU', a few ulp for the rest), in ulps of ``_scale``."""
    name, params = case
    act = ACTIVATIONS[name]
    dkey = _derivative_key(name, params)
    f = _mp_value(name, params)
    x = SMOOTH_POINTS
    xin = x.copy() if backend == "numpy" else torch.tensor(x)
    ours = act.derivative(xin, **params)
    ours = np.asarray(ours if backend == "numpy" else ours.numpy(), dtype=np.float64)
    limit = ref.ulp_bound(dkey, "float64", x)
    with mp.workdps(ref.DPS):
        for xi, yi, lim in zip(x, ours, limit, strict=True):
            d = mp.diff(f, mp.mpf(float(xi)))
            scale = _scale(dkey, float(xi))
            scale = abs(d) if scale is None else scale
            ulps = abs(yi - d) / mp.ldexp(1, ref.ulp_exponent(scale, "float64"))
            assert ulps <= lim, (name, params, xi, yi, d, float(ulps))


@pytest.mark.parametrize("key", sorted(ref.DERIVATIVE_OF))
def test_reference_derivative_formulas_match_mpmath_diff(key):
    """The analytic derivatives in reference.py (used for the ulp tables) equal mpmath.diff of the
    functions: relative 1e-40 at 50 digits (absolute 1e-45 at roots and zeros)."""
    f = ref.MP_VALUES[ref.DERIVATIVE_OF[key]]
    with mp.workdps(ref.DPS):
        for xi in (-20.5, -7.25, -1.5, -0.7517915, -0.3, 0.3, 1.5, 7.25, 20.5):
            x = mp.mpf(xi)
            analytic = ref.mp_table_row(x)[key][0]
            d = mp.diff(f, x)
            assert abs(analytic - d) <= mp.mpf("1e-40") * abs(d) + mp.mpf("1e-45"), (key, xi)


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_derivative_against_torch_autograd(case):
    """Reference: torch.autograd through PyTorch's own module for the entry (nn.GELU, nn.ELU(alpha), ...),
    float64, on [-5, 8] for the GELU forms (where torch's 1 + erf is accurate) and [-20, 19.9] otherwise
    (nn.Softplus switches to x above 20).  torch's backward kernels are off by up to ~25 ulp (tanh GELU
    near x = 7; sigmoid's s (1 - s) far out), so: rtol 1e-12, atol 1e-14.  x = 0 and -0.0 are included:
    the kink conventions must match autograd's."""
    name, params = case
    act = ACTIVATIONS[name]
    lo, hi = (-5.0, 8.0) if name.startswith("gelu") else (-20.0, 19.9)
    x = torch.cat([
        torch.linspace(lo, hi, 2601, dtype=torch.float64),
        torch.tensor([0.0, -0.0, 2 ** 0.5, -(2 ** 0.5), 1e-300, -1e-300], dtype=torch.float64),
    ]).requires_grad_(True)
    (expected,) = torch.autograd.grad(activation_module(name, **params)(x).sum(), x)
    ours = act.derivative(x.detach(), **params)
    torch.testing.assert_close(ours, expected, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_derivative_matches_central_differences_of_our_forward(case):
    """Reference: (f(x + h) - f(x - h)) / 2h of gelu_core's own forward in float64, h = 1e-5 max(1, |x|)
    (truncation ~h^2 |f'''|, rounding ~eps |f| / h, both below 1e-8).  Tolerance: 1e-7 absolute + relative.
    Points avoid 0, where relu / leaky_relu have a kink and elu' a corner."""
    name, params = case
    act = ACTIVATIONS[name]
    x = np.concatenate([np.linspace(-10.0, -0.05, 200), np.linspace(0.05, 10.0, 200)])
    h = 1e-5 * np.maximum(1.0, np.abs(x))
    fd = (act(x + h, **params) - act(x - h, **params)) / (2 * h)
    np.testing.assert_allclose(act.derivative(x, **params), fd, rtol=1e-7, atol=1e-7)


# ---------------------------------------------------------------- conventions and the source's numbers

@pytest.mark.parametrize("x", [0.0, -0.0])
def test_conventions_at_the_kink(x):
    """relu'(0) = 0, leaky_relu'(0) = negative_slope, elu'(0) = alpha: the left derivative, as torch.autograd
    gives (reference: autograd of nn.ReLU / nn.LeakyReLU / nn.ELU at 0, float64)."""
    assert relu_grad(x) == 0.0
    assert ACTIVATIONS["leaky_relu"].derivative(x, negative_slope=0.2) == 0.2
    assert ACTIVATIONS["elu"].derivative(x, alpha=0.3) == 0.3
    for name, params in (("relu", {}), ("leaky_relu", {"negative_slope": 0.2}), ("elu", {"alpha": 0.3})):
        t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
        (g,) = torch.autograd.grad(activation_module(name, **params)(t), t)
        assert ACTIVATIONS[name].derivative(x, **params) == g.item()


def test_the_smoothness_nudge():
    """From -0.01 to +0.01 GELU's slope moves from 0.4920 to 0.5080 (4 d.p.); ReLU's jumps from 0 to 1.
    Reference: mpmath Phi(x) + x phi(x), which must round to those figures."""
    for x, stated in ((-0.01, "0.4920"), (0.01, "0.5080")):
        with mp.workdps(ref.DPS):
            exact = ref.mp_gelu_grad(mp.mpf(x))[0]
            assert abs(exact - mp.mpf(stated)) <= mp.mpf("0.00005")
        assert f"{gelu_grad(x):.4f}" == stated
        assert f"{gelu_grad(torch.tensor(x, dtype=torch.float64)).item():.4f}" == stated
    assert relu_grad(-0.01) == 0.0 and relu_grad(0.01) == 1.0


def test_slope_range_of_exact_gelu():
    """GELU' runs from -0.128904 (x = -sqrt 2) to 1.128904 (x = sqrt 2): GELU'' = phi(x) (2 - x^2).
    Reference: mpmath; the stated figures are the 50-digit values rounded to 6 d.p.; ours prints them, and no
    input on a dense grid goes past them by more than 1e-15."""
    with mp.workdps(ref.DPS):
        for r, stated in ((-mp.sqrt(2), "-0.128904"), (mp.sqrt(2), "1.128904")):
            root = mp.findroot(lambda t: mp.diff(lambda s: ref.mp_gelu_grad(s)[0], t), r * mp.mpf("0.9"))
            assert abs(root - r) < mp.mpf("1e-40")
            value = ref.mp_gelu_grad(root)[0]
            assert abs(value - mp.mpf(stated)) <= mp.mpf("0.0000005")
            assert f"{gelu_grad(float(r)):.6f}" == stated
    x = np.linspace(-10, 10, 200_001)
    g = gelu_grad(x)
    lo, hi = float(ref.mp_gelu_grad(-mp.sqrt(2))[0]), float(ref.mp_gelu_grad(mp.sqrt(2))[0])
    assert g.min() >= lo - 1e-15 and g.max() <= hi + 1e-15
    assert math.isclose(g.min(), lo, abs_tol=1e-9) and math.isclose(g.max(), hi, abs_tol=1e-9)
