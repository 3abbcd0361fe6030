"""Array plumbing: one formula, three input kinds (float, numpy array, torch tensor).

Every public function in ``gelu_core`` is written once against the small
``Ops`` namespace below.  ``evaluate`` picks numpy+scipy or torch from the
input, widens it to float64 (so float32 results round correctly), runs the
formula and narrows the result back to the input's type, dtype and device.
torch is only imported when a tensor comes in, so the explorer pages start
without it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import special as _sp


def _erfc(z):
    """scipy's erfc, but erfcx(z) * exp(-z^2) past z = 26, where cephes's erfc flushes to 0.

    Past 26 the result is below 1e-295 and heading into float64's subnormals;
    erfcx is accurate there and exp rounds each subnormal correctly.
    """
    z = np.asarray(z, dtype=np.float64)
    tail = z > 26.0
    if not np.any(tail):
        return _sp.erfc(z)
    return np.where(tail, _sp.erfcx(np.where(tail, z, 0.0)) * np.exp(-z * z), _sp.erfc(z))


class NumpyOps:
    """float64 numpy + scipy.special."""

    exp = staticmethod(np.exp)
    expm1 = staticmethod(np.expm1)
    log1p = staticmethod(np.log1p)
    tanh = staticmethod(np.tanh)
    erfc = staticmethod(_erfc)
    abs = staticmethod(np.abs)
    where = staticmethod(np.where)
    isnan = staticmethod(np.isnan)
    isinf = staticmethod(np.isinf)
    ones_like = staticmethod(np.ones_like)


class TorchOps:
    """float64 torch, on whatever device the tensor lives."""

    def __init__(self, torch):
        self.torch = torch
        self.exp = torch.exp
        self.expm1 = torch.expm1
        self.log1p = torch.log1p
        self.tanh = torch.tanh
        self.erfc = torch.special.erfc
        self.abs = torch.abs
        self.isnan = torch.isnan
        self.isinf = torch.isinf
        self.ones_like = torch.ones_like

    def where(self, cond, a, b):
        # torch.where wants tensors or python scalars on both sides
        return self.torch.where(cond, a, b)


def _torch_module():
    return sys.modules.get("torch")


def is_tensor(x: Any) -> bool:
    """Whether x is a torch tensor, without importing torch: a module still being imported by another thread
    (the server's start-up) may not hold ``Tensor`` yet, and then x cannot be one."""
    tensor_type = getattr(_torch_module(), "Tensor", None)
    return tensor_type is not None and isinstance(x, tensor_type)


def evaluate(formula: Callable[..., Any], x: Any, *args: Any) -> Any:
    """Run ``formula(ops, x64, *args)`` and return a result shaped like ``x``.

    float in -> float out; numpy array -> same dtype (integers and bools become
    float64, as numpy's own ufuncs do); torch tensor -> same dtype and device
    (integers and bools become torch's default float dtype).
    """
    if is_tensor(x):
        torch = _torch_module()
        out_dtype = x.dtype if x.is_floating_point() else torch.get_default_dtype()
        if x.is_complex():
            raise TypeError("gelu_core works on real numbers; got a complex tensor")
        y = formula(TorchOps(torch), x.to(torch.float64), *args)
        return y.to(out_dtype)
    if isinstance(x, np.ndarray) or isinstance(x, np.generic):
        arr = np.asarray(x)
        if arr.dtype.kind == "c":
            raise TypeError("gelu_core works on real numbers; got a complex array")
        out_dtype = arr.dtype if arr.dtype.kind == "f" else np.dtype(np.float64)
        with np.errstate(all="ignore"):
            y = formula(NumpyOps, arr.astype(np.float64), *args)
        y = np.asarray(y).astype(out_dtype)
        return y if isinstance(x, np.ndarray) else out_dtype.type(y)
    if isinstance(x, (bool, int, float)):
        with np.errstate(all="ignore"):
            return float(formula(NumpyOps, np.float64(x), *args))
    if isinstance(x, (list, tuple)):
        return evaluate(formula, np.asarray(x, dtype=np.float64), *args)
    raise TypeError(f"expected a float, a numpy array or a torch tensor, got {type(x).__name__}")
