"""The training race: two copies of one small network, one with ReLU and one with GELU, trained side by side.

Same seed, same data, same initial weights, same mini-batches, same optimiser: the activation (which owns no
weights) is the only difference.  The task is a 2-D two-class point set a student can see (as in TensorFlow
Playground): ``circle``, ``xor``, ``spiral`` or ``gauss``.  The network is

    points (n, 2) -> [Linear(2 or width, width) -> activation] x depth -> Linear(width, 1) -> logit (n,)

trained on the binary cross-entropy of sigmoid(logit) against the labels 0 / 1.

A hidden unit is *dead* when its slope act'(z) is exactly 0 on every training point (z: its pre-activation).
Then no gradient flows back through it, so the weights into it get exactly 0 gradient and stop learning.
For ReLU that is z ≤ 0 on every training point (relu'(0) = 0, as PyTorch).  GELU's true slope is 0 only at
z ≈ -0.7518, but the slope counted is the one training uses, PyTorch's float32 backward, and its vectorised
kernel returns exactly 0 below about z = -6.15 (tanh form: -5.06; torch 2.13 CPU): a GELU unit pushed that far
on every point is dead too (it takes far larger steps than those that kill ReLU units).  (A dead unit of layer 2 or
deeper can come back if the layers below it change; a dead unit of layer 1 sees fixed points and stays dead
under plain SGD.)

``race(config)`` is a generator of snapshots for a page that trains live and can stop; ``train(config)`` runs
to the end.  ``verdict(snapshot)`` reads the two runs' final test accuracy against a stated margin.
"""

from __future__ import annotations

import contextlib
import copy
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from gelu_core.activations import get_activation
from gelu_core.ffn import activation_module
from gelu_core.runs import RUN_SLOT, SharedRuns, Waiting

TASKS = ("circle", "xor", "spiral", "gauss")
OPTIMIZERS = ("sgd", "adam")
GRID_POINTS = 60  # decision-region grid: 60 x 60 probabilities, light to send
ACCURACY_MARGIN = 0.02  # the verdict calls a run ahead only past 2 percentage points of test accuracy

# what a race may ask for, so that one student's race stays seconds long on a shared server (sliders read these)
LIMITS: dict[str, tuple[float, float]] = {
    "width": (1, 64),
    "depth": (1, 6),
    "learning_rate": (1e-4, 10.0),
    "steps": (1, 5000),
    "batch_size": (1, 500),
    "noise": (0.0, 0.5),
    "n_train": (2, 2000),
    "n_test": (2, 2000),
    "seed": (0, 2**31 - 1),
    "record_every": (1, 1000),
}


@dataclass(frozen=True)
class RaceConfig:
    """Everything that decides a race; two equal configs give bit-identical races."""

    task: str = "spiral"  # one of TASKS
    activations: tuple[str, str] = ("relu", "gelu")  # registry names, raced on the same weights
    width: int = 8  # units per hidden layer
    depth: int = 3  # hidden layers
    optimizer: str = "adam"  # "adam" or "sgd" (plain: w -= learning_rate * dL/dw)
    learning_rate: float = 0.03
    steps: int = 1000  # optimiser steps, one mini-batch each
    batch_size: int = 32  # training points per step, drawn at random (with replacement)
    noise: float = 0.05  # std of the normal nudge given to every point (the data square is about [-1, 1]²)
    n_train: int = 400  # training points, half of each class
    n_test: int = 400  # test points, half of each class, never trained on
    seed: int = 0  # seeds the data, the weights and the order of the mini-batches
    record_every: int = 10  # steps between two points of the curves

    def __post_init__(self):
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, got {self.task!r}")
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {self.optimizer!r}")
        if len(self.activations) != 2:
            raise ValueError(f"a race has two activations, got {self.activations!r}")
        for name in self.activations:
            get_activation(name)  # a clear message for an unknown name
        for key, (low, high) in LIMITS.items():
            if not low <= getattr(self, key) <= high:
                raise ValueError(f"{key} must be from {low} to {high}, got {getattr(self, key)}")
        if self.n_train % 2 or self.n_test % 2:
            raise ValueError("n_train and n_test must be even: half of each class")


