"""gelu_core.training: the data, the twin networks, the race and its verdict.

References and tolerances, per test:
- datasets: class counts and shapes exactly; each task's geometry from its noise-free definition (exact
  inequalities on float32 points);
- dead units: a direct autograd check written in the test (the slope d act(z)/dz of each unit on every
  training point, by torch.autograd through torch.nn.functional, z from torch.nn.functional.linear on the
  network's weights), exact integer counts; and the lesson itself: a dead unit's incoming weights get exactly 0
  gradient from the training loss (torch autograd);
- curves: bit-identical for the same seed (numpy.array_equal, tolerance 0); the stacked trainer bit-identical
  (tolerance 0) to each network trained alone by autograd and torch.optim (gelu_core.training.autograd_race, the
  readable version of the same race), and several races stacked to each race trained alone;
- learning: on the gauss and circle tasks the training loss falls by at least a factor 5 (the initial loss is
  about log 2 = 0.69; a network that learns the task ends far below 0.14);
- the decision grid: P(class 1) at grid cell [row, column] equals sigmoid(net((x[column], y[row]))), computed in
  the test, within 1e-6;
- the verdict: on hand-made records, against the margin read as a share (0.02 = 2 points), and the
  numbers it was read from.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch

from gelu_core import ACTIVATIONS
from gelu_core.ffn import activation_module
from gelu_core.training import (
    ACCURACY_MARGIN,
    GRID_POINTS,
    LIMITS,
    TASKS,
    RaceConfig,
    RaceSnapshot,
    RunRecord,
    autograd_race,
    dead_units,
    make_dataset,
    race,
    train,
    twin_networks,
    verdict,
)
from tests.conftest import functional

SMALL = dict(width=6, depth=2, steps=120, n_train=100, n_test=60, record_every=10)  # a race of a fraction of a second


# ---------------------------------------------------------------- data

@pytest.mark.parametrize("task", TASKS)
def test_dataset_shapes_balance_and_seed(task):
    d = make_dataset(task, n_train=200, n_test=100, noise=0.1, seed=3)
    assert d.train_points.shape == (200, 2) and d.test_points.shape == (100, 2)
    assert d.train_points.dtype == np.float32 and d.train_labels.dtype == np.float32
    assert (d.train_labels == 1).sum() == 100 == (d.train_labels == 0).sum()
    assert (d.test_labels == 1).sum() == 50 == (d.test_labels == 0).sum()
    assert set(np.unique(d.train_labels)) == {0.0, 1.0}
    assert np.abs(d.train_points).max() <= d.extent and np.abs(d.test_points).max() <= d.extent
    again, other = make_dataset(task, 200, 100, 0.1, 3), make_dataset(task, 200, 100, 0.1, 4)
    assert np.array_equal(d.train_points, again.train_points) and np.array_equal(d.test_points, again.test_points)
    assert not np.array_equal(d.train_points, other.train_points)
    assert not np.array_equal(d.train_points, d.test_points[:100].repeat(2, axis=0))  # test set drawn apart


def test_task_geometry_without_noise():
    """Noise 0: each class where its definition puts it."""
    circle = make_dataset("circle", 400, 2, noise=0.0, seed=0)
    radius = np.linalg.norm(circle.train_points, axis=1)
    assert radius[circle.train_labels == 1].max() <= 0.5 and radius[circle.train_labels == 0].min() >= 0.7 - 1e-6
    xor = make_dataset("xor", 400, 2, noise=0.0, seed=0)
    same_sign = np.sign(xor.train_points[:, 0]) == np.sign(xor.train_points[:, 1])
    assert np.array_equal(same_sign, xor.train_labels == 1) and np.abs(xor.train_points).min() >= 0.06 - 1e-6
    gauss = make_dataset("gauss", 4000, 2, noise=0.0, seed=0)
    for label, centre in ((1, 0.4), (0, -0.4)):
        np.testing.assert_allclose(gauss.train_points[gauss.train_labels == label].mean(axis=0), centre, atol=0.02)
    spiral = make_dataset("spiral", 400, 2, noise=0.0, seed=0)
    p, r = spiral.train_points.astype(np.float64), np.linalg.norm(spiral.train_points, axis=1)
    arm_angle = 1.75 * 2 * math.pi * r + np.where(spiral.train_labels == 1, 0.0, math.pi)  # angle from the radius
    np.testing.assert_allclose(p, np.stack([r * np.sin(arm_angle), r * np.cos(arm_angle)], axis=1), atol=1e-5)


def test_noise_moves_points():
    quiet, noisy = make_dataset("gauss", 100, 2, noise=0.0, seed=1), make_dataset("gauss", 100, 2, noise=0.3, seed=1)
    moved = noisy.train_points - quiet.train_points
    assert 0.2 < float(moved.std()) < 0.4  # normal nudges of std 0.3, 200 draws


# ---------------------------------------------------------------- networks and dead units

def test_twins_start_from_the_same_weights():
    relu_net, gelu_net = twin_networks(RaceConfig(width=5, depth=3, seed=2))
    a, b = relu_net.state_dict(), gelu_net.state_dict()
    assert list(a) == list(b) and all(torch.equal(a[k], b[k]) for k in a)  # the activation owns no weights
    assert [tuple(layer.weight.shape) for layer in relu_net.hidden] == [(5, 2), (5, 5), (5, 5)]
    assert type(relu_net.act) is type(activation_module("relu"))
    assert type(gelu_net.act) is type(activation_module("gelu"))
    other = twin_networks(RaceConfig(width=5, depth=3, seed=3))[0].state_dict()
    assert not torch.equal(a["hidden.0.weight"], other["hidden.0.weight"])


def direct_dead(net, points: torch.Tensor) -> tuple[list[int], list[torch.Tensor]]:
    """Per layer: units whose slope, by autograd through torch.nn.functional's activation, is 0 on every point."""
    counts, slopes, x = [], [], points
    act = functional(net.activation)
    for layer in net.hidden:
        z = torch.nn.functional.linear(x, layer.weight.detach(), layer.bias.detach()).requires_grad_()
        a = act(z)
        (slope,) = torch.autograd.grad(a.sum(), z)  # elementwise activation: d a_ij / d z_ij
        counts.append(int((slope == 0).all(dim=0).sum()))
        slopes.append(slope)
        x = a.detach()
    return counts, slopes


