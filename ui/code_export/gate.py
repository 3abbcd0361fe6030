"""The Gate's script: the bouncer's cards, the gate, GELU and ReLU at x, and the generalised gate's largest gap."""

from __future__ import annotations

import inspect

from gelu_core.activations import ACTIVATIONS, GATES, _gaussian_gate
from ui.code_export.common import Values, fill, number, settings, source
from ui.controls import GATE
from ui.format import fixed, percent
from ui.gate import BOUNCER_XS, generalised_figure

TEMPLATE = '''
"""GELU Explorer, The gate: Phi(x), the chance that a standard-normal sample falls below x, and GELU = x * Phi(x)."""

$imports

# GELU Explorer's own formulas (gelu_core) and number formats (ui/format.py), for float64 tensors
$code


# The bouncer: show him a card, he opens the door by Phi(card)
for card in ($cards):
    print(f"card {fixed(card, 0)}: {percent(phi(torch.tensor(card, dtype=torch.float64)))} open")

x = torch.tensor($x, dtype=torch.float64)  # the slider
print(f"gate Φ({fixed(x, 2)}): {percent(phi(x))}")
print(f"GELU({fixed(x, 2)}) = x · Φ(x): {fixed(x * phi(x))}")
print(f"ReLU({fixed(x, 2)}): {fixed(relu(x))}")

# Soften or harden the gate: gate(x; mu, sigma) = Phi((x - mu) / sigma); sigma = 0 is the hard step at mu
mu, sigma = $mu, $sigma
grid = torch.linspace($lo, $hi, $points, dtype=torch.float64)  # ($points,), as the page's chart
gap = torch.max(torch.abs(grid * soft_gate(grid, mu, sigma) - relu(grid)))
print(f"Largest gap between x · gate and ReLU on $lo_text … $hi_text: {fixed(gap)}")
'''


def script(values: Values) -> str:
    v = settings(GATE, values)
    chart = {k: p.default for k, p in inspect.signature(generalised_figure).parameters.items()}  # the chart's grid
    return fill(TEMPLATE, x=number(v["x"]), mu=number(v["mu"]), sigma=number(v["sigma"]),
                cards=", ".join(number(c) for c in BOUNCER_XS), lo=number(chart["lo"]), hi=number(chart["hi"]),
                points=chart["points"], lo_text=fixed(chart["lo"], 0), hi_text=fixed(chart["hi"], 0),
                code=source(fixed, percent, names={"relu": ACTIVATIONS["relu"].formula, "phi": GATES["none"],
                                                     "soft_gate": _gaussian_gate}))
