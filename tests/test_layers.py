"""The layers hold: every import points down, and no files import each other in a circle.

    gelu_core/  <-  ui/  <-  draw/, pages/  <-  app.py        hosting/ beside them: it takes gelu_core only, and
                                                              is taken by draw/, pages/ and app.py, never by ui/

Reference: each source file's syntax tree (ast), read in the test: every import statement, at the top of a module
or inside a function.  The checker is tried on a small tree written in the test that breaks each rule (an arrow up,
Streamlit in a pure layer, a circle), so it can fail, and it names the files of each breach.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("gelu_core", "ui", "hosting", "draw", "pages", "app")
MAY_IMPORT = {  # a layer -> the layers its files may import (its own included)
    "gelu_core": {"gelu_core"},
    "ui": {"gelu_core", "ui"},
    "hosting": {"gelu_core", "hosting"},
    "draw": {"gelu_core", "ui", "hosting", "draw"},
    "pages": {"gelu_core", "ui", "hosting", "draw"},
    "app": {"gelu_core", "ui", "hosting", "draw"},
}
PURE = ("gelu_core", "ui")  # no Streamlit, no web server
SERVER_PACKAGES = ("streamlit", "starlette", "tornado", "uvicorn")
TOOLS = ("harness",)  # drives the app from outside: in the circle check, not in the layers


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def sources(root: Path, tops=(*LAYERS, *TOOLS)) -> dict[str, Path]:
    """module name -> file, for app.py and every .py file of the layers' and tools' folders."""
    found = {}
    for top in tops:
        folder, single = root / top, root / f"{top}.py"
        files = sorted(folder.rglob("*.py")) if folder.is_dir() else [single] if single.is_file() else []
        found.update({module_name(f, root): f for f in files})
    return found


def imports(path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules this file imports: of ``modules`` (the tree's own, resolved to the longest known name), or any
    other top-level package by its first name."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            # ``from package import module`` points at the module; ``from module import name``, at the module
            names = [f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in modules else node.module
                     for alias in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            own = next((".".join(parts[:n]) for n in range(len(parts), 0, -1) if ".".join(parts[:n]) in modules), None)
            found.add(own or parts[0])
    return found


def layer_of(module: str) -> str | None:
    top = module.split(".")[0]
    return top if top in LAYERS else None


def breaches(root: Path) -> list[str]:
    """Every arrow the wrong way, every server import in a pure layer, and every circle of files, in words."""
    modules = sources(root)
    graph = {m: imports(p, modules) & set(modules) - {m} for m, p in modules.items()}
    found = []
    for module, path in modules.items():
        layer = layer_of(module)
        if layer is None:
            continue
        for target in sorted(imports(path, modules)):
            other = layer_of(target)
            if other is not None and other not in MAY_IMPORT[layer]:
                found.append(f"{path.relative_to(root)} imports {target}: {layer} may not import {other}")
            if layer in PURE and target.split(".")[0] in SERVER_PACKAGES:
                found.append(f"{path.relative_to(root)} imports {target}: {layer} is pure (no Streamlit, no server)")
    found += [" -> ".join(str(modules[m].relative_to(root)) for m in (*cycle, cycle[0])) for cycle in circles(graph)]
    return found


def circles(graph: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm), each as one circle through them."""
    index, low, stack, on, groups, counter = {}, {}, [], set(), [], [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(tuple(sorted(group)))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [_one_circle(graph, group) for group in groups]


def _one_circle(graph: dict[str, set[str]], group: tuple[str, ...]) -> tuple[str, ...]:
    """A path from the group's first module back to it, through the group (breadth first: the shortest)."""
    start, members = group[0], set(group)
    came = {start: None}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph[v] & members):
            if w == start:
                path = [v]
                while came[path[-1]] is not None:
                    path.append(came[path[-1]])
                return tuple(reversed(path))
            if w not in came:
                came[w] = v
                queue.append(w)
    return group


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_the_checker_names_each_kind_of_breach(tmp_path):
    root = _tree(tmp_path, {
        "gelu_core/__init__.py": "", "gelu_core/core.py": "import numpy\n",
        "ui/__init__.py": "", "ui/figure.py": "def f():\n    from hosting import runs\n    import streamlit\n",
        "hosting/__init__.py": "", "hosting/runs.py": "from gelu_core import core\n",
        "draw/__init__.py": "", "draw/a.py": "from draw import b\n", "draw/b.py": "from draw.a import x\n",
        "app.py": "import draw.a\nimport ui.figure\n",
    })
    assert sorted(breaches(root)) == [
        "draw/a.py -> draw/b.py -> draw/a.py",
        "ui/figure.py imports hosting.runs: ui may not import hosting",
        "ui/figure.py imports streamlit: ui is pure (no Streamlit, no server)",
    ]
    assert breaches(_tree(tmp_path / "clean", {"gelu_core/core.py": "", "ui/x.py": "import gelu_core.core\n"})) == []


def test_every_import_points_down_and_no_files_import_each_other_in_a_circle():
    assert breaches(ROOT) == []


@pytest.mark.parametrize("layer", ("ui", "draw", "hosting"))
def test_each_package_says_what_it_is(layer):
    assert ast.get_docstring(ast.parse((ROOT / layer / "__init__.py").read_text(encoding="utf-8")))
