"""High-precision references for the core's tests: mpmath at 50 digits, and a way to count ulps against it.

Every reference takes the exact value of a binary float as its input (``mpf(float(x))`` is exact) and
evaluates the defining formula at ``DPS`` significant digits; the tanh form's 0.044715 and the sigmoid
form's 1.702 are the decimal constants of the formulas, not their float64 roundings.

Ulps are counted the usual way: ``ulp(v)`` in a float type with ``p`` bits of precision is
``2 ** (max(e, emin) - p + 1)`` where ``2 ** e <= |v| < 2 ** (e + 1)``: the gap between the two floats
of that type around the true value ``v`` (below the normal range, the subnormal spacing).  An error of
``|ours - v| / ulp(v) <= 0.5`` is a correctly rounded result.

Tables over the float32 and float64 grids are built once per test session (``functools.cache``) and
stored as ``RefArray`` (the reference divided by its ulp, as a double-double), so comparing a whole array
of results is a few numpy operations.  ``fast_reference`` is a float64-or-better reference, independent of
gelu_core's code, for checking hundreds of thousands of float32 / float16 / bfloat16 results at once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import mpmath
import numpy as np
from mpmath import mp

DPS = 50  # decimal digits of every mpmath reference (the rules ask for 40 or more)

TANH_COEF = "0.044715"  # decimal constants of the formulas, parsed by mpmath at DPS digits
SIGMOID_COEF = "1.702"

FORMS = ("none", "tanh", "sigmoid")  # gelu_core's approximate= values

# (precision in bits, smallest normal exponent) of each float type
FORMATS = {"float64": (53, -1022), "float32": (24, -126), "float16": (11, -14), "bfloat16": (8, -126)}

ELU_ALPHAS = (1.0, 0.3)  # the registry default and one other
LEAKY_SLOPES = (0.01, 0.2)


# ---------------------------------------------------------------- the formulas, at DPS digits
# ``mp_table_row`` gives (value, scale): scale is what an error is measured in ulps of.  It is the value
# itself, except for derivatives of the form gate + x * gate', which cancel to 0 at a root (GELU' at
# x = -0.7518, SiLU' at x = -1.2785): no bound relative to the result is possible there, so the scale is
# the largest of |gate + x gate'|, |gate| and |x gate'| (a correctly rounded sum is within 0.5 ulp of it).

def _pair(t):
    """sigmoid(t) * sigmoid(-t) = e / (1 + e)^2 with e = exp(-|t|): no 1 - sigmoid cancellation."""
    e = mp.exp(-abs(t))
    return e / (1 + e) ** 2


def _sigmoid(t):
    return 1 / (1 + mp.exp(-t))


def mp_phi(x):
    """Standard normal CDF: Phi(x) = erfc(-x / sqrt 2) / 2."""
    return mp.erfc(-x / mp.sqrt(2)) / 2


def mp_pdf(x):
    """Standard normal density: phi(x) = exp(-x^2 / 2) / sqrt(2 pi)."""
    return mp.exp(-x * x / 2) / mp.sqrt(2 * mp.pi)


def mp_tanh_u(x):
    """u = sqrt(2/pi) (x + 0.044715 x^3) and du/dx."""
    c = mp.mpf(TANH_COEF)
    k = mp.sqrt(2 / mp.pi)
    return k * (x + c * x ** 3), k * (1 + 3 * c * x * x)


def mp_gate(x, approximate):
    """The GELU gate: Phi(x), 0.5 (1 + tanh u) = sigmoid(2u), or sigmoid(1.702 x)."""
    if approximate == "none":
        return mp_phi(x)
    if approximate == "tanh":
        return _sigmoid(2 * mp_tanh_u(x)[0])
    return _sigmoid(mp.mpf(SIGMOID_COEF) * x)


def mp_gate_slope(x, approximate):
    """d gate / dx: phi(x), 2 u' sigmoid(2u) sigmoid(-2u), or 1.702 sigmoid(t) sigmoid(-t)."""
    if approximate == "none":
        return mp_pdf(x)
    if approximate == "tanh":
        u, du = mp_tanh_u(x)
        return 2 * du * _pair(2 * u)
    c = mp.mpf(SIGMOID_COEF)
    return c * _pair(c * x)


def mp_gelu(x, approximate="none"):
    return x * mp_gate(x, approximate)