def dying_config(**changes) -> RaceConfig:
    """A race where ReLU units die: plain SGD with a large step on a narrow net."""
    return RaceConfig(**{**SMALL, "task": "circle", "width": 8, "depth": 3, "optimizer": "sgd", "learning_rate": 2.0,
                         "steps": 200, "seed": 1, **changes})


def test_dead_unit_counts_match_a_direct_autograd_check():
    snapshot = train(dying_config())
    points = torch.from_numpy(snapshot.dataset.train_points)
    relu_run, gelu_run = snapshot.runs
    relu_net, gelu_net = autograd_race(dying_config()).networks  # the same race, trained by autograd
    for run, net in ((relu_run, relu_net), (gelu_run, gelu_net)):
        counts, _ = direct_dead(net, points)
        assert run.dead_units[-1].tolist() == counts == dead_units(net, points)
    assert relu_run.dead_units[-1].sum() > 0  # the check has something to find
    assert gelu_run.dead_units[-1].sum() == 0
    # for ReLU, dead means z <= 0 on every training point
    with torch.no_grad():
        zs = relu_net.pre_activations(points)
    assert [int((z <= 0).all(dim=0).sum()) for z in zs] == relu_run.dead_units[-1].tolist()


def test_dead_units_get_exactly_zero_gradient():
    """The lesson: the weights into a dead unit get no gradient at all from the whole training set's loss."""
    snapshot = train(dying_config())
    net = autograd_race(dying_config()).networks[0]  # the same race's ReLU network, trained by autograd
    points = torch.from_numpy(snapshot.dataset.train_points)
    labels = torch.from_numpy(snapshot.dataset.train_labels)
    loss = torch.nn.functional.binary_cross_entropy_with_logits(net(points), labels)
    grads = torch.autograd.grad(loss, [layer.weight for layer in net.hidden])
    _, slopes = direct_dead(net, points)
    found = 0
    for grad, slope in zip(grads, slopes, strict=True):
        dead = (slope == 0).all(dim=0)  # (width,)
        found += int(dead.sum())
        assert bool((grad[dead] == 0).all())  # rows of dead units: exactly zero
    assert found > 0


