"""The training race's script: the race's points, two copies of one network with the same seeded weights, the same
mini-batches and Adam, and what the page reports at the finish: test accuracy, test loss and dead units per run.

It follows ``gelu_core.training`` step for step (the data's draws in order, the weights' seeded draws, the mini-batch
generator, one torch thread), so it gives the page's numbers bit for bit.  The page also records curves every ten
steps; recording changes nothing in training, so the script measures once, at the end.
"""

from __future__ import annotations

import gelu_core
from ui.code_export.common import Values, fill, number, settings
from ui.code_export.ffn import MODULES
from ui.controls import TRAINING

# Each task's noise-free points of one class, n of them, as gelu_core.training._class_points draws them.
TASKS = {
    "circle": '''
def class_points(label, n):
    """Class 1 inside radius 0.5, class 0 on the ring from 0.7 to 1."""
    radius = rng.uniform(0.0, 0.5, n) if label else rng.uniform(0.7, 1.0, n)
    angle = rng.uniform(0.0, 2 * np.pi, n)
    return np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=-1)  # (n, 2)
''',
    "xor": '''
def class_points(label, n):
    """Class 1 where x and y have the same sign, class 0 where they differ (kept 0.06 off the axes)."""
    x, y = rng.uniform(0.06, 1.0, n), rng.uniform(0.06, 1.0, n)
    sign = rng.choice([-1.0, 1.0], n)
    return np.stack([sign * x, (sign if label else -sign) * y], axis=-1)  # (n, 2)
''',
    "spiral": '''
def class_points(label, n):
    """Two arms of 1.75 turns, the second the first turned by half a turn."""
    t = rng.uniform(0.0, 1.0, n)
    angle = 1.75 * 2 * np.pi * t + (0.0 if label else np.pi)
    return np.stack([t * np.sin(angle), t * np.cos(angle)], axis=-1)  # (n, 2)
''',
    "gauss": '''
def class_points(label, n):
    """Two round clouds of std 0.2, centred at (0.4, 0.4) and (-0.4, -0.4)."""
    return rng.normal(0.4 if label else -0.4, 0.2, (n, 2))  # (n, 2)
''',
}

TEMPLATE = '''
"""GELU Explorer, Training race: two copies of one small network, $first against $second, trained on the same
points from the same starting weights with the same mini-batches; the activation is the only difference."""

import numpy as np
import torch

config = {
    "task": "$task",  # two classes of points in the plane
    "width": $width,  # units per hidden layer
    "depth": $depth,  # hidden layers
    "learning_rate": $learning_rate,  # Adam's step size
    "steps": $steps,  # optimiser steps, one mini-batch each
    "batch_size": $batch_size,  # training points per step, drawn at random (with replacement)
    "noise": $noise,  # std of the normal nudge given to every point
    "n_train": $n_train,  # training points, half of each class
    "n_test": $n_test,  # test points, half of each class, never trained on
    "seed": $seed,  # seeds the points, the starting weights and the order of the mini-batches
}
activations = {  # PyTorch's own modules, as the page trains them; an activation owns no weights
$modules
}
torch.set_num_threads(1)  # tensors of a few hundred numbers: one thread is fastest, and the page uses one

# The points: each class drawn, then every point nudged by normal noise; training set first, then the test set
rng = np.random.default_rng(config["seed"])
$task_points

def split(n):
    points = np.concatenate([class_points(label, n // 2) for label in (0, 1)])  # class 0, then class 1
    points = points + config["noise"] * rng.standard_normal(points.shape)
    labels = np.repeat([0.0, 1.0], n // 2)
    return torch.from_numpy(points.astype(np.float32)), torch.from_numpy(labels.astype(np.float32))


train_points, train_labels = split(config["n_train"])  # (n_train, 2), (n_train,)
test_points, test_labels = split(config["n_test"])


def network(activation):
    """2 -> width -> ... -> width -> 1: depth hidden layers (Linear, then the activation), and one logit out.
    nn.Linear's own initialisation (uniform in ±1/sqrt(fan_in)), drawn from a generator seeded with the seed, layer
    by layer, weight then bias: both copies start from the same weights."""
    width, depth = config["width"], config["depth"]
    hidden = [torch.nn.Linear(2 if i == 0 else width, width) for i in range(depth)]
    out = torch.nn.Linear(width, 1)
    generator = torch.Generator().manual_seed(config["seed"])
    with torch.no_grad():
        for layer in [*hidden, out]:
            bound = layer.in_features ** -0.5
            for parameter in (layer.weight, layer.bias):
                parameter.uniform_(-bound, bound, generator=generator)
    return hidden, out


def forward(hidden, out, activation, points):
    x = points  # (n, 2)
    for layer in hidden:
        x = activation(layer(x))  # (n, width)
    return out(x).squeeze(-1)  # (n, width) -> (n,) logits


def dead_units(hidden, activation, points):
    """Per hidden layer: units whose slope act'(z) is exactly 0 on every point, taken from PyTorch's own backward
    (what training uses), so no gradient passes them.  For ReLU: z <= 0 on every point."""
    counts, x = [], points
    for layer in hidden:
        z = layer(x).detach().requires_grad_()  # (n, width)
        (slope,) = torch.autograd.grad(activation(z).sum(), z)  # (n, width): act'(z), the activation is elementwise
        counts.append(int((slope == 0).all(dim=0).sum()))
        x = activation(z).detach()
    return counts


for name, activation in activations.items():
    hidden, out = network(activation)
    parameters = [p for layer in [*hidden, out] for p in layer.parameters()]
    optimizer = torch.optim.Adam(parameters, lr=config["learning_rate"])
    batches = torch.Generator().manual_seed(config["seed"] + 1)  # the mini-batch order: the same for both runs
    for _ in range(config["steps"]):
        index = torch.randint(0, config["n_train"], (config["batch_size"],), generator=batches)  # (batch_size,)
        logits = forward(hidden, out, activation, train_points[index])
        loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, train_labels[index])
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    with torch.no_grad():
        logits = forward(hidden, out, activation, test_points)
        test_loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, test_labels)
        accuracy = ((logits > 0) == (test_labels > 0.5)).double().mean()  # right side of p = 1/2
    dead = dead_units(hidden, activation, train_points)
    print(f"{name}: {100 * float(accuracy):.1f}% test accuracy, test loss {float(test_loss):.3f}, "
          f"{sum(dead)} of {config['width'] * config['depth']} hidden units dead "
          f"(by layer: {' · '.join(str(n) for n in dead)})")
'''


def script(values: Values) -> str:
    from gelu_core.training import RaceConfig  # torch: imported when the race's page asks, not with the app

    v = settings(TRAINING, values)
    race = RaceConfig()  # what the page leaves at its default: batch size, points, the optimiser (Adam)
    names = (v["a"], v["b"])
    modules = "\n".join(f'    "{gelu_core.ACTIVATIONS[name].label}": {MODULES[name][0]},  # {MODULES[name][1]}'
                        for name in dict.fromkeys(names))
    return fill(TEMPLATE, first=gelu_core.ACTIVATIONS[names[0]].label, second=gelu_core.ACTIVATIONS[names[1]].label,
                task=v["task"], width=int(v["width"]), depth=int(v["depth"]), learning_rate=number(v["lr"]),
                steps=int(v["steps"]), batch_size=race.batch_size, noise=number(v["noise"]), n_train=race.n_train,
                n_test=race.n_test, seed=int(v["seed"]), modules=modules, task_points=TASKS[v["task"]])
