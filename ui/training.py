"""The training race's figures: loss and accuracy curves, decision regions side by side, dead units over time.

Streamlit-free and torch-free: every builder reads a ``gelu_core.training.RaceSnapshot`` (numpy arrays only)
and returns a figure of plain dicts through ``quick_figure``; each run keeps its activation's house colour.
``verdict_text`` writes the verdict's numbers as the page's sentence.
``race_config`` (torch on its first call) turns the controls' values into the race, for the page and its script.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import plotly.graph_objects as go

from gelu_core.activations import ACTIVATIONS
from ui.code_export import Values, fields, fill, settings, source
from ui.controls import LAB_ACTIVATIONS, Control, PageControls, short_label
from ui.ffn import modules
from ui.format import local
from ui.i18n import N_, _
from ui.lesson import Question
from ui.theme import DASHES, NEUTRAL, base_layout, color, legend_name, quick_figure, rgba

# ---------------------------------------------------------------- the controls (each bound to the URL)

RACE_TASKS = ("spiral", "circle", "xor", "gauss")
LEARNING_RATES = (0.003, 0.01, 0.03, 0.1, 0.3)

CONTROLS = PageControls("training", (
    Control("segmented_control", "training_task", N_("Task"), "spiral",
            dict(options=RACE_TASKS, required=True, help=N_("Two classes of points in the plane, as in TensorFlow "
                                                            "Playground: the network must draw the border."))),
    Control("selectbox", "training_a", N_("First network's activation"), "relu",
            dict(options=LAB_ACTIVATIONS, format_func=short_label)),
    Control("selectbox", "training_b", N_("Second network's activation"), "gelu",
            dict(options=LAB_ACTIVATIONS, format_func=short_label)),
    Control("segmented_control", "training_lr", N_("Learning rate"), 0.03,
            dict(options=LEARNING_RATES, format_func=str, required=True,
                 help=N_("How far each step moves the weights (Adam). Large steps kill ReLU units faster."))),
    Control("slider", "training_steps", N_("Training steps"), 1000, dict(min_value=100, max_value=3000, step=100)),
    Control("slider", "training_width", N_("Units per hidden layer"), 8, dict(min_value=2, max_value=32, step=1)),
    Control("slider", "training_depth", N_("Hidden layers"), 3, dict(min_value=1, max_value=6, step=1)),
    Control("slider", "training_noise", N_("Noise on the points"), 0.05,
            dict(min_value=0.0, max_value=0.3, step=0.01, format="%.2f")),
    Control("number_input", "training_seed", N_("Seed"), 0,
            dict(min_value=0, max_value=2**31 - 1, step=1,
                 help=N_("Same seed: the same points, the same starting weights, the same curves."))),
))


# ---------------------------------------------------------------- the question (predict, then check)

def _truth(form: str) -> tuple[str, str]:
    from gelu_core.training import RaceConfig, train, verdict

    race = train(RaceConfig())
    result = verdict(race)
    right = {"relu": CHOICES[0], None: CHOICES[2]}.get(result.leader, CHOICES[1])
    return right, _("On the default race (spiral, seed 0): {verdict}").format(verdict=verdict_text(race, result))


CHOICES = (N_("ReLU"), N_("GELU"), N_("they do about as well"))
QUESTION = Question(
    N_("Two copies of one network learn the spiral from the same start. Which ends ahead?"),
    CHOICES, _truth,
    hides="the race: its settings, its curves, its regions and its verdict")


# the two classes of points: colours outside the activation palette, so a class is never read as a run
CLASS_COLORS = ("#C8702A", "#5B8DB8")  # class 0 amber, class 1 steel blue: each 3.5:1 or more on both themes
_REGION_ALPHA = 0.55  # how strongly a sure region is tinted; the undecided middle (p = 1/2) is see-through


def race_config(v: Mapping[str, Any]):
    """The race the page's controls ask for, by their short names (``CONTROLS``); the rest of
    ``RaceConfig`` (the optimiser, Adam; the batch size; the points) at its defaults."""
    from gelu_core.training import RaceConfig  # torch: imported when the race's page asks

    return RaceConfig(task=v["task"], activations=(v["a"], v["b"]), width=int(v["width"]), depth=int(v["depth"]),
                      learning_rate=float(v["lr"]), steps=int(v["steps"]), noise=float(v["noise"]), seed=int(v["seed"]))


def _curve(x, y, *, name: str, key: str, group: str, width: float = 3, opacity: float = 1.0,
           dash: str | None = None, hover: str = "%{y:.4g}", customdata=None) -> dict:
    step = _("step %{x}")
    trace = dict(
        type="scatter", x=np.asarray(x).tolist(), y=np.asarray(y, dtype=np.float64).tolist(), mode="lines",
        name=name, meta=f"{group}:{key}", legendgroup=key, opacity=opacity,
        line=dict(color=color(key), width=width, dash=dash or DASHES.get(key, "solid")),  # not by colour alone
        hovertemplate=f"{step}: {hover}<extra>{name}</extra>",
    )
    if customdata is not None:
        trace["customdata"] = customdata
    return trace


def log_ticks(series) -> list[float]:
    """Labels for a log axis over these values: 1, 2 and 5 times each power of ten between their ends.

    Plotly's own ticks on a log axis spanning a decade or two label every minor step (0.1, 9, 8, 7, ...).

    >>> log_ticks([[0.9, 0.3], [0.04]])
    [0.02, 0.05, 0.1, 0.2, 0.5, 1.0]
    >>> log_ticks([[0.62, 0.7]])
    [0.5, 1.0]
    """
    values = np.concatenate([np.ravel(np.asarray(v, dtype=np.float64)) for v in series])
    values = values[np.isfinite(values) & (values > 0)]
    if values.size == 0:
        return []
    low, high = float(values.min()), float(values.max())
    powers = range(int(np.floor(np.log10(low))) - 1, int(np.ceil(np.log10(high))) + 1)
    steps = [float(f"{digit}e{power}") for power in powers for digit in (1, 2, 5)]
    first = max(i for i, t in enumerate(steps) if t <= low)  # one label at or below the lowest value,
    last = min(i for i, t in enumerate(steps) if t >= high)  # one at or above the highest
    return steps[first:last + 1]


def loss_figure(snapshot, *, height: int = 340) -> go.Figure:
    """Cross-entropy of both runs over training, log scale: test loss thick, training loss thin."""
    traces = []
    for run in snapshot.runs:
        traces.append(_curve(run.steps, run.test_loss, name=legend_name(_("{name}: test").format(name=run.label)),
                             key=run.name, group="test"))
        traces.append(_curve(run.steps, run.train_loss,
                             name=legend_name(_("{name}: training").format(name=run.label)), key=run.name,
                             group="train", width=1.5, opacity=0.6, dash="dot"))
    layout = base_layout(_("training step"), _("loss (cross-entropy, log scale)"), height=height)
    layout["yaxis"].update(type="log", tickvals=log_ticks([run.test_loss for run in snapshot.runs]
                                                          + [run.train_loss for run in snapshot.runs]))
    layout["xaxis"]["range"] = [0, snapshot.config.steps]  # the whole race: a live run fills the chart
    return quick_figure(traces, layout)


def dead_units_figure(snapshot, *, height: int = 300) -> go.Figure:
    """Dead hidden units of each run over training (every layer together; the hover splits them by layer).

    A unit is dead when its slope is exactly 0 on every training point: no gradient passes it.
    """
    config = snapshot.config
    total = config.width * config.depth
    traces = []
    for run in snapshot.runs:
        per_layer = np.asarray(run.dead_units)  # (records, depth)
        layers = [" · ".join(str(int(v)) for v in row) for row in per_layer]
        traces.append(_curve(run.steps, per_layer.sum(axis=1), name=run.label, key=run.name, group="dead",
                             hover=_("%{y} dead (by layer: %{customdata})"), customdata=layers))
    layout = base_layout(_("training step"), _("dead units (of {total})").format(total=total), height=height)
    layout["yaxis"].update(range=[-0.5, total + 0.5], rangemode="tozero")
    layout["xaxis"]["range"] = [0, config.steps]
    layout["shapes"] = [dict(type="line", xref="paper", x0=0, x1=1, y0=total, y1=total,
                             line=dict(color=NEUTRAL, width=1, dash="dot"))]
    return quick_figure(traces, layout)


def _points(points: np.ndarray, labels: np.ndarray, label: int, axis: str, *, show_legend: bool) -> dict:
    chosen = np.asarray(points, dtype=np.float32)[np.asarray(labels) == label]  # (n, 2): float32 travels light
    name = _("class {label}").format(label=label)
    return dict(
        type="scatter", x=chosen[:, 0], y=chosen[:, 1], mode="markers",
        name=name, legendgroup=f"class {label}", showlegend=show_legend,
        xaxis=axis.replace("xaxis", "x"), yaxis=axis.replace("xaxis", "y"),
        marker=dict(color=CLASS_COLORS[label], size=5, line=dict(color="white", width=0.5)),
        hovertemplate=f"(%{{x:.2f}}, %{{y:.2f}}): {name}<extra></extra>", meta=f"points:{label}",
    )


def probability_percent(probability: np.ndarray) -> np.ndarray:
    """P(class 1) in whole percent, uint8: a 60 x 60 grid travels as 3,600 bytes.

    >>> probability_percent(np.array([[0.0, 0.494, 0.5, 0.996]], dtype=np.float32)).tolist()
    [[0, 49, 50, 100]]
    """
    return np.rint(100.0 * np.asarray(probability, dtype=np.float64)).astype(np.uint8)


def _percent(share: float) -> str:
    from ui.format import percent_text

    return percent_text(f"{100 * share:.1f}%")


def accuracy_percent(run, record: int = -1) -> str:
    """A run's test accuracy at ``record`` (default: the last) in percent."""
    return _percent(float(run.test_accuracy[record]))