def test_first_layer_dead_relu_units_stay_dead_under_sgd():
    """Layer 1 sees fixed points: once a ReLU unit there is dead, SGD never moves its weights again."""
    history = train(dying_config(steps=300)).runs[0].dead_units[:, 0]
    assert np.all(np.diff(history) >= 0) and history[-1] > 0


def test_a_unit_pushed_negative_is_dead_for_relu_only():
    """Bias -3: z between about -4.5 and -1.5 on every point: ReLU's slope 0, GELU's small but not 0."""
    relu_net, gelu_net = twin_networks(RaceConfig(width=4, depth=2, seed=0))
    points = torch.from_numpy(make_dataset("circle", 50, 2, seed=0).train_points)
    for net in (relu_net, gelu_net):
        with torch.no_grad():
            net.hidden[0].bias[:2] = -3.0
            z = net.pre_activations(points)[0][:, :2]
        assert float(z.max()) < -1.0 and float(z.min()) > -5.0
        assert dead_units(net, points) == direct_dead(net, points)[0]
    assert dead_units(relu_net, points)[0] >= 2 and dead_units(gelu_net, points)[0] == 0


@pytest.mark.parametrize("name, kernel, edge, bias", [
    ("gelu", "oneDNN", -6.15, -10.0),  # nn.GELU on a contiguous float32 tensor: the lab's, a script's by default
    ("gelu", "own", -14.34, -20.0),  # PyTorch's own kernel: the race's (gelu_core.training.native_gelu)
    ("gelu_tanh", "own", -5.06, -10.0),  # the tanh form never calls oneDNN
])
def test_pytorch_float32_gelu_passes_no_gradient_far_left(name, kernel, edge, bias):
    """What training sees: PyTorch's float32 GELU backward (vectorised CPU kernels, torch 2.13) is exactly 0 below
    ``edge`` although the true slope (gelu_core, float64) is not, so a GELU unit pushed below it on every point
    counts as dead; the edge is the kernel's: oneDNN's, or PyTorch's own that the race uses.  Reference: the true
    slope in float64 is not 0 there; tolerance 0.01 on the edge.  If a torch upgrade moves an edge, this test
    says so."""
    from gelu_core.training import OwnKernelGELU, race_networks

    act = OwnKernelGELU() if kernel == "own" and name == "gelu" else functional(name)
    z = torch.linspace(-20.0, -4.0, 16001).reshape(-1, 1).expand(-1, 2).contiguous().requires_grad_()  # (n, 2)
    (slope,) = torch.autograd.grad(act(z).sum(), z)  # 16001 x 2 points: the kernel's vectorised path
    zero = z.detach()[slope == 0]
    assert float(zero.max()) == pytest.approx(edge, abs=0.01)
    assert bool((ACTIVATIONS[name].derivative(z.detach().double()) != 0).all())  # the true slope is not 0
    config = RaceConfig(width=4, depth=1, seed=0, activations=("relu", name))
    net = race_networks(config)[1] if kernel == "own" else twin_networks(config)[1]
    points = torch.from_numpy(make_dataset("circle", 64, 2, seed=0).train_points)
    with torch.no_grad():
        net.hidden[0].bias[:1] = bias  # z below the edge by 2 or more on every point
        net.hidden[0].bias[1:2] = edge + 4.0  # and above it by 2 or more: not dead
    assert dead_units(net, points) == [1]


# ---------------------------------------------------------------- the race

@pytest.mark.parametrize("task", ["gauss", "circle"])
def test_loss_falls_on_a_learnable_task(task):
    config = RaceConfig(**{**SMALL, "task": task, "width": 8, "steps": 400, "optimizer": "adam",
                           "learning_rate": 0.03, "seed": 0})
    snapshot = train(config)
    for run in snapshot.runs:
        assert run.train_loss[0] == pytest.approx(math.log(2), abs=0.1)  # a fresh net says about 1/2 everywhere
        assert run.train_loss[-1] < run.train_loss[0] / 5, run.name
        assert run.final_test_accuracy > 0.9


