"""The training race's script: the race's points, two copies of one network with the same seeded weights, the same
mini-batches and Adam, and what the page reports at the finish: test accuracy, test loss and dead units per run.

What it computes with is gelu_core's own code, printed: the points (``training._split``, which ``make_dataset``
draws each set with), the network (``training.Network``, the page's ``RaceNet`` around its activation module, with
its seeded weights) and the dead units (``training.dead_units``).  The training loop is the template's: the page
trains both networks (and a class's races) stacked, its backward and Adam's update written out in one
computation (``training._Stack``), which is no code for a notebook; the script trains each network with autograd
and ``torch.optim.Adam``, what the stack is tested to match bit for bit (tests/test_training.py), one torch
thread, and (where the page's race does) exact GELU by PyTorch's own kernel, not oneDNN's.  The page also
records curves every ten steps; recording changes nothing in training, so the script measures once, at the end.
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

# GELU Explorer's own code (gelu_core), as the page runs it: how the points are drawn, the network, the dead units
$code


config = {  # the race as the page runs it
$config
}
activations = {  # the modules the page trains; an activation owns no weights
$modules
}
torch.set_num_threads(1)  # tensors of a few hundred numbers: one thread is fastest, and the page uses one
$kernel
# The points: the training set first, then the test set, from one generator
rng = np.random.default_rng(config["seed"])
train_points, train_labels = map(torch.from_numpy, split(config["task"], config["n_train"], config["noise"], rng))
test_points, test_labels = map(torch.from_numpy, split(config["task"], config["n_test"], config["noise"], rng))

for name, activation in activations.items():
    net = Network(config["width"], config["depth"], activation)
    net.reset_parameters(config["seed"])  # both runs start from the same weights
    optimizer = torch.optim.Adam(net.parameters(), lr=config["learning_rate"])
    batches = torch.Generator().manual_seed(config["seed"] + 1)  # the mini-batch order: the same for both runs
    for _ in range(config["steps"]):
        index = torch.randint(0, config["n_train"], (config["batch_size"],), generator=batches)  # (batch_size,)
        logits = net(train_points[index])  # (batch_size,)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, train_labels[index])
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    with torch.no_grad():
        logits = net(test_points)  # (n_test,)
        test_loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, test_labels)
        accuracy = ((logits > 0) == (test_labels > 0.5)).double().mean()  # right side of p = 1/2
    dead = dead_units(net, train_points)
    print(f"{name}: {100 * float(accuracy):.1f}% test accuracy, test loss {float(test_loss):.3f}, "
          f"{sum(dead)} of {config['width'] * config['depth']} hidden units dead "
          f"(by layer: {' · '.join(str(n) for n in dead)})")
'''


# where the page computes exact GELU with PyTorch's own kernel (gelu_core.training.native_gelu): the same kernel here
KERNEL_LINE = "torch.backends.mkldnn.enabled = False  # exact GELU on PyTorch's own kernel, as the page's race"

# the race's settings the script reads (the optimiser is the page's, Adam)
FIELDS = ("task", "width", "depth", "learning_rate", "steps", "batch_size", "noise", "n_train", "n_test", "seed")


def script(values: Values) -> str:
    from gelu_core import training  # torch: imported when the race's page asks

    race = race_config(settings(TRAINING, values))  # as the page builds it
    listed, own = modules(race.activations, "label")
    first, second = (ACTIVATIONS[name].label for name in race.activations)
    kernel = (KERNEL_LINE + "\n") if training.native_gelu(race) else ""
    return fill(TEMPLATE, first=first, second=second, config=fields(race, FIELDS), modules=listed, kernel=kernel,
                code=source(*own, names={"split": training._split, "Network": training.Network,
                                         "dead_units": training.dead_units}))
