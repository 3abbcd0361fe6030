"""The training race: two copies of one small network, one with ReLU and one with GELU, trained side by side.

Same seed, same data, same initial weights, same mini-batches, same optimiser: the activation (which owns no
weights) is the only difference.  The task is a 2-D two-class point set a student can see (as in TensorFlow
Playground): ``circle``, ``xor``, ``spiral`` or ``gauss``.  The network is

    points (n, 2) -> [Linear(2 or width, width) -> activation] x depth -> Linear(width, 1) -> logit (n,)

trained on the binary cross-entropy of sigmoid(logit) against the labels 0 / 1.

A hidden unit is *dead* when its slope act'(z) is exactly 0 on every training point (z: its pre-activation).
Then no gradient flows back through it, so the weights into it get exactly 0 gradient and stop learning.
For ReLU that is z ≤ 0 on every training point (relu'(0) = 0, as PyTorch).  GELU's true slope is 0 only at
z ≈ -0.7518, but the slope counted is the one training uses, PyTorch's float32 backward, and the race's
vectorised kernel returns exactly 0 below about z = -14.34 (tanh form: -5.06; oneDNN's kernel, which PyTorch
calls for a contiguous tensor and which the race avoids (``native_gelu``): -6.15; torch 2.13 CPU): a GELU unit
pushed that far on every point is dead too (it takes far larger steps than those that kill ReLU units).  (A dead
unit of layer 2 or deeper can come back if the layers below it change; a dead unit of layer 1 sees fixed points
and stays dead under plain SGD.)

``race(config)`` is a generator of snapshots for a page that trains live and can stop; ``train(config)`` runs
to the end; ``races(configs)`` and ``train_many(configs)`` train several races of one shape as one stack
(``_Stack``: the forward, the backward and Adam written out by hand).  ``autograd_race(config)`` is the same
race written plainly, each network an ``nn.Module`` trained by autograd and torch.optim: the readable version
beside the stack, whose curves the stack matches bit for bit (tests/test_training.py).  Who trains a class's
races, and when, is the server's business (``hosting.races``).  ``verdict(snapshot)`` reads the two runs' final
test accuracy against a stated margin.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np
import torch
from torch import nn

from gelu_core.activations import get_activation
from gelu_core.ffn import activation_module, seeded_init

TASKS = ("circle", "xor", "spiral", "gauss")
OPTIMIZERS = ("sgd", "adam")
GRID_POINTS = 60  # decision-region grid: 60 x 60 probabilities, light to send
# each network's block of a stacked buffer starts CHUNK floats after the last one's (see _aligned): a multiple of
# PyTorch's vectorised loop's step on every CPU (two vectors: AVX2 16 floats, AVX-512 32) and of 64 bytes
CHUNK = 64
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

    task: str = "spiral"  # one of TASKS: "circle", "xor", "spiral", "gauss"
    activations: tuple[str, str] = ("relu", "gelu")  # registry names, raced on the same weights
    width: int = 8  # units per hidden layer
    depth: int = 3  # hidden layers
    optimizer: str = "adam"  # "adam" or "sgd" (plain: w -= learning_rate * dL/dw)
    learning_rate: float = 0.03  # the optimiser's step size
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


def _split(task: str, n: int, noise: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """n points, (n, 2) float32, and their labels, (n,): class 0's half drawn, then class 1's, then every point
    nudged by normal noise of std ``noise``."""
    points = np.concatenate([_class_points(task, label, n // 2, rng) for label in (0, 1)])
    points = points + noise * rng.standard_normal(points.shape)
    labels = np.repeat([0.0, 1.0], n // 2)
    return points.astype(np.float32), labels.astype(np.float32)


def make_dataset(task: str = "spiral", n_train: int = 400, n_test: int = 400, noise: float = 0.05,
                 seed: int = 0) -> Dataset:
    """A seeded two-class point set: each point of each class drawn, then nudged by normal noise of std ``noise``.

    >>> d = make_dataset("xor", n_train=4, n_test=2, seed=1); d.train_points.shape, d.train_labels.tolist()
    ((4, 2), [0.0, 0.0, 1.0, 1.0])
    """
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    rng = np.random.default_rng(seed)
    train_points, train_labels = _split(task, n_train, noise, rng)  # the training set first, then the test set
    test_points, test_labels = _split(task, n_test, noise, rng)
    largest = float(max(np.abs(train_points).max(initial=0.0), np.abs(test_points).max(initial=0.0)))
    extent = max(1.0, math.ceil(largest * 10) / 10)
    return Dataset(task, train_points, train_labels, test_points, test_labels, extent)


# ---------------------------------------------------------------- the network

# written with torch.nn, not nn: the code export prints this class into a script that imports torch
class Network(torch.nn.Module):
    """2 -> width -> ... -> width -> 1: ``depth`` hidden layers, each Linear then the activation ``act`` (a module
    that owns no weights); a logit out."""

    def __init__(self, width: int, depth: int, act: torch.nn.Module):
        super().__init__()
        self.hidden = torch.nn.ModuleList(torch.nn.Linear(2 if i == 0 else width, width) for i in range(depth))
        self.act = act  # owns no weights
        self.out = torch.nn.Linear(width, 1)

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

    def reset_parameters(self, seed: int) -> None:
        """nn.Linear's default init (uniform ±1/sqrt(fan_in), weights and biases) from a seeded generator."""
        seeded_init([*self.hidden, self.out], seed)


