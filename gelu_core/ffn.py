"""The GPT-2 feed-forward block, Linear(d, 4d) -> activation -> Linear(4d, d), and the torch module of
each registry activation: what a framework computes."""

from __future__ import annotations

import torch
from torch import nn

from gelu_core.activations import SIGMOID_COEF, get_activation


# written with torch.nn, not nn: the code export prints this class into a script that imports torch
class SigmoidGELU(torch.nn.Module):
    """GELU's sigmoid form, x * sigmoid(1.702 x): no module in PyTorch; owns no parameters."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(SIGMOID_COEF * x)


def activation_module(name: str, **params) -> nn.Module:
    """PyTorch's own module for a registry name (PyTorch's kernel where it has one); no weights.

    >>> activation_module("gelu_tanh"), activation_module("leaky_relu", negative_slope=0.2)
    (GELU(approximate='tanh'), LeakyReLU(negative_slope=0.2))
    """
    params = {**get_activation(name).params, **params}  # raises a clear error for an unknown name
    factories = {
        "relu": lambda: nn.ReLU(),
        "gelu": lambda: nn.GELU(approximate="none"),
        "gelu_tanh": lambda: nn.GELU(approximate="tanh"),
        "gelu_sigmoid": lambda: SigmoidGELU(),
        "sigmoid": lambda: nn.Sigmoid(),
        "tanh": lambda: nn.Tanh(),
        "silu": lambda: nn.SiLU(),
        "leaky_relu": lambda: nn.LeakyReLU(negative_slope=params["negative_slope"]),
        "elu": lambda: nn.ELU(alpha=params["alpha"]),
        "softplus": lambda: nn.Softplus(),
    }
    return factories[name]()


@torch.no_grad()
def seeded_init(layers, seed: int) -> None:
    """nn.Linear's own initialisation, uniform in ±1/sqrt(fan_in), drawn again from one generator seeded with seed:
    layer by layer, weight then bias, in float32 (so that every device and dtype gets the same numbers)."""
    generator = torch.Generator(device="cpu").manual_seed(int(seed))
    for layer in layers:
        bound = layer.in_features ** -0.5
        for parameter in (layer.weight, layer.bias):
            values = torch.empty(parameter.shape, dtype=torch.float32).uniform_(-bound, bound, generator=generator)
            parameter.copy_(values.to(parameter.device, parameter.dtype))


class FeedForward(nn.Module):
    """GPT-2's MLP, named as in GPT-2 (c_fc, c_proj); the activation owns no weights.

    Shapes: (batch, tokens, d_model) -> (..., hidden) -> (..., d_model).
    The activation is PyTorch's own kernel for the registry name (tanh GELU by
    default, as GPT-2 and chapter 4), so the block computes what a framework does.
    """

    def __init__(
        self,
        d_model: int = 768,  # embedding dimension (GPT-2 small)
        hidden: int | None = None,  # hidden width, 4 * d_model by default
        activation: str = "gelu_tanh",  # any registry name
        seed: int | None = None,  # seeds the weights, for reproducible demos
        device: str | torch.device | None = None,
        dtype: torch.dtype | None = None,
    ):
        super().__init__()
        if d_model < 1:
            raise ValueError(f"d_model must be a positive integer, got {d_model}")
        hidden = 4 * d_model if hidden is None else hidden
        if hidden < 1:
            raise ValueError(f"hidden must be a positive integer, got {hidden}")
        self.d_model, self.hidden, self.activation = d_model, hidden, activation
        self.c_fc = nn.Linear(d_model, hidden, device=device, dtype=dtype)
        self.act = activation_module(activation)
        self.c_proj = nn.Linear(hidden, d_model, device=device, dtype=dtype)
        if seed is not None:
            self.reset_parameters(seed)

    def reset_parameters(self, seed: int) -> None:
        """nn.Linear's default init (uniform +-1/sqrt(fan_in)), drawn from a seeded generator (``seeded_init``)."""
        seeded_init((self.c_fc, self.c_proj), seed)

    def hidden_pre(self, x: torch.Tensor) -> torch.Tensor:
        """(..., d_model) -> (..., hidden): what the activation receives."""
        return self.c_fc(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.c_fc(x)  # (B, T, d) -> (B, T, 4d)
        h = self.act(h)  # (B, T, 4d), shape kept, no weights
        return self.c_proj(h)  # (B, T, 4d) -> (B, T, d)


def parameter_count(module: nn.Module) -> int:
    """Trainable parameters: 4,722,432 for FeedForward(768); 0 for any activation."""
    return sum(p.numel() for p in module.parameters() if p.requires_grad)
