"""GELU, ReLU and the activations a learner meets next, with their derivatives.

Every function takes a float, a numpy array or a torch tensor and returns the
same kind (see ``_backend.evaluate``).  Formulas are evaluated in float64 in
forms that never subtract nearly equal numbers:

* exact GELU is ``0.5 * x * erfc(-x / sqrt(2))`` (as ``jax.nn.gelu``), never
  ``0.5 * x * (1 + erf(x / sqrt(2)))``, which returns 0 for x below about -6
  in float32 and -10 in float64;
* the tanh gate ``0.5 * (1 + tanh(u))`` is evaluated as ``sigmoid(2u)``, the
  same number without the ``1 + tanh`` cancellation;
* sigmoid itself uses ``exp(-|t|)`` so that it never overflows.

Conventions: relu'(0) = 0 and leaky_relu'(0) = negative_slope (the left
derivative, as PyTorch's autograd gives); gelu(-inf) = 0, gelu(+inf) = +inf.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gelu_core._backend import evaluate

SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)  # 0.7978845608028654
TANH_COEF = 0.044715  # cubic coefficient of the tanh approximation (Hendrycks & Gimpel, 2016)
SIGMOID_COEF = 1.702  # x * sigmoid(1.702 x), the paper's cheaper approximation
INV_SQRT_2 = 1.0 / math.sqrt(2.0)
INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)

APPROXIMATE = ("none", "tanh", "sigmoid")  # the values gelu(x, approximate=...) takes, as in torch


# ---------------------------------------------------------------- formulas
# Each ``_f(ops, x)`` receives float64 x and the numpy or torch namespace.

def _sigmoid(ops, t):
    """sigmoid(t) = 1 / (1 + exp(-t))."""
    e = ops.exp(-ops.abs(t))  # in (0, 1]: never overflows
    return ops.where(t >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def _sigmoid_pair(ops, t):
    """sigmoid(t) * sigmoid(-t), without 1 - sigmoid(t) cancelling."""
    e = ops.exp(-ops.abs(t))
    return e / ((1.0 + e) * (1.0 + e))


def _at_infinity(ops, x, y, at_minus_inf, at_plus_inf):
    """Patch the limits where inf * 0 would give NaN."""
    y = ops.where(ops.isinf(x) & (x < 0), at_minus_inf, y)
    return ops.where(ops.isinf(x) & (x > 0), at_plus_inf, y)


def _tanh_inner(x):
    """u = sqrt(2/pi) * (x + 0.044715 x^3)."""
    return SQRT_2_OVER_PI * (x + TANH_COEF * (x * x * x))


def _phi(ops, x):
    """Phi(x), the standard normal CDF: the exact form's gate (erfc: nothing cancels far left)."""
    return 0.5 * ops.erfc(-x * INV_SQRT_2)


def _normal_pdf(ops, x):
    """phi(x) = exp(-x^2 / 2) / sqrt(2 pi): the bell curve, and the slope of Phi."""
    return INV_SQRT_2PI * ops.exp(-0.5 * (x * x))


def _tanh_gate(ops, x):
    """The tanh form's gate (GPT-2): 0.5 * (1 + tanh(u)), evaluated as sigmoid(2u), the same number without
    1 + tanh(u) cancelling to 0 far left."""
    return _sigmoid(ops, 2.0 * _tanh_inner(x))


def _tanh_gate_slope(ops, x):
    """d/dx sigmoid(2u) = 2 u' sigmoid(2u) sigmoid(-2u): the chain rule through the gate."""
    du = SQRT_2_OVER_PI * (1.0 + 3.0 * TANH_COEF * (x * x))  # inf once x^2 overflows (|x| > 1.3e154)
    pair = _sigmoid_pair(ops, 2.0 * _tanh_inner(x))  # 0 for |x| > 22, so the product is 0 there, never inf * 0
    return ops.where(pair > 0, 2.0 * du * pair, 0.0)


def _sigmoid_gate(ops, x):
    """The sigmoid form's gate: sigmoid(1.702 x)."""
    return _sigmoid(ops, SIGMOID_COEF * x)


def _sigmoid_gate_slope(ops, x):
    """1.702 * sigmoid(1.702 x) * sigmoid(-1.702 x)."""
    return SIGMOID_COEF * _sigmoid_pair(ops, SIGMOID_COEF * x)


