"""The training race's script: the race's points, two copies of one network with the same seeded weights, the same
mini-batches and Adam, and what the page reports at the finish: test accuracy, test loss and dead units per run.

It follows ``gelu_core.training`` step for step (the data's draws in order, printed from ``_class_points``; the
weights' seeded draws, from ``ffn.seeded_init``; the mini-batch generator, one torch thread), so it gives the page's
numbers bit for bit.  The page also records curves every ten steps; recording changes nothing in training, so the
script measures once, at the end.
"""

from __future__ import annotations

from gelu_core.activations import ACTIVATIONS
from ui.code_export.common import Values, fields, fill, settings, source
from ui.code_export.ffn import modules
from ui.controls import TRAINING
from ui.training import race_config

TEMPLATE = '''
"""GELU Explorer, Training race: two copies of one small network, $first against $second,
trained on the same points from the same starting weights with the same mini-batches; the activation is the only
difference."""

$imports

# GELU Explorer's own code (gelu_core), as the page runs it: how each class's points are drawn, the seeded weights
$code


config = {  # the race as the page runs it
$config
}
activations = {  # the modules the page trains; an activation owns no weights
$modules
}
torch.set_num_threads(1)  # tensors of a few hundred numbers: one thread is fastest, and the page uses one

# The points: each class drawn, then every point nudged by normal noise; training set first, then the test set
rng = np.random.default_rng(config["seed"])


def split(n):
    points = np.concatenate([class_points(config["task"], label, n // 2, rng) for label in (0, 1)])  # 0, then 1
    points = points + config["noise"] * rng.standard_normal(points.shape)
    labels = np.repeat([0.0, 1.0], n // 2)
    return torch.from_numpy(points.astype(np.float32)), torch.from_numpy(labels.astype(np.float32))


train_points, train_labels = split(config["n_train"])  # (n_train, 2), (n_train,)
test_points, test_labels = split(config["n_test"])


def network():
    """2 -> width -> ... -> width -> 1: depth hidden layers (Linear, then the activation), and one logit out; seeded
    as the page seeds it, so both copies start from the same weights."""
    width, depth = config["width"], config["depth"]
    hidden = [torch.nn.Linear(2 if i == 0 else width, width) for i in range(depth)]
    out = torch.nn.Linear(width, 1)
    seeded_init([*hidden, out], config["seed"])
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
    hidden, out = network()
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


# the race's settings the script reads (the optimiser is the page's, Adam)
FIELDS = ("task", "width", "depth", "learning_rate", "steps", "batch_size", "noise", "n_train", "n_test", "seed")


def script(values: Values) -> str:
    from gelu_core.ffn import seeded_init  # torch: imported when the race's page asks
    from gelu_core.training import _class_points

    race = race_config(settings(TRAINING, values))  # as the page builds it
    listed, own = modules(race.activations, "label")
    first, second = (ACTIVATIONS[name].label for name in race.activations)
    return fill(TEMPLATE, first=first, second=second, config=fields(race, FIELDS), modules=listed,
                code=source(_class_points, seeded_init, *own))