def _sum_and_scale(a, b):
    """(a + b, the largest of |a + b|, |a|, |b|): a correctly rounded sum is within 0.5 ulp of that scale."""
    return a + b, max(abs(a + b), abs(a), abs(b))


def mp_gelu_grad(x, approximate="none"):
    """(GELU'(x) = gate + x gate', its scale: the largest of |GELU'|, |gate|, |x gate'|)."""
    return _sum_and_scale(mp_gate(x, approximate), x * mp_gate_slope(x, approximate))


def mp_table_row(x):
    """Every reference at one point x (an mpf): {name: (value, scale)}."""
    row = {}
    for form in FORMS:
        gate = mp_gate(x, form)
        row[f"gate_{form}"] = (gate, gate)
        row[f"gelu_{form}"] = (x * gate, x * gate)
        row[f"gelu_grad_{form}"] = mp_gelu_grad(x, form)
    s = _sigmoid(x)
    pair = _pair(x)
    row["sigmoid"] = (s, s)
    row["sigmoid_grad"] = (pair, pair)
    row["softplus_grad"] = (s, s)
    row["tanh"] = (mp.tanh(x), mp.tanh(x))
    sech2 = mp.sech(x) ** 2
    row["tanh_grad"] = (sech2, sech2)
    row["silu"] = (x * s, x * s)
    row["silu_grad"] = _sum_and_scale(s, x * pair)
    sp = mp.log1p(mp.exp(x))
    row["softplus"] = (sp, sp)
    for alpha in ELU_ALPHAS:
        a = mp.mpf(alpha)
        v = x if x > 0 else a * mp.expm1(x)
        g = mp.one if x > 0 else a * mp.exp(x)
        row[f"elu_{alpha}"] = (v, v)
        row[f"elu_grad_{alpha}"] = (g, g)
    for slope in LEAKY_SLOPES:
        a = mp.mpf(slope)
        v = x if x > 0 else a * x
        g = mp.one if x > 0 else a
        row[f"leaky_relu_{slope}"] = (v, v)
        row[f"leaky_relu_grad_{slope}"] = (g, g)
    relu = x if x > 0 else mp.zero
    row["relu"] = (relu, relu)
    row["relu_grad"] = (mp.one if x > 0 else mp.zero,) * 2
    return row


def _elu(alpha):
    a = mp.mpf(alpha)
    return lambda x: x if x > 0 else a * mp.expm1(x)


def _leaky(slope):
    a = mp.mpf(slope)
    return lambda x: x if x > 0 else a * x


# The functions themselves, at DPS digits, keyed like ``mp_table_row``: what mp.diff differentiates.
MP_VALUES = {
    **{f"gelu_{form}": (lambda x, f=form: mp_gelu(x, f)) for form in FORMS},
    **{f"gate_{form}": (lambda x, f=form: mp_gate(x, f)) for form in FORMS},
    "sigmoid": _sigmoid,
    "tanh": mp.tanh,
    "silu": lambda x: x * _sigmoid(x),
    "softplus": lambda x: mp.log1p(mp.exp(x)),
    "relu": lambda x: x if x > 0 else mp.zero,
    **{f"elu_{a}": _elu(a) for a in ELU_ALPHAS},
    **{f"leaky_relu_{a}": _leaky(a) for a in LEAKY_SLOPES},
}

# derivative key -> the key of the function it differentiates
DERIVATIVE_OF = {
    **{f"gelu_grad_{form}": f"gelu_{form}" for form in FORMS},
    **{f"{n}_grad": n for n in ("sigmoid", "tanh", "silu", "softplus", "relu")},
    **{f"elu_grad_{a}": f"elu_{a}" for a in ELU_ALPHAS},
    **{f"leaky_relu_grad_{a}": f"leaky_relu_{a}" for a in LEAKY_SLOPES},
}
DERIVATIVE_OF["softplus_grad"] = "softplus"


# ---------------------------------------------------------------- the bounds (ulps)