# Each GELU form's gate and the gate's slope, by PyTorch's approximate= name: GELU(x) = x * gate(x), and
# GELU'(x) = gate(x) + x * gate'(x).  The code export prints these very functions (ui/code_export.py).
GATES = {"none": _phi, "tanh": _tanh_gate, "sigmoid": _sigmoid_gate}
GATE_SLOPES = {"none": _normal_pdf, "tanh": _tanh_gate_slope, "sigmoid": _sigmoid_gate_slope}


def _gaussian_gate(ops, x, mu, sigma):
    """The gate of a bell centred at mu, sigma wide: Phi((x - mu) / sigma); sigma = 0 is the hard step x > mu."""
    if sigma == 0:
        return ops.where(x > mu, 1.0, 0.0)
    return _phi(ops, (x - mu) / sigma)


def _gate(ops, x, approximate):
    return GATES[approximate](ops, x)


def _gelu_of(ops, x, gate):
    """GELU(x) = x * gate(x), for a GELU form's gate (0 at -inf, x at inf: never inf * 0)."""
    return _at_infinity(ops, x, x * gate(ops, x), 0.0, x)


def _gelu_slope_of(ops, x, gate, gate_slope):
    """GELU'(x) = gate(x) + x * gate'(x), the product rule, for a GELU form's gate and its slope (0 at -inf, 1 at
    inf)."""
    return _at_infinity(ops, x, gate(ops, x) + x * gate_slope(ops, x), 0.0, 1.0)


def _gelu(ops, x, approximate):
    return _gelu_of(ops, x, GATES[approximate])


def _gelu_grad(ops, x, approximate):
    return _gelu_slope_of(ops, x, GATES[approximate], GATE_SLOPES[approximate])


def _nan_kept(ops, x, y):
    """y, with NaN wherever x is NaN."""
    return ops.where(ops.isnan(x), x, y)


def _relu(ops, x):
    """max(0, x)."""
    return _nan_kept(ops, x, ops.where(x > 0, x, 0.0))


def _relu_grad(ops, x):
    """1 for x > 0, else 0 (ReLU'(0) = 0, as PyTorch's autograd)."""
    one = ops.ones_like(x)
    return _nan_kept(ops, x, ops.where(x > 0, one, 0.0 * one))


def _leaky_relu(ops, x, negative_slope):
    """x for x > 0, else negative_slope * x."""
    return ops.where(x > 0, x, negative_slope * x)


def _leaky_relu_grad(ops, x, negative_slope):
    one = ops.ones_like(x)
    return _nan_kept(ops, x, ops.where(x > 0, one, negative_slope * one))


def _elu(ops, x, alpha):
    """x for x > 0, else alpha * (exp(x) - 1)."""
    return ops.where(x > 0, x, alpha * ops.expm1(ops.where(x > 0, 0.0, x)))


def _elu_grad(ops, x, alpha):
    return _nan_kept(ops, x, ops.where(x > 0, 1.0, alpha * ops.exp(ops.where(x > 0, 0.0, x))))


def _softplus(ops, x):
    """log(1 + exp(x)), written so that exp never overflows."""
    return ops.where(x > 0, x, 0.0) + ops.log1p(ops.exp(-ops.abs(x)))


def _tanh(ops, x):
    return ops.tanh(x)


def _tanh_grad(ops, x):
    e = ops.exp(-2.0 * ops.abs(x))  # sech^2 x = 4 e / (1 + e)^2, no 1 - tanh^2 cancellation
    return 4.0 * e / ((1.0 + e) * (1.0 + e))


def _silu(ops, x):
    """x * sigmoid(x)."""
    return _at_infinity(ops, x, x * _sigmoid(ops, x), 0.0, x)


def _silu_grad(ops, x):
    s = _sigmoid(ops, x)
    return _at_infinity(ops, x, s + x * _sigmoid_pair(ops, x), 0.0, 1.0)


# ---------------------------------------------------------------- public API

def _check(approximate: str) -> str:
    if approximate not in APPROXIMATE:
        raise ValueError(f"approximate must be one of {APPROXIMATE}, got {approximate!r}")
    return approximate


def gelu(x, approximate: str = "none"):
    """GELU(x) = x * gate(x); ``approximate`` as in PyTorch, plus ``"sigmoid"``.

    none:    x * Phi(x) = 0.5 x erfc(-x / sqrt 2)
    tanh:    0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    sigmoid: x * sigmoid(1.702 x)

    >>> round(gelu(-1.0, approximate="tanh"), 4)
    -0.1588
    """
    return evaluate(_gelu, x, _check(approximate))


def gelu_gate(x, approximate: str = "none"):
    """The multiplier alone: Phi(x), 0.5 (1 + tanh(u)) or sigmoid(1.702 x), in [0, 1].

    >>> round(gelu_gate(2.0), 5)
    0.97725
    """
    return evaluate(_gate, x, _check(approximate))


