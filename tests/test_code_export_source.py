"""One source for each formula: the code export prints gelu_core's own functions (``ui.code_export.source``),
so a script computes what the page computes, and a change to a formula in gelu_core reaches every script.

Reference: gelu_core itself, on purpose: these tests check that the printed text *is* the core's code (the same
values bit for bit, tolerance 0) and that it follows a change to the registry.  Whether the numbers are right is
checked elsewhere: the core against mpmath (tests/test_activations.py), each script against its page
(tests/test_code_export.py).
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import io
import math

import numpy as np
import pytest
import scipy.special
import torch

import gelu_core
from gelu_core._backend import evaluate
from gelu_core.activations import ACTIVATIONS, GATE_SLOPES, GATES
from ui.code_export import source
from ui.format import fixed
from ui.pages import code_for

GRID = np.concatenate([np.linspace(-30.0, 30.0, 6001), [-1.0, -0.0, 0.0, 1e-300, 1e6]])  # erfc's tail is not reached
NAMESPACE = {"math": math, "np": np, "torch": torch, "erfc": scipy.special.erfc}


def printed(formula, backend: str):
    """The formula as a script prints it, run: a function of x (and the activation's parameters)."""
    namespace = dict(NAMESPACE)
    exec(source(names={"f": formula}, backend=backend), namespace)
    return namespace["f"]


def same(a, b) -> bool:
    a, b = (np.asarray(v.numpy() if isinstance(v, torch.Tensor) else v, dtype=np.float64) for v in (a, b))
    return a.shape == b.shape and np.array_equal(a, b)


@pytest.mark.parametrize("backend", ["torch", "numpy"])
@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_each_printed_formula_computes_what_the_core_computes(name, backend):
    """Each activation and its slope as printed (a GELU form: x * gate and gate + x * gate', from GATES and
    GATE_SLOPES), run on float64 input, equal gelu_core's values bit for bit."""
    a = ACTIVATIONS[name]
    x = torch.tensor(GRID, dtype=torch.float64) if backend == "torch" else GRID.copy()
    params = list(a.params.values())
    if a.approximate:
        gate, slope = printed(GATES[a.approximate], backend), printed(GATE_SLOPES[a.approximate], backend)
        value, derivative = x * gate(x), gate(x) + x * slope(x)
    else:
        value, derivative = printed(a.formula, backend)(x, *params), printed(a.slope_formula, backend)(x, *params)
    assert same(value, a(x)) and same(derivative, a.derivative(x))


def test_the_registry_evaluates_its_formulas():
    """Each entry's fn and grad are its formula and slope_formula (a GELU form: the gate's product and product rule)."""
    for a in ACTIVATIONS.values():
        if a.approximate:
            gate = GATES[a.approximate]
            assert same(a(GRID), evaluate(lambda ops, x, gate=gate: x * gate(ops, x), GRID))
        else:
            assert a.formula and a.slope_formula, a.name
            assert same(a(GRID), evaluate(a.formula, GRID, *a.params.values()))
            assert same(a.derivative(GRID), evaluate(a.slope_formula, GRID, *a.params.values()))


def test_the_printed_modules_are_the_ones_the_core_builds():
    """The lab's and the race's activation modules, as printed, are gelu_core.ffn.activation_module's: same class
    and settings (repr), same output bit for bit."""
    from gelu_core.ffn import activation_module
    from ui.ffn import modules

    for name in ACTIVATIONS:
        listed, own = modules([name])
        namespace = {"torch": torch}
        exec((source(*own) if own else "") + "\nactivations = {\n" + listed + "\n}", namespace)
        [printed_module] = namespace["activations"].values()
        core = activation_module(name)
        h = torch.randn(64, generator=torch.Generator().manual_seed(0)) * 8
        assert repr(printed_module) == repr(core) and torch.equal(printed_module(h), core(h)), name


# ---------------------------------------------------------------- a change in gelu_core reaches the scripts

def _made_up_gate(ops, x):
    """A gate no GELU form has: sigmoid(3x)."""
    return 1.0 / (1.0 + ops.exp(-3.0 * x))


def _made_up_gate_slope(ops, x):
    """Its slope."""
    return 3.0 * ops.exp(-3.0 * x) / ((1.0 + ops.exp(-3.0 * x)) * (1.0 + ops.exp(-3.0 * x)))


def _made_up_silu(ops, x):
    """Not SiLU: x * sigmoid(2x)."""
    return x / (1.0 + ops.exp(-2.0 * x))


def run(code: str) -> str:
    """A script's printed output, run in this process.  What a script sets for the whole process (the race's: one
    torch thread, oneDNN off) is set back after it, so the tests that follow on this worker meet torch as it was:
    oneDNN off moves where float32 GELU's gradient ends (tests/test_training.py) and where it returns 0
    (tests/test_page_approximations.py)."""
    threads, onednn = torch.get_num_threads(), torch.backends.mkldnn.enabled
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code, "<script>", "exec"), {"__name__": "__main__"})
    finally:
        torch.set_num_threads(threads)
        torch.backends.mkldnn.enabled = onednn
    return out.getvalue()


