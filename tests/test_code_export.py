"""The code behind each view: every page's "Code for this view" script, run on its own, prints the page's numbers.

Reference: the page itself, opened in AppTest with the same URL values; the script is the one in its
"Code for this view" expander (so the wiring is tested too).  Each script runs in a separate Python process
from an empty folder, where neither gelu_core nor ui can be imported.  Tolerance: none: every number is
compared as the text the page shows (metrics, captions, markdown tables), or for a dataframe, as its column
format (``%.4f``, ``%.4e``) writes the value the page holds.  The explorer pages' scripts run together, each
in a fresh namespace of one process (one torch import for all); the lab's and the race's each in a process
of its own, as a student runs them.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest
import torch

from tests.conftest import ROOT, chart_spec, metrics, show_me, sweep
from ui.approximations import APPROXIMATIONS_VIEWS
from ui.curves import OVERLAYS
from ui.pages import EXPORTS, PAGES, code_for

TIMEOUT = 120  # seconds for one process of scripts
REPOSITORY = ("gelu_core", "ui", "hosting", "harness", "tests", "app")

# Runs each script (a JSON list on stdin) in a fresh namespace and prints their outputs as JSON, with the names
# of any of this repository's packages (its arguments) that got imported: there must be none.
RUNNER = """
import contextlib, io, json, sys
outputs = []
for code in json.load(sys.stdin):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<script>", "exec"), {"__name__": "__main__"})
    outputs.append(out.getvalue())