# float64 bounds of the functions whose argument never reaches an exponent through x^2:
# exp/expm1/log1p/tanh count 1 ulp each, every other operation 0.5, rounded up with a little room.
OTHER_F64_BOUND = {
    "sigmoid": 4,  # exp, 1 + e, 1 / (.)                       (measured max 1.5)
    "sigmoid_grad": 6,  # exp, 1 + e, (.)^2, e / (.)           (measured max 3.0)
    "softplus_grad": 4,  # = sigmoid                            (measured max 1.5)
    "tanh": 2,  # the library's tanh                            (measured max 1.0)
    "tanh_grad": 6,  # 4 e / (1 + e)^2 with e = exp(-2|x|)      (measured max 3.2)
    "silu": 6,  # sigmoid, then x * (.)                         (measured max 2.4)
    "silu_grad": 8,  # sigmoid + x * pair, in ulps of the larger term (measured max 3.7)
    "softplus": 4,  # max(x, 0) + log1p(exp(-|x|))              (measured max 1.0)
    "elu": 3,  # alpha * expm1(x)                               (measured max 1.1)
    "elu_grad": 3,  # alpha * exp(x)                            (measured max 1.1)
    "leaky_relu": 0.5,  # one multiplication: correctly rounded
    "leaky_relu_grad": 0,  # exact
    "relu": 0,
    "relu_grad": 0,
}


def ulp_bound(name: str, dtype: str, x) -> np.ndarray:
    """The contract, in ulps, for reference key ``name`` at inputs ``x`` (see the module docstring).

    float32: 1 ulp for everything (computed in float64, rounded once).  float64: 8 (1 + x^2) for the GELU
    forms, gates and derivatives (exp(-x^2 / 2) turns a rounding of x^2 into ~x^2 ulps), else
    ``OTHER_F64_BOUND``.
    """
    x = np.asarray(x, dtype=np.float64)
    if dtype == "float32":
        return np.ones_like(x)
    if name.startswith(("gelu_", "gate_")):
        return 8.0 * (1.0 + x * x)
    base = name.rsplit("_", 1)[0] if name.startswith(("elu", "leaky")) else name
    return np.full_like(x, OTHER_F64_BOUND[base])


# ---------------------------------------------------------------- ulps

def ulp_exponent(v, dtype: str) -> int:
    """k with ulp(v) = 2**k in the float type ``dtype`` (subnormal spacing below the normal range)."""
    p, emin = FORMATS[dtype]
    if v == 0:
        return emin - p + 1
    _, e = mpmath.frexp(v)  # |v| = m 2^e with 0.5 <= m < 1, so floor(log2 |v|) = e - 1
    return max(int(e) - 1, emin) - p + 1


def _nearest_float(v) -> float:
    return mpmath.libmp.to_float(mp.mpf(v)._mpf_, rnd=mpmath.libmp.round_nearest)


@dataclass(frozen=True)
class RefArray:
    """True values v over a grid, stored as v / ulp(v) = hi + lo (a double-double) and the ulp's exponent."""

    hi: np.ndarray
    lo: np.ndarray
    exp: np.ndarray  # ulp(v) = 2.0 ** exp, in the target dtype

    @classmethod
    def from_mp(cls, values, scales, dtype: str) -> RefArray:
        """References ``values``; an error is counted in ulps of ``scales`` (usually the values themselves)."""
        hi, lo, ex = [], [], []
        with mp.workdps(DPS):
            for v, s in zip(values, scales, strict=True):
                k = ulp_exponent(s, dtype)
                q = mp.ldexp(v, -k)  # exact: a power-of-two scaling
                h = _nearest_float(q)
                hi.append(h)
                lo.append(_nearest_float(q - h))
                ex.append(k)
        return cls(np.array(hi), np.array(lo), np.array(ex, dtype=np.int64))

    def ulps(self, ours) -> np.ndarray:
        """|ours - v| / ulp, as float64 (inf where ``ours`` is infinite or absurdly far off, NaN where NaN)."""
        ours = np.asarray(ours, dtype=np.float64)  # exact from float16/32/64
        with np.errstate(over="ignore", invalid="ignore"):
            scaled = np.ldexp(ours, -self.exp)  # exact unless it overflows, and then the error is huge anyway
            return np.abs((scaled - self.hi) - self.lo)  # scaled - hi is exact when the two are close


# ---------------------------------------------------------------- grids

def _special_points(dtype: str) -> list[float]:
    p, emin = FORMATS[dtype]
    tiny = 2.0 ** (emin - p + 1)  # smallest subnormal
    normal = 2.0 ** emin  # smallest normal
    pts = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0, 2 ** 0.5, -(2 ** 0.5),
           -0.7517915241, -1.2784645428, 2.70, -2.70, 2.27, -2.27, 38.0, -38.0, 37.5, -37.5,
           tiny, -tiny, 3 * tiny, -3 * tiny, normal, -normal, 1e-10, -1e-10]
    return pts


