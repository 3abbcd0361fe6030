"""The app's one cache (gelu_core.shared: SharedResults and its memo decorator; hosting.runs.SharedRuns builds on
it): bounded by the budget, shared by every session, and the only one the app's code uses.

References: len() of each cache and tracemalloc's count of the bytes still held (measured in the test, after a
garbage collection) against the bound the cache declares; the app's sources read in the test (no
``functools.lru_cache`` / ``functools.cache`` / ``st.cache_*`` left); compute counts taken across two AppTest
sessions of one process; and, in a fresh interpreter, the sum of every cache at its bound against
``gelu_core.budget.CACHE_BYTES`` at the default budget and at a small host's.
"""

from __future__ import annotations

import gc
import inspect
import json
import re
import subprocess
import sys
import threading
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from gelu_core import budget
from gelu_core import shared as shared_module
from gelu_core.shared import SharedResults, memo
from tests.conftest import metrics, open_page, sweep

ROOT = Path(__file__).resolve().parents[1]
KB = 1024


def _catching(call, failed: list) -> None:
    try:
        call()
    except BaseException as e:  # noqa: BLE001 - raised again on the test's thread
        failed.append(e)


def held_by(call, *files: str) -> int:
    """Bytes still held (tracemalloc, after gc) once ``call()`` has run: what it left behind, counting only what
    was allocated with one of ``files`` on the stack (not what another thread of the test process allocated
    meanwhile: a race lane or a script run left by an earlier test)."""
    gc.collect()
    tracemalloc.start(128)
    try:
        before = tracemalloc.take_snapshot()
        # on a thread of its own: a shallow stack, where pytest's is ~60 frames deep, and tracemalloc's cost per
        # allocation grows with the frames it records (range_live_table: 38 s a call on pytest's stack)
        failed: list[BaseException] = []
        worker = threading.Thread(target=lambda: _catching(call, failed))
        worker.start()
        worker.join()
        if failed:
            raise failed[0]
        gc.collect()
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    mine = [tracemalloc.Filter(True, f, all_frames=True) for f in (*files, __file__, shared_module.__file__)]
    return sum(d.size_diff for d in after.filter_traces(mine).compare_to(before.filter_traces(mine), "filename"))


def test_a_memo_fills_past_its_bound_and_stays_within_it():
    entry = 256 * KB
    share = 5 * entry / budget.CACHE_BYTES  # room for 5 entries of 256 KB

    computed = []

    @memo(entry_bytes=entry, share=share)
    def block(i: int) -> bytes:
        computed.append(i)
        return bytes(entry - KB) + i.to_bytes(4, "little")

    assert block.runs.max_entries == 5 and block.runs.entry_bytes == entry
    grown = held_by(lambda: [block(i) for i in range(40)])  # 40 different keys: eight times the bound
    assert len(block.runs) == 5 and len(computed) == 40
    assert 4 * entry < grown <= 5 * entry + 16 * KB  # five entries are kept, not forty
    assert block(39) == block(39) and len(computed) == 40  # the newest is kept: not computed again
    block(0)
    assert computed[-1] == 0 and len(computed) == 41  # the oldest was dropped: computed again


def test_within_takes_its_bound_from_the_budget():
    loaded = budget.LOADED_BYTES
    assert SharedResults.within(loaded, 0.25).max_entries == budget.cache_entries(loaded, 0.25)
    assert SharedResults.within(10 * budget.CACHE_BYTES, 0.01).max_entries == 1  # never below one


def test_no_other_cache_in_the_app():
    """app.py, pages/, ui/ and hosting/ keep results only through gelu_core.shared."""
    sources = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py")), *sorted((ROOT / "ui").rglob("*.py")),
               *sorted((ROOT / "hosting").glob("*.py"))]
    pattern = re.compile(r"@(functools\.)?(lru_cache|cache)\b|st\.cache_(data|resource)\b")
    found = [f"{p.relative_to(ROOT)}:{n}" for p in sources
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if pattern.search(line)]
    assert found == []