class RaceNet(Network):
    """A race's network for a registry activation name: PyTorch's own module for it (``activation_module``)."""

    def __init__(self, width: int, depth: int, activation: str):
        super().__init__(width, depth, activation_module(activation))
        self.activation = activation


def twin_networks(config: RaceConfig) -> tuple[RaceNet, RaceNet]:
    """The two racers: same architecture, same initial weights (copied), each its own activation."""
    first = RaceNet(config.width, config.depth, config.activations[0])
    first.reset_parameters(config.seed)
    second = RaceNet(config.width, config.depth, config.activations[1])
    second.load_state_dict(first.state_dict())  # the activations own no weights: the state dicts match
    return first, second


def dead_units(net: Network, points: torch.Tensor) -> list[int]:
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
    seconds: float = 0.0  # wall time spent so far

    @property
    def done(self) -> bool:
        return self.step >= self.config.steps


# ---------------------------------------------------------------- the race by autograd: the readable one

CURVES = ("train_loss", "test_loss", "test_accuracy", "dead_units")  # the RunRecord fields autograd_race records


class OwnKernelGELU(nn.GELU):
    """Exact GELU through PyTorch's own vectorised kernel, the one the race uses (``native_gelu``).

    The input is handed over transposed, not contiguous, so that ``gelu`` and its backward do not call oneDNN,
    and its memory is walked in the same order: what ``torch.backends.mkldnn.enabled = False`` gives, without
    switching oneDNN off for the whole process."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.gelu(x.mT, approximate=self.approximate).mT  # (n, width) -> (width, n) view -> (n, width)


def race_networks(config: RaceConfig) -> tuple[RaceNet, RaceNet]:
    """``twin_networks(config)``, each exact GELU on the kernel the race uses for it (``OwnKernelGELU``)."""
    nets = twin_networks(config)
    if native_gelu(config):
        for net in nets:
            if _exact_gelu(net.act):
                net.act = OwnKernelGELU()
    return nets


class AutogradRace(NamedTuple):
    """A race trained by autograd and torch.optim: both networks' curves and the two trained networks."""

    curves: dict[str, np.ndarray]  # CURVES field -> (2, records), dead_units (2, records, depth)
    networks: tuple[RaceNet, RaceNet]  # after config.steps steps


def autograd_race(config: RaceConfig) -> AutogradRace:
    """The race written plainly: each network its own ``nn.Module``, trained by ``loss.backward()`` and
    ``torch.optim`` (foreach), its curves recorded network by network.

    ``_Stack`` below computes the same, bit for bit, for every network of several races at once, written out by
    hand (tests/test_training.py, tolerance 0); the comments here name the part of it that does each line.  The
    race itself trains stacked: a network this small costs per operation, and the stack runs fewer."""
    with one_thread():
        dataset = make_dataset(config.task, config.n_train, config.n_test, config.noise, config.seed)
        data = {key: torch.from_numpy(getattr(dataset, key)) for key in
                ("train_points", "train_labels", "test_points", "test_labels")}  # (n, 2) points, (n,) labels
        nets = race_networks(config)  # _Stack: theta, every network's weights as one (networks, P) tensor
        optimizer = torch.optim.SGD if config.optimizer == "sgd" else torch.optim.Adam
        optimizers = [optimizer(net.parameters(), lr=config.learning_rate, foreach=True) for net in nets]
        batches = torch.Generator(device="cpu").manual_seed(int(config.seed) + 1)  # _Stack.batches: one per race
        curves = {field: [[], []] for field in CURVES}
        cross_entropy = nn.functional.binary_cross_entropy_with_logits

        def record():  # _Stack.record
            for i, net in enumerate(nets):
                with torch.no_grad():  # logits (n_train,) and (n_test,)
                    train_logits, test_logits = net(data["train_points"]), net(data["test_points"])
                curves["train_loss"][i].append(float(cross_entropy(train_logits, data["train_labels"])))
                curves["test_loss"][i].append(float(cross_entropy(test_logits, data["test_labels"])))
                right = (test_logits > 0) == (data["test_labels"] > 0.5)
                curves["test_accuracy"][i].append(float(right.double().mean()))
                curves["dead_units"][i].append(dead_units(net, data["train_points"]))  # _Stack: slope kernels on 1s

        record()
        for step in range(1, config.steps + 1):
            # _Stack.step, in order: the mini-batch, the forward, the backward, the update
            index = torch.randint(0, config.n_train, (config.batch_size,), generator=batches)  # (batch,)
            points, labels = data["train_points"][index], data["train_labels"][index]  # (batch, 2), (batch,)
            for net, opt in zip(nets, optimizers, strict=True):  # _Stack: all networks at once, a row each
                loss = cross_entropy(net(points), labels)  # forward: the addmm and activation kernels per layer
                opt.zero_grad(set_to_none=True)  # _Stack writes every gradient whole each step: nothing to zero
                loss.backward()  # backward: the sigmoid, then per layer the sums, the mm's and the slope kernels
                opt.step()  # _Stack.update: the same foreach formulas on theta
            if step % config.record_every == 0 or step == config.steps:
                record()
    return AutogradRace({field: np.asarray(values) for field, values in curves.items()}, tuple(nets))