leaked = sorted(m for m in sys.modules if m.split(".")[0] in sys.argv[1:])
print(json.dumps({"outputs": outputs, "leaked": leaked}))
"""


def _environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}


def run_scripts(codes: list[str], folder, timeout: float = TIMEOUT) -> list[str]:
    """Each script's printed output, all run in one fresh ``python -I`` process in ``folder``."""
    done = subprocess.run([sys.executable, "-I", "-c", RUNNER, *REPOSITORY], input=json.dumps(codes),
                          capture_output=True, text=True, cwd=folder, env=_environment(), timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["leaked"] == [], result["leaked"]
    return result["outputs"]


def run_script(code: str, folder) -> str:
    """A script's printed output, run as a student would: ``python -c`` in ``folder``."""
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, cwd=folder,
                          env=_environment(), timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def open_view(page: str, query: dict, upload: tuple[str, str, bytes] | None = None):
    """A fresh AppTest of app.py at ``pages/<page>.py`` with these URL values (and a file in an uploader, by key)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    for key, value in query.items():
        at.query_params[key] = value
    at.switch_page(f"pages/{page}.py")
    at.session_state["code_open"] = True  # the expander, opened: its script is built only then
    show_me(at.run())  # the view's script prints its numbers: it waits, as they do, for the student's answer
    if upload is not None:
        key, name, data = upload
        at.file_uploader(key=key).set_value((name, data, "application/octet-stream")).run()
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    return at


def view_code(at) -> str:
    """The script in the page's "Code for this view" expander."""
    [expander] = [e for e in at.expander if e.label == "Code for this view"]
    [code] = expander.code
    return code.value


def printed(output: str) -> dict[str, str]:
    """``label: value`` lines of a script's output, label -> value (the label may hold ": " itself)."""
    pairs = (line.rpartition(": ") for line in output.splitlines() if ": " in line and not line.startswith(" "))
    return {label: value for label, _, value in pairs}


def printed_table(output: str, header: str) -> tuple[list[str], list[list[str]]]:
    """The table a script prints under a line that starts with ``header``: column names and rows of cells."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith(header))
    columns = re.split(r"\s{2,}", lines[start].strip())
    rows = [line.split() for line in lines[start + 1:] if line.strip() and ": " not in line]
    return columns, rows


def shown_table(frame, formats: dict[str, str] | None = None, default: str = "{:.4f}") -> list[list[str]]:
    """A dataframe's cells as its column formats write them (``%.4f`` unless ``formats`` says otherwise)."""
    formats = formats or {}
    return [[formats.get(column, default).format(value) for column, value in zip(frame.columns, row, strict=True)]
            for row in frame.itertuples(index=False)]


def merged(frames):
    """The page's tables of one set of points side by side (each holds x first, then a few columns, so a phone
    can show it): one frame with x once and every other column in the page's order."""
    import pandas as pd

    first, *rest = frames
    return pd.concat([first] + [f.drop(columns="x") for f in rest], axis=1)


def by_column(columns: list[str], rows: list[list[str]]) -> dict[str, list[str]]:
    return {name: [row[i] for row in rows] for i, name in enumerate(columns)}


# ---------------------------------------------------------------- every page

CHOICES = ("segmented_control", "selectbox", "radio", "pills", "tabs")


def control_values(c) -> list:
    """Values a control takes, for a test: its default and both ends (a number or a range), each option (a choice),
    none, the default and all (several choices), off and on (a toggle), the default (text)."""
    if c.widget in ("slider", "number_input"):
        lo, hi = c.options["min_value"], c.options["max_value"]
        if isinstance(c.default, (tuple, list)):
            return [tuple(c.default), (lo, hi), (lo, lo)]
        return [c.default, lo, hi]
    if c.widget in CHOICES:
        return list(c.options["options"])
    if c.widget == "multiselect":
        return [[], list(c.default), list(c.options["options"])]
    if c.widget == "toggle":
        return [False, True]
    return [c.default]


def moved(c):
    """A control off its default, for one cheap run of every page: a number at its minimum (the smallest block,
    the shortest race), a toggle flipped, every option of several; a range and a single choice stay (a lab's
    weights or input may then ask for a file)."""
    if c.widget in ("slider", "number_input") and not isinstance(c.default, (tuple, list)):
        return c.options["min_value"]
    if c.widget == "toggle":
        return not c.default
    if c.widget == "multiselect":
        return list(c.options["options"])
    return c.default


def url_value(c, value) -> str | list[str]:
    """A control's value as a link writes it."""
    shown = c.options.get("format_func", str)
    if c.widget == "multiselect":
        return [shown(v) for v in value] or [""]
    if isinstance(value, (tuple, list)):
        return [str(v) for v in value]
    if isinstance(value, bool):
        return str(value).lower()
    return shown(value) if c.widget in CHOICES else str(value)


def generated(page: str, key: str | None = None) -> list[dict]:
    """The page's controls (from its row in ui.pages; or the one of this key), each at each of its control_values
    in turn, the others at their defaults: control values by key."""
    return [{c.key: value} for c in PAGES[page].controls if c.bound and key in (None, c.key)
            for value in control_values(c)]


# Values that take each template's branches together (a key left out is the control's default); generated()
# takes each control alone
BRANCHES = {
    "curves": [{"form": "none", "curves_more": list(OVERLAYS)}],
    "approximations": [{"approximations_view": APPROXIMATIONS_VIEWS[1], "form": "tanh"},
                       {"approximations_view": APPROXIMATIONS_VIEWS[1], "approximations_fw_dtypes": []}],
    "ffn": [{"ffn_backward": False, "ffn_act": "gelu_sigmoid", "ffn_vs": "gelu_sigmoid"},
            {"ffn_weights": "File", "ffn_input": "Upload"}],
    "training": [{"training_a": "gelu_tanh", "training_b": "gelu_tanh"}],  # the longest labels in the docstring
}


def test_every_page_with_controls_has_a_script():
    """A page whose row in ui.pages declares controls also names the script behind its view; a page without a
    script gets None."""
    assert [p.url_path for p in PAGES.values() if p.controls and not p.code] == []
    assert set(EXPORTS) == {p.url_path for p in PAGES.values() if p.controls} and set(BRANCHES) <= set(EXPORTS)
    assert code_for("nowhere", {}) is None


def test_every_script_passes_the_house_lint(tmp_path):
    """Each page's script with every control at each of its values (generated from the page's row), and the
    branches taken together, is ruff-clean under pyproject.toml's rules (the scripts are code a learner reads)."""
    pytest.importorskip("ruff")
    for page in EXPORTS:
        for i, values in enumerate([{}, *generated(page), *BRANCHES.get(page, [])]):
            (tmp_path / f"{page}_{i}.py").write_text(code_for(page, values))
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--config",
                           str(ROOT / "pyproject.toml"), "."], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:]