def accuracy_line(run, record: int = -1) -> str:
    """The middle line of a decision region's title, the one the race's film rewrites: "59.0% test"."""
    return _("{accuracy} test").format(accuracy=accuracy_percent(run, record))


def accuracy_title(run, record: int = -1) -> str:
    """A decision region's title: the run's activation over its test accuracy at ``record`` (default: the last),
    on three short lines: two titles side by side each have half of a chart 163 px wide (195 CSS px, a phone at
    200 %), where "59.0% test accuracy" on one line would run into the other."""
    return _("<b>{name}</b><br>{line}<br>accuracy").format(name=run.label, line=accuracy_line(run, record))


def region_scale() -> list:
    """The decision regions' colour scale: class 0's colour at P = 0, see-through at 1/2, class 1's at 1."""
    return [[0.0, rgba(CLASS_COLORS[0], _REGION_ALPHA)], [0.5, "rgba(0,0,0,0)"],
            [1.0, rgba(CLASS_COLORS[1], _REGION_ALPHA)]]


def region_colors() -> list[list[int]]:
    """The colour scale at every whole percent, [r, g, b, alpha] in 0-255: each channel linear between the
    stops, as Plotly's heatmap paints a colour scale (its alpha times 255).

    >>> region_colors()[50], len(region_colors())
    ([0, 0, 0, 0], 101)
    """
    stops = []
    for at, colour in region_scale():
        r, g, b, a = (float(v) for v in colour[colour.index("(") + 1:-1].split(","))
        stops.append((at, (r, g, b, 255 * a)))
    table = []
    for percent in range(101):
        t = percent / 100
        (t0, c0), (t1, c1) = next((lo, hi) for lo, hi in zip(stops, stops[1:], strict=False) if t <= hi[0])
        w = (t - t0) / (t1 - t0)
        table.append([round(u + (v - u) * w) for u, v in zip(c0, c1, strict=True)])
    return table


