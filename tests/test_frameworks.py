"""gelu_core.frameworks: what torch.nn.functional.gelu returns in float32 / bfloat16 / float16, and where it hits 0.

References: mpmath at 50 digits for the true GELU (tolerance named per test); torch itself, called here on
big tensors (so every compared element takes the vectorised kernel, as in a real model), for what the
framework returns (tolerance: bit for bit); IEEE 754 constants for the dtype limits (exact).
"""

from __future__ import annotations

import subprocess
import sys

import mpmath
import numpy as np
import pytest
import torch
from mpmath import mp

from gelu_core.frameworks import (
    DTYPES,
    framework_gelu,
    underflow_below,
    unit_roundoff,
    zero_band,
)

mp.dps = 50
TABLE_X = (-12.0, -8.0, -6.0, -5.5, -5.0, -3.0, -1.0, 1.0, 3.0)  # exact in every dtype
TORCH = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
EPS64 = 2.0**-52


def rel_tol_exact(x: float) -> float:
    """gelu_core's float64 GELU against 50-digit mpmath: 8 (1 + x^2) float64 ulps, the core's own accuracy
    promise (exp(-x^2/2) turns a rounding of x^2 into about x^2 ulps of relative error in the tail)."""
    return 8 * (1 + x * x) * EPS64


def mp_gelu(x: float, approximate: str = "none"):
    """GELU at the exact binary value x, 50 digits: x Phi(x), or the tanh formula with decimal 0.044715."""
    x = mpmath.mpf(x)
    if approximate == "none":
        return x * mp.erfc(-x / mp.sqrt(2)) / 2
    u = mp.sqrt(2 / mp.pi) * (x + mpmath.mpf("0.044715") * x**3)
    return x / (1 + mp.exp(-2 * u))  # = x (1 + tanh u) / 2, without 1 + tanh u cancelling at 50 digits


def torch_vectorised(values, dtype: str, approximate: str) -> np.ndarray:
    """torch's GELU of each value, each computed inside a 4096-long tensor of copies (vectorised path)."""
    out = []
    for v in values:
        t = torch.full((4096,), float(v), dtype=TORCH[dtype])
        out.append(float(torch.nn.functional.gelu(t, approximate=approximate)[0]))
    return np.array(out)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_torch_values_match_torch_called_independently(dtype, approximate):
    """Bit for bit: framework_gelu's torch_value is what torch returns for that input in a big tensor."""
    run = framework_gelu(TABLE_X, dtype, approximate)
    np.testing.assert_array_equal(run.x, np.array(TABLE_X))  # these inputs are exact in every dtype
    np.testing.assert_array_equal(run.torch_value, torch_vectorised(TABLE_X, dtype, approximate))


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_exact_reference_against_mpmath(approximate):
    """exact = gelu_core in float64, within rel_tol_exact(x) of 50-digit mpmath, even at x = -12 (2e-32)."""
    run = framework_gelu(TABLE_X, "float32", approximate)
    for x, got in zip(run.x, run.exact, strict=True):
        ref = mp_gelu(x, approximate)
        assert abs(got - ref) <= rel_tol_exact(x) * abs(ref), (x, got, ref)


def test_reference_uses_the_input_torch_received():
    """The grid is rounded to the dtype first: 0.1 in bfloat16 is 0.10009765625, and exact is GELU of that."""
    run = framework_gelu([0.1], "bfloat16")
    assert run.x[0] == 0.10009765625
    ref = mp_gelu(0.10009765625)
    assert abs(run.exact[0] - ref) <= rel_tol_exact(0.1) * abs(ref)


@pytest.mark.parametrize("dtype", DTYPES)
def test_the_tail_cliff_is_a_100_percent_error(dtype):
    """torch returns exactly 0 at x = -6 and -12 although the truth is 5.9e-9 and 2.1e-32: relative error 1."""
    run = framework_gelu([-12.0, -6.0, 0.0], dtype)
    assert run.torch_value[0] == 0 and run.torch_value[1] == 0
    assert run.torch_rel_error[0] == 1.0 and run.torch_rel_error[1] == 1.0
    assert np.isnan(run.torch_rel_error[2])  # 0 / 0 at the origin: no relative error to speak of