def check_metrics_printed(page: str, queries: list[dict], folder) -> None:
    """For each query (control values by key): the page opened with it in AppTest, its script run; every metric
    the page shows is printed as ``label: value`` (the value perhaps followed by more: a delta, a place).  A
    script that reads a student's file (``..._FILE = ``) is not run: the page has no file either."""
    by_key = {c.key: c for c in PAGES[page].controls}
    views = [open_view(page, {key: url_value(by_key[key], value) for key, value in query.items()})
             for query in queries]
    codes = [view_code(at) for at in views]
    runnable = [i for i, code in enumerate(codes) if not re.search(r"^\w+_FILE = ", code, re.M)]
    outputs = dict(zip(runnable, run_scripts([codes[i] for i in runnable], folder, TIMEOUT * max(1, len(runnable))),
                       strict=True))
    for i, at in enumerate(views):
        shown = {label.replace("\xa0", " "): value for label, value in metrics(at).items()}
        if i in outputs:
            lines = printed(outputs[i])
            assert all(lines.get(label, "").startswith(value) for label, value in shown.items()), (queries[i], shown)


@pytest.mark.parametrize("page", list(EXPORTS))
def test_each_pages_script_prints_its_metrics_with_every_control_moved(tmp_path, page):
    """Every control of the page (its row in ui.pages) moved off its default at once (``moved``): the script
    prints each metric the page shows, label and value; a new page is covered with no case to add."""
    check_metrics_printed(page, [{c.key: moved(c) for c in PAGES[page].controls if c.bound}], tmp_path)


@pytest.mark.slow  # every control at each of its values
@pytest.mark.parametrize("page,key", [(p, c.key) for p in EXPORTS for c in PAGES[p].controls if c.bound])
def test_each_pages_script_prints_its_metrics_at_every_controls_values(tmp_path, page, key):
    """Each control of each page at each of its control_values in turn: the script prints each metric the page
    shows."""
    check_metrics_printed(page, generated(page, key), tmp_path)


def test_unknown_or_unusable_values_fall_back_to_the_defaults():
    """A key left out, a key of another page, None, or an option the control does not offer: the default."""
    default = code_for("curves", {})
    assert code_for("curves", {"form": "cubic", "curves_x": None, "gate_x": 3.0}) == default
    assert code_for("curves", {"curves_more": ["bogus"]}) == default
    assert code_for("ffn", {"ffn_act": "swish", "ffn_demo": "3x3"}) == code_for("ffn", {})


# ---------------------------------------------------------------- Home

HOME_CASES = [{}, {"home_x1": "-20", "home_x2": "-5.5", "home_x3": "0.5", "home_x5": "20"}]


def test_home_prints_the_five_inputs_table(tmp_path):
    """The table, every cell to its four decimals; and a typo in the tanh constant (0.04715) changes a digit."""
    views = [open_view("home", query) for query in HOME_CASES]
    codes = [view_code(at) for at in views]
    typo = codes[0].replace("0.044715", "0.04715")
    assert typo != codes[0]
    outputs = run_scripts(codes + [typo], tmp_path)
    for at, output in zip(views, outputs, strict=False):
        table = at.table[0].value  # the cells as the page writes them
        columns, rows = printed_table(output, "x")
        assert columns == list(table.columns)
        assert rows == [list(row) for row in table.itertuples(index=False)]
    assert printed_table(outputs[-1], "x")[1] != [list(row) for row in views[0].table[0].value.itertuples(index=False)]


# ---------------------------------------------------------------- The gate

GATE_CASES = [{}, {"gate_x": "-3.9", "gate_mu": "0.5", "gate_sigma": "0.3"}, {"gate_x": "2.5", "gate_sigma": "0"},
              {"gate_x": "-0.7", "gate_mu": "-2", "gate_sigma": "3"}]


def test_gate_prints_the_cards_the_readouts_and_the_gap(tmp_path):
    """Every metric on the page (bouncer cards, gate, GELU and ReLU at x, largest gap), label and value.  The page
    holds the gap's range "-3 … 3" together with no-break spaces (a phone's narrow column broke it after the
    ellipsis); the script prints plain ones."""
    views = [open_view("gate", query) for query in GATE_CASES]
    outputs = run_scripts([view_code(at) for at in views], tmp_path)
    for at, output in zip(views, outputs, strict=True):
        assert printed(output) == {label.replace("\xa0", " "): value for label, value in metrics(at).items()}


# ---------------------------------------------------------------- Curves

