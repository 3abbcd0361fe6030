"""The Curves script: the probe's three readouts and the values table, with the overlaid activations' columns."""

from __future__ import annotations

import gelu_core
from gelu_core.activations import ACTIVATIONS, GATES
from ui.code_export.common import Values, fill, number, settings, source
from ui.controls import CURVES
from ui.curves import OVERLAY_PARAMS, chosen_overlays, overlay_label, table_points
from ui.format import fixed

TEMPLATE = '''
"""GELU Explorer, Curves: ReLU and GELU ($form form) at the probe x, and the table of values at chosen points."""

$imports

# GELU Explorer's own formulas (gelu_core) and number format (ui/format.py), for float64 tensors
$code


x = torch.tensor($x, dtype=torch.float64)  # the probe
print(f"ReLU({fixed(x, 2)}): {fixed(relu(x))}")
print(f"GELU({fixed(x, 2)}), $form: {fixed(x * $gate(x))}")  # GELU(x) = x * gate(x)
print(f"gate({fixed(x, 2)}), $form: {fixed($gate(x))}")

x = torch.tensor([$points], dtype=torch.float64)  # the table's points, ($count,)
table = {
    "x": x,
    "ReLU(x)": relu(x),
    "GELU(x), $form": x * $gate(x),
    "gate(x), $form": $gate(x),$overlays
}
print("  ".join(f"{name:>10}" for name in table))
for row in zip(*table.values(), strict=True):
    print("  ".join(f"{value:>{max(10, len(name))}.4f}" for name, value in zip(table, row, strict=True)))
'''


def _name(formula) -> str:
    return formula.__name__.lstrip("_")  # as ``source`` prints it


def script(values: Values) -> str:
    v = settings(CURVES, values)
    approximate = v["form"]
    points, _ = table_points(v["points"])  # the default points while the typed ones are not numbers, as the page
    params = {name: {param: float(v[control])} for name, (control, param) in OVERLAY_PARAMS.items()}
    overlays = [ACTIVATIONS[n] for n in chosen_overlays(approximate, v["more"])]  # as the page
    formulas = [GATES[approximate]]
    lines = ""
    for a in overlays:
        p = params.get(a.name, {})
        if a.approximate:  # another GELU form: x * its gate
            formulas.append(GATES[a.approximate])
            expression = f"x * {_name(GATES[a.approximate])}(x)"
        else:
            formulas.append(a.formula)
            expression = f"{_name(a.formula)}({', '.join(['x', *(number(p[k]) for k in a.params)])})"
        lines += f'\n    "{overlay_label(a.name, p)}": {expression},'
    return fill(TEMPLATE, form=gelu_core.form_word(approximate), gate=_name(GATES[approximate]), x=number(v["x"]),
                points=", ".join(number(p) for p in points), count=len(points), overlays=lines,
                code=source(*formulas, fixed, names={"relu": ACTIVATIONS["relu"].formula}))
