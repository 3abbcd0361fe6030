"""How fast the app starts: `streamlit run app.py` to the first page drawn in a browser, and what each page imports.

    python benchmarks/bench_startup.py [--runs 5] [--skip-imports] [--skip-browser]

Three parts:

1. Cold start, several runs, median: a fresh `streamlit run app.py` (the repository's config) until
   /_stcore/health answers, then Chromium opens the home page until its first run is drawn (title and
   chart); the time is from launching the process.  The browser is launched once, before the clock.
2. Imports of each page (python -X importtime in a fresh interpreter that has already imported
   streamlit, as the server has): the page's own top-level imports, their cumulative time, and whether
   they pull torch, scipy or pandas.  app.py's imports are listed as "app".
3. What the running server has loaded: after each page is opened in order (home first), whether
   libtorch is mapped into the server process (/proc/<pid>/maps).  torch should appear only with the
   lab (or the Approximations page's framework view, when it is chosen).

Needs Debian's Chromium for parts 1 and 3.  Figures are wall-clock on this machine; compare runs, not
machines.
"""

from __future__ import annotations

import argparse
import ast
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness import browser as driver  # noqa: E402

HEAVY = ("torch", "scipy", "pandas", "numpy", "plotly", "safetensors")


def top_level_imports(script: Path) -> list[str]:
    """The modules a script imports at its top level (not inside functions): `import a.b`, `from a import b`."""
    names = []
    for node in ast.parse(script.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
            names += [f"{node.module}.{alias.name}" for alias in node.names]
    return names


def import_profile(modules: list[str]) -> tuple[float, dict[str, float], set[str]]:
    """(ms to import `modules` after streamlit, the slowest new top-level packages in ms, heavy packages they load).

    Runs a fresh interpreter with -X importtime; only modules imported after streamlit count.
    """
    probe = "\n".join(
        [
            "import importlib, sys, time",
            "import streamlit, streamlit.runtime.scriptrunner",
            "before = set(sys.modules)",
            "print('--- mark', file=sys.stderr, flush=True)",
            "start = time.perf_counter()",
            f"for name in {modules!r}:",
            "    try: importlib.import_module(name)",
            "    except ImportError: pass",  # "from a import b" where b is a name, not a module
            "print('total_ms', (time.perf_counter() - start) * 1e3)",
            f"print('heavy', *sorted(m for m in {HEAVY!r} if m in set(sys.modules) - before))",
        ]
    )
    run = subprocess.run([sys.executable, "-X", "importtime", "-c", probe], cwd=ROOT, capture_output=True, text=True)
    if run.returncode:
        raise RuntimeError(run.stderr[-2000:])
    after = run.stderr.split("--- mark", 1)[1]
    packages: dict[str, float] = {}
    for line in after.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
        if m and len(m.group(3)) == 1:  # top level of this import chain
            packages[m.group(4)] = int(m.group(2)) / 1e3
    total = float(re.search(r"total_ms (\S+)", run.stdout).group(1))
    heavy = set(re.search(r"heavy(.*)", run.stdout).group(1).split())
    slowest = dict(sorted(packages.items(), key=lambda kv: -kv[1])[:4])
    return total, slowest, heavy


def torch_mapped(pid: int) -> bool:
    return "libtorch" in Path(f"/proc/{pid}/maps").read_text()


def cold_starts(browser, runs: int) -> list[tuple[float, float]]:
    """(seconds to health, seconds to the home page drawn) for `runs` fresh servers."""
    results = []
    for _ in range(runs):
        start = time.perf_counter()
        with driver.Server() as server:
            healthy = time.perf_counter() - start
            page = driver.new_page(browser)
            driver.open_app(page, server.base_url)
            page.locator(f"{driver.MAIN} [data-testid='stHeading']").first.wait_for()
            page.locator(f"{driver.MAIN} [data-testid='stPlotlyChart']").first.wait_for()
            drawn = time.perf_counter() - start
            page.context.close()
        results.append((healthy, drawn))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--skip-imports", action="store_true")
    parser.add_argument("--skip-browser", action="store_true")
    args = parser.parse_args()
    pages = driver.app_pages()

    if not args.skip_imports:
        print("Imports after streamlit (fresh interpreter, -X importtime)")
        print(f"{'page':<16}{'ms':>8}  {'heavy packages':<34}slowest new top-level imports (ms)")
        for name, script in [("app", ROOT / "app.py")] + [(p.url_path, ROOT / p.script) for p in pages]:
            total, slowest, heavy = import_profile(top_level_imports(script))
            slow = ", ".join(f"{k} {v:.0f}" for k, v in slowest.items())
            print(f"{name:<16}{total:>8.0f}  {' '.join(sorted(heavy)):<34}{slow}")
        print()

    if args.skip_browser:
        return
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = driver.launch(playwright)
        results = cold_starts(browser, args.runs)
        healthy = statistics.median(r[0] for r in results)
        drawn = statistics.median(r[1] for r in results)
        print(
            f"Cold start, {args.runs} runs: `streamlit run app.py` -> /_stcore/health: median {healthy:.2f} s; "
            f"-> home page drawn in Chromium: median {drawn:.2f} s "
            f"(runs: {', '.join(f'{r[1]:.2f}' for r in results)})"
        )

        print("\nIs torch loaded in the server after opening each page in turn?")
        with driver.Server() as server:
            page = driver.new_page(browser)
            for app_page in pages:
                start = time.perf_counter()
                driver.open_app(page, f"{server.base_url}/{'' if app_page.default else app_page.url_path}")
                took = time.perf_counter() - start
                print(
                    f"  {app_page.url_path:<16} drawn in {took:5.2f} s   torch loaded: {torch_mapped(server.proc.pid)}"
                )
            page.context.close()
        browser.close()


if __name__ == "__main__":
    main()