def _memos() -> dict[str, object]:
    """Every memo-decorated function in the ui package, by qualified name."""
    import importlib
    import pkgutil

    import ui

    found = {}
    for info in pkgutil.walk_packages(ui.__path__, "ui."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if isinstance(getattr(value, "runs", None), SharedResults) and value.__module__ == module.__name__:
                found[f"{info.name}.{name}"] = value
    return found


def _x() -> tuple[float, ...]:
    from ui.approximations import POINTS

    return tuple(np.linspace(-12.0, 12.0, POINTS).tolist())


def _typed_key(scale: float) -> tuple:
    """A typed array's key (ui.describe._key) at the longest the words keep: 2,048 float64s."""
    import base64

    return base64.b64encode((scale * np.linspace(-1.0, 1.0, 2048)).tobytes()).decode(), "f8", None


def _printed() -> tuple:
    from gelu_core.activations import ACTIVATIONS, GATES

    return tuple(GATES.values()) + tuple(a.formula for a in ACTIVATIONS.values() if a.formula)  # the longest text


# One call of each memo, its arguments made inside the call (the key is kept too, and counted).
CALLS = {
    "ui.theme._base_layout_json": lambda f: f("x", "GELU(x) and ReLU(x)", 420),
    "ui.theme._template_json": lambda f: f(),
    "ui.derivative.landmarks": lambda f: f("tanh"),
    "ui.derivative.gradient_live_table": lambda f: f("none"),
    "ui.gate.gap_per_sigma": lambda f: f(),
    "ui.gate.gate_live_table": lambda f: f(),
    "ui.gate._gate_curves": lambda f: f(401),
    "ui.gate._bell_curve": lambda f: f(401),
    "ui.steps._pick_rows": lambda f: f(),
    "ui.steps._pick_words": lambda f: f(),
    "ui.steps.steps_live_table": lambda f: f(True),
    "ui.curves._probe_columns": lambda f: f("none"),
    "ui.approximations.worst_points": lambda f: f(),
    "ui.approximations._view_curves": lambda f: f(),
    "ui.approximations.range_live_table": lambda f: f(),
    "ui.approximations._view_specs": lambda f: f(tuple(__import__("ui.approximations").approximations.worst_points()
                                                       .items())),
    "ui.home._own_table": lambda f: f(1, "tanh"),
    "ui.home.joint_table": lambda f: f("tanh"),
    "ui.home._curves": lambda f: f("tanh"),
    "ui.home._top": lambda f: f(20.5, "tanh"),
    "ui.home._y_axis": lambda f: f(20.5, "tanh"),
    "ui.home._label": lambda f: f(-0.16997120866382787, "tanh"),
    "ui.home._prose_of": lambda f: f(-19.5, -0.0, -0.0, 0.5, 0.3457140064239502, "tanh"),
    "ui.describe._decoded": lambda f: f(__import__("base64").b64encode(np.arange(2048.0).tobytes()).decode(), "f8",
                                        None),
    "ui.describe._kept_words": lambda f: f("scatter", "lines", "GELU", True, _typed_key(-1.0), _typed_key(1.0), None,
                                           "x", "GELU(x)"),
    "ui.live.as_json": lambda f: f(__import__("ui.approximations").approximations.range_live_table),
    "ui.approximations.framework_runs": lambda f: f(_x(), ("float32", "bfloat16", "float16"), "none"),
    "ui.approximations.dtype_limits": lambda f: f("float16", "tanh"),
    "ui.approximations.digits_kept": lambda f: f(("float32", "bfloat16", "float16")),
    "ui.code_export._source": lambda f: f(_printed(), "torch", ()),
    "ui.code_export._comments": lambda f: f("gelu_core.training", "RaceConfig"),
}


def test_every_memo_is_measured_here():
    assert sorted(_memos()) == sorted(CALLS)


# every memo in CI; the default run all but the range slider's live table, which fills every pair of the thumbs'
# positions (seconds, where each other takes a fraction of one)
@pytest.mark.parametrize("name", sweep(sorted(CALLS), sorted(CALLS),
                                       kept=[i for i, n in enumerate(sorted(CALLS))
                                             if n != "ui.approximations.range_live_table"]))
def test_each_memo_keeps_no_more_than_it_declares(name):
    """An entry (its key and result) measured by tracemalloc is at most the entry_bytes its bound is made of: a
    fresh entry's measure, taken once more if it is over (a library's own cache filling within the first, such as
    plotly's path cache after tests that drew no figure in this worker, is not the entry: 300 KB once, 7 KB the
    next time), and the smaller kept."""
    function = _memos()[name]
    CALLS[name](function)  # imports and the memos it calls, warmed
    sizes = []
    while len(sizes) < 2 and not 0 < min(sizes, default=0) <= function.runs.entry_bytes:
        function.runs.clear()
        sizes.append(held_by(lambda: CALLS[name](function), inspect.unwrap(function).__code__.co_filename))
    kept = min(sizes)
    assert len(function.runs) == 1
    assert 0 < kept <= function.runs.entry_bytes, f"{name}: {kept} bytes kept, {function.runs.entry_bytes} declared"


@pytest.mark.slow  # a fresh interpreter importing every module that keeps something, twice
def test_every_cache_at_its_bound_fits_the_budget():
    """In a fresh interpreter that imports every module that keeps something, at the default budget and at 60 %
    of a 690 MB host: the caches all full hold no more than CACHE_BYTES, and none is unbounded by the budget."""
    script = (
        "import json, pkgutil, importlib, ui, hosting.lab_runs, hosting.races\n"
        "for m in pkgutil.iter_modules(ui.__path__): importlib.import_module('ui.' + m.name)\n"
        "from gelu_core.shared import SharedResults\nfrom gelu_core import budget\n"
        "caches = SharedResults.every()\n"
        "print(json.dumps([sum(s.max_entries * (s.entry_bytes or 0) for s in caches), budget.CACHE_BYTES,"
        " sum(s.entry_bytes is None for s in caches), len(caches)]))\n"
    )
    for env in ({}, {budget.ENV: str(int(0.6 * 690))}):
        out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300,
                             env={**__import__("os").environ, **env}, check=True).stdout
        fullest, cache_bytes, unbudgeted, caches = json.loads(out.splitlines()[-1])
        assert unbudgeted == 0 and caches >= len(CALLS) + 5  # the pages' memos, the lab's three, answers, races
        assert fullest <= cache_bytes, (env, fullest, cache_bytes)


