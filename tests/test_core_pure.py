"""gelu_core is pure computation: no module of it imports the server, Streamlit or the pages' helpers, nor
speaks of sessions.

Reference: each gelu_core source file's syntax tree (ast), read in the test: every import statement, top-level
or inside a function, and every name, argument and attribute.  The checker is tried on a module written in the
test that breaks each rule, so it can fail.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[1] / "gelu_core"
FORBIDDEN = ("hosting", "streamlit", "ui", "pages", "app")  # top-level packages the core must not import
SESSION_WORDS = ("owner", "owners", "session", "session_id", "forget_owners", "get_script_run_ctx")


def breaches(source: str) -> list[str]:
    """What in ``source`` ties it to the server: forbidden imports, and names that speak of session owners."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            modules = [node.module or ""] if node.level == 0 else []
        else:
            modules = []
        found += [f"imports {m}" for m in modules if m.split(".")[0] in FORBIDDEN]
        name = (node.id if isinstance(node, ast.Name) else node.arg if isinstance(node, ast.arg)
                else node.attr if isinstance(node, ast.Attribute) else None)
        if name is not None and name.lower() in SESSION_WORDS:
            found.append(f"names {name}")
    return found


def test_the_checker_catches_each_breach():
    source = ("import streamlit as st\nfrom hosting.runs import SharedRuns\n"
              "def f(x, *, owner=None):\n    from ui import frame\n    return x.session_id\n")
    assert sorted(breaches(source)) == ["imports hosting.runs", "imports streamlit", "imports ui", "names owner",
                                        "names session_id"]
    assert breaches("import numpy\nfrom gelu_core import budget\n") == []


@pytest.mark.parametrize("path", sorted(CORE.rglob("*.py")), ids=lambda p: str(p.relative_to(CORE)))
def test_no_core_module_imports_the_server_or_speaks_of_sessions(path):
    assert breaches(path.read_text(encoding="utf-8")) == []
