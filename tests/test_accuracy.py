"""gelu_core against a 50-digit mpmath reference, in ulps, on both backends (numpy+scipy and torch).

The contract (issue 2):
* float32: every GELU form, gate and derivative is within 1 ulp of the true value (correct rounding is 0.5).
* float64: GELU forms, gates and GELU' within 8 (1 + x^2) ulp.  The x^2 is the conditioning of the
  tail: exp(-x^2 / 2) turns a rounding of x^2 into a relative error of about x^2 ulps.
* GELU' and SiLU' cancel to 0 at a root (GELU' at x = -0.7518), where no bound relative to the result can
  hold; they are measured in ulps of the largest of |f'|, |gate| and |x gate'| (see ``reference.py``).
* the other registry functions and derivatives take no x^2 into an exponent; their float64 bounds
  (``reference.OTHER_F64_BOUND``) count the roundings of each formula.

References: ``tests/reference.py`` (mpmath, 50 digits, exact float inputs); for the dense float32 sweep,
glibc's erfc and numpy's long double (independent of gelu_core's scipy/torch code paths).
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from mpmath import mp

from gelu_core import ACTIVATIONS, gelu, gelu_gate, gelu_grad
from tests import reference as ref

FORMS = ("none", "tanh", "sigmoid")
BACKENDS = ("numpy", "torch")


def _case(fn, **params):
    return lambda x: fn(x, **params)


# reference key -> the gelu_core call it checks
CASES = {}
for _form in FORMS:
    CASES[f"gelu_{_form}"] = _case(gelu, approximate=_form)
    CASES[f"gate_{_form}"] = _case(gelu_gate, approximate=_form)
    CASES[f"gelu_grad_{_form}"] = _case(gelu_grad, approximate=_form)
for _name in ("sigmoid", "tanh", "silu", "softplus", "relu"):
    CASES[_name] = ACTIVATIONS[_name]
    CASES[f"{_name}_grad"] = ACTIVATIONS[_name].derivative
for _alpha in ref.ELU_ALPHAS:
    CASES[f"elu_{_alpha}"] = _case(ACTIVATIONS["elu"], alpha=_alpha)
    CASES[f"elu_grad_{_alpha}"] = _case(ACTIVATIONS["elu"].derivative, alpha=_alpha)
for _slope in ref.LEAKY_SLOPES:
    CASES[f"leaky_relu_{_slope}"] = _case(ACTIVATIONS["leaky_relu"], negative_slope=_slope)
    CASES[f"leaky_relu_grad_{_slope}"] = _case(ACTIVATIONS["leaky_relu"].derivative, negative_slope=_slope)


def run(fn, x: np.ndarray, backend: str) -> np.ndarray:
    """Call ``fn`` on the grid as a numpy array or as a CPU torch tensor; the result as numpy, same dtype."""
    if backend == "numpy":
        out = fn(x.copy())
        assert isinstance(out, np.ndarray) and out.dtype == x.dtype
        return out
    out = fn(torch.tensor(x))
    assert isinstance(out, torch.Tensor) and str(out.dtype) == f"torch.{x.dtype}"
    return out.numpy()


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(CASES))
def test_ulp_error_against_mpmath(name, backend, dtype):
    """Reference: mpmath at 50 digits over ~1900 float64 / ~1600 float32 inputs in [-38, 38], tails and
    subnormals included.  Tolerance: ``reference.ulp_bound`` (1 ulp in float32; 8 (1 + x^2) ulp for the
    GELU forms, gates and GELU' in float64; a few ulps for the other registry functions)."""
    x = ref.grid(dtype)
    ours = run(CASES[name], x, backend)
    err = ref.table(dtype)[name].ulps(ours)
    limit = ref.ulp_bound(name, dtype, x)
    bad = ~(err <= limit)  # NaN counts as bad
    worst = int(np.nanargmax(np.where(np.isnan(err), np.inf, err / np.maximum(limit, 1e-300))))
    assert not bad.any(), (
        f"{name} [{backend}, {dtype}]: {bad.sum()} inputs over the bound; worst x = {x[worst]!r}: "
        f"{err[worst]:.3g} ulp > {limit[worst]:.3g}"
    )


def test_the_grid_reaches_the_tails_and_the_subnormals():
    """The mpmath grid is only as good as what it covers: results must go subnormal in both dtypes."""
    for dtype, tiny in (("float64", np.finfo(np.float64).tiny), ("float32", np.finfo(np.float32).tiny)):
        x = ref.grid(dtype)
        y = np.abs(gelu(x))
        assert x.min() <= -37.5 and x.max() >= 37.5
        assert ((y > 0) & (y < tiny)).sum() >= 20, dtype  # subnormal results
        assert ((np.abs(x) > 0) & (np.abs(x) < tiny)).sum() >= 2, dtype  # subnormal inputs
    assert ((ref.grid("float32") > -14) & (ref.grid("float32") < -9)).sum() >= 500


def test_ulps_can_fail():
    """The ulp counter itself: the correctly rounded value reads as at most 0.5 ulp, the next float as 0.5 to
    1.5, a relative error of 1e-12 as thousands, the wrong formula as millions."""
    x = ref.grid("float64")
    t = ref.table("float64")["gelu_none"]
    rounded = np.ldexp(t.hi, t.exp)  # v / ulp lies in [2^52, 2^53), so hi is it rounded to an integer
    assert t.ulps(rounded).max() <= 0.5
    off_by_one = t.ulps(np.nextafter(rounded, np.inf))
    assert off_by_one.min() >= 0.5 and off_by_one.max() <= 1.5
    assert t.ulps(gelu(x) * (1 + 1e-12)).max() > 1000
    assert t.ulps(gelu(x, "tanh")).max() > 1e6  # the tanh form is not the exact one


# ---------------------------------------------------------------- dense float32 sweep

@cache
def _float32_sweep(stride: int = 4093) -> np.ndarray:
    """Every stride-th float32 in [-20, 20] by bit pattern: ~540,000 inputs, subnormals to 20."""
    top = int(np.array(20.0, dtype=np.float32).view(np.int32))
    pos = np.arange(0, top + 1, stride, dtype=np.int32).view(np.float32)
    return np.concatenate([-pos[::-1], pos])


@cache
def _sweep_references():
    return ref.fast_reference(_float32_sweep())


@pytest.mark.parametrize("backend", BACKENDS)
def test_dense_float32_sweep_is_within_one_ulp(backend):
    """~540,000 float32 inputs in [-20, 20] (every 4093rd bit pattern: tiny, subnormal and tail results).
    Reference: ``reference.fast_reference`` (glibc erfc, long double sigmoids: error below 1e-12 relative,
    far under a float32 ulp).
    Tolerance: 1 float32 ulp for every GELU form, gate and GELU'."""
    x = _float32_sweep()
    assert x.size > 500_000
    refs = _sweep_references()
    for name, (value, scale) in refs.items():
        ours = run(CASES[name], x, backend)
        err = np.abs(ours.astype(np.longdouble) - value) / ref.ulp_of(scale, "float32")
        i = int(np.argmax(err))
        assert err[i] <= 1.0, f"{name} [{backend}]: {err[i]:.3f} ulp at x = {x[i]!r}"


# ---------------------------------------------------------------- against PyTorch

@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_agrees_with_torch_where_torch_is_accurate(approximate, backend):
    """Reference: torch.nn.functional.gelu in float64 on [-5, 38].  torch evaluates 0.5 x (1 + erf(...)) or
    0.5 x (1 + tanh(...)), whose 1 + (.) sum is off by up to an ulp of 1: an absolute error of about
    |x| eps.  Tolerance: 2 |x| eps + 4 eps |y|."""
    x = np.concatenate([np.linspace(-5.0, 5.0, 2001), np.linspace(5.0, 38.0, 331), [0.0, -0.0, 1e-300]])
    theirs = F.gelu(torch.tensor(x), approximate=approximate).numpy()
    ours = run(_case(gelu, approximate=approximate), x, backend)
    eps = np.finfo(np.float64).eps
    np.testing.assert_array_less(np.abs(ours - theirs), 2 * np.abs(x) * eps + 4 * eps * np.abs(ours) + 1e-320)


def test_agrees_with_torch_in_float32():
    """Reference: torch.nn.functional.gelu in float32 on [-5, 10], both modes.  torch's float32 kernel sums
    1 + erf(.) (or 1 + tanh(.)) in float32 with a vectorised erf good to a couple of ulps of 1, so it is
    off by up to about 2 |x| eps32 (seen: 2.04 |x| eps32 at x = -2.955).  Tolerance: 4 |x| eps32 + 4 eps32 |y|."""
    x = np.linspace(-5.0, 10.0, 3001, dtype=np.float32)
    eps = float(np.finfo(np.float32).eps)
    for approximate in ("none", "tanh"):
        theirs = F.gelu(torch.tensor(x), approximate=approximate).numpy().astype(np.float64)
        ours = gelu(torch.tensor(x), approximate).numpy().astype(np.float64)
        tol = 4 * np.abs(x) * eps + 4 * eps * np.abs(ours)
        np.testing.assert_array_less(np.abs(ours - theirs), tol + 1e-44)


@pytest.mark.parametrize(
    ("dtype", "xs"),
    [(torch.float32, [-7.0, -8.0, -10.0, -12.0]), (torch.float64, [-10.0, -12.0, -20.0, -30.0])],
)
def test_where_pytorch_loses_the_tail_we_do_not(dtype, xs):
    """Past x = -6 (float32) / -10 (float64) torch's GELU and ndtr return 0 while the true values are
    representable.  Reference: mpmath, 50 digits.  Ours: relative error below 1e-6 (float32) / 1e-12
    (float64); torch's: 100 % (it returns zero)."""
    x = torch.tensor(xs, dtype=dtype)
    rel_tol = 1e-6 if dtype == torch.float32 else 1e-12
    with mp.workdps(ref.DPS):
        true_gelu = [ref.mp_gelu(mp.mpf(v)) for v in xs]
        true_phi = [ref.mp_phi(mp.mpf(v)) for v in xs]
    ours_gelu, ours_phi = gelu(x), gelu_gate(x)
    torch_gelu, torch_phi = F.gelu(x), torch.special.ndtr(x)
    for i in range(len(xs)):
        assert torch_gelu[i].item() == 0.0 and torch_phi[i].item() == 0.0  # torch: all precision lost
        assert abs(ours_gelu[i].item() / true_gelu[i] - 1) < rel_tol
        assert abs(ours_phi[i].item() / true_phi[i] - 1) < rel_tol
    # the tanh form too: torch's 1 + tanh(u) cancels to 0, our sigmoid(2u) does not (checked where the
    # true value is a normal number of the dtype; further out it underflows for everyone)
    ours_tanh, torch_tanh = gelu(x, "tanh"), F.gelu(x, approximate="tanh")
    checked = 0
    for i, v in enumerate(xs):
        with mp.workdps(ref.DPS):
            true = ref.mp_gelu(mp.mpf(v), "tanh")
        assert torch_tanh[i].item() == 0.0
        if abs(true) > torch.finfo(dtype).tiny:
            assert abs(ours_tanh[i].item() / true - 1) < rel_tol
            checked += 1
    assert checked >= 2


# ---------------------------------------------------------------- the numbers in the source texts

def _rounds_to(value, stated: str) -> bool:
    """True when the exact ``value`` (mpf) rounds to the decimal ``stated`` at its number of decimals."""
    decimals = len(stated.split(".")[1]) if "." in stated else 0
    return abs(value - mp.mpf(stated)) <= mp.mpf(10) ** -decimals / 2


SOURCE_GELU = {  # the notes' printout for torch.tensor([-2., -1., 0., 1., 2.])
    "tanh": ["-0.0454", "-0.1588", "0.0000", "0.8412", "1.9546"],
    "none": ["-0.0455", "-0.1587", "0.0000", "0.8413", "1.9545"],
}


@pytest.mark.parametrize("form", ["tanh", "none"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_source_values_of_gelu_at_five_points(form, backend):
    """Reference: mpmath (50 digits) must round to the source's 4-decimal figure; ours must print it."""
    xs = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])
    ours = run(_case(gelu, approximate=form), xs, backend)
    for x, y, stated in zip(xs, ours, SOURCE_GELU[form], strict=True):
        with mp.workdps(ref.DPS):
            assert _rounds_to(ref.mp_gelu(mp.mpf(x), form), stated), (form, x, stated)
        assert f"{y:.4f}".replace("-0.0000", "0.0000") == stated, (form, x, y, stated)


def test_source_values_of_phi():
    """Phi(2) = 0.97725 and Phi(-3) = 0.00135 (the bouncer's 97 % and 0.1 %).  Reference: mpmath."""
    for x, stated in ((2.0, "0.97725"), (-3.0, "0.00135")):
        with mp.workdps(ref.DPS):
            assert _rounds_to(ref.mp_phi(mp.mpf(x)), stated)
        assert f"{gelu_gate(x):.5f}" == stated
        assert f"{gelu_gate(torch.tensor(x, dtype=torch.float64)).item():.5f}" == stated


def test_source_gate_at_one_and_minus_one():
    """The notes: the tanh gate at 1 is 0.841192, at -1 about 0.1588.  Reference: mpmath."""
    with mp.workdps(ref.DPS):
        assert _rounds_to(ref.mp_gate(mp.mpf(1), "tanh"), "0.841192")
        assert _rounds_to(ref.mp_gate(mp.mpf(-1), "tanh"), "0.1588")
    assert f"{gelu_gate(1.0, 'tanh'):.6f}" == "0.841192"
    assert f"{gelu_gate(-1.0, 'tanh'):.4f}" == "0.1588"