CURVES_CASES = [
    {},
    {"curves_x": "-10", "form": "exact", "curves_more": ["Sigmoid", "Tanh", "SiLU", "Softplus", "GELU tanh"],
     "curves_points": "-1e6, -12.5, -3, 0, 0.25, 7, 1e6"},
    {"curves_x": "0.37", "form": "sigmoid", "curves_more": ["Leaky ReLU", "ELU", "GELU exact"],
     "curves_slope": "0.3", "curves_alpha": "2.5", "curves_points": "-2; -0.5 1.5"},
]


def test_curves_prints_the_probe_and_the_values_table(tmp_path):
    """The probe's three readouts; the table's columns (overlays with their parameters) and every cell."""
    views = [open_view("curves", query) for query in CURVES_CASES]
    outputs = run_scripts([view_code(at) for at in views], tmp_path)
    for at, output in zip(views, outputs, strict=True):
        assert printed(output) == metrics(at)
        frame = merged([d.value for d in at.dataframe])
        columns, rows = printed_table(output, "x ")
        assert columns == list(frame.columns)
        assert rows == shown_table(frame)


# ---------------------------------------------------------------- Derivative

DERIVATIVE_CASES = [{}, {"form": "tanh", "derivative_x": "0.3", "derivative_nudge": "0.7"},
                    {"form": "sigmoid", "derivative_x": "-4", "derivative_nudge": "0.001"},
                    {"form": "exact", "derivative_x": "1.4", "derivative_nudge": "1"}]


def test_slopes_prints_the_gradient_the_nudge_and_the_landmarks(tmp_path):
    """Each metric's label and value (and the nudge's delta); each landmark's place as its caption writes it."""
    views = [open_view("derivative", query) for query in DERIVATIVE_CASES]
    outputs = run_scripts([view_code(at) for at in views], tmp_path)
    for at, output in zip(views, outputs, strict=True):
        shown = {m.label: (m.value, m.proto.delta) for m in at.metric}
        captions = " ".join(c.value for c in at.caption)
        lines = printed(output)
        assert set(lines) == set(shown)
        for label, text in lines.items():
            value, delta = shown[label]
            if delta:
                assert text == f"{value} ({delta})"
            else:
                assert text.split(" at x = ")[0] == value
            if " at x = " in text:
                assert "at x = " + text.split(" at x = ")[1] in captions


# ---------------------------------------------------------------- Step by step

STEPS_CASES = [{}, {"steps_x": "-9.5", "steps_full": "true"}, {"steps_x": "0.123456789", "steps_full": "true"},
               {"steps_x": "-1.7", "steps_full": "true"},  # where math.exp, not numpy's, would change the last digit
               {"steps_x": "7.5"}, {"steps_x": "-3.75"}]


def test_steps_prints_the_seven_lines_and_the_readouts(tmp_path):
    """The seven values to six decimals and, with the toggle on, every float64 digit; the three readouts."""
    views = [open_view("steps", query) for query in STEPS_CASES]
    outputs = run_scripts([view_code(at) for at in views], tmp_path)
    for at, output in zip(views, outputs, strict=True):
        table = at.table[0].value
        lines = printed(output)
        labels = [cell.split("**")[1] for cell in table["step"]]  # each cell: the step's name (bold) over what it does
        assert [lines[label].split()[0] for label in labels] == table["value"].tolist()
        if len(at.table) > 1:  # "Show every digit": a table of its own
            digits = at.table[1].value
            assert [lines[label].split()[1] for label in digits["step"]] == digits["full precision"].tolist()
        assert {label: lines[label] for label in metrics(at)} == metrics(at)


# ---------------------------------------------------------------- Approximations

def test_approximations_prints_the_largest_errors(tmp_path):
    """Three forms: each largest error as the metric shows it, and its place as the caption writes it (whatever
    the range: the metrics do not follow it)."""
    views = [open_view("approximations", query) for query in ({}, {"approximations_range": ["-12", "2"]})]
    outputs = run_scripts([view_code(at) for at in views], tmp_path)
    for at, output in zip(views, outputs, strict=True):
        captions = " ".join(c.value for c in at.caption)
        for label, text in printed(output).items():
            value, _, where = text.partition(" at x = ")
            assert metrics(at)[label] == value and f"at x = {where}" in captions
        assert set(printed(output)) == set(metrics(at))


