"""The training race as it was computed before stacking: each network its own ``RaceNet``, trained by autograd
and ``torch.optim`` (foreach), its curves recorded network by network.

The reference that tests/test_training.py holds the stacked trainer (gelu_core.training) to, bit for bit, and
the "before" of benchmarks/bench_training.py: the curves ({field: (2, records) array}) and, for the tests'
checks by autograd, the two trained networks.  Where the race computes exact GELU with PyTorch's own kernel
(``gelu_core.training.native_gelu``), so do these networks: ``nn.GELU`` on a transposed view (``OwnKernelGELU``),
which is what ``torch.backends.mkldnn.enabled = False`` gives, without switching oneDNN off for the whole process.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from gelu_core.training import (
    RaceConfig,
    _exact_gelu,
    dead_units,
    make_dataset,
    native_gelu,
    one_thread,
    twin_networks,
)

FIELDS = ("train_loss", "test_loss", "test_accuracy", "dead_units")


class OwnKernelGELU(nn.GELU):
    """Exact GELU through PyTorch's own vectorised kernel: the input (n, width) handed over transposed, not
    contiguous, so that ``gelu`` and its backward do not call oneDNN; the memory is walked in the same order."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.gelu(x.mT, approximate=self.approximate).mT


def race_networks(config: RaceConfig) -> tuple[nn.Module, nn.Module]:
    """``twin_networks(config)``, each exact GELU on the kernel the race uses for it."""
    nets = twin_networks(config)
    if native_gelu(config):
        for net in nets:
            if _exact_gelu(net.act):
                net.act = OwnKernelGELU()
    return nets


def reference_curves(config: RaceConfig) -> dict[str, np.ndarray]:
    """Both networks' curves, one point every ``record_every`` steps, by autograd network by network."""
    return reference_race(config)[0]


def reference_networks(config: RaceConfig) -> tuple[nn.Module, nn.Module]:
    """Both networks after ``config.steps`` steps, trained by autograd and torch.optim."""
    return reference_race(config)[1]


def reference_race(config: RaceConfig) -> tuple[dict[str, np.ndarray], tuple[nn.Module, nn.Module]]:
    """(the curves, the two trained networks)."""
    with one_thread():
        dataset = make_dataset(config.task, config.n_train, config.n_test, config.noise, config.seed)
        data = {key: torch.from_numpy(getattr(dataset, key)) for key in
                ("train_points", "train_labels", "test_points", "test_labels")}
        nets = race_networks(config)
        optimizer = torch.optim.SGD if config.optimizer == "sgd" else torch.optim.Adam
        optimizers = [optimizer(net.parameters(), lr=config.learning_rate, foreach=True) for net in nets]
        batches = torch.Generator(device="cpu").manual_seed(int(config.seed) + 1)
        curves = {field: [[], []] for field in FIELDS}
        cross_entropy = nn.functional.binary_cross_entropy_with_logits

        def record():
            for i, net in enumerate(nets):
                with torch.no_grad():
                    train_logits, test_logits = net(data["train_points"]), net(data["test_points"])
                curves["train_loss"][i].append(float(cross_entropy(train_logits, data["train_labels"])))
                curves["test_loss"][i].append(float(cross_entropy(test_logits, data["test_labels"])))
                right = (test_logits > 0) == (data["test_labels"] > 0.5)
                curves["test_accuracy"][i].append(float(right.double().mean()))
                curves["dead_units"][i].append(dead_units(net, data["train_points"]))

        record()
        for step in range(1, config.steps + 1):
            index = torch.randint(0, config.n_train, (config.batch_size,), generator=batches)
            points, labels = data["train_points"][index], data["train_labels"][index]
            for net, opt in zip(nets, optimizers, strict=True):
                loss = cross_entropy(net(points), labels)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
            if step % config.record_every == 0 or step == config.steps:
                record()
    return {field: np.asarray(values) for field, values in curves.items()}, tuple(nets)