def test_ours_keeps_the_tail_in_float32():
    """gelu_core on float32 input is the 50-digit truth rounded to float32 (within 1/2 ulp + float64 slack)."""
    xs = np.linspace(-12.0, 4.0, 161)
    run = framework_gelu(xs, "float32")
    for x, ours in zip(run.x, run.ours, strict=True):
        ref = mp_gelu(x)
        if ref == 0:
            continue
        ulp = float(np.spacing(np.float32(abs(float(ref)))))
        assert abs(ours - ref) <= 0.5 * ulp * (1 + 1e-6), (x, ours, ref)
    assert np.all(run.ours[run.x < -6] != 0)  # where torch has nothing left


def test_float16_holds_nothing_below_its_smallest_subnormal():
    """Rounding the truth itself to float16 gives 0 below x = -5.7266: no kernel can do better there."""
    run = framework_gelu([-5.8, -5.7], "float16")
    assert run.ours[0] == 0 and run.ours[1] != 0


def _every_value(dtype: str, lo: float, hi: float) -> np.ndarray:
    """All numbers of dtype in [lo, hi], by enumerating bit patterns (independent of the module's own helper)."""
    if dtype == "float32":
        start = np.float32(hi).view(np.int32)
        stop = np.float32(lo).view(np.int32)
        vals = np.arange(start, stop + 1, dtype=np.int32).view(np.float32)  # negative: bits grow as x falls
    else:
        vals = torch.arange(-(2**15), 2**15, dtype=torch.int32).to(torch.int16).view(TORCH[dtype]).float().numpy()
    vals = vals[np.isfinite(vals)].astype(np.float64)
    return np.sort(vals[np.isfinite(vals) & (vals >= lo) & (vals <= hi)])


WINDOW = {"none": (-5.8, -5.4), "tanh": (-5.3, -4.9)}  # where the cliffs are: about -5.5 and -5.06


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_zero_band_against_every_number_of_the_dtype(dtype, approximate):
    """Exact: a = the last 0 before the first non-zero output, b = the last 0; checked over every dtype number
    around the cliff (float32: 0.8 million of them), run through torch's vectorised kernel (see _torch_gelu)."""
    xs = _every_value(dtype, *WINDOW[approximate])
    zero = np.empty(xs.size, dtype=bool)
    for start in range(0, xs.size, 1000):  # small calls (no split across threads), each with a tail of 100
        block = torch.from_numpy(xs[start:start + 1000]).to(TORCH[dtype])
        tensor = torch.cat([block, torch.full((100,), -1.0, dtype=TORCH[dtype])])
        zero[start:start + block.numel()] = (torch.nn.functional.gelu(tensor, approximate=approximate) == 0)[:-100]
    assert zero[0] and not zero[-1]
    first_nonzero = xs[~zero].min()
    a, b = zero_band(dtype, approximate)
    assert a == xs[zero & (xs < first_nonzero)].max()
    assert b == xs[zero].max()
    assert WINDOW[approximate][0] < a <= b < WINDOW[approximate][1]


@pytest.mark.parametrize("dtype", DTYPES)
def test_underflow_below_against_mpmath(dtype):
    """The returned x is the last dtype number whose 50-digit GELU rounds to 0 in dtype; the next one up does not."""
    x = underflow_below(dtype)
    nxt = float(torch.nextafter(torch.tensor(x, dtype=TORCH[dtype]), torch.tensor(0.0, dtype=TORCH[dtype])))

    def rounds(v):
        return float(torch.tensor(float(mp_gelu(v)), dtype=torch.float64).to(TORCH[dtype]))

    assert rounds(x) == 0 and rounds(nxt) != 0


def test_dtype_constants_are_ieee():
    """Unit roundoff 2^-24, 2^-8, 2^-11 (exact)."""
    assert [unit_roundoff(d) for d in DTYPES] == [2.0**-24, 2.0**-8, 2.0**-11]


def test_bad_arguments_are_refused_clearly():
    with pytest.raises(ValueError, match="dtype must be one of"):
        framework_gelu([1.0], "float64")
    with pytest.raises(ValueError, match="approximate='none' or 'tanh'"):
        framework_gelu([1.0], "float32", "sigmoid")


def test_importing_the_module_does_not_import_torch():
    """The pages import gelu_core freely; torch must wait until the PyTorch view is opened."""
    code = "import sys, gelu_core, gelu_core.frameworks; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
