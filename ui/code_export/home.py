"""Home's script: the five inputs through ReLU, the tanh gate, tanh GELU and x·Φ(x), as the table shows them."""

from __future__ import annotations

from gelu_core.activations import ACTIVATIONS, GATES
from ui.code_export.common import Values, fill, number, settings, source
from ui.controls import HOME
from ui.format import fixed

TEMPLATE = '''
"""GELU Explorer, Home: five numbers through ReLU and GELU, as the page's table shows them."""

$imports

# GELU Explorer's own formulas (gelu_core) and number format (ui/format.py), for float64 tensors
$code


x = torch.tensor([$inputs], dtype=torch.float64)  # the five inputs on the page, (5,)
table = {
    "x": x,
    "ReLU(x)": relu(x),  # max(0, x)
    "gate(x)": tanh_gate(x),  # how open GELU's door is, 0 to 1 (tanh form)
    "GELU(x)": x * tanh_gate(x),  # GELU = x * gate(x), tanh form: what GPT-2 and the book's chapter 4 compute
    "x·Φ(x)": x * phi(x),  # exact GELU: Phi is the standard normal CDF
}
print("  ".join(f"{name:>10}" for name in table))
for row in zip(*table.values(), strict=True):
    print("  ".join(f"{fixed(value):>10}" for value in row))
'''


def script(values: Values) -> str:
    v = settings(HOME, values)
    names = {"relu": ACTIVATIONS["relu"].formula, "tanh_gate": GATES["tanh"], "phi": GATES["none"]}
    return fill(TEMPLATE, inputs=", ".join(number(v[f"x{i}"]) for i in range(1, 6)), code=source(fixed, names=names))
