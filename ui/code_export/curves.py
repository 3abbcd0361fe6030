"""The Curves script: the probe's three readouts and the values table, with the overlaid activations' columns."""

from __future__ import annotations

import gelu_core
from ui.code_export.common import Values, fill, number, settings
from ui.controls import CURVES, parse_points
from ui.curves import chosen_overlays, overlay_label

# The GELU forms' gates and the overlays as the script writes them, on a float64 tensor x: the formula itself,
# constants and all.  Correct to the four decimals shown for |x| up to the table's 1e6: none overflows, and where
# 1 + tanh(u) cancels far left the true value is far below 0.00005.
GATES = {
    "none": ("The exact gate: Phi(x), the standard normal CDF (with erfc: nothing cancels far left).",
             "0.5 * torch.special.erfc(-x / math.sqrt(2.0))"),
    "tanh": ("The tanh form's gate (GPT-2): 0.5 * (1 + tanh(u)), u = sqrt(2/pi) * (x + 0.044715 * x^3).",
             "0.5 * (1 + torch.tanh(torch.sqrt(torch.tensor(2.0 / torch.pi, dtype=torch.float64))\n"
             "                           * (x + 0.044715 * torch.pow(x, 3))))"),
    "sigmoid": ("The sigmoid form's gate: sigmoid(1.702 * x).", "torch.sigmoid(1.702 * x)"),
}
OVERLAYS = {
    "sigmoid": "torch.sigmoid(x)",
    "tanh": "torch.tanh(x)",
    "silu": "x * torch.sigmoid(x)",
    "leaky_relu": "torch.where(x > 0, x, {negative_slope!r} * x)",
    "elu": "torch.where(x > 0, x, {alpha!r} * torch.expm1(torch.clamp(x, max=0.0)))",
    "softplus": "torch.clamp(x, min=0.0) + torch.log1p(torch.exp(-torch.abs(x)))",  # log(1 + e^x), no overflow
    "gelu": "0.5 * x * torch.special.erfc(-x / math.sqrt(2.0))",
    "gelu_tanh": "0.5 * x * (1 + torch.tanh(torch.sqrt(torch.tensor(2.0 / torch.pi, dtype=torch.float64))\n"
                 "                   * (x + 0.044715 * torch.pow(x, 3))))",
    "gelu_sigmoid": "x * torch.sigmoid(1.702 * x)",
}

TEMPLATE = '''
"""GELU Explorer, Curves: ReLU and GELU ($form form) at the probe x, and the table of values at chosen points."""

${imports}


def gate(x):
    """$gate_comment"""
    return $gate


def four(value):
    """Four decimals, no minus sign on a value that rounds to 0 (as the page's readouts)."""
    text = f"{float(value):.4f}"
    return text.lstrip("-") if float(text) == 0 else text


x = torch.tensor($x, dtype=torch.float64)  # the probe
print(f"ReLU({x:.2f}): {four(torch.clamp(x, min=0.0))}")
print(f"GELU({x:.2f}), $form: {four(x * gate(x))}")  # GELU(x) = x * gate(x)
print(f"gate({x:.2f}), $form: {four(gate(x))}")

x = torch.tensor([$points], dtype=torch.float64)  # the table's points, ($count,)
table = {
    "x": x,
    "ReLU(x)": torch.clamp(x, min=0.0),
    "GELU(x), $form": x * gate(x),
    "gate(x), $form": gate(x),$overlays
}
print("  ".join(f"{name:>10}" for name in table))
for row in zip(*table.values(), strict=True):
    print("  ".join(f"{value:>{max(10, len(name))}.4f}" for name, value in zip(table, row, strict=True)))
'''


def script(values: Values) -> str:
    v = settings(CURVES, values)
    approximate = v["form"]
    try:
        points = parse_points(v["points"])
    except ValueError:
        points = parse_points(CURVES["points"].default)  # what the page shows meanwhile
    params = {"leaky_relu": {"negative_slope": float(v["slope"])}, "elu": {"alpha": float(v["alpha"])}}
    overlays = chosen_overlays(approximate, v["more"])  # as the page
    lines = "".join(f'\n    "{overlay_label(n, params.get(n, {}))}": {OVERLAYS[n].format(**params.get(n, {}))},'
                    for n in overlays)
    comment, expression = GATES[approximate]
    uses_math = "math." in expression + lines
    return fill(TEMPLATE, form=gelu_core.form_word(approximate), gate_comment=comment, gate=expression,
                imports="import math\n\nimport torch" if uses_math else "import torch",
                x=number(v["x"]), points=", ".join(number(p) for p in points), count=len(points), overlays=lines)