def test_same_seed_gives_the_same_race_bit_for_bit():
    a, b = train(RaceConfig(**SMALL, seed=5)), train(RaceConfig(**SMALL, seed=5))
    c = train(RaceConfig(**SMALL, seed=6))
    for x, y, z in zip(a.runs, b.runs, c.runs, strict=True):
        for field in ("steps", "train_loss", "test_loss", "test_accuracy", "dead_units", "grid_probability"):
            assert np.array_equal(getattr(x, field), getattr(y, field)), field
        assert not np.array_equal(x.train_loss, z.train_loss)


def test_race_yields_progress_and_can_stop():
    config = RaceConfig(**{**SMALL, "steps": 95})
    snapshots = list(race(config, yield_every=30))
    assert [s.step for s in snapshots] == [0, 30, 60, 90, 95]
    assert [s.done for s in snapshots] == [False] * 4 + [True]
    last = snapshots[-1]
    for run in last.runs:
        assert run.steps.tolist() == [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95]
        assert run.dead_units.shape == (11, config.depth)
        assert run.grid_probability.shape == (GRID_POINTS, GRID_POINTS)
    assert snapshots[1].runs[0].steps.tolist() == [0, 10, 20, 30]  # each snapshot keeps its own history
    first_two = list(itertools.islice(race(config, yield_every=30), 2))  # the page stops: nothing else runs
    assert [s.step for s in first_two] == [0, 30]
    assert np.array_equal(first_two[1].runs[1].test_loss, snapshots[1].runs[1].test_loss)


def test_grid_probability_is_the_network_at_each_grid_point():
    snapshot = train(RaceConfig(**SMALL))
    grid = snapshot.grid
    assert grid.shape == (GRID_POINTS,) and grid[0] == -snapshot.dataset.extent and grid[-1] == snapshot.dataset.extent
    for run, net in zip(snapshot.runs, autograd_race(RaceConfig(**SMALL)).networks, strict=True):
        for row, column in ((0, 59), (12, 3), (59, 0), (30, 30)):
            point = torch.tensor([[grid[column], grid[row]]])  # (x, y): column is x, row is y
            with torch.no_grad():
                want = float(torch.sigmoid(net(point))[0])
            assert float(run.grid_probability[row, column]) == pytest.approx(want, abs=1e-6)
        assert 0.0 <= run.grid_probability.min() and run.grid_probability.max() <= 1.0


@pytest.mark.parametrize("changes, words", [
    (dict(task="moons"), "task"), (dict(optimizer="rmsprop"), "optimizer"), (dict(width=0), "width"),
    (dict(activations=("relu", "swoosh")), "swoosh"), (dict(n_train=101), "even"),
    (dict(learning_rate=0.0), "learning_rate"), (dict(activations=("relu",)), "two"),
    (dict(steps=5001), "steps must be from 1 to 5000"), (dict(width=65), "width"), (dict(noise=-0.1), "noise"),
    (dict(seed=-1), "seed"),
])
def test_config_refuses_what_cannot_run(changes, words):
    with pytest.raises(ValueError, match=words):
        RaceConfig(**changes)


def test_defaults_sit_inside_the_limits():
    defaults = RaceConfig()
    for key, (low, high) in LIMITS.items():
        assert low <= getattr(defaults, key) <= high, key


def test_adam_and_other_activations_race_too():
    snapshot = train(RaceConfig(**{**SMALL, "optimizer": "adam", "learning_rate": 0.01,
                                   "activations": ("leaky_relu", "silu")}))
    assert [run.name for run in snapshot.runs] == ["leaky_relu", "silu"]
    assert [run.label for run in snapshot.runs] == [ACTIVATIONS["leaky_relu"].label, ACTIVATIONS["silu"].label]
    assert all(run.train_loss[-1] < run.train_loss[0] for run in snapshot.runs)


# ---------------------------------------------------------------- the verdict