APPROX_TORCH_CASES = [{}, {"form": "tanh",
                           "approximations_fw_dtypes": ["float16", "float32", "bfloat16"]},
                      {"approximations_fw_dtypes": ["float16"], "approximations_fw_range": ["-8", "-2"]}]


def test_approximations_prints_what_pytorch_returns(tmp_path):
    """What PyTorch computes: the digits table, its columns and every cell as ``%.4e`` (x as ``%.1f``)."""
    views = [open_view("approximations", {"approximations_view": "What PyTorch computes", **q})
             for q in APPROX_TORCH_CASES]
    outputs = run_scripts([view_code(at) for at in views], tmp_path)
    for at, output in zip(views, outputs, strict=True):
        frame = merged([d.value for d in at.dataframe[1:]])  # after the limits table: the digits, a table per dtype
        columns, rows = printed_table(output, "x ")
        assert by_column(columns, rows) == by_column(list(frame.columns),
                                                     shown_table(frame, {"x": "{:.1f}"}, default="{:.4e}"))


# ---------------------------------------------------------------- Feed-forward lab

def markdown_tables(at) -> dict[str, dict[str, str]]:
    """The page's markdown tables merged: activation -> row label -> cell."""
    cells: dict[str, dict[str, str]] = {}
    for block in (m.value for m in at.markdown if m.value.startswith("| |")):
        lines = [[c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line)[1:-1]]
                 for line in block.splitlines()]
        names = lines[0][1:]
        for row in lines[2:]:
            for name, cell in zip(names, row[1:], strict=True):
                cells.setdefault(name, {})[row[0]] = cell
    return cells


def printed_sections(output: str) -> dict[str, dict[str, str]]:
    """Indented ``label: value`` lines under an unindented name: name -> label -> value (sections merge)."""
    sections: dict[str, dict[str, str]] = {}
    name = None
    for line in output.splitlines():
        if not line.startswith(" "):
            name = line
        else:
            label, _, value = line.strip().rpartition(": ")
            sections.setdefault(name, {})[label] = value
    return sections


def check_lab(at, output: str) -> None:
    """Every metric of the lab, and every cell of its tables (forward, and backward when on)."""
    assert printed(output) == metrics(at)
    assert printed_sections(output) == markdown_tables(at)


def npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


@pytest.mark.parametrize("query", sweep([
    {},  # GPT-2 small's block, seed 0, the (2, 3) demo, GELU tanh vs ReLU, backwards on
    {"ffn_d_model": "8", "ffn_seed": "3", "ffn_act": "GELU exact", "ffn_vs": "SiLU", "ffn_demo": "1x16",
     "ffn_backward": "false"},
    {"ffn_d_model": "16", "ffn_seed": "2147483647", "ffn_act": "GELU sigmoid", "ffn_vs": "GELU sigmoid"},
], ["defaults", "d8-seed3-no-backward", "same-activation-largest-seed"], kept=[0]))  # the default run: the defaults
def test_lab_prints_the_seeded_blocks_numbers(tmp_path, query):
    """Seeded weights and demo input drawn as gelu_core draws them: the page's numbers, digit for digit."""
    at = open_view("ffn", query)
    if query.get("ffn_backward") == "false":  # the link's first run already leaves the backward pass out
        assert not [m for m in at.metric if "gradient exactly 0" in m.label]
    check_lab(at, run_script(view_code(at), tmp_path))


def test_lab_prints_an_uploaded_files_numbers(tmp_path):
    """An uploaded (4, 8) .npy through a d_model = 8 block, seed 5: the script reads the file it names at its top."""
    x = np.random.default_rng(1).standard_normal((4, 8))  # float64: the page and the script both round to float32
    at = open_view("ffn", {"ffn_d_model": "8", "ffn_seed": "5", "ffn_input": "Upload", "ffn_act": "ReLU",
                           "ffn_vs": "Leaky ReLU"}, upload=("ffn_file", "mine.npy", npy_bytes(x)))
    code = view_code(at)
    assert 'INPUT_FILE = "activations.npy"' in code
    (tmp_path / "activations.npy").write_bytes(npy_bytes(x))
    check_lab(at, run_script(code, tmp_path))


