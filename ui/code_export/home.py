"""Home's script: the five inputs through ReLU, the tanh gate, tanh GELU and x·Φ(x), as the table shows them."""

from __future__ import annotations

from ui.code_export.common import Values, fill, number, settings
from ui.controls import HOME

TEMPLATE = '''
"""GELU Explorer, Home: five numbers through ReLU and GELU, as the page's table shows them."""

import math

import torch

x = torch.tensor([$inputs], dtype=torch.float64)  # the five inputs on the page, (5,)

relu = torch.clamp(x, min=0.0)  # ReLU(x) = max(0, x)
gate = 0.5 * (1 + torch.tanh(torch.sqrt(torch.tensor(2.0 / torch.pi, dtype=torch.float64))
                             * (x + 0.044715 * torch.pow(x, 3))))  # how open GELU's door is: 0 to 1
gelu = x * gate  # GELU, tanh form: what GPT-2 and the book's chapter 4 compute
exact_gelu = 0.5 * x * torch.special.erfc(-x / math.sqrt(2.0))  # x * Phi(x): Phi is the standard normal CDF


def shown(value) -> str:
    """Four decimals, as the page shows them: a value that rounds to zero has no sign (never -0.0000)."""
    text = f"{value:.4f}"
    return text[1:] if text == "-0.0000" else text


table = {"x": x, "ReLU(x)": relu, "gate(x)": gate, "GELU(x)": gelu, "x·Φ(x)": exact_gelu}
print("  ".join(f"{name:>10}" for name in table))
for row in zip(*table.values(), strict=True):
    print("  ".join(f"{shown(value):>10}" for value in row))
'''


def script(values: Values) -> str:
    v = settings(HOME, values)
    return fill(TEMPLATE, inputs=", ".join(number(v[f"x{i}"]) for i in range(1, 6)))
