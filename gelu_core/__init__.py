"""GELU Explorer's computation core: activations, the tanh steps, the GPT-2 block and its gradients,
the training race, tensor files.

No Streamlit here, nor sessions or waiting (the server shares the lab's runs:
hosting.lab_runs).  torch-heavy parts (``FeedForward``, ``load_tensors``) are
imported on first use, so the explorer pages start without importing torch.
"""

from gelu_core.activations import (
    ACTIVATIONS,
    APPROXIMATE,
    GELU_FORMS,
    SIGMOID_COEF,
    SQRT_2_OVER_PI,
    TANH_COEF,
    Activation,
    elu,
    elu_grad,
    form_word,
    gelu,
    gelu_gate,
    gelu_grad,
    get_activation,
    leaky_relu,
    leaky_relu_grad,
    normal_pdf,
    relu,
    relu_grad,
    sigmoid,
    sigmoid_grad,
    silu,
    silu_grad,
    softplus,
    softplus_grad,
    tanh,
    tanh_grad,
)
from gelu_core.steps import Step, tanh_steps

_LAZY = {
    "FeedForward": "gelu_core.ffn",
    "parameter_count": "gelu_core.ffn",
    "load_tensors": "gelu_core.tensor_io",
    "TensorFileError": "gelu_core.tensor_io",
    "LabInputError": "gelu_core.lab",
    "WidthMismatch": "gelu_core.lab",
    "as_tokens": "gelu_core.lab",
    "check_run_size": "gelu_core.lab",
    "demo_input": "gelu_core.lab",
    "demo_tokens": "gelu_core.lab",
    "file_tokens": "gelu_core.lab",
    "Tokens": "gelu_core.lab",
    "run_lab": "gelu_core.lab",  # forward, and with backward=True the backward pass from it (gelu_core.gradients)
    "array_bytes": "gelu_core.lab",
    "RaceConfig": "gelu_core.training",  # the training race: ReLU vs GELU on a 2-D task, live
    "race": "gelu_core.training",
    "verdict": "gelu_core.training",
    "WeightsError": "gelu_core.weights",
    "find_blocks": "gelu_core.weights",
    "load_block": "gelu_core.weights",
    "check_block_shapes": "gelu_core.weights",
    "framework_gelu": "gelu_core.frameworks",  # torch.nn.functional.gelu in float32/bfloat16/float16 vs float64
    "zero_band": "gelu_core.frameworks",
    "underflow_below": "gelu_core.frameworks",
}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'gelu_core' has no attribute {name!r}")


__all__ = [  # every name above: the activations' and steps' names, then the lazy ones (torch)
    "ACTIVATIONS", "APPROXIMATE", "GELU_FORMS", "SIGMOID_COEF", "SQRT_2_OVER_PI", "TANH_COEF", "Activation",
    "elu", "elu_grad", "form_word", "gelu", "gelu_gate", "gelu_grad", "get_activation", "leaky_relu",
    "leaky_relu_grad", "normal_pdf", "relu", "relu_grad", "sigmoid", "sigmoid_grad", "silu", "silu_grad",
    "softplus", "softplus_grad", "tanh", "tanh_grad", "Step", "tanh_steps",
    *_LAZY,
]