def lines(output: str) -> dict[str, str]:
    return dict(line.rsplit(": ", 1) for line in output.splitlines() if ": " in line)


SEEN = {"curves": {"curves_more": ["silu"]}, "derivative": {"form": "tanh"}, "home": {}, "steps": {}}


def test_a_formula_changed_in_the_registry_reaches_the_scripts(monkeypatch):
    """With the tanh form's gate and slope and SiLU swapped in gelu_core's registry for made-up ones, the Curves,
    Derivative, Home and Step-by-step scripts print the made-up numbers, as gelu_core now computes them."""
    before = {page: code_for(page, values) for page, values in SEEN.items()}
    monkeypatch.setitem(GATES, "tanh", _made_up_gate)
    monkeypatch.setitem(GATE_SLOPES, "tanh", _made_up_gate_slope)
    silu = ACTIVATIONS["silu"]
    monkeypatch.setitem(ACTIVATIONS, "silu", dataclasses.replace(
        silu, fn=lambda x: evaluate(_made_up_silu, x), formula=_made_up_silu))
    x = 1.5
    assert gelu_core.gelu_gate(x, "tanh") == 1.0 / (1.0 + math.exp(-3.0 * x))  # the core computes the made-up gate

    curves = code_for("curves", {"curves_more": ["silu"], "curves_x": x, "curves_points": "1.5"})
    assert "def made_up_silu(x):" in curves and "def tanh_gate" not in curves
    shown = lines(run(curves))
    assert shown["GELU(1.50), tanh"] == fixed(gelu_core.gelu(x, "tanh"))
    assert shown["gate(1.50), tanh"] == fixed(gelu_core.gelu_gate(x, "tanh"))
    assert run(curves).splitlines()[-1].split()[-1] == fixed(ACTIVATIONS["silu"](x))  # the table's SiLU column

    derivative = code_for("derivative", {"derivative_x": x, "form": "tanh"})
    assert lines(run(derivative))["passed back by GELU (tanh)"] == fixed(gelu_core.gelu_grad(x, "tanh"))

    home = run(code_for("home", {"home_x1": x}))
    assert home.splitlines()[1].split()[2:4] == [fixed(gelu_core.gelu_gate(x, "tanh")),
                                                 fixed(gelu_core.gelu(x, "tanh"))]

    steps = lines(run(code_for("steps", {"steps_x": x})))
    assert steps["gate = 0.5 · (1 + tanh(u))"] == f"{gelu_core.gelu_gate(x, 'tanh'):.6f}"

    assert all(code_for(page, values) != before[page] for page, values in SEEN.items())


# ---------------------------------------------------------------- what a page computes with, printed from gelu_core
# Each test swaps one of gelu_core's functions for a made-up one (defined here, so its source is this file's): the
# page's number (through gelu_core) and the script's printed number change together, and the script holds the
# made-up function's text; with the core's own function, the script holds that function's text.

def _made_up_gelu_slope_of(ops, x, gate, gate_slope):
    """Not the product rule: gate(x) + 2 x gate'(x)."""
    return gate(ops, x) + 2.0 * x * gate_slope(ops, x)


def _made_up_unfold(ops, x):
    """Not the tanh formula: its cubic coefficient doubled."""
    cube = x * x * x
    inner = x + 2 * TANH_COEF * cube
    u = SQRT_2_OVER_PI * inner
    gate = 0.5 * (1.0 + math.tanh(u))
    return cube, inner, SQRT_2_OVER_PI, u, math.tanh(u), gate, x * gate


TANH_COEF, SQRT_2_OVER_PI = 0.044715, math.sqrt(2.0 / math.pi)


def printed_def(code: str, name: str) -> str:
    """The text of the function ``name`` in a script."""
    [node] = [n for n in ast.parse(code).body if isinstance(n, ast.FunctionDef) and n.name == name]
    return ast.get_source_segment(code, node)