@cache
def grid(dtype: str) -> np.ndarray:
    """The test inputs in ``dtype``: dense on [-38, 38], the tails, tiny and subnormal inputs.

    float64: ~1900 points; float32: ~1600 points, 600 of them in [-14, -9] where float32 GELU goes subnormal.
    """
    rng = np.random.default_rng(20240611)
    p, emin = FORMATS[dtype]
    parts = [np.array(_special_points(dtype))]
    if dtype == "float64":
        parts += [
            rng.uniform(-38.0, 38.0, 1300),
            rng.uniform(-38.0, -26.0, 300),  # the exact form's deep tail; below -37.5 the results are subnormal
            rng.uniform(-23.0, -18.0, 100),  # where the tanh form's gate passes into the subnormals
        ]
    else:
        parts += [
            rng.uniform(-38.0, 38.0, 800),
            rng.uniform(-14.0, -9.0, 600),  # float32 results are subnormal below about -13
            rng.uniform(-9.0, -5.0, 50),
        ]
    magnitudes = 2.0 ** rng.uniform(emin - p + 1, 0.0, 150)
    signs = rng.choice([-1.0, 1.0], 150)
    parts.append(magnitudes * signs)  # tiny inputs, subnormal ones included
    x = np.concatenate(parts).astype(dtype)
    x = x[np.isfinite(x)]
    x.setflags(write=False)
    return x


@cache
def table(dtype: str) -> dict[str, RefArray]:
    """Every reference over ``grid(dtype)``, keyed like ``mp_table_row``; built once per session."""
    xs = grid(dtype)
    rows = []
    with mp.workdps(DPS):
        for x in xs:
            rows.append(mp_table_row(mp.mpf(float(x))))
    return {
        name: RefArray.from_mp([r[name][0] for r in rows], [r[name][1] for r in rows], dtype)
        for name in rows[0]
    }


# ---------------------------------------------------------------- a fast reference for the narrow types

def fast_reference(x) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{gate_/gelu_/gelu_grad_ key: (value, scale)} at many points at once, accurate to ~1e-13 relative.

    Good enough to judge float32 / float16 / bfloat16 results (a float32 ulp is 6e-8), and independent of
    gelu_core's code paths: glibc's erfc (math.erfc) for Phi, and 1 / (1 + exp(-t)) in numpy long double
    for the sigmoid gates (where long double is float64 the error grows to |t| eps < 1e-13 on [-20, 20]).
    """
    x = np.asarray(x).astype(np.float64)
    erfc = np.frompyfunc(math.erfc, 1, 1)
    xl = x.astype(np.longdouble)
    k = np.sqrt(np.longdouble(2) / np.longdouble(np.pi))
    c = np.longdouble(TANH_COEF)
    a = np.longdouble(SIGMOID_COEF)
    with np.errstate(over="ignore"):
        t_tanh, t_sig = 2 * k * (xl + c * xl ** 3), a * xl
        gates = {
            "none": 0.5 * erfc(-x / math.sqrt(2.0)).astype(np.float64),
            "tanh": 1 / (1 + np.exp(-t_tanh)),
            "sigmoid": 1 / (1 + np.exp(-t_sig)),
        }
        slopes = {  # d gate / dx; sigmoid(t) sigmoid(-t) = 1 / ((1 + e^-t)(1 + e^t)), no cancellation
            "none": np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi),
            "tanh": 2 * k * (1 + 3 * c * xl * xl) / ((1 + np.exp(-t_tanh)) * (1 + np.exp(t_tanh))),
            "sigmoid": a / ((1 + np.exp(-t_sig)) * (1 + np.exp(t_sig))),
        }
    out = {}
    for form in FORMS:
        gate, term = gates[form], xl * slopes[form]
        out[f"gate_{form}"] = (gate, gate)
        out[f"gelu_{form}"] = (xl * gate, xl * gate)
        d = gate + term
        out[f"gelu_grad_{form}"] = (d, np.maximum(np.maximum(np.abs(d), np.abs(gate)), np.abs(term)))
    return out


def ulp_of(scale, dtype: str) -> np.ndarray:
    """ulp(v) in ``dtype`` for an array of values given in float64 or long double (float64's range)."""
    p, emin = FORMATS[dtype]
    v = np.abs(np.asarray(scale).astype(np.float64))
    _, e = np.frexp(v)  # v = m 2^e with 0.5 <= m < 1
    e = np.where(v == 0, emin + 1, e)
    return np.ldexp(1.0, np.maximum(e - 1, emin) - p + 1)