# ---------------------------------------------------------------- the race stacked: autograd_race by hand

def _into_rules(name: str, module: nn.Module, slope: Callable) -> tuple[Callable, Callable]:
    """(z, out) -> out = act(z) and (g, z, a, out) -> out = the slope rule's grad: the same kernels as ``module``
    and ``slope``, written into a buffer the stack keeps (no new tensor, no concatenation afterwards)."""
    aten = torch.ops.aten
    if name == "relu":  # nn.ReLU is clamp_min(z, 0) in ATen
        return (lambda z, out: torch.clamp_min(z, 0, out=out),
                lambda g, z, a, out: aten.threshold_backward.grad_input(g, a, 0, grad_input=out))
    if isinstance(module, nn.GELU):
        approximate = module.approximate
        return (lambda z, out: aten.gelu.out(z, approximate=approximate, out=out),
                lambda g, z, a, out: aten.gelu_backward.grad_input(g, z, approximate=approximate, grad_input=out))
    return lambda z, out: out.copy_(module(z)), lambda g, z, a, out: out.copy_(slope(g, z, a))


def _slope_rule(name: str, module: nn.Module) -> Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]:
    """grad -> grad through the activation, given its input z and output a: PyTorch's own backward kernel, the
    one autograd calls for this module (bit for bit what ``loss.backward()`` gives)."""
    aten = torch.ops.aten
    if name == "relu":
        return lambda g, z, a: aten.threshold_backward(g, a, 0)
    if isinstance(module, nn.GELU):
        return lambda g, z, a: aten.gelu_backward(g, z, approximate=module.approximate)
    if name == "sigmoid":
        return lambda g, z, a: aten.sigmoid_backward(g, a)
    if name == "tanh":
        return lambda g, z, a: aten.tanh_backward(g, a)
    if name == "silu":
        return lambda g, z, a: aten.silu_backward(g, z)
    if name == "leaky_relu":
        return lambda g, z, a: aten.leaky_relu_backward(g, z, module.negative_slope, False)
    if name == "elu":
        return lambda g, z, a: aten.elu_backward(g, module.alpha, 1, 1, False, z)
    if name == "softplus":
        return lambda g, z, a: aten.softplus_backward(g, z, module.beta, module.threshold)

    def by_autograd(g, z, a):  # a module made of several kernels (gelu_sigmoid): autograd through it
        with torch.inference_mode(False), torch.enable_grad():  # (the race trains in inference mode)
            z = z.clone().requires_grad_()
            (dz,) = torch.autograd.grad(module(z), z, g.clone())
        return dz

    by_autograd.composite = True  # several kernels: the stack gives it one network at a time (_rows)
    return by_autograd


def _exact_gelu(module: nn.Module) -> bool:
    return isinstance(module, nn.GELU) and module.approximate == "none"


def native_gelu(config: RaceConfig) -> bool:
    """Whether the race computes exact GELU with PyTorch's own vectorised kernel rather than oneDNN's.

    For a contiguous float32 tensor PyTorch 2.13's CPU ``gelu`` and ``gelu_backward`` call oneDNN, whose set-up
    costs 12-24 us a call on these few hundred numbers (PyTorch's own kernel: 1.4 and 3.1 us); that was a third
    of a race's CPU time.  The race hands the kernel a transposed view of the same memory (``_view``): not
    contiguous, so oneDNN is not asked, yet walked in the same order as the contiguous tensor, so every number is
    what ``torch.backends.mkldnn.enabled = False`` gives (the copied script sets it).  A network of width 1 or a
    batch of 1 has no such view (a tensor with one dimension above 1 is always contiguous): there oneDNN stays.
    """
    return (config.width >= 2 and config.batch_size >= 2
            and any(_exact_gelu(activation_module(name)) for name in config.activations))


def _view(t: torch.Tensor, transposed: bool) -> torch.Tensor:
    """``t`` as an elementwise kernel is given it: as it is, or (PyTorch's own GELU kernel, ``native_gelu``) as
    a transposed view of the same memory, which is not contiguous, so oneDNN is not asked, and is walked in the
    same order."""
    return t.mT if transposed else t


@dataclass(frozen=True)
class _Group:
    """One activation's slab of the stack: its rows, and its forward and backward kernels, each into a buffer."""

    start: int  # the stack's first row with this activation
    stop: int  # one past its last
    act: Callable  # (z, out) -> out = act(z) (_into_rules)
    slope: Callable  # (g, z, a, out) -> out = the gradient g passed back through act (_into_rules)
    transposed: bool  # given transposed views: exact GELU on PyTorch's own kernel (native_gelu, _view)
    composite: bool  # several kernels (gelu_sigmoid): given a network at a time where a block is not whole (_rows)