def gelu_grad(x, approximate: str = "none"):
    """d/dx GELU(x) = gate(x) + x * gate'(x); exact form: Phi(x) + x phi(x).

    >>> round(gelu_grad(2 ** 0.5), 6)
    1.128904
    """
    return evaluate(_gelu_grad, x, _check(approximate))


def normal_pdf(x):
    """The standard-normal density phi(x) = exp(-x^2 / 2) / sqrt(2 pi), whose area left of x is the gate Phi(x).

    >>> round(normal_pdf(0.0), 6)
    0.398942
    """
    return evaluate(_normal_pdf, x)


def relu(x):
    """ReLU(x) = max(0, x).

    >>> relu(-1.0), relu(2.0)
    (0.0, 2.0)
    """
    return evaluate(_relu, x)


def relu_grad(x):
    """ReLU'(x): 1 for x > 0, else 0 (convention: relu'(0) = 0, as torch autograd).

    >>> relu_grad(0.0)
    0.0
    """
    return evaluate(_relu_grad, x)


def sigmoid(x):
    """sigmoid(x) = 1 / (1 + exp(-x))."""
    return evaluate(_sigmoid, x)


def sigmoid_grad(x):
    """sigmoid'(x) = sigmoid(x) sigmoid(-x)."""
    return evaluate(_sigmoid_pair, x)


def tanh(x):
    """tanh(x)."""
    return evaluate(_tanh, x)


def tanh_grad(x):
    """tanh'(x) = sech^2(x) = 1 - tanh^2(x)."""
    return evaluate(_tanh_grad, x)


def silu(x):
    """SiLU / Swish: x * sigmoid(x)."""
    return evaluate(_silu, x)


def silu_grad(x):
    """SiLU'(x) = sigmoid(x) + x sigmoid(x) sigmoid(-x)."""
    return evaluate(_silu_grad, x)


def leaky_relu(x, negative_slope: float = 0.01):
    """x for x > 0, else negative_slope * x."""
    return evaluate(_leaky_relu, x, float(negative_slope))


def leaky_relu_grad(x, negative_slope: float = 0.01):
    """1 for x > 0, else negative_slope (convention at 0: negative_slope)."""
    return evaluate(_leaky_relu_grad, x, float(negative_slope))


def elu(x, alpha: float = 1.0):
    """x for x > 0, else alpha * (exp(x) - 1)."""
    return evaluate(_elu, x, float(alpha))


def elu_grad(x, alpha: float = 1.0):
    """1 for x > 0, else alpha * exp(x)."""
    return evaluate(_elu_grad, x, float(alpha))


def softplus(x):
    """softplus(x) = log(1 + exp(x)), a smooth ReLU."""
    return evaluate(_softplus, x)


def softplus_grad(x):
    """softplus'(x) = sigmoid(x)."""
    return evaluate(_sigmoid, x)


# ---------------------------------------------------------------- registry

@dataclass(frozen=True)
class Activation:
    """One entry of the registry: the function, its derivative and how to show it."""

    name: str  # registry key: "gelu_tanh"
    label: str  # in sentences and figure legends: "GELU (tanh, GPT-2)"
    fn: Callable[..., Any]
    grad: Callable[..., Any]
    latex: str  # on short lines (gathered), so it fits a phone
    description: str
    short: str = ""  # on controls and in links: "GELU tanh" (?ffn_act=GELU+tanh)
    approximate: str | None = None  # a GELU form's approximate= ("none", "tanh", "sigmoid"); None otherwise
    # what fn and grad evaluate: formula(ops, x, *params) (a GELU form: x * gate, and gate + x * gate', from
    # GATES and GATE_SLOPES); the code export prints their source
    formula: Callable[..., Any] | None = None
    slope_formula: Callable[..., Any] | None = None
    params: dict[str, float] = field(default_factory=dict)
    param_ranges: dict[str, tuple[float, float]] = field(default_factory=dict)

    def __call__(self, x, **params):
        return self.fn(x, **{**self.params, **params})

    def derivative(self, x, **params):
        return self.grad(x, **{**self.params, **params})


def _gelu_entry(name, approximate, label, latex, description):
    return Activation(
        name=name,
        label=label,
        fn=lambda x: gelu(x, approximate),
        grad=lambda x: gelu_grad(x, approximate),
        latex=latex,
        description=description,
        short=f"GELU {form_word(approximate)}",
        approximate=approximate,
    )