@pytest.mark.parametrize("view", ["Three forms", "What PyTorch computes"])
def test_two_sessions_share_what_a_page_computed(app, view, monkeypatch):
    """A second session of the Approximations page computes nothing the first one did, and shows the same
    numbers (its metrics, or its tables on the PyTorch tab)."""
    from streamlit.testing.v1 import AppTest

    from gelu_core import analysis, frameworks

    calls = []
    for module, name in ((analysis, "worst_error"), (frameworks, "framework_gelu"), (frameworks, "zero_band")):
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, real=real, name=name, **k: calls.append(name) or real(*a, **k))
    for memo_ in _memos().values():
        memo_.runs.clear()
    page, query = "pages/approximations.py", {"approximations_view": view}
    first = open_page(app, page, **query)
    computed = list(calls)
    second = open_page(AppTest.from_file(str(ROOT / "app.py"), default_timeout=60), page, **query)
    assert calls == computed and computed  # the first session computed, the second found it all kept
    shown = [(metrics(at), [t.value.to_dict() for t in at.dataframe]) for at in (first, second)]
    assert shown[0] == shown[1] and (shown[0][0] or shown[0][1])


def test_a_class_across_the_lesson_keeps_every_live_table(monkeypatch):
    """Every explorer page's live tables, in two forms and two languages at once (a class on one process, its teacher
    showing the other form in German), stay kept together: a visit finds its page's tables as JSON (ui.live.as_json)
    and encodes none again.  Reference: the keys as_json was asked for over AppTest visits to each page, each still
    kept (``peek``) after the last visit; with too small a bound the first visits' tables were dropped (7 kept, 36
    asked for) and every first visit of a class encoded them again."""
    from streamlit.testing.v1 import AppTest

    from ui.live import as_json

    asked = []
    real_get = as_json.runs.get
    monkeypatch.setattr(as_json.runs, "get", lambda key, *a, **k: asked.append(key) or real_get(key, *a, **k))
    as_json.runs.clear()
    for lang in ("en", "de"):
        for form in ("tanh", "exact"):
            for page in ("home", "gate", "curves", "derivative", "steps", "approximations"):
                open_page(AppTest.from_file(str(ROOT / "app.py"), default_timeout=60), f"pages/{page}.py",
                          lang=lang, form=form)
    keys = set(asked)
    # per language: Home's five inputs, the gate, Curves and Derivative in each form; Step by step and Approximations
    assert len(keys) >= 2 * (2 * 8 + 2)
    dropped = [key for key in keys if as_json.runs.peek(key) is None]
    assert not dropped, f"{len(dropped)} of {len(keys)} live tables dropped (at most {as_json.runs.max_entries} kept)"


def test_a_first_visit_at_the_defaults_finds_its_live_tables_made_at_start_up(monkeypatch):
    """hosting.warm makes every page's live tables at its defaults before the server says it is ready
    (``ui.pages.make_live_tables``, from each page module's ``live_tables``).  Reference: the keys ui.live.as_json
    is asked for over AppTest first visits to each explorer page at its defaults, past its question, in the
    default form and language, on a cache that make_live_tables alone filled: each is found kept when asked
    (``peek``), so no first visit makes one.  With Curves' declared range not ordered as the page orders it, or
    Step by step's toggle on, that page's visit made its own."""
    from streamlit.testing.v1 import AppTest

    from ui.live import as_json
    from ui.pages import make_live_tables

    as_json.runs.clear()
    made = make_live_tables()
    missing = []
    real_get = as_json.runs.get

    def get(key, *a, **k):
        if as_json.runs.peek(key) is None:
            missing.append(key)
        return real_get(key, *a, **k)

    monkeypatch.setattr(as_json.runs, "get", get)
    for page in ("home", "gate", "curves", "derivative", "steps", "approximations"):
        open_page(AppTest.from_file(str(ROOT / "app.py"), default_timeout=60), f"pages/{page}.py")
    assert made == 10 and not missing, missing  # Home's five inputs, and one table each for the five other pages