def _rows(group: _Group, tensors: list[torch.Tensor]) -> list[tuple[torch.Tensor, ...]]:
    """A group's rows of (networks, points, width) ``_aligned`` tensors as its kernel is given them: all in one
    call (through ``_view``), or, for an activation made of several kernels (``composite``: gelu_sigmoid, whose
    intermediate tensors are not aligned) where a network's block is not a whole number of CHUNK, network by
    network."""
    if group.composite and math.prod(tensors[0].shape[1:]) % CHUNK:
        return [tuple(_view(t[r:r + 1], group.transposed) for t in tensors) for r in range(len(tensors[0]))]
    return [tuple(_view(t, group.transposed) for t in tensors)]


def _addmm(bias: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """bias + a @ b for stacked networks, bias (N, 1, n), a (N, m, k), b (N, k, n), into an ``_aligned`` (N, m, n):
    network by network, as ``torch.addmm``, autograd's kernel for one network alone (as every matmul of the
    training step, precomputed there).  Not one ``baddbmm``: torch 2.13's CPU bmm takes products under 400
    multiply-adds to a loop of its own and larger ones to MKL's batched gemm, and each sums in its own order on
    some CPUs (AVX-512), as does mm's gemv for a matrix-vector product (tests/test_training.py)."""
    out = _aligned((a.shape[0], a.shape[1], b.shape[-1]))
    for i in range(a.shape[0]):
        torch.addmm(bias[i, 0], a[i], b[i], out=out[i])
    return out


def _round_up(size: int) -> int:
    return -(-size // CHUNK) * CHUNK


def _aligned(shape: tuple[int, ...]) -> torch.Tensor:
    """An empty (networks, ...) float32 tensor in which each network's block computes as a tensor of its own.

    Each block starts a whole number of CHUNK floats after the first (64-byte aligned, as PyTorch allocates a
    tensor: some BLAS kernels split their sums by the alignment of the memory they are given), and where a block
    is not itself a whole number of CHUNK, a gap follows it, so that an elementwise kernel cannot run the blocks
    together as one and walks each from its start, vectors first and its tail one by one, as it does a network's
    tensor alone (the two paths round differently for exp, tanh, erf, ...)."""
    size = math.prod(shape[1:])
    return torch.empty(shape[0], _round_up(size))[:, :size].view(shape)


class _Stack:
    """Several races of one shape trained in lockstep as one computation: both networks of every race.

    ``autograd_race`` above, written by hand for many networks at once: ``step`` is its loop body (the forward,
    ``loss.backward()`` and ``opt.step()``), ``update`` torch.optim's formulas, ``record`` its ``record``.
    Tiny networks cost per operation, not per number, so the networks share every operation they can: all
    weights in one tensor (theta, (networks, P)), each activation and its own backward kernel one call on its
    networks' rows (a ``_Group``: the networks ordered by activation, so one call however many races are
    stacked), one Adam or SGD update for all (the foreach kernels torch.optim runs).  The matmuls stay each
    network's own (``_addmm``: bmm sums in other orders on some CPUs).  A training step writes into buffers made
    once (``_aligned``: each network's block laid out as a tensor of its own), reads weights through views made
    once, and runs in inference mode (no autograd bookkeeping per operation; benchmarks/bench_training.py counts
    the operations).  Every network computes bit for bit what it computes alone, on every CPU: each matmul is
    autograd's own call and each elementwise kernel walks each network's block as it walks a tensor of its own
    (tests/test_training.py holds it to ``autograd_race``, with the kernels of other CPUs too).
    """

    def __init__(self, configs: list[RaceConfig]):
        first = configs[0]
        for c in configs:
            if stack_shape(c) != stack_shape(first):
                raise ValueError("races stacked together share width, depth, optimiser, steps, batch and sizes")
        self.configs, self.depth, self.batch, self.n_train = configs, first.depth, first.batch_size, first.n_train
        # the stack's rows: (race, 0 or 1) sorted by activation name, so that each activation is one slab
        self.rows = sorted(((r, k) for r in range(len(configs)) for k in (0, 1)),
                           key=lambda rk: configs[rk[0]].activations[rk[1]])
        self.n = len(self.rows)
        self.row_of = {rk: i for i, rk in enumerate(self.rows)}
        names = [configs[r].activations[k] for r, k in self.rows]
        native = native_gelu(first)
        self.groups = []  # one per activation, in row order
        for name in dict.fromkeys(names):
            module = activation_module(name)
            slope = _slope_rule(name, module)
            start = names.index(name)
            self.groups.append(_Group(start, start + names.count(name), *_into_rules(name, module, slope),
                                      transposed=native and _exact_gelu(module),
                                      composite=getattr(slope, "composite", False)))
        self.names = names
        self.datasets = [make_dataset(c.task, c.n_train, c.n_test, c.noise, c.seed) for c in configs]
        race_of = torch.tensor([r for r, _ in self.rows])
        self.race_of = race_of
        # what record() evaluates, per network: (points (n, points, 2), labels (n, points)) of the training set and of
        # the test set, each forwarded on its own, as a network alone is
        def stacked(part: str, what: str) -> torch.Tensor:
            values = torch.from_numpy(np.stack([getattr(self.datasets[r], f"{part}_{what}") for r, _ in self.rows]))
            return _aligned(tuple(values.shape)).copy_(values)

        self.evaluated = [(stacked(part, "points"), stacked(part, "labels")) for part in ("train", "test")]
        self.grids = [np.linspace(-d.extent, d.extent, GRID_POINTS, dtype=np.float32) for d in self.datasets]
        initial = [list(twin_networks(c)[0].parameters()) for c in configs]
        shapes = [tuple(p.shape) for p in initial[0]]  # weight (out, in), bias (out,), layer by layer
        # every weight, (n, P): each parameter's block a whole number of CHUNK (see _aligned); the twins start equal
        self.theta = torch.zeros(self.n, sum(_round_up(math.prod(shape)) for shape in shapes))
        self.params, offset = [], 0  # views into theta: weight (n, out, in), bias (n, out), layer by layer
        for i, shape in enumerate(shapes):
            size = math.prod(shape)
            self.params.append(self.theta[:, offset:offset + size].view(self.n, *shape))
            with torch.no_grad():
                self.params[-1].copy_(torch.stack([initial[r][i] for r, _ in self.rows]))
            offset += _round_up(size)
        self.layers = [(w, b.unsqueeze(1)) for w, b in zip(self.params[::2], self.params[1::2], strict=True)]
        # views made once (theta is updated in place, so they stay current): each op saved is saved every step
        self.hidden_t = [w.transpose(1, 2) for w, _ in self.layers[:-1]]  # (n, in, out)
        w, b = self.layers[-1]
        self.out_t = [(b[i, 0], w[i].t()) for i in range(self.n)]  # per network: bias (1,), weight (width, 1)
        # a step's buffers, (n, batch, width) per hidden layer: pre-activations, activations, gradient into the layer;
        # and each activation's rows of them, as views made once
        shape = (self.n, self.batch, first.width)
        self.z_buf, self.a_buf, self.d_buf = ([_aligned(shape) for _ in range(first.depth)] for _ in range(3))
        # the backward's own buffers: dL/dlogit (n, batch) and its (n, batch, 1) view; the gradient arriving at
        # each hidden layer's output; the mini-batch's indices, one row per race; the logits, one (batch, 1)
        # column per network
        self.g_out = _aligned((self.n, self.batch))
        self.g_col = self.g_out.unsqueeze(-1)
        self.up_buf = [_aligned(shape) for _ in range(first.depth)]
        # per hidden layer, the activation's calls and its slope's, each (rule, its arguments): each group's rows
        # of the four buffers, as the kernel is given them (_view), all views made once
        self.act_calls, self.slope_calls = [], []
        for buffers in zip(self.z_buf, self.a_buf, self.up_buf, self.d_buf, strict=True):
            acts, slopes = [], []
            for group in self.groups:
                for z, a, up, d in _rows(group, [b[group.start:group.stop] for b in buffers]):
                    acts.append((group.act, (z, a)))
                    slopes.append((group.slope, (up, z, a, d)))
            self.act_calls.append(acts)
            self.slope_calls.append(slopes)
        # the mini-batch, gathered into buffers from the races' training sets flattened: row i of the stack reads
        # race race_of[i]'s points, from offset[i]
        self.points_buf, self.labels_buf = _aligned((self.n, self.batch, 2)), _aligned((self.n, self.batch))
        self.flat_points = torch.from_numpy(np.concatenate([d.train_points for d in self.datasets]))  # (races*n, 2)
        self.flat_labels = torch.from_numpy(np.concatenate([d.train_labels for d in self.datasets]))  # (races*n,)
        self.offset = (race_of * self.n_train)[:, None]
        # every matmul of a step, network by network (_addmm), as (its arguments, out): the forward's addmm into z, each
        # weight gradient's mm into a buffer of its own (copied into grad's strided view: mm writing into it would
        # sum in another order), each upstream gradient's mm into up_buf; all views made once
        acts = [self.points_buf, *self.a_buf]
        self.forward_mms = [[((b[i, 0], a[i], w_t[i]), z[i]) for i in range(self.n)] for (_, b), w_t, a, z
                            in zip(self.layers[:-1], self.hidden_t, acts[:-1], self.z_buf, strict=True)]
        self.weight_grad_buf = [_aligned(w.shape) for w, _ in self.layers]
        grads_in = [*self.d_buf, self.g_col]  # the gradient arriving at each layer's output
        # transposed as autograd transposes them (the strides mm is given)
        grads_t = [*(d.transpose(1, 2) for d in self.d_buf), self.g_col.transpose(1, 2)]
        self.weight_mms = [[((g_t[i], a[i]), out[i]) for i in range(self.n)]
                           for g_t, a, out in zip(grads_t, acts, self.weight_grad_buf, strict=True)]
        self.up_mms = [[((g[i], w[i]), up[i]) for i in range(self.n)]
                       for g, (w, _), up in zip(grads_in[1:], self.layers[1:], self.up_buf, strict=True)]
        self.index = torch.empty(len(configs), self.batch, dtype=torch.int64)
        self.logit_buf = _aligned((self.n, self.batch, 1))
        self.logits = self.logit_buf.squeeze(-1)
        self.grad = torch.zeros_like(self.theta)  # (n, P): this step's gradient, written in place by layer
        self.grads, offset = [], 0  # views into grad, as params into theta
        for p in self.params:
            size = p[0].numel()
            self.grads.append(self.grad[:, offset:offset + size].view(p.shape))
            offset += _round_up(size)
        self.adam = first.optimizer == "adam"
        rates = [configs[r].learning_rate for r, _ in self.rows]
        self.one_rate = len(set(rates)) == 1
        self.rate = rates[0] if self.one_rate else torch.tensor(rates, dtype=torch.float64)[:, None]  # (n, 1)
        self.exp_avg, self.exp_avg_sq = torch.zeros_like(self.theta), torch.zeros_like(self.theta)
        self.t = 0
        self.batches = [torch.Generator(device="cpu").manual_seed(int(c.seed) + 1) for c in configs]
        self.history = [dict(steps=[], train_loss=[], test_loss=[], test_accuracy=[], dead=[])
                        for _ in range(self.n)]

    def group_of(self, row: int) -> _Group:
        return next(g for g in self.groups if g.start <= row < g.stop)

    def forward(self, x: torch.Tensor, layers=None, groups=None):
        """x (n, points, 2) -> the pre-activations and activations of each hidden layer, and the logits (n, points).

        ``layers`` and ``groups``: another set of networks' weights and activations (some rows of the stack)."""
        if layers is None:
            layers, groups, hidden_t, out_t = self.layers, self.groups, self.hidden_t, self.out_t
        else:
            hidden_t = [w.transpose(1, 2) for w, _ in layers[:-1]]
            w, b = layers[-1]
            out_t = [(b[i, 0], w[i].t()) for i in range(len(w))]
        zs, acts = [], [x]
        for (_, b), w_t in zip(layers[:-1], hidden_t, strict=True):
            z = _addmm(b, acts[-1], w_t)  # (n, points, width)
            zs.append(z)
            acts.append(_by_group(groups, "act", z))
        # one output: per network, addmm's matrix-vector path
        logits = torch.stack([torch.addmm(b, a, w_t) for (b, w_t), a in zip(out_t, acts[-1], strict=True)])
        return zs, acts, logits.squeeze(-1)

    def step(self) -> None:
        """One Adam (or SGD) step of every network: ``autograd_race``'s loop body, by hand.

        The same kernels, in the same order, as autograd and torch.optim run for one network alone (the comments
        give autograd_race's line each part does), each writing into the buffers and views made once."""
        # index = torch.randint(...); points, labels = train_points[index], train_labels[index]
        for g, row in zip(self.batches, self.index, strict=True):
            torch.randint(0, self.n_train, (self.batch,), generator=g, out=row)  # (batch,) per race
        index = (self.index[self.race_of] + self.offset).view(-1)  # (n * batch,): the twins see one mini-batch
        self.points_buf.copy_(torch.index_select(self.flat_points, 0, index).view(self.points_buf.shape))
        self.labels_buf.copy_(torch.index_select(self.flat_labels, 0, index).view(self.labels_buf.shape))
        acts, labels = [self.points_buf, *self.a_buf], self.labels_buf  # (n, batch, 2) and (n, batch, width) each
        # net(points), as Network.forward: x = act(layer(x)) per hidden layer, then out(x)
        for layer in range(self.depth):
            for args, out in self.forward_mms[layer]:  # z = layer(x): (batch, in) @ (in, width) + bias, per network
                torch.addmm(*args, out=out)
            for rule, args in self.act_calls[layer]:  # a = act(z): (n, batch, width), a call per group
                rule(*args)
        # out(x): per network, addmm's matrix-vector path, (batch, width) @ (width, 1) + bias -> (batch, 1)
        for (b, w_t), a, out in zip(self.out_t, acts[-1], self.logit_buf, strict=True):
            torch.addmm(b, a, w_t, out=out)
        # loss.backward(), from the loss cross_entropy(logits, labels) (mean over the batch) to each weight:
        # d loss / d logit = (sigmoid(logit) - label) / batch, as autograd computes it
        torch.sigmoid(self.logits, out=self.g_out).sub_(labels).div_(self.batch)  # (n, batch)
        grad = self.g_col  # (n, batch, 1): the gradient arriving at the output layer's output
        grads = self.grads  # views into self.grad, written in place: (n, P) in theta's order
        for layer in range(self.depth, -1, -1):  # each Linear, last to first
            torch.sum(grad, 1, out=grads[2 * layer + 1])  # bias.grad = grad summed over the batch: (n, out)
            for args, out in self.weight_mms[layer]:  # weight.grad = grad.T @ x: (out, batch) @ (batch, in)
                torch.mm(*args, out=out)  # into its buffer, then copied: mm into grad's view sums otherwise
            grads[2 * layer].copy_(self.weight_grad_buf[layer])  # (n, out, in)
            if layer:  # into the layer below, through its activation's slope
                for args, out in self.up_mms[layer - 1]:  # grad @ weight: (batch, out) @ (out, in) -> (batch, in)
                    torch.mm(*args, out=out)
                for rule, args in self.slope_calls[layer - 1]:  # times act'(z): the activation's backward kernel
                    rule(*args)
                grad = self.d_buf[layer - 1]  # (n, batch, width)
        self.update(self.grad)  # opt.step()

    def update(self, grad: torch.Tensor) -> None:
        """torch.optim's update (Adam with its defaults, or plain SGD; the foreach formulas) on every network's
        weights at once: one elementwise kernel per formula on theta (n, P)."""
        if not self.adam:  # SGD: theta -= lr * grad
            if self.one_rate:
                self.theta.add_(grad, alpha=-self.rate)
            else:
                self.theta.sub_(grad * self.rate.float())
            return
        beta1, beta2, eps = 0.9, 0.999, 1e-8  # torch.optim.Adam's defaults
        self.t += 1
        self.exp_avg.lerp_(grad, 1 - beta1)  # m = beta1 * m + (1 - beta1) * grad
        self.exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)  # v = beta2 * v + (1 - beta2) * grad²
        bias_correction1, bias_correction2 = 1 - beta1 ** float(self.t), 1 - beta2 ** float(self.t)
        denom = self.exp_avg_sq.sqrt().div_(bias_correction2 ** 0.5).add_(eps)  # sqrt(v) / sqrt(1 - beta2^t) + eps
        step_size = (self.rate / bias_correction1) * -1
        if self.one_rate:  # theta -= lr / (1 - beta1^t) * m / denom
            self.theta.addcdiv_(self.exp_avg, denom, value=step_size)
        else:  # per network: the same products, in addcdiv's order (value * exp_avg / denom)
            self.theta.add_(step_size.float() * self.exp_avg / denom)

    @torch.inference_mode()
    def record(self, step: int) -> None:
        """Every network's losses, test accuracy and dead units on the whole training and test sets:
        ``autograd_race``'s ``record``, every network at once."""
        (train_points, train_labels), (test_points, test_labels) = self.evaluated
        zs, acts, train_logits = self.forward(train_points)
        test_logits = self.forward(test_points)[2]
        train_loss, test_loss = _mean_loss(train_logits, train_labels), _mean_loss(test_logits, test_labels)
        right = (test_logits > 0) == (test_labels > 0.5)
        accuracy = right.double().mean(1).tolist()
        ones = torch.ones_like(zs[0])
        dead = torch.stack([(_by_group(self.groups, "slope", ones, z, a) == 0).all(dim=1).sum(-1)
                            for z, a in zip(zs, acts[1:], strict=True)], dim=1).tolist()  # (n, depth)
        for i, h in enumerate(self.history):
            h["steps"].append(step)
            h["train_loss"].append(train_loss[i])
            h["test_loss"].append(test_loss[i])
            h["test_accuracy"].append(accuracy[i])
            h["dead"].append(dead[i])

    @torch.inference_mode()
    def snapshot(self, race: int, step: int, started: float) -> RaceSnapshot:
        """Race ``race``'s snapshot: its two records with their decision regions."""
        grid = self.grids[race]
        gx, gy = np.meshgrid(grid, grid)  # (G, G) each: row = y, column = x
        points = torch.from_numpy(np.stack([gx.reshape(-1), gy.reshape(-1)], axis=-1)).clone()  # (G*G, 2), aligned
        rows = [self.row_of[(race, 0)], self.row_of[(race, 1)]]
        layers = [(w[rows], b[rows]) for w, b in self.layers]  # the grid through this race's two networks only
        groups = [replace(self.group_of(row), start=i, stop=i + 1) for i, row in enumerate(rows)]
        _, _, logits = self.forward(points.expand(2, -1, -1), layers, groups)
        records = []
        for row, logit in zip(rows, logits, strict=True):
            h = self.history[row]
            records.append(RunRecord(
                name=self.names[row], label=get_activation(self.names[row]).label,
                steps=np.asarray(h["steps"], dtype=np.int64),
                train_loss=np.asarray(h["train_loss"], dtype=np.float64),
                test_loss=np.asarray(h["test_loss"], dtype=np.float64),
                test_accuracy=np.asarray(h["test_accuracy"], dtype=np.float64),
                dead_units=np.asarray(h["dead"], dtype=np.int64).reshape(len(h["steps"]), -1),
                grid_probability=torch.sigmoid(logit).reshape(GRID_POINTS, GRID_POINTS).numpy().astype(np.float32),
            ))
        return RaceSnapshot(step, self.configs[race], self.datasets[race], grid, tuple(records),
                            time.perf_counter() - started)


def _mean_loss(logits: torch.Tensor, labels: torch.Tensor) -> list[float]:
    """Each network's mean binary cross-entropy, logits and labels (n, points): one call where each network's
    points are a whole number of CHUNK (see _aligned), else network by network as each alone computes it."""
    cross_entropy = nn.functional.binary_cross_entropy_with_logits
    if logits.shape[1] % CHUNK == 0:
        return cross_entropy(logits, labels, reduction="none").mean(1).tolist()
    return [float(cross_entropy(logit, label)) for logit, label in zip(logits, labels, strict=True)]


def _by_group(groups: list[_Group], which: str, *tensors: torch.Tensor) -> torch.Tensor:
    """Apply each group's kernel (which: "act", the activation, or "slope", its backward; each writes into a
    buffer) to its rows of ``tensors`` (networks, points, width; the first an ``_aligned`` one), one call per group
    (_rows), into an ``_aligned`` tensor, each network's block as its own tensor."""
    out = _aligned(tuple(tensors[0].shape))
    for group in groups:
        for rows in _rows(group, [t[group.start:group.stop] for t in (*tensors, out)]):
            getattr(group, which)(*rows)
    return out


def stack_shape(config: RaceConfig) -> tuple:
    """What races must share to be trained stacked: the rest (task, seed, noise, activations, rate) may differ."""
    return (config.width, config.depth, config.optimizer, config.steps, config.batch_size, config.n_train,
            config.n_test, config.record_every)


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


def races(configs: list[RaceConfig], yield_every: int | None = None) -> Iterator[list[RaceSnapshot]]:
    """Train several races of one shape (``_shape``) stacked, yielding every race's snapshot together: before
    the first step, every ``yield_every`` steps (default: every record) and after the last."""
    started = time.perf_counter()
    config = configs[0]
    yield_every = yield_every or config.record_every
    with torch.inference_mode(), one_thread():
        stack = _Stack(list(configs))
        stack.record(0)
        ready = [stack.snapshot(r, 0, started) for r in range(len(configs))]
    yield ready
    for start in range(0, config.steps, yield_every):
        with torch.inference_mode(), one_thread():  # not across the yield: the page's own work runs between snapshots
            for step in range(start + 1, min(start + yield_every, config.steps) + 1):
                stack.step()
                if step % config.record_every == 0 or step == config.steps:
                    stack.record(step)
            ready = [stack.snapshot(r, step, started) for r in range(len(configs))]
        yield ready


def race(config: RaceConfig = RaceConfig(), yield_every: int | None = None) -> Iterator[RaceSnapshot]:
    """Train both networks in lockstep and yield a snapshot before the first step, every ``yield_every`` steps
    (default: every record) and after the last; stop iterating to stop training."""
    for (snapshot,) in races([config], yield_every):
        yield snapshot


def train(config: RaceConfig = RaceConfig()) -> RaceSnapshot:
    """The whole race in one call: its final snapshot."""
    *_, last = race(config, yield_every=config.steps)
    return last


def train_many(configs: list[RaceConfig]) -> list[RaceSnapshot]:
    """Several races at once, each one's final snapshot in order; races of one shape are trained stacked."""
    groups: dict[tuple, list[int]] = {}
    for i, config in enumerate(configs):
        groups.setdefault(stack_shape(config), []).append(i)
    out: list[RaceSnapshot | None] = [None] * len(configs)
    for members in groups.values():
        *_, last = races([configs[i] for i in members], yield_every=configs[members[0]].steps)
        for i, snapshot in zip(members, last, strict=True):
            out[i] = snapshot
    return out


# ---------------------------------------------------------------- the verdict

@dataclass(frozen=True)
class Verdict:
    """Which run ended ahead on the test set, read against a stated margin, and the numbers it was read from
    (each pair in the race's order; the page's sentence: ``ui.training.verdict_text``)."""

    leader: str | None  # registry name of the run ahead, None when they are about the same
    accuracy: tuple[float, float]  # the runs' final test accuracy, a share (0.93: 93 %)
    loss: tuple[float, float]  # the runs' final test loss
    margin: float  # the lead in accuracy past which a run is ahead


def verdict(snapshot: RaceSnapshot, margin: float = ACCURACY_MARGIN) -> Verdict:
    """Compare the two runs' final test accuracy: one is ahead only if it leads by more than ``margin``
    (0.02: two percentage points, more than 8 of the default 400 test points); otherwise they are
    about the same."""
    a, b = snapshot.runs
    accuracy = (a.final_test_accuracy, b.final_test_accuracy)
    loss = (a.final_test_loss, b.final_test_loss)
    gap = accuracy[1] - accuracy[0]
    leader = (b.name if gap > 0 else a.name) if abs(gap) > margin else None
    return Verdict(leader, accuracy, loss, margin)