def form_word(approximate: str) -> str:
    """The word a page shows for a GELU form: PyTorch's approximate="none" is the exact form.

    >>> [form_word(a) for a in APPROXIMATE]
    ['exact', 'tanh', 'sigmoid']
    """
    return "exact" if _check(approximate) == "none" else approximate


ACTIVATIONS: dict[str, Activation] = {
    a.name: a
    for a in (
        Activation(
            "relu", "ReLU", relu, relu_grad,
            r"\mathrm{ReLU}(x) = \max(0,\,x)",
            "A hard rule: negatives become 0, positives pass unchanged.",
            short="ReLU", formula=_relu, slope_formula=_relu_grad,
        ),
        _gelu_entry(
            "gelu", "none", "GELU (exact)",
            r"\begin{gathered} \mathrm{GELU}(x) = x\,\Phi(x) \\ "
            r"= \tfrac{1}{2}\,x\,\operatorname{erfc}\!\left(-\tfrac{x}{\sqrt{2}}\right) \end{gathered}",
            "x times the chance that a standard-normal sample falls below x.",
        ),
        _gelu_entry(
            "gelu_tanh", "tanh", "GELU (tanh, GPT-2)",
            r"\begin{gathered} \mathrm{GELU}_{\tanh}(x) = \tfrac12\,x\,\bigl(1 + \tanh u\bigr) \\ "
            r"u = \sqrt{2/\pi}\,\left(x + 0.044715\,x^{3}\right) \end{gathered}",
            "The cheaper approximation used by GPT-2 and chapter 4 of the book.",
        ),
        _gelu_entry(
            "gelu_sigmoid", "sigmoid", "GELU (sigmoid)",
            r"\mathrm{GELU}_{\sigma}(x) = x\,\sigma(1.702\,x)",
            "The cheapest approximation: a sigmoid gate squeezed to match Phi.",
        ),
        Activation(
            "sigmoid", "Sigmoid", sigmoid, sigmoid_grad,
            r"\sigma(x) = \frac{1}{1 + e^{-x}}",
            "Squashes any number into (0, 1); the classic gate of early networks.",
            short="Sigmoid", formula=_sigmoid, slope_formula=_sigmoid_pair,
        ),
        Activation(
            "tanh", "Tanh", tanh, tanh_grad,
            r"\tanh(x) = \frac{e^{x} - e^{-x}}{e^{x} + e^{-x}}",
            "Squashes into (-1, 1), centred on zero.",
            short="Tanh", formula=_tanh, slope_formula=_tanh_grad,
        ),
        Activation(
            "silu", "SiLU / Swish", silu, silu_grad,
            r"\mathrm{SiLU}(x) = x\,\sigma(x)",
            "GELU's close cousin: x gated by a sigmoid instead of Phi (Llama uses it).",
            short="SiLU", formula=_silu, slope_formula=_silu_grad,
        ),
        Activation(
            "leaky_relu", "Leaky ReLU", leaky_relu, leaky_relu_grad,
            r"\mathrm{LeakyReLU}(x) = \max(0, x) + a\,\min(0, x)",
            "ReLU that lets a fixed fraction a of each negative through.",
            short="Leaky ReLU", formula=_leaky_relu, slope_formula=_leaky_relu_grad,
            params={"negative_slope": 0.01},
            param_ranges={"negative_slope": (0.0, 0.5)},
        ),
        Activation(
            "elu", "ELU", elu, elu_grad,
            r"\mathrm{ELU}(x) = \begin{cases} x & x > 0 \\ \alpha\,(e^{x} - 1) & x \le 0 \end{cases}",
            "Smooth on the negative side, levelling off at -alpha.",
            short="ELU", formula=_elu, slope_formula=_elu_grad,
            params={"alpha": 1.0},
            param_ranges={"alpha": (0.1, 3.0)},
        ),
        Activation(
            "softplus", "Softplus", softplus, softplus_grad,
            r"\mathrm{softplus}(x) = \log\left(1 + e^{x}\right)",
            "A smooth ReLU that never goes negative.",
            short="Softplus", formula=_softplus, slope_formula=_sigmoid,
        ),
    )
}

GELU_FORMS = {a.approximate: a.name for a in ACTIVATIONS.values() if a.approximate}  # "tanh" -> "gelu_tanh"


def get_activation(name: str) -> Activation:
    """Look an activation up by registry name, with a clear message for a wrong one."""
    try:
        return ACTIVATIONS[name]
    except KeyError:
        raise ValueError(f"unknown activation {name!r}; choose one of {', '.join(ACTIVATIONS)}") from None
