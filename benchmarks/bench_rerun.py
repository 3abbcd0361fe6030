"""Server-side rerun after a slider move, for every page of the app: median, p90, ratio to the 50 ms target.

    python benchmarks/bench_rerun.py [--moves 30] [--page steps ...]

For each page in ui/pages.py's table (app.py's navigation), AppTest opens the page and moves
one slider back and forth (the key in ``SLIDER`` or, for a page not listed there,
its first slider; on a page with no slider, its first number input), timing each
``set_value(v).run()``.  Two figures per page:

* page script: the time spent inside the page's own script (StreamlitPage.run,
  timed by wrapping it): computing, building the figures, serialising them to the
  messages the browser receives.  This is the part the page's author controls.
* rerun, net: AppTest's whole rerun (app.py, its sidebar, the page, the script
  runner) minus the same measured for a one-slider empty page run the same way.
  What is left is what this page adds to a real server's rerun.

The ratio column is (the larger of the two) / 50 ms; below 1 meets the target.
Each move is a full rerun (AppTest does not rerun fragments alone; in a browser a
control inside an st.fragment reruns only its fragment, so these are upper bounds).
A page with neither is listed as such and skipped.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.results import printed, record  # noqa: E402

TARGET_MS = 50.0

# The slider a teacher moves most on each page (url_path -> key); others: the first slider.
SLIDER = {
    "curves": "curves_x",
    "gate": "gate_x",
    "derivative": "derivative_nudge",
    "approximations": "approximations_range",
    "steps": "steps_pick",
    # the lab has no slider: its everyday move is choosing the activation on the cached block
    # (changing d_model or the seed builds a new 4.7M-parameter block, a deliberate, spinner-covered wait)
    "ffn": "ffn_act",
}

EMPTY_PAGE = """
import streamlit as st
st.slider("x", -3.0, 3.0, 1.0, 0.01, key="bench_x")
"""


def pages_of_app() -> list[tuple[str, str]]:
    """(url_path, script path) of every page in ui/pages.py's table, in menu order."""
    from ui.pages import PAGES

    return [(url, page.file) for url, page in PAGES.items()]


def _page_timer():
    """Wrap StreamlitPage.run so each call's duration lands in a list."""
    from streamlit.navigation.page import StreamlitPage

    times: list[float] = []
    original = StreamlitPage.run

    def timed(self):
        t0 = time.perf_counter()
        try:
            return original(self)
        finally:
            times.append(time.perf_counter() - t0)

    StreamlitPage.run = timed
    return times


def _values(widget, moves: int) -> list:
    """Values to move to: small steps around the start, alternating direction, always in range."""
    if type(widget).__name__ == "Selectbox":  # cycle through its first few options
        options = list(widget.options)[:4]
        return [options[(i + 1) % len(options)] for i in range(moves)]
    lo, hi = widget.min, widget.max
    if lo is None or hi is None:  # an unbounded number input
        lo, hi = widget.value - 100.0, widget.value + 100.0
    step = widget.step or (hi - lo) / 100
    slider = widget
    start = slider.value
    span = max(step, (hi - lo) / 50)
    out = []
    for i in range(moves):
        delta = span * (1 + i % 5) * (1 if i % 2 == 0 else -1)
        if isinstance(start, (tuple, list)):
            a, b = start
            shift = max(lo - a, min(hi - b, delta))
            out.append((a + shift, b + shift) if shift else (a + span, b) if b - a > 2 * span else (a, b - span))
        else:
            v = min(hi, max(lo, start + delta))
            out.append(int(v) if isinstance(start, int) else v)
    return out


def _find_widget(at, key: str | None):
    """(kind, widget): the slider (or selectbox) with ``key``, else the first slider, else the first number input."""
    if key is not None:
        for kind in ("slider", "selectbox"):
            try:
                return kind, getattr(at, kind)(key=key)
            except KeyError:
                pass
    if len(at.slider):
        return "slider", at.slider[0]
    if len(at.number_input):
        return "number_input", at.number_input[0]
    return None, None


def measure(script: str, page_path: str | None, key: str | None, moves: int, times: list[float],
            query: dict[str, str] | None = None):
    """Per move: (whole AppTest rerun, page script) in seconds, and the control's key; None if it has none.
    ``query``: the link's parameters the page opens with (``lang=de``: the page in German)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(script, default_timeout=120)
    for name, value in (query or {}).items():
        at.query_params[name] = value
    if page_path:
        at.switch_page(page_path)
    at.run()
    if at.exception:
        raise RuntimeError(f"{page_path or script} raised: {at.exception[0].message}")
    kind, widget = _find_widget(at, key)
    if widget is None:
        return None
    key = widget.key

    def move(v):
        getattr(at, kind)(key=key).set_value(v).run()

    for v in _values(widget, 5):  # warm caches, imports and first-draw work
        move(v)
    whole, page = [], []
    for v in _values(widget, moves):
        times.clear()
        t0 = time.perf_counter()
        move(v)
        whole.append(time.perf_counter() - t0)
        page.append(sum(times))
        if at.exception:
            raise RuntimeError(f"{page_path} raised after a move: {at.exception[0].message}")
    return whole, page, f"{key} ({kind.replace('_input', '')})" if kind != "slider" else key


def _p90(xs: list[float]) -> float:
    return statistics.quantiles(xs, n=10)[-1] if len(xs) > 1 else xs[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=30)
    parser.add_argument("--page", action="append", help="url_path(s) to measure (default: all)")
    args = parser.parse_args(argv)

    times = _page_timer()
    with tempfile.TemporaryDirectory() as tmp:
        empty = Path(tmp) / "empty.py"
        empty.write_text(EMPTY_PAGE)
        whole, _, _ = measure(str(empty), None, "bench_x", args.moves, times)
    baseline = statistics.median(whole) * 1e3
    print(f"AppTest overhead (one-slider empty script): median {baseline:.1f} ms over {args.moves} moves")
    print(f"target: {TARGET_MS:.0f} ms server-side per slider move\n")
    header = f"{'page':<16}{'control':<20}{'page script ms':>16}{'p90':>8}{'rerun net ms':>14}{'p90':>8}{'ratio':>8}"
    print(header)
    print("-" * len(header))
    worst = 0.0
    for url, path in pages_of_app():
        if args.page and url not in args.page:
            continue
        result = measure(str(ROOT / "app.py"), path, SLIDER.get(url), args.moves, times)
        if result is None:
            print(f"{url:<16}{'(no slider or number)':<20}")
            continue
        whole, page, key = result
        page_med, page_p90 = statistics.median(page) * 1e3, _p90(page) * 1e3
        net_med, net_p90 = statistics.median(whole) * 1e3 - baseline, _p90(whole) * 1e3 - baseline
        ratio = max(page_med, net_med) / TARGET_MS
        worst = max(worst, ratio)
        print(f"{url:<16}{key:<20}{page_med:>16.1f}{page_p90:>8.1f}{net_med:>14.1f}{net_p90:>8.1f}{ratio:>8.2f}")
    print(f"\nworst ratio to target: {worst:.2f} ({'meets' if worst <= 1 else 'misses'} the {TARGET_MS:.0f} ms target)")
    return 0


if __name__ == "__main__":
    with printed() as lines:
        status = main()
    record("bench_rerun", None, lines)
    sys.exit(status)