def decision_regions_figure(snapshot, *, height: int = 380) -> go.Figure:
    """Each run's P(class 1) over the data's square, side by side, with the training points on top and the
    p = 1/2 boundary in the run's colour."""
    grid = np.asarray(snapshot.grid, dtype=np.float32)
    data = snapshot.dataset
    scale = region_scale()
    traces, annotations = [], []
    layout = dict(
        height=height, margin=dict(l=10, r=10, t=64, b=10), paper_bgcolor="rgba(0,0,0,0)",
        plot_bgcolor="rgba(0,0,0,0)", font=base_layout("", "")["font"], dragmode=False, hovermode="closest",
        legend=dict(orientation="h", yanchor="top", y=-0.02, xanchor="left", x=0),
    )
    chance = _("P(class 1)")  # the hover's words for a point's share
    for i, run in enumerate(snapshot.runs):
        suffix = "" if i == 0 else "2"
        x_name, y_name = f"x{suffix}", f"y{suffix}"
        percent = probability_percent(run.grid_probability)  # (G, G), row = y
        traces.append(dict(
            type="heatmap", x=grid, y=grid, z=percent, zmin=0, zmax=100, colorscale=scale,
            showscale=False, xaxis=x_name, yaxis=y_name, meta=f"region:{run.name}", zsmooth="best",
            hovertemplate=f"(%{{x:.2f}}, %{{y:.2f}}): {chance} = %{{z}}%<extra>{run.label}</extra>",
        ))
        traces.append(dict(
            type="contour", x=grid, y=grid, z=percent, xaxis=x_name, yaxis=y_name, showscale=False,
            contours=dict(start=50, end=50, size=1, coloring="none"), hoverinfo="skip",
            line=dict(color=color(run.name), width=3), meta=f"boundary:{run.name}", showlegend=False,
        ))
        for label in (0, 1):
            traces.append(_points(data.train_points, data.train_labels, label, f"xaxis{suffix}",
                                  show_legend=i == 0))
        domain = [0.0, 0.48] if i == 0 else [0.52, 1.0]
        extent = [-data.extent, data.extent]
        layout[f"xaxis{suffix}"] = dict(domain=domain, range=extent, showgrid=False, zeroline=False,
                                        showticklabels=False, constrain="domain")
        layout[f"yaxis{suffix}"] = dict(range=extent, showgrid=False, zeroline=False, showticklabels=False,
                                        scaleanchor=x_name, anchor=x_name)
        # centred over its square, on three short lines in 12 px type: side by side on a phone at 200 % each has
        # about 80 px (a label's line, the widest, reaches into the gap between the squares)
        annotations.append(dict(text=accuracy_title(run), x=sum(domain) / 2, y=1.0, xref="paper",
                                yref="paper", xanchor="center", yanchor="bottom", showarrow=False,
                                font=dict(color=color(run.name), size=12)))
    layout["annotations"] = annotations
    return quick_figure(traces, layout)