def finished(accuracy: tuple[float, float], loss: tuple[float, float] = (0.3, 0.2),
             names: tuple[str, str] = ("relu", "gelu")) -> RaceSnapshot:
    """A race's last snapshot with the given final test accuracy and loss, made by hand."""
    runs = tuple(
        RunRecord(name, ACTIVATIONS[name].label, np.array([0, 100]), np.array([0.7, l_]), np.array([0.7, l_]),
                  np.array([0.5, a_]), np.zeros((2, 1), dtype=np.int64), np.zeros((GRID_POINTS, GRID_POINTS)))
        for name, a_, l_ in zip(names, accuracy, loss, strict=True)
    )
    return RaceSnapshot(100, RaceConfig(steps=100, activations=names), None, None, runs)


def test_verdict_names_the_leader_past_the_margin():
    """Reference: the final accuracies and losses the hand-made records end with (the sentence: test_ui_training)."""
    v = verdict(finished((0.80, 0.95), (0.45, 0.12)))
    assert (v.leader, v.accuracy, v.loss, v.margin) == ("gelu", (0.80, 0.95), (0.45, 0.12), ACCURACY_MARGIN)
    v = verdict(finished((0.93, 0.90), (0.2, 0.3)))
    assert v.leader == "relu" and v.accuracy == (0.93, 0.90) and v.loss == (0.2, 0.3)


def test_verdict_calls_a_small_gap_about_the_same():
    assert ACCURACY_MARGIN == 0.02
    v = verdict(finished((0.955, 0.97)))  # 1.5 points: inside the margin
    assert v.leader is None
    assert v.accuracy == (0.955, 0.97) and v.loss == (0.3, 0.2) and v.margin == ACCURACY_MARGIN
    assert verdict(finished((0.955, 0.97)), margin=0.01).leader == "gelu"  # a tighter margin decides
    assert verdict(finished((0.5, 0.5))).leader is None


def test_race_computes_on_one_thread_and_gives_the_count_back(monkeypatch):
    """Reference: torch.get_num_threads() read inside each training step and by the caller between snapshots."""
    from gelu_core import training

    seen, real_step = [], training._Stack.step

    def counted(self):
        seen.append(torch.get_num_threads())
        return real_step(self)

    monkeypatch.setattr(training._Stack, "step", counted)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        between = [torch.get_num_threads() for _ in race(RaceConfig(**{**SMALL, "steps": 40}), yield_every=20)]
        assert set(seen) == {1} and len(seen) == 40  # one stacked step trains both networks
        assert between == [2, 2, 2] and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


# ---------------------------------------------------------------- stacked training

REFERENCE_CASES = [
    dict(SMALL),
    dict(SMALL, task="circle", optimizer="sgd", learning_rate=2.0, width=8, depth=3, seed=1),
    dict(SMALL, activations=("leaky_relu", "silu"), task="xor"),
    dict(SMALL, activations=("gelu_tanh", "gelu_sigmoid"), task="gauss"),
    dict(SMALL, activations=("elu", "softplus"), noise=0.2),
    dict(SMALL, activations=("sigmoid", "tanh"), optimizer="sgd", learning_rate=0.5),
    dict(SMALL, activations=("gelu", "gelu"), width=32, depth=6, steps=40),
    # exact GELU on PyTorch's own kernel (native_gelu) in pieces: widths whose batch is not a whole number of
    # NATIVE_CHUNK floats, sets of points that are not either, a batch that is not, and width 1 (oneDNN stays)
    dict(SMALL, width=3),
    dict(SMALL, width=5, n_train=400, n_test=400),
    dict(SMALL, width=3, batch_size=7),
    dict(SMALL, width=1, depth=1),
    # elementwise kernels whose vectors and tails round differently, on blocks that are not whole vectors
    dict(SMALL, activations=("gelu_sigmoid", "silu"), width=5, batch_size=7),
    dict(SMALL, activations=("gelu_sigmoid", "gelu_sigmoid"), width=5, batch_size=7),  # several kernels, 2 networks
    dict(SMALL, activations=("softplus", "gelu"), width=3, n_train=98, n_test=62),
]