def test_derivative_prints_the_product_rule_the_page_runs(monkeypatch):
    """Derivative: GELU's slope is gelu_core.activations._gelu_slope_of (what gelu_grad evaluates), printed; made up,
    the page's gradient and the script's follow it."""
    from gelu_core import activations

    values = {"derivative_x": 1.5, "form": "tanh"}
    code = code_for("derivative", values)
    assert "return at_infinity(x, gate(x) + x * gate_slope(x), 0.0, 1.0)" in printed_def(code, "gelu_slope_of")
    monkeypatch.setattr(activations, "_gelu_slope_of", _made_up_gelu_slope_of)
    made_up = code_for("derivative", values)
    assert "2.0 * x * gate_slope(x)" in printed_def(made_up, "gelu_slope_of")
    shown = lines(run(made_up))["passed back by GELU (tanh)"]
    assert shown == fixed(gelu_core.gelu_grad(1.5, "tanh")) != lines(run(code))["passed back by GELU (tanh)"]


def _made_up_difference_at_minus(ops, x, gate):
    """Not the difference taken at -|x|: at x itself, doubled."""
    return 2.0 * x * (gate(ops, x) - 0.5 * ops.erfc(-x / math.sqrt(2.0)))


def test_steps_prints_the_difference_the_page_shows(monkeypatch):
    """Step by step: the difference readout is gelu_core.analysis._difference_at_minus (what approximation_difference
    evaluates), printed; made up, the page's readout (ui.steps.metric_values) and the script's follow it."""
    from gelu_core import analysis
    from ui.steps import metric_values

    label = "difference (tanh − exact)"
    before = lines(run(code_for("steps", {"steps_x": 1.5})))[label]
    assert before == metric_values(1.5, gelu_core.tanh_steps(1.5))[2]
    monkeypatch.setattr(analysis, "_difference_at_minus", _made_up_difference_at_minus)
    after = lines(run(code_for("steps", {"steps_x": 1.5})))[label]
    assert after == metric_values(1.5, gelu_core.tanh_steps(1.5))[2] != before


def test_steps_prints_the_operations_the_page_runs(monkeypatch):
    """Step by step: the seven operations are gelu_core.steps._unfold (what tanh_steps evaluates), printed; made
    up, the page's values and the script's follow them, every digit."""
    from gelu_core import steps

    values = {"steps_x": 1.5, "steps_full": True}
    assert "t = math.tanh(u)" in printed_def(code_for("steps", values), "unfold")
    monkeypatch.setattr(steps, "_unfold", _made_up_unfold)
    made_up = code_for("steps", values)
    assert "2 * TANH_COEF * cube" in printed_def(made_up, "unfold")
    shown = lines(run(made_up))
    assert [shown[s.label] for s in steps.tanh_steps(1.5)] == [f"{s.value:.6f}  {s.value!r}" for s in
                                                                 steps.tanh_steps(1.5)]
    assert steps.tanh_steps(1.5)[1].value == 1.5 + 2 * TANH_COEF * 1.5 ** 3  # the page computes the made-up formula


def _made_up_input_sides(h):
    """Not the lab's: h < 0 counted twice."""
    return 2 * int(torch.count_nonzero(h < 0)), float(-h.clamp(max=0.0).sum()), float(h.clamp(min=0.0).sum())


def _made_up_output_sides(h, y):
    """Not the lab's: the positive side's signal doubled."""
    negative = h < 0
    on_negative = y * negative
    zeroed = int(torch.count_nonzero(negative)) - int(torch.count_nonzero(on_negative))
    return zeroed, float(on_negative.abs().sum()), 2.0 * float((y - on_negative).sum())


def _made_up_backward_chunk(c_proj, act, h, y, n_outputs):
    """Not the lab's backward step: L = mean(y²), twice the lab's, and its dL/dh."""
    upstream = (2.0 * y / n_outputs) @ c_proj.weight
    with torch.enable_grad():
        h = h.detach().clone().requires_grad_()
        (grad_h,) = torch.autograd.grad(act(h), h, grad_outputs=upstream)
    return float(y.square().sum(dtype=torch.float64)) / n_outputs, grad_h


def lab_sections(output: str) -> dict[str, dict[str, str]]:
    """The lab script's indented ``label: value`` lines under each activation's name."""
    sections, name = {}, None
    for line in output.splitlines():
        if line.startswith("  "):
            label, _, value = line.strip().rpartition(": ")
            sections.setdefault(name, {})[label] = value
        else:
            name = line
    return sections