def verdict_text(snapshot, verdict) -> str:
    """The verdict (``gelu_core.training.verdict``) in one sentence: both accuracies and both test losses,
    whoever leads."""
    runs, accuracy, loss = snapshot.runs, verdict.accuracy, verdict.loss
    if verdict.leader is not None:
        i = int(accuracy[1] > accuracy[0])  # the run ahead
        j = 1 - i
        return _("{name} ahead: {accuracy} vs {other} test accuracy (test loss {loss} vs {other_loss}).").format(
            name=runs[i].label, accuracy=_percent(accuracy[i]), other=_percent(accuracy[j]),
            loss=local(f"{loss[i]:.3f}"), other_loss=local(f"{loss[j]:.3f}"))
    return _("About the same: test accuracy {first} ({first_name}) vs {second} ({second_name}), within {margin} points "
             "(test loss {first_loss} vs {second_loss}).").format(
        first=_percent(accuracy[0]), first_name=runs[0].label, second=_percent(accuracy[1]),
        second_name=runs[1].label, margin=f"{100 * verdict.margin:.0f}", first_loss=local(f"{loss[0]:.3f}"),
        second_loss=local(f"{loss[1]:.3f}"))


def race_notes(snapshot, verdict) -> str:
    """What the finished race says, from its numbers: the dead units each run ended with, and an honest word
    when the two did about as well."""
    config = snapshot.config
    total = config.width * config.depth
    dead = [int(np.asarray(run.dead_units)[-1].sum()) for run in snapshot.runs]
    (first, second), (first_dead, second_dead) = snapshot.runs, dead
    parts = [_("{first} ended with {first_dead} of {total} hidden units dead and {second} ended with {second_dead} of "
               "{total} hidden units dead.").format(first=first.label, first_dead=first_dead, second=second.label,
                                                    second_dead=second_dead, total=total)]
    if verdict.leader is None:
        parts.append(_("On this task the activation made no measurable difference: both learned it."))
    elif any(dead):
        parts.append(_("A dead unit passes no gradient back, so the weights feeding it stopped learning."))
    names = {run.name for run in snapshot.runs}
    if verdict.leader is not None and "relu" in names and names & {"gelu", "gelu_tanh"}:
        parts.append(_("How much of the gap is dead units, and how much is GELU's smooth curve? Race Leaky ReLU, "
                       "which never has dead units, against GELU."))
    return " ".join(parts)


# ---------------------------------------------------------------- the code for this view
# The training race's script: the race's points, two copies of one network with the same seeded weights, the same
# mini-batches and Adam, and what the page reports at the finish: test accuracy, test loss and dead units per run.
#
# What it computes with is gelu_core's own code, printed: the points (``training._split``, which ``make_dataset``
# draws each set with), the network (``training.Network``, the page's ``RaceNet`` around its activation module, with
# its seeded weights) and the dead units (``training.dead_units``).  The training loop is the template's: the page
# trains both networks (and a class's races) stacked, its backward and Adam's update written out in one
# computation (``training._Stack``), which is no code for a notebook; the script trains each network with autograd
# and ``torch.optim.Adam``, what the stack is tested to match bit for bit (tests/test_training.py), one torch
# thread, and (where the page's race does) exact GELU by PyTorch's own kernel, not oneDNN's.  The page also
# records curves every ten steps; recording changes nothing in training, so the script measures once, at the end.

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
    for _step in range(config["steps"]):
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


def code(values: Values) -> str:
    from gelu_core import training  # torch: imported when the race's page asks

    race = race_config(settings(CONTROLS, values))  # as the page builds it
    listed, own = modules(race.activations, "label")
    first, second = (ACTIVATIONS[name].label for name in race.activations)
    kernel = (KERNEL_LINE + "\n") if training.native_gelu(race) else ""
    return fill(TEMPLATE, first=first, second=second, config=fields(race, FIELDS), modules=listed, kernel=kernel,
                code=source(*own, names={"split": training._split, "Network": training.Network,
                                         "dead_units": training.dead_units}))
