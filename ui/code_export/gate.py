"""The Gate's script: the bouncer's cards, the gate, GELU and ReLU at x, and the generalised gate's largest gap."""

from __future__ import annotations

from ui.code_export.common import Values, fill, number, settings
from ui.controls import GATE

TEMPLATE = '''
"""GELU Explorer, The gate: Phi(x), the chance that a standard-normal sample falls below x, and GELU = x * Phi(x)."""

import math

import torch


def Phi(x):
    """The standard normal CDF, written with erfc: no 1 + erf(...) cancelling to 0 far left."""
    return 0.5 * torch.special.erfc(-x / math.sqrt(2.0))


def percent(p):
    """A probability as the page writes it: never a false 0 % or 100 %."""
    pct = 100.0 * float(p)
    if pct <= 0 or pct >= 100:
        return f"{pct:.0f}%"
    if pct < 1:
        return f"{pct:.2g}%"  # two significant digits of a sliver
    if pct > 99:
        return f"{pct:.{max(1, 1 - math.floor(math.log10(100.0 - pct)))}f}%"  # two digits of what is missing
    return f"{pct:.1f}%"


def four(value):
    """Four decimals, no minus sign on a value that rounds to 0 (as the page)."""
    text = f"{float(value):.4f}"
    return text.lstrip("-") if float(text) == 0 else text


# The bouncer: show him a card, he opens the door by Phi(card)
for card in (2.0, 0.0, -3.0):
    print(f"card {card:.0f}: {percent(Phi(torch.tensor(card, dtype=torch.float64)))} open")

x = torch.tensor($x, dtype=torch.float64)  # the slider
gate = Phi(x)
print(f"gate Φ({x:.2f}): {percent(gate)}")
print(f"GELU({x:.2f}) = x · Φ(x): {four(x * gate)}")
print(f"ReLU({x:.2f}): {four(torch.clamp(x, min=0.0))}")

# Soften or harden the gate: gate(x; mu, sigma) = Phi((x - mu) / sigma); sigma = 0 is the hard step at mu
mu, sigma = $mu, $sigma
grid = torch.linspace(-3.0, 3.0, 601, dtype=torch.float64)  # (601,), as the page's chart
soft_gate = (grid > mu).double() if sigma == 0 else Phi((grid - mu) / sigma)
gap = torch.max(torch.abs(grid * soft_gate - torch.clamp(grid, min=0.0)))
print(f"Largest gap between x · gate and ReLU on -3 … 3: {four(gap)}")
'''


def script(values: Values) -> str:
    v = settings(GATE, values)
    return fill(TEMPLATE, x=number(v["x"]), mu=number(v["mu"]), sigma=number(v["sigma"]))
