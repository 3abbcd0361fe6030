"""torch ``nn.Module`` for each registry activation: what a framework computes.

Kept apart from ``activations`` so the explorer pages never import torch.
"""

from __future__ import annotations

import torch
from torch import nn

from gelu_core.activations import SIGMOID_COEF


class SigmoidGELU(nn.Module):
    """x * sigmoid(1.702 x); owns no parameters."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(SIGMOID_COEF * x)


def activation_module(name: str, **params) -> nn.Module:
    """PyTorch's own module for a registry name (same weights-free function)."""
    factories = {
        "relu": lambda: nn.ReLU(),
        "gelu": lambda: nn.GELU(approximate="none"),
        "gelu_tanh": lambda: nn.GELU(approximate="tanh"),
        "gelu_sigmoid": lambda: SigmoidGELU(),
        "sigmoid": lambda: nn.Sigmoid(),
        "tanh": lambda: nn.Tanh(),
        "silu": lambda: nn.SiLU(),
        "leaky_relu": lambda: nn.LeakyReLU(negative_slope=params.get("negative_slope", 0.01)),
        "elu": lambda: nn.ELU(alpha=params.get("alpha", 1.0)),
        "softplus": lambda: nn.Softplus(),
    }
    if name not in factories:
        raise ValueError(f"unknown activation {name!r}; choose one of {', '.join(factories)}")
    return factories[name]()