def test_lab_prints_the_statistics_and_the_backward_step_the_page_runs(monkeypatch):
    """Feed-forward lab: the forward's statistics (gelu_core.lab._input_sides, _output_sides) and the backward step
    (gelu_core.gradients.backward_chunk) are the functions run_lab calls, printed; made up, the page's numbers
    (run_lab, as the page calls it) and the script's follow them."""
    from gelu_core import gradients, lab
    from ui.format import count, share, sig

    values = {"ffn_d_model": 8, "ffn_seed": 3, "ffn_act": "gelu", "ffn_vs": "relu"}

    def page_and_script():
        result = lab.run_lab(lab.FeedForward(8, seed=3), lab.demo_input(8, 3), "gelu", "relu", backward=True)
        sections = lab_sections(run(code_for("ffn", values)))
        return result, sections["GELU exact"], sections["ReLU"]

    result, gelu, relu = page_and_script()
    assert gelu["positive signal kept"] == share(result.a.positive_kept)
    assert relu["h < 0 set to exactly 0"] == f"{count(result.b.zeroed)} of {count(result.negative_count)}"
    assert gelu["L = ½ · mean(y²)"] == sig(result.backward.a.loss)
    before = (gelu["positive signal kept"], relu["h < 0 set to exactly 0"], gelu["L = ½ · mean(y²)"])

    monkeypatch.setattr(lab, "_input_sides", _made_up_input_sides)
    monkeypatch.setattr(lab, "_output_sides", _made_up_output_sides)
    monkeypatch.setattr(gradients, "backward_chunk", _made_up_backward_chunk)
    code = code_for("ffn", values)
    assert "def backward(" in code and "2.0 * y / n_outputs" in code and "2 * int(torch.count_nonzero(h < 0))" in code
    result, gelu, relu = page_and_script()
    after = (gelu["positive signal kept"], relu["h < 0 set to exactly 0"], gelu["L = ½ · mean(y²)"])
    assert after == (share(result.a.positive_kept), f"{count(result.b.zeroed)} of {count(result.negative_count)}",
                     sig(result.backward.a.loss))
    assert all(a != b for a, b in zip(after, before, strict=True))


def _made_up_split(task, n, noise, rng):
    """Not the race's points: class 1's points are class 0's, mirrored through the origin."""
    import numpy as np

    half = rng.uniform(-1.0, 1.0, (n // 2, 2))
    points = np.concatenate([half, -half]) + noise * rng.standard_normal((n, 2))
    return points.astype(np.float32), np.repeat([0.0, 1.0], n // 2).astype(np.float32)


def test_race_prints_the_points_the_network_and_the_dead_units_of_gelu_core(monkeypatch):
    """Training race: the points are gelu_core.training._split (what make_dataset draws with), printed; made up, the
    page's race (training.train, on ui.training.race_config, as the page) and the script's follow them.  The
    network and the dead units are printed as gelu_core.training.Network (the page's RaceNet is one) and
    dead_units, text for text."""
    import inspect

    from gelu_core import training
    from ui.code_export import settings
    from ui.training import CONTROLS as TRAINING
    from ui.training import race_config

    values = {"training_steps": 30, "training_width": 3, "training_depth": 2, "training_task": "gauss"}

    def page_and_script():
        snapshot = training.train(race_config(settings(TRAINING, values)))
        page = {run.label: (f"{100 * run.final_test_accuracy:.1f}% test accuracy, test loss {run.final_test_loss:.3f}, "
                            f"{int(run.dead_units[-1].sum())} of 6 hidden units dead "
                            f"(by layer: {' · '.join(str(n) for n in run.dead_units[-1])})") for run in snapshot.runs}
        return page, dict(line.split(": ", 1) for line in run(code_for("training", values)).splitlines())

    page, script = page_and_script()
    assert script == page
    code = code_for("training", values)
    body = printed_def(code, "dead_units").split('"""')[2]  # after its docstring (cut to the first paragraph)
    assert body == inspect.getsource(training.dead_units).split('"""')[2].rstrip()
    [network] = [n for n in ast.parse(code).body if isinstance(n, ast.ClassDef) and n.name == "Network"]
    assert ast.get_source_segment(code, network) == inspect.getsource(training.Network).rstrip()
    assert issubclass(training.RaceNet, training.Network)

    monkeypatch.setattr(training, "_split", _made_up_split)
    made_up, script = page_and_script()
    assert script == made_up != page
