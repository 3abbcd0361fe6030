"""The Approximations script, for the tab on screen: the largest error of the tanh and sigmoid forms, or what
PyTorch's GELU returns in each chosen dtype at the table's inputs."""

from __future__ import annotations

import gelu_core
from ui.approximations import TABLE_X
from ui.code_export.common import Values, fill, number, settings
from ui.controls import APPROX, APPROXIMATIONS_VIEWS, DTYPES

FORMS = '''
"""GELU Explorer, Approximations: how far the tanh and sigmoid forms stray from exact GELU, at their worst."""

import math

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import erfc


def gelu_exact(x):
    return 0.5 * x * erfc(-x / math.sqrt(2.0))  # x * Phi(x), Phi the standard normal CDF


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * np.power(x, 3))))  # GPT-2's


def gelu_sigmoid(x):
    return x / (1 + np.exp(-1.702 * x))  # x * sigmoid(1.702 x)


def largest_error(approximation):
    """(x, |approximation(x) - exact(x)|) where that error peaks.  It is the same at -x and +x (GELU(x) - GELU(-x)
    = x in every form), so x >= 0 covers both sides."""
    def error(x):
        return np.abs(approximation(x) - gelu_exact(x))

    grid = np.linspace(0.0, 10.0, 4001)  # (4001,): find the peak on a grid, then refine it between its neighbours
    i = int(np.argmax(error(grid)))
    worst = minimize_scalar(lambda x: -error(x), bounds=(grid[i - 1], grid[i + 1]), method="bounded",
                            options={"xatol": 1e-12}).x
    return worst, error(worst)


for name, approximation in (("tanh", gelu_tanh), ("sigmoid", gelu_sigmoid)):
    worst, error = largest_error(approximation)
    print(f"Largest error, {name} form: {error:.2e} at x = ±{worst:.2f}")
'''

PYTORCH = '''
"""GELU Explorer, Approximations: what torch.nn.functional.gelu ($form form) returns in low precision, against the
float64 truth."""

import math

import torch

approximate = "$approximate"  # PyTorch's name: "none" is the exact form, "tanh" GPT-2's
dtypes = [$dtypes]  # the number formats chosen on the page
# the table's inputs, each exact in every dtype: all the error below is the kernel's
x = torch.tensor([$inputs], dtype=torch.float64)  # (9,)

# The float64 reference of this form, written so that nothing cancels: far left it is tiny, but not 0
$truth


def torch_gelu(x, dtype):
    """torch's GELU in ``dtype``, inside a longer tensor as in a model: then every element takes PyTorch's
    vectorised kernel (the last few elements of a short tensor take a scalar path, which near the cliff can
    round the other way)."""
    padded = torch.cat([x.to(dtype), torch.zeros(64, dtype=dtype)])
    return torch.nn.functional.gelu(padded, approximate=approximate)[: len(x)].double()


table = {"x": x, "exact (float64)": exact}
for dtype in dtypes:
    name = str(dtype).removeprefix("torch.")
    value = torch_gelu(x, dtype)
    table[f"torch {name}"] = value
    table[f"rel. error {name}"] = torch.abs(value - exact) / torch.abs(exact)  # 1 where torch returns 0
if dtypes:
    ours = dtypes[0]  # this app's own result (gelu_core): the float64 truth rounded once to the dtype
    table[f"gelu_core {str(ours).removeprefix('torch.')}"] = exact.to(ours).double()

print("  ".join(f"{name:>11}" for name in table))
for row in zip(*table.values(), strict=True):
    cells = [f"{row[0]:.1f}"] + [f"{value:.4e}" for value in row[1:]]
    print("  ".join(f"{cell:>{max(11, len(name))}}" for name, cell in zip(table, cells, strict=True)))
'''

TRUTH = {
    "none": "exact = 0.5 * x * torch.special.erfc(-x / math.sqrt(2.0))  # x * Phi(x)",
    "tanh": ("# 0.5 * x * (1 + tanh(u)) with u = sqrt(2/pi) * (x + 0.044715 x^3), as x * sigmoid(2u): the same\n"
             "# number, without 1 + tanh(u) rounding to 0\n"
             "u = math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3))\n"
             "exact = x * torch.sigmoid(2 * u)"),
}


def script(values: Values) -> str:
    v = settings(APPROX, values)
    if v["view"] == APPROXIMATIONS_VIEWS[0]:
        return fill(FORMS)
    order = [d for d in DTYPES if d in v["fw_dtypes"]]  # the page's order, whatever the order chosen
    return fill(PYTORCH, form=gelu_core.form_word(v["fw_form"]), approximate=v["fw_form"],
                dtypes=", ".join(f"torch.{d}" for d in order), inputs=", ".join(number(x) for x in TABLE_X),
                truth=TRUTH[v["fw_form"]])