# ---------------------------------------------------------------- data

@dataclass(frozen=True, eq=False)  # numpy fields: compare by identity
class Dataset:
    """Two-class points in the plane: a training set and a test set, each half class 0 and half class 1."""

    task: str
    train_points: np.ndarray  # (n_train, 2) float32
    train_labels: np.ndarray  # (n_train,) float32, 0 or 1
    test_points: np.ndarray  # (n_test, 2) float32
    test_labels: np.ndarray  # (n_test,) float32
    extent: float  # every point lies in [-extent, extent]²: the square the decision regions cover


def _class_points(task: str, label: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """n noise-free points of one class, (n, 2)."""
    if task == "circle":  # class 1 inside radius 0.5, class 0 on the ring from 0.7 to 1
        radius = rng.uniform(0.0, 0.5, n) if label else rng.uniform(0.7, 1.0, n)
        angle = rng.uniform(0.0, 2 * math.pi, n)
        return np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=-1)
    if task == "xor":  # class 1 where x and y have the same sign, class 0 where they differ
        x, y = rng.uniform(0.06, 1.0, n), rng.uniform(0.06, 1.0, n)  # kept 0.06 off the axes, as Playground
        sign = rng.choice([-1.0, 1.0], n)
        return np.stack([sign * x, (sign if label else -sign) * y], axis=-1)
    if task == "spiral":  # two arms of 1.75 turns, the second the first turned by half a turn
        t = rng.uniform(0.0, 1.0, n)
        angle = 1.75 * 2 * math.pi * t + (0.0 if label else math.pi)
        return np.stack([t * np.sin(angle), t * np.cos(angle)], axis=-1)
    centre = 0.4 if label else -0.4  # gauss: two round clouds, std 0.2
    return rng.normal(centre, 0.2, (n, 2))


