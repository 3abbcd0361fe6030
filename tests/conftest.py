"""Shared fixtures: an AppTest of the whole app, a way to read a chart's figure, the default memory budget."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

# The caps the tests name (128 MiB a file, (8, 1024, 3072) hidden values a lab run) are those of the default
# memory budget: pin it before gelu_core is imported, whatever this machine's memory or the caller's environment
# says (gelu_core.budget; tests/test_budget.py covers how other budgets are set and what they give).
os.environ["GELU_MEMORY_BUDGET_MB"] = "1536"

ROOT = Path(__file__).resolve().parents[1]


RUNS_THE_APP = ("AppTest", "subprocess", "Server(", "Balancer(")  # a test module that says one of these runs more


def pytest_collection_modifyitems(config, items):
    """Tests that run the app or another process (AppTest, a server, a script, a fresh interpreter: their module
    names one of ``RUNS_THE_APP``, or they take the ``app`` fixture) are marked ``app``, so that
    ``-m "not e2e and not app"`` is the inner loop over the pure code.  Tests marked ``slow`` (long scenarios and
    exhaustive sweeps) run only under GELU_SLOW=1, as .ci/run sets: the default run checks a change within minutes,
    CI runs everything."""
    sources: dict[str, bool] = {}
    for item in items:
        path = str(item.fspath)
        if path not in sources:
            text = Path(path).read_text(encoding="utf-8") if path.endswith(".py") else ""
            sources[path] = any(token in text for token in RUNS_THE_APP)
        if sources[path] or "app" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.app)
    if os.environ.get("GELU_SLOW"):
        return
    skip = pytest.mark.skip(reason="slow: set GELU_SLOW=1 to run it (CI does)")
    for item in items:
        if item.get_closest_marker("slow"):
            item.add_marker(skip)


def _values(case) -> tuple:
    """A case's argument values: a tuple holds several argnames' values; anything else is one value."""
    return case if isinstance(case, tuple) else (case,)


def sweep(cases, ids, kept) -> list:
    """A sweep's cases as ``pytest.param``s for ``parametrize``: those at the indices in ``kept`` run in the default
    run, the others are marked ``slow`` (CI runs them all).  A case is one value, or a tuple of several argnames'."""
    kept = set(kept)
    return [pytest.param(*_values(case), id=name,
                         marks=() if i in kept else pytest.mark.slow)
            for i, (case, name) in enumerate(zip(cases, ids, strict=True))]


def across(rows, row_ids, variants, variant_ids, kept_rows=None) -> list:
    """Every row with every variant (a page at each theme or width), ``row-variant`` as its id; the default run
    takes each row (or each of ``kept_rows``, indices) once, its variant in turn (row i with variant i mod
    len(variants)), so each variant is met there; the rest is the slow tier's.  A row or a variant is one value or a
    tuple of argnames' values."""
    kept_rows = range(len(rows)) if kept_rows is None else set(kept_rows)
    cases = [(_values(r) + _values(v), f"{rid}-{vid}", i in kept_rows and i % len(variants) == j)
             for i, (r, rid) in enumerate(zip(rows, row_ids, strict=True))
             for j, (v, vid) in enumerate(zip(variants, variant_ids, strict=True))]
    return sweep([c for c, _, _ in cases], [name for _, name, _ in cases],
                 [k for k, (_, _, kept) in enumerate(cases) if kept])


def required_or_skip(what: str, reason: str):
    """A tool these tests need is missing (``reason``): skip, or fail under GELU_E2E_REQUIRED=1 (CI), where
    ``what`` ("haproxy is", "browser tests are") must run."""
    if os.environ.get("GELU_E2E_REQUIRED") == "1":
        pytest.fail(f"{what} required here (GELU_E2E_REQUIRED=1) but {reason}", pytrace=False)
    pytest.skip(reason)


def needs_haproxy():
    """Skip where Debian's haproxy is missing (apt-get install -y haproxy); fail instead in CI."""
    from harness import balancer

    missing = balancer.haproxy_missing()
    if missing:
        required_or_skip("haproxy is", missing)


@pytest.fixture(scope="module")
def redis_server():
    """Debian's redis-server on a free loopback port, for one test module (the class poll's store)."""
    from harness.redis_server import RedisServer, redis_missing

    missing = redis_missing()
    if missing:
        required_or_skip("redis-server is", missing)
    with RedisServer() as server:
        yield server


def chart_spec(at, index: int = 0) -> dict:
    """The Plotly figure (data + layout) of the index-th chart on the page, as a dict."""
    return json.loads(at.get("plotly_chart")[index].proto.spec)


@pytest.fixture
def app():
    """A fresh AppTest of app.py, not yet run: set query_params / switch_page, then .run()."""
    from streamlit.testing.v1 import AppTest

    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)


def open_page(app, page: str, **query):
    """Run the app at ``page`` (a path under pages/) with URL query parameters, past its question (``show_me``);
    fail on any exception."""
    for key, value in query.items():
        app.query_params[key] = value
    app.switch_page(page)
    app.run()
    assert not app.exception, app.exception
    return show_me(app)


def show_me(app):
    """Press the page's "Show me without predicting" where the page waits for its question to be answered (a page
    asks first: draw/lesson.py), as a student who wants the whole page does; the app as it then is."""
    waiting = [b for b in app.button if (b.key or "").startswith("show_")]
    if waiting:
        waiting[0].click().run()
        assert not app.exception, app.exception
    return app


def metrics(at) -> dict[str, str]:
    """The page's st.metric readouts, label -> shown value."""
    return {m.label: m.value for m in at.metric}


def most_at_once(monkeypatch, module, name: str, call, threads: int = 4) -> int:
    """How many calls of ``module.name`` were ever under way together while ``threads`` threads each ran ``call()``.

    ``module.name`` is wrapped to count itself in and out and to linger 50 ms, so overlap shows if it can happen.
    """
    import threading
    import time

    inside = most = 0
    guard = threading.Lock()
    real = getattr(module, name)

    def counted(*args, **kwargs):
        nonlocal inside, most
        with guard:
            inside += 1
            most = max(most, inside)
        time.sleep(0.05)
        with guard:
            inside -= 1
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    workers = [threading.Thread(target=call) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return most


def functional(name: str):
    """An activation written with torch.nn.functional (the registry's default parameters: PyTorch's own), not
    the lab's ``gelu_core.ffn.activation_module``: the reference a lab run's activation is held to."""
    import torch

    F = torch.nn.functional
    return {
        "relu": F.relu,
        "gelu": lambda h: F.gelu(h, approximate="none"),
        "gelu_tanh": lambda h: F.gelu(h, approximate="tanh"),
        "gelu_sigmoid": lambda h: h * torch.sigmoid(1.702 * h),
        "silu": F.silu,
        "leaky_relu": lambda h: F.leaky_relu(h, 0.01),
        "elu": lambda h: F.elu(h, 1.0),
        "softplus": F.softplus,
        "sigmoid": torch.sigmoid,
        "tanh": torch.tanh,
    }[name]


def with_activation(block, activation: str):
    """A FeedForward with ``block``'s weights (copied) and another activation: the reference the lab's
    two-activation run is held to."""
    from gelu_core.ffn import FeedForward

    other = FeedForward(block.d_model, hidden=block.hidden, activation=activation)
    other.load_state_dict(block.state_dict())
    return other
