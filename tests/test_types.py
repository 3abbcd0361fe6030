"""What comes out has the type of what went in: float -> float, numpy -> same dtype, torch -> same dtype and device.

Narrow types (float16, bfloat16) are computed in float64 and rounded once, so every one of their finite
values is checked here, exhaustively, against ``reference.fast_reference`` (glibc erfc, long double
sigmoids) within 1 ulp of the narrow type.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gelu_core import ACTIVATIONS, gelu, gelu_gate, gelu_grad, relu, relu_grad
from tests import reference as ref
from tests.test_accuracy import CASES as ACCURACY_CASES

FORMS = ("none", "tanh", "sigmoid")
FUNCTIONS = {
    **{f"gelu[{f}]": (lambda v, f=f: gelu(v, f)) for f in FORMS},
    **{f"gate[{f}]": (lambda v, f=f: gelu_gate(v, f)) for f in FORMS},
    **{f"gelu_grad[{f}]": (lambda v, f=f: gelu_grad(v, f)) for f in FORMS},
    "relu": relu,
    "relu_grad": relu_grad,
    **{name: act for name, act in ACTIVATIONS.items()},
    **{f"{name}'": act.derivative for name, act in ACTIVATIONS.items()},
}
NAMES = list(FUNCTIONS)


@pytest.mark.parametrize("name", NAMES)
def test_python_scalars_give_python_floats(name):
    """float, int and bool in -> a Python float out, equal to the float64 array result."""
    fn = FUNCTIONS[name]
    for x in (0.5, -1.25, 3, 0, True, False):
        y = fn(x)
        assert type(y) is float, (x, type(y))
        assert y == float(fn(np.array([float(x)]))[0])


@pytest.mark.parametrize("name", NAMES)
def test_numpy_scalars_keep_their_type(name):
    """np.float16/32/64 scalar in -> the same numpy scalar type out."""
    fn = FUNCTIONS[name]
    for t in (np.float16, np.float32, np.float64):
        y = fn(t(-0.75))
        assert type(y) is t, (t, type(y))


@pytest.mark.parametrize("name", NAMES)
def test_numpy_arrays_keep_dtype_and_shape(name):
    """float arrays keep their dtype; int and bool arrays become float64 (as numpy's own ufuncs do);
    shapes are kept, 0-d and empty included; the input is not modified."""
    fn = FUNCTIONS[name]
    base = np.array([[-2.0, -0.5], [0.0, 3.0]])
    for dtype, out_dtype in ((np.float16, np.float16), (np.float32, np.float32), (np.float64, np.float64),
                             (np.int32, np.float64), (np.int64, np.float64), (np.bool_, np.float64)):
        x = base.astype(dtype)
        before = x.copy()
        y = fn(x)
        assert isinstance(y, np.ndarray) and y.dtype == out_dtype and y.shape == x.shape, (dtype, y.dtype)
        np.testing.assert_array_equal(x, before)
        np.testing.assert_array_equal(y, fn(x.astype(np.float64)).astype(out_dtype))
    y0 = fn(np.array(1.5, dtype=np.float32))
    assert isinstance(y0, np.ndarray) and y0.shape == () and y0.dtype == np.float32
    assert fn(np.zeros((0, 3), dtype=np.float32)).shape == (0, 3)


@pytest.mark.parametrize("name", NAMES)
def test_torch_tensors_keep_dtype_and_device(name):
    """float32/float64/float16/bfloat16 tensors keep their dtype; integer and bool tensors become torch's
    default float dtype (as an integer tensor divided by 1 does; torch's own F.gelu refuses them)."""
    fn = FUNCTIONS[name]
    base = torch.tensor([[-2.0, -0.5], [0.0, 3.0]])
    for dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int64,
                  torch.bool):
        x = base.to(dtype)
        before = x.clone()
        y = fn(x)
        expected = dtype if dtype.is_floating_point else torch.get_default_dtype()
        assert isinstance(y, torch.Tensor) and y.dtype == expected and y.device == x.device, (dtype, y.dtype)
        assert y.shape == x.shape
        assert torch.equal(x, before)
        # same numbers as the float64 computation, rounded once
        assert torch.equal(y, fn(x.to(torch.float64)).to(expected))
    assert fn(torch.tensor(1.5)).shape == ()


def test_lists_and_tuples_become_float64_arrays():
    assert gelu([-1.0, 0.0, 1.0]).dtype == np.float64
    np.testing.assert_array_equal(gelu((-1.0, 0.0, 1.0)), gelu(np.array([-1.0, 0.0, 1.0])))


def test_unsupported_inputs_get_a_clear_message():
    with pytest.raises(TypeError, match="real numbers"):
        gelu(np.array([1 + 2j]))
    with pytest.raises(TypeError, match="real numbers"):
        gelu(torch.tensor([1 + 2j]))
    with pytest.raises(TypeError, match="expected a float"):
        gelu("1.0")
    with pytest.raises(ValueError, match="approximate must be one of"):
        gelu(1.0, approximate="fast")
    with pytest.raises(ValueError, match="unknown activation"):
        from gelu_core import get_activation

        get_activation("gelu_fast")


def test_autograd_flows_through_a_float_tensor():
    """A tensor that requires grad stays in the graph: d/dx sum(gelu(x)) from autograd equals gelu_grad
    (reference: gelu_grad, itself checked against mpmath; tolerance 1e-12, autograd differentiates
    sigmoid(2u) through exp(-|t|), a different route to the same number)."""
    x = torch.linspace(-4, 4, 101, dtype=torch.float64)
    x = x[x != 0].requires_grad_(True)  # exp(-|t|) has a corner at t = 0 for autograd
    for form in FORMS:
        (g,) = torch.autograd.grad(gelu(x, form).sum(), x)
        torch.testing.assert_close(g, gelu_grad(x.detach(), form), rtol=1e-12, atol=1e-14)


# ---------------------------------------------------------------- every float16 and bfloat16 value

def _all_float16() -> np.ndarray:
    x = np.arange(0, 1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    return x[np.isfinite(x)]


def _all_bfloat16() -> torch.Tensor:
    x = torch.arange(-(1 << 15), 1 << 15, dtype=torch.int32).to(torch.int16).view(torch.bfloat16)
    return x[torch.isfinite(x)]


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_every_float16_within_one_ulp(backend):
    """All 63,488 finite float16 inputs; reference: reference.fast_reference; tolerance: 1 float16 ulp
    (of the largest term, for GELU')."""
    x = _all_float16()
    for key, (value, scale) in ref.fast_reference(x).items():
        y = ACCURACY_CASES[key](x if backend == "numpy" else torch.from_numpy(x))
        y = y if backend == "numpy" else y.numpy()
        assert y.dtype == np.float16
        err = np.abs(y.astype(np.longdouble) - value) / ref.ulp_of(scale, "float16")
        assert np.all(err <= 1.0), (key, x[np.argmax(err)], err.max())


def test_every_bfloat16_within_one_ulp():
    """All 65,280 finite bfloat16 inputs (torch only: numpy has no bfloat16); reference:
    reference.fast_reference; tolerance: 1 bfloat16 ulp."""
    x = _all_bfloat16()
    x64 = x.to(torch.float64).numpy()
    for key, (value, scale) in ref.fast_reference(x64).items():
        y = ACCURACY_CASES[key](x)
        assert y.dtype == torch.bfloat16
        y = y.to(torch.float64).numpy()
        err = np.abs(y.astype(np.longdouble) - value) / ref.ulp_of(scale, "bfloat16")
        assert np.all(err <= 1.0), (key, x64[np.argmax(err)], err.max())


# ---------------------------------------------------------------- CUDA

CUDA = torch.cuda.is_available()


@pytest.mark.skipif(not CUDA, reason="no CUDA device")
@pytest.mark.parametrize("name", NAMES)
def test_cuda_tensors_stay_on_the_device(name):
    """A CUDA tensor of any float dtype comes back on the same device with the same dtype."""
    fn = FUNCTIONS[name]
    for dtype in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
        x = torch.linspace(-8, 8, 1001, device="cuda", dtype=dtype)
        y = fn(x)
        assert y.device == x.device and y.dtype == dtype and y.shape == x.shape


@pytest.mark.skipif(not CUDA, reason="no CUDA device")
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("key", list(ACCURACY_CASES))
def test_cuda_results_meet_the_same_contract(key, dtype):
    """On the GPU torch runs CUDA's erfc / exp: the results are held to the CPU's contract.  Reference:
    the mpmath grid of test_accuracy; tolerance: ``reference.ulp_bound`` (1 ulp float32, 8 (1 + x^2) GELU)."""
    x = ref.grid(dtype)
    y = ACCURACY_CASES[key](torch.tensor(x, device="cuda"))
    assert y.device.type == "cuda" and str(y.dtype) == f"torch.{dtype}"
    err = ref.table(dtype)[key].ulps(y.cpu().numpy())
    limit = ref.ulp_bound(key, dtype, x)
    bad = ~(err <= limit)
    assert not bad.any(), (key, x[bad][:5], err[bad][:5])


def test_the_package_exports_every_public_name():
    """gelu_core.__all__ lists the eager names and the lazy (torch) ones, and every one resolves."""
    import gelu_core

    assert set(gelu_core._LAZY) <= set(gelu_core.__all__)
    for name in gelu_core.__all__:
        assert getattr(gelu_core, name) is not None


def test_a_half_imported_torch_is_no_tensor(monkeypatch):
    """While the server's start-up imports torch in another thread, sys.modules holds a torch without Tensor yet;
    gelu_core must neither fail nor take a numpy array or a float for a tensor then (reference: the types)."""
    import sys
    import types

    import numpy as np

    import gelu_core
    from gelu_core import _backend

    monkeypatch.setitem(sys.modules, "torch", types.ModuleType("torch"))
    assert not _backend.is_tensor(np.zeros(3)) and not _backend.is_tensor(1.0)
    assert gelu_core.gelu(np.array([-1.0, 1.0]), "tanh").tolist() == [gelu_core.gelu(-1.0, "tanh"),
                                                                     gelu_core.gelu(1.0, "tanh")]
