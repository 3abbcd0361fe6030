"""What a framework computes: ``torch.nn.functional.gelu`` in low precision against the float64 truth.

PyTorch's CPU kernel evaluates the exact form as ``0.5 * x * (1 + erf(x / sqrt 2))``
(and the tanh form as ``0.5 * x * (1 + tanh(u))``) in float32, also for bfloat16 and
float16 inputs.  Once erf(x / sqrt 2) rounds to -1, ``1 + erf`` is exactly 0 and so
is the result, although the true value (1e-7 at x = -5.5, 2e-32 at x = -12) is
well inside float32's range: the relative error jumps to 100 %.  ``gelu_core``
evaluates the same input in float64 with erfc and rounds once, so it keeps every
digit the dtype can hold.

torch is imported inside the functions, so importing this module is free.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gelu_core.activations import gelu

DTYPES = ("float32", "bfloat16", "float16")


def _torch_dtype(dtype: str):
    import torch

    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}, got {dtype!r}")
    return getattr(torch, dtype)


def unit_roundoff(dtype: str) -> float:
    """Half the gap between 1 and the next number: the best relative accuracy a dtype can give.

    >>> unit_roundoff("float32"), unit_roundoff("bfloat16")
    (5.960464477539063e-08, 0.00390625)
    """
    import torch

    return torch.finfo(_torch_dtype(dtype)).eps / 2.0


@dataclass(frozen=True)
class FrameworkGELU:
    """One dtype's run of torch's GELU over a grid, next to the float64 truth at the same inputs.

    All arrays are float64 and have the grid's length.  ``x`` holds the inputs as
    the framework received them (the grid rounded to ``dtype``), so the errors
    measure the GELU kernel alone, not the rounding of the inputs.
    """

    dtype: str
    approximate: str
    x: np.ndarray  # grid rounded to dtype
    exact: np.ndarray  # gelu_core.gelu(x, approximate) in float64: the reference
    torch_value: np.ndarray  # torch.nn.functional.gelu(x in dtype), widened
    ours: np.ndarray  # gelu_core.gelu(x in dtype): float64 inside, rounded once to dtype

    @property
    def torch_rel_error(self) -> np.ndarray:
        """|torch - exact| / |exact|; NaN where exact is 0; exactly 1 where torch returns 0."""
        return _relative(self.torch_value, self.exact)

    @property
    def ours_rel_error(self) -> np.ndarray:
        """|gelu_core - exact| / |exact| at the same dtype."""
        return _relative(self.ours, self.exact)


_PAD = 64  # trailing elements that absorb ATen's scalar tail loop
_BLOCK = 4096  # elements per call: under ATen's grain size (32768), so no call is split across threads


def _torch_gelu(x, approximate: str):
    """torch.nn.functional.gelu on a 1-D tensor, every element through the vectorised kernel.

    ATen's CPU loop runs blocks of SIMD width and finishes the last few elements of
    each chunk (up to 2 vectors; a tensor over 32768 elements is cut into one chunk
    per thread) with a scalar version of the formula, whose tanh/erf can round
    differently: near the tail cliff, -5.09375 in float32 gives -1.5e-07 one way and
    0 the other.  Real activations are large tensors and almost every element takes
    the vectorised path, so that is the one reported: the input goes in blocks of
    4096, each padded, and only the elements before the padding are read back.
    """
    import torch

    out = []
    with torch.no_grad():
        for block in torch.split(x, _BLOCK):
            padded = torch.cat([block, torch.zeros(_PAD, dtype=x.dtype)])
            out.append(torch.nn.functional.gelu(padded, approximate=approximate)[: block.numel()])
    return torch.cat(out) if out else x.clone()


def _cast(value: float, dtype: str) -> float:
    """value rounded to dtype, back as a Python float."""
    import torch

    return float(torch.tensor(value, dtype=torch.float64).to(_torch_dtype(dtype)).double())


def _last_true(pred, lo: float, hi: float, dtype: str) -> float:
    """The largest dtype number in [lo, hi] where a monotone pred holds (pred(lo) true, pred(hi) false)."""
    lo, hi = _cast(lo, dtype), _cast(hi, dtype)
    while True:
        mid = _cast(0.5 * (lo + hi), dtype)
        if mid in (lo, hi):
            return lo
        lo, hi = (mid, hi) if pred(mid) else (lo, mid)


def _all_values(dtype: str, lo: float, hi: float) -> np.ndarray:
    """Every number of ``dtype`` in [lo, hi] (lo < hi < 0), as float64, ascending."""
    import torch

    if dtype == "float32":
        a, b = np.array([hi, lo], dtype=np.float32).view(np.int32)  # negative floats: bits grow as x falls
        return np.ascontiguousarray(np.arange(a, b + 1, dtype=np.int32).view(np.float32).astype(np.float64)[::-1])
    every = torch.arange(-(2**15), 2**15, dtype=torch.int32).to(torch.int16).view(_torch_dtype(dtype)).double()
    every = every.numpy()
    return np.sort(every[np.isfinite(every) & (every >= lo) & (every <= hi)])


def zero_band(dtype: str = "float32", approximate: str = "none") -> tuple[float, float]:
    """Where ``torch.nn.functional.gelu`` in ``dtype`` returns exactly 0 for a negative input: (a, b).

    Every input x <= a gives 0; between a and b some do and some do not (1 + erf
    can only take the values 0, 1 ulp, 2 ulp, ... there, and erf's rounding
    flickers); no input above b gives 0.  Found by trying every ``dtype`` number
    near the edge, so both ends are exact.

    In float32 both lie near -5.5 (where exactly follows the CPU's SIMD kernel and
    its rounding); the true GELU there is about -8e-08.

    >>> a, b = zero_band("float32"); -5.7 < a <= b < -5.3
    True
    """
    import torch

    dt = _torch_dtype(dtype)

    def zeros(x: np.ndarray) -> np.ndarray:
        return (_torch_gelu(torch.from_numpy(x).to(dt), approximate) == 0).numpy()

    coarse = np.linspace(-40.0, -0.5, 39501)  # 1e-3 apart: finds the edge to within a few thousandths
    z = zeros(coarse)
    if not z.any():
        raise ValueError(f"torch's {dtype} GELU never returns 0 on [-40, -0.5]")
    first_nonzero, last_zero = coarse[~z].min(), coarse[z].max()
    x = _all_values(dtype, max(first_nonzero - 0.05, -40.0), min(last_zero + 0.05, -0.5))
    z = zeros(x)
    below = x[~z].min() if (~z).any() else x.max()
    return float(x[z & (x < below)].max()), float(x[z].max())


def underflow_below(dtype: str = "float32", approximate: str = "none") -> float:
    """The largest input whose true GELU, rounded to ``dtype``, is 0: where even a perfect kernel returns 0.

    >>> underflow_below("float16"), underflow_below("float32") < -14
    (-5.7265625, True)
    """
    import torch

    dt = _torch_dtype(dtype)

    def rounds_to_zero(v: float) -> bool:
        return bool(torch.tensor(gelu(v, approximate), dtype=torch.float64).to(dt) == 0)

    return _last_true(rounds_to_zero, -40.0, -0.5, dtype)


def _relative(value: np.ndarray, exact: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(exact != 0, np.abs(value - exact) / np.abs(exact), np.nan)


def framework_gelu(x, dtype: str = "float32", approximate: str = "none") -> FrameworkGELU:
    """Run ``torch.nn.functional.gelu`` on ``x`` cast to ``dtype`` and keep the float64 truth beside it.

    At -12 torch's float32 answer underflows to a zero (its sign depends on the CPU's kernel path), so its
    relative error is 1, while the true value is a normal float32 number:

    >>> r = framework_gelu([-12.0, -1.0], "float32")
    >>> r.torch_value[0] == 0.0, f"{r.exact[0]:.3e}", float(r.torch_rel_error[0])
    (np.True_, '-2.132e-32', 1.0)
    """
    import torch

    if approximate not in ("none", "tanh"):
        raise ValueError(f"torch's gelu knows approximate='none' or 'tanh', got {approximate!r}")
    grid = torch.as_tensor(np.asarray(x, dtype=np.float64))
    xd = grid.to(_torch_dtype(dtype)).reshape(-1)  # what the framework receives
    out = _torch_gelu(xd, approximate)
    x64 = xd.double().numpy()
    return FrameworkGELU(
        dtype=dtype,
        approximate=approximate,
        x=x64,
        exact=np.asarray(gelu(x64, approximate), dtype=np.float64),
        torch_value=out.double().numpy(),
        ours=gelu(xd, approximate).double().numpy(),
    )