def make_dataset(task: str = "spiral", n_train: int = 400, n_test: int = 400, noise: float = 0.05,
                 seed: int = 0) -> Dataset:
    """A seeded two-class point set: each point of each class drawn, then nudged by normal noise of std ``noise``.

    >>> d = make_dataset("xor", n_train=4, n_test=2, seed=1); d.train_points.shape, d.train_labels.tolist()
    ((4, 2), [0.0, 0.0, 1.0, 1.0])
    """
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    rng = np.random.default_rng(seed)

    def split(n: int) -> tuple[np.ndarray, np.ndarray]:
        points = np.concatenate([_class_points(task, label, n // 2, rng) for label in (0, 1)])
        points = points + noise * rng.standard_normal(points.shape)
        labels = np.repeat([0.0, 1.0], n // 2)
        return points.astype(np.float32), labels.astype(np.float32)

    train_points, train_labels = split(n_train)
    test_points, test_labels = split(n_test)
    largest = float(max(np.abs(train_points).max(initial=0.0), np.abs(test_points).max(initial=0.0)))
    extent = max(1.0, math.ceil(largest * 10) / 10)
    return Dataset(task, train_points, train_labels, test_points, test_labels, extent)


# ---------------------------------------------------------------- the network

class RaceNet(nn.Module):
    """2 -> width -> ... -> width -> 1: ``depth`` hidden layers, each Linear then the activation; a logit out."""

    def __init__(self, width: int, depth: int, activation: str):
        super().__init__()
        self.activation = activation
        self.hidden = nn.ModuleList(nn.Linear(2 if i == 0 else width, width) for i in range(depth))
        self.act = activation_module(activation)  # owns no weights
        self.out = nn.Linear(width, 1)

    def forward(self, points: torch.Tensor) -> torch.Tensor:
        x = points  # (n, 2)
        for layer in self.hidden:
            x = self.act(layer(x))  # (n, width)
        return self.out(x).squeeze(-1)  # (n, width) -> (n,) logits

    def pre_activations(self, points: torch.Tensor) -> list[torch.Tensor]:
        """What each hidden layer's activation receives: ``depth`` tensors of shape (n, width)."""
        zs, x = [], points
        for layer in self.hidden:
            z = layer(x)  # (n, width)
            zs.append(z)
            x = self.act(z)
        return zs

    @torch.no_grad()
    def reset_parameters(self, seed: int) -> None:
        """nn.Linear's default init (uniform ±1/sqrt(fan_in), weights and biases) from a seeded generator."""
        generator = torch.Generator(device="cpu").manual_seed(int(seed))
        for layer in [*self.hidden, self.out]:
            bound = layer.in_features ** -0.5
            for p in (layer.weight, layer.bias):
                p.copy_(torch.empty(p.shape).uniform_(-bound, bound, generator=generator))


def twin_networks(config: RaceConfig) -> tuple[RaceNet, RaceNet]:
    """The two racers: same architecture, same initial weights (copied), each its own activation."""
    first = RaceNet(config.width, config.depth, config.activations[0])
    first.reset_parameters(config.seed)
    second = RaceNet(config.width, config.depth, config.activations[1])
    second.load_state_dict(first.state_dict())  # the activations own no weights: the state dicts match
    return first, second


def dead_units(net: RaceNet, points: torch.Tensor) -> list[int]:
    """Per hidden layer: units through which no gradient passes on any of ``points``.

    The slope act'(z) of every unit on every point comes from PyTorch's own backward of the activation (what
    training uses), and a unit is dead when it is exactly 0 on every point: for ReLU, z ≤ 0 everywhere.
    """
    counts = []
    with torch.no_grad():
        zs = net.pre_activations(points)  # depth x (n, width)
    for z in zs:
        with torch.enable_grad():
            z = z.detach().requires_grad_()
            (slope,) = torch.autograd.grad(net.act(z).sum(), z)  # (n, width): act is elementwise
        counts.append(int((slope == 0).all(dim=0).sum()))
    return counts


# ---------------------------------------------------------------- the race

@dataclass(frozen=True, eq=False)  # numpy fields: compare by identity
class RunRecord:
    """One racer's curves so far, one point every ``record_every`` steps, and its current decision regions."""

    name: str  # registry name
    label: str  # e.g. "GELU (exact)"
    steps: np.ndarray  # (records,) int64: the step of each point (0: before training)
    train_loss: np.ndarray  # (records,) float64: cross-entropy on the whole training set
    test_loss: np.ndarray  # (records,) float64: cross-entropy on the test set
    test_accuracy: np.ndarray  # (records,) float64: share of test points on the right side of p = 1/2
    dead_units: np.ndarray  # (records, depth) int64: dead units per hidden layer
    grid_probability: np.ndarray  # (GRID_POINTS, GRID_POINTS) float32: P(class 1), [row = y, column = x]

    @property
    def final_test_accuracy(self) -> float:
        return float(self.test_accuracy[-1])

    @property
    def final_test_loss(self) -> float:
        return float(self.test_loss[-1])


@dataclass(frozen=True, eq=False)  # numpy fields: compare by identity
class RaceSnapshot:
    """The race after ``step`` of ``config.steps`` steps: both runs' records, the data and the grid."""

    step: int
    config: RaceConfig
    dataset: Dataset
    grid: np.ndarray  # (GRID_POINTS,) float32: the x (and y) coordinates of the decision-region grid
    runs: tuple[RunRecord, RunRecord]  # in config.activations' order
    networks: tuple[RaceNet, RaceNet] | None = None  # copies, as at ``step``
    seconds: float = 0.0  # wall time spent so far

    @property
    def done(self) -> bool:
        return self.step >= self.config.steps


class _Run:
    """One racer while it trains: its network, optimiser and growing curves."""

    def __init__(self, net: RaceNet, config: RaceConfig):
        self.net = net
        optimizer = torch.optim.SGD if config.optimizer == "sgd" else torch.optim.Adam
        # foreach: one kernel per update formula for all parameters at once, not one per parameter
        self.optimizer = optimizer(net.parameters(), lr=config.learning_rate, foreach=True)
        self.steps, self.train_loss, self.test_loss, self.test_accuracy, self.dead = [], [], [], [], []

    def step(self, points: torch.Tensor, labels: torch.Tensor) -> None:
        loss = nn.functional.binary_cross_entropy_with_logits(self.net(points), labels)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()

    @torch.no_grad()
    def record(self, step: int, data: dict[str, torch.Tensor]) -> None:
        train_logits, test_logits = self.net(data["train_points"]), self.net(data["test_points"])
        cross_entropy = nn.functional.binary_cross_entropy_with_logits
        self.steps.append(step)
        self.train_loss.append(float(cross_entropy(train_logits, data["train_labels"])))
        self.test_loss.append(float(cross_entropy(test_logits, data["test_labels"])))
        right = (test_logits > 0) == (data["test_labels"] > 0.5)
        self.test_accuracy.append(float(right.double().mean()))
        self.dead.append(dead_units(self.net, data["train_points"]))

    @torch.no_grad()
    def snapshot(self, grid_points: torch.Tensor) -> RunRecord:
        probability = torch.sigmoid(self.net(grid_points)).reshape(GRID_POINTS, GRID_POINTS)
        return RunRecord(
            name=self.net.activation,
            label=get_activation(self.net.activation).label,
            steps=np.asarray(self.steps, dtype=np.int64),
            train_loss=np.asarray(self.train_loss, dtype=np.float64),
            test_loss=np.asarray(self.test_loss, dtype=np.float64),
            test_accuracy=np.asarray(self.test_accuracy, dtype=np.float64),
            dead_units=np.asarray(self.dead, dtype=np.int64).reshape(len(self.steps), -1),
            grid_probability=probability.numpy().astype(np.float32),
        )


@contextlib.contextmanager
def one_thread():
    """Run torch on one intra-op thread inside, then restore the count.

    These tensors hold a few hundred numbers: a second thread only adds the cost of waking it, and on a busy
    machine far more (PyTorch's GELU and cross-entropy kernels on a (32, 8) tensor took 10 ms instead of 13 µs
    with two threads while other processes held the cores).  torch keeps the count per thread for threads
    already running, so a lab run elsewhere keeps its own.
    """
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def race(config: RaceConfig = RaceConfig(), yield_every: int | None = None) -> Iterator[RaceSnapshot]:
    """Train both networks in lockstep and yield a snapshot before the first step, every ``yield_every`` steps
    (default: every record) and after the last; stop iterating to stop training."""
    started = time.perf_counter()
    yield_every = yield_every or config.record_every
    with one_thread():
        dataset = make_dataset(config.task, config.n_train, config.n_test, config.noise, config.seed)
        data = {key: torch.from_numpy(getattr(dataset, key)) for key in
                ("train_points", "train_labels", "test_points", "test_labels")}
        grid = np.linspace(-dataset.extent, dataset.extent, GRID_POINTS, dtype=np.float32)
        gx, gy = np.meshgrid(grid, grid)  # (G, G) each: row = y, column = x
        grid_points = torch.from_numpy(np.stack([gx.reshape(-1), gy.reshape(-1)], axis=-1))  # (G*G, 2)
        runs = [_Run(net, config) for net in twin_networks(config)]
        batches = torch.Generator(device="cpu").manual_seed(int(config.seed) + 1)  # the mini-batch order

    def snapshot(step: int) -> RaceSnapshot:
        records = tuple(run.snapshot(grid_points) for run in runs)
        networks = tuple(copy.deepcopy(run.net) for run in runs)  # a few hundred numbers: the snapshot stays put
        return RaceSnapshot(step, config, dataset, grid, records, networks, time.perf_counter() - started)

    with one_thread():
        for run in runs:
            run.record(0, data)
        ready = snapshot(0)
    yield ready
    for start in range(0, config.steps, yield_every):
        with one_thread():  # not across the yield: the page's own work runs between snapshots
            for step in range(start + 1, min(start + yield_every, config.steps) + 1):
                index = torch.randint(0, config.n_train, (config.batch_size,), generator=batches)  # same for both
                points, labels = data["train_points"][index], data["train_labels"][index]  # (batch, 2), (batch,)
                for run in runs:
                    run.step(points, labels)
                if step % config.record_every == 0 or step == config.steps:
                    for run in runs:
                        run.record(step, data)
            ready = snapshot(step)
        yield ready


def train(config: RaceConfig = RaceConfig()) -> RaceSnapshot:
    """The whole race in one call: its final snapshot."""
    *_, last = race(config, yield_every=config.steps)
    return last


# ---------------------------------------------------------------- the verdict

@dataclass(frozen=True)
class Verdict:
    """Which run ended ahead on the test set, read against a stated margin."""

    leader: str | None  # registry name of the run ahead, None when they are about the same
    accuracy: tuple[float, float]  # final test accuracy of each run, in config.activations' order
    loss: tuple[float, float]  # final test loss of each run
    margin: float  # accuracy gap (a share, 0.02 = 2 points) a run must exceed to be called ahead
    text: str  # one sentence for the page


def _percent(p: float) -> str:
    return f"{100 * p:.1f}%"


def verdict(snapshot: RaceSnapshot, margin: float = ACCURACY_MARGIN) -> Verdict:
    """Compare the two runs' final test accuracy: one is ahead only if it leads by more than ``margin``
    (0.02: two percentage points, more than 8 of the default 400 test points); otherwise they are
    about the same.  The sentence gives both accuracies and both test losses, whoever leads."""
    a, b = snapshot.runs
    accuracy = (a.final_test_accuracy, b.final_test_accuracy)
    loss = (a.final_test_loss, b.final_test_loss)
    gap = accuracy[1] - accuracy[0]
    if abs(gap) > margin:
        ahead, behind = (b, a) if gap > 0 else (a, b)
        text = (f"{ahead.label} ahead: {_percent(ahead.final_test_accuracy)} vs "
                f"{_percent(behind.final_test_accuracy)} test accuracy "
                f"(test loss {ahead.final_test_loss:.3f} vs {behind.final_test_loss:.3f}).")
        return Verdict(ahead.name, accuracy, loss, margin, text)
    text = (f"About the same: test accuracy {_percent(accuracy[0])} ({a.label}) vs {_percent(accuracy[1])} "
            f"({b.label}), within {100 * margin:.0f} points (test loss {loss[0]:.3f} vs {loss[1]:.3f}).")
    return Verdict(None, accuracy, loss, margin, text)


# ---------------------------------------------------------------- a class at the race

# Finished races, shared by every student who asks for the same config (a finished race is small: curves, two
# 60 x 60 grids, two tiny networks), given back when they have all left; one race or lab run at a time.
RACES = SharedRuns(max_entries=32)


def shared_race(config: RaceConfig, *, yield_every: int | None = None,
                on_snapshot: Callable[[RaceSnapshot], None] | None = None, on_wait: Waiting | None = None,
                owner: str | None = None) -> RaceSnapshot:
    """The final snapshot of ``config``'s race, trained once for everyone who asks for it.

    Whoever trains it sees every snapshot through ``on_snapshot`` (live progress); whoever asks meanwhile for
    the same config waits for it (``on_wait``), and whoever asks later gets it at once.
    """
    what = f"a training race ({config.task}, {config.steps:,} steps)"

    def train_live() -> RaceSnapshot:
        with RUN_SLOT.hold(what, on_wait=on_wait):
            last = None
            for snapshot in race(config, yield_every):
                last = snapshot
                if on_snapshot is not None:
                    on_snapshot(snapshot)
            return last

    return RACES.get(config, train_live, what=what, on_wait=on_wait, owner=owner)