def test_lab_prints_the_numbers_of_gpt2_weights_from_a_file(tmp_path):
    """GPT-2's Conv1D layout (in, out) in a .pt, d_model 6: the script transposes it as the page does."""
    generator = torch.Generator().manual_seed(7)
    shapes = {"c_fc.weight": (6, 24), "c_fc.bias": (24,), "c_proj.weight": (24, 6), "c_proj.bias": (6,)}
    state = {name: torch.randn(shape, generator=generator) for name, shape in shapes.items()}
    buffer = io.BytesIO()
    torch.save(state, buffer)
    at = open_view("ffn", {"ffn_weights": "File"}, upload=("ffn_weights_file", "gpt2.pt", buffer.getvalue()))
    (tmp_path / "weights.pt").write_bytes(buffer.getvalue())
    check_lab(at, run_script(view_code(at), tmp_path))


# ---------------------------------------------------------------- Training race

def race_lines(output: str) -> dict[str, str]:
    """The race script's ``label: numbers`` lines (the numbers hold ": " themselves)."""
    return dict(line.split(": ", 1) for line in output.splitlines())


def race_numbers(at) -> dict[str, str]:
    """What the finished race shows per run: test accuracy (the regions chart's titles), test loss (the loss
    chart's last point, to the verdict's three decimals) and dead units per layer (the dead-units chart)."""
    regions, losses, dead = (chart_spec(at, i) for i in range(3))
    accuracy = dict(re.fullmatch(r"<b>(.*)</b><br>(.*) test<br>accuracy", a["text"]).groups()
                    for a in regions["layout"]["annotations"])
    total = at.slider(key="training_width").value * at.slider(key="training_depth").value
    shown = {}
    for trace in dead["data"]:
        name = trace["name"]
        [loss] = [t["y"][-1] for t in losses["data"] if t["name"].replace("<br>", " ") == f"{name}: test"]
        layers = trace["customdata"][-1]
        shown[name] = (f"{accuracy[name]} test accuracy, test loss {loss:.3f}, "
                       f"{sum(int(n) for n in layers.split(' · '))} of {total} hidden units dead (by layer: {layers})")
    return shown


SMALL_RACE = {"training_steps": "200", "training_width": "4", "training_depth": "2"}


@pytest.mark.parametrize("query", sweep([
    SMALL_RACE,
    {**SMALL_RACE, "training_task": "circle", "training_lr": "0.1", "training_seed": "1"},  # ReLU units die
    {**SMALL_RACE, "training_task": "xor", "training_a": "Leaky ReLU", "training_b": "GELU tanh", "training_seed": "3",
     "training_noise": "0.3", "training_lr": "0.3", "training_steps": "100"},
    {"training_task": "gauss", "training_a": "GELU sigmoid", "training_b": "SiLU", "training_steps": "100",
     "training_width": "2", "training_depth": "6", "training_seed": "2147483647"},
], ["small", "circle-dying", "xor-noisy", "gauss-deep"], kept=[0]))  # the default run: the small race
def test_race_prints_each_runs_finish(tmp_path, query):
    """The script trains as the page does (same draws, same order, one thread): each run's test accuracy, test
    loss and dead units per layer as the page shows them, and the dead units as its closing note counts them."""
    at = open_view("training", query)
    assert race_lines(run_script(view_code(at), tmp_path)) == race_numbers(at)
    notes = " ".join(c.value for c in at.caption)
    for name, text in race_numbers(at).items():
        assert f"{name} ended with {text.split(', ')[-1].split(' (')[0]}" in notes


@pytest.mark.slow  # the default race, 10 to 20 s
def test_the_default_race(tmp_path):
    """The race a student meets first: spiral, ReLU against exact GELU, 8 x 3 units, 1000 steps of Adam at 0.03."""
    at = open_view("training", {})
    assert race_lines(run_script(view_code(at), tmp_path)) == race_numbers(at)


def test_the_script_is_built_only_while_its_expander_is_open():
    """A slider move must not send a script nobody reads: closed, the expander holds nothing."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.switch_page("pages/curves.py")
    assert not [e for e in at.run().expander if e.label == "Code for this view"]  # before the answer: none at all
    show_me(at)
    [expander] = [e for e in at.expander if e.label == "Code for this view"]
    assert not expander.code and not at.get("download_button") or all(
        b.key != "code_download" for b in at.get("download_button"))