def _case_id(changes: dict) -> str:
    shape = "".join(f"-{k}{changes[k]}" for k in ("width", "batch_size", "n_train")
                    if k in changes and changes[k] != SMALL.get(k))
    return "-".join(changes.get("activations", ("relu", "gelu"))) + shape


@pytest.mark.parametrize("changes", REFERENCE_CASES, ids=_case_id)
def test_stacked_training_is_autograd_and_torch_optim_bit_for_bit(changes):
    """Reference: gelu_core.training.autograd_race, each network its own nn.Module trained by loss.backward() and
    torch.optim (foreach), the readable version of the stack.  Tolerance 0."""
    from gelu_core.training import CURVES

    config = RaceConfig(**changes)
    want = autograd_race(config).curves
    got = train(config)
    for field in CURVES:
        mine = np.stack([getattr(run, field) for run in got.runs])
        assert np.array_equal(mine, want[field].reshape(mine.shape)), field


@pytest.mark.parametrize("shape", [{}, dict(width=5, batch_size=7, n_train=98)], ids=["6x2", "5x2-batch7"])
def test_races_stacked_give_each_race_alone_bit_for_bit(shape):
    """Six races of one shape (other tasks, seeds, noise, activations, learning rates) trained as one stack
    against each trained alone: every curve, grid and weight equal (tolerance 0)."""
    from gelu_core.training import train_many

    configs = [RaceConfig(**{**SMALL, **shape, **c}) for c in (
        dict(seed=1), dict(seed=2, task="circle"), dict(seed=3, activations=("gelu_tanh", "relu")),
        dict(seed=4, learning_rate=0.1, noise=0.2), dict(seed=5, task="xor", activations=("silu", "gelu")),
        dict(seed=6, activations=("gelu_sigmoid", "softplus")))]
    together = train_many(configs)
    for config, stacked in zip(configs, together, strict=True):
        alone = train(config)
        assert stacked.config == config and stacked.step == alone.step
        for x, y in zip(stacked.runs, alone.runs, strict=True):
            assert x.name == y.name
            for field in ("steps", "train_loss", "test_loss", "test_accuracy", "dead_units", "grid_probability"):
                assert np.array_equal(getattr(x, field), getattr(y, field)), field


@pytest.mark.slow  # two fresh pytest processes, each every case again; the two tests above hold this CPU's kernels
@pytest.mark.parametrize("kernels", [
    "ATEN_CPU_CAPABILITY=avx2 MKL_ENABLE_INSTRUCTIONS=AVX2",  # an AVX2 machine's kernels, on any x86 CPU
    "ATEN_CPU_CAPABILITY=default MKL_ENABLE_INSTRUCTIONS=SSE4_2",  # no vector kernels in ATen, the oldest in MKL
])
def test_stacked_training_is_autograd_bit_for_bit_whichever_kernels_the_cpu_picks(kernels):
    """The stack sums and rounds as autograd does by construction, not by the luck of one CPU: a bmm sums in its
    own order on some CPUs and an elementwise kernel's tail rounds otherwise than its vectors.  The two tests
    above (reference: gelu_core.training.autograd_race, and each race alone; tolerance 0), every case, in a fresh
    process whose PyTorch and MKL take other kernels (environment above)."""
    import os
    import subprocess
    import sys

    tests = [f"{__file__}::{test.__name__}" for test in (test_stacked_training_is_autograd_and_torch_optim_bit_for_bit,
                                                        test_races_stacked_give_each_race_alone_bit_for_bit)]
    env = {**os.environ, **dict(pair.split("=") for pair in kernels.split())}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", *tests],
                          env=env, capture_output=True, text=True, timeout=300,
                          cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert done.returncode == 0 and f"{len(REFERENCE_CASES) + 2} passed" in done.stdout, done.stdout[-3000:]


def test_races_of_other_shapes_are_trained_apart():
    from gelu_core.training import train_many

    configs = [RaceConfig(**SMALL), RaceConfig(**{**SMALL, "width": 3}), RaceConfig(**{**SMALL, "seed": 9})]
    out = train_many(configs)
    assert [s.config for s in out] == configs
    assert np.array_equal(out[1].runs[0].test_loss, train(configs[1]).runs[0].test_loss)
