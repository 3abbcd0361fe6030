"""The code behind each view: a short, self-contained PyTorch/NumPy script that prints the numbers on screen, and
what every page's script is made from.

Pure: no Streamlit, no server.  Each page's module (``ui/<page>.py``) holds its template and ``code(values)``, the
one its row in ``ui.pages`` names (which also gives ``code_for(page, values)``): ``values`` are the page's controls'
current values by key; a key left out, or a value the control cannot hold, counts as its default (``settings``).
The scripts import only torch, numpy and scipy (never this repository: a student copies one into a notebook), print
each number labelled as the page labels it, to the digits the page shows, and ``tests/test_code_export.py`` runs
each against the page.

What the page computes with is not restated: a script prints the gelu_core functions the page calls (the
registry's formulas, ``GATES`` and ``GATE_SLOPES`` and GELU's product rule, the tanh formula's operations, the
seeded draws, the activation modules, the lab's statistics and backward step, the race's points, network and dead
units) and ui.format's number formats from their source (``source``), looked up when the script is built, so a
change there reaches the script; ``tests/test_code_export_source.py`` shows it for each.  A template holds the
wiring between them and the print lines (``fill``); numbers are written as literals that read back the same
(``number``).
"""


from __future__ import annotations

import ast
import importlib
import inspect
import re
from collections.abc import Callable, Mapping
from string import Template
from typing import Any

from gelu_core.shared import memo
from ui.controls import PageControls
from ui.plain import full as number  # noqa: F401  a float as a literal that reads back the same

Values = Mapping[str, Any]

_CHOICES = {"segmented_control", "selectbox", "radio", "pills", "tabs"}


def settings(controls: PageControls, values: Values) -> dict[str, Any]:
    """Each control's value by its short name (``gate_x`` -> ``x``): from ``values`` by key, else the default.

    A value the control could not hold (None, an option it does not offer) falls back to the default too.

    >>> from ui.gate import CONTROLS as GATE
    >>> settings(GATE, {"gate_x": -2.0, "elsewhere": 1})
    {'x': -2.0, 'mu': 0.0, 'sigma': 1.0, 'form': 'tanh'}
    """
    out = {}
    for control in controls:
        value = values.get(control.key)
        if value is None:
            value = control.default
        elif control.widget in _CHOICES and value not in control.options["options"]:
            value = control.default
        elif control.widget == "multiselect":
            value = [v for v in value if v in control.options["options"]]
        out[control.key.removeprefix(controls.page + "_")] = value
    return out


# ---------------------------------------------------------------- the app's own source, printed

# ``ops.<name>`` in a gelu_core formula (gelu_core._backend) as each backend spells it
_OPS = {"torch": {"erfc": "torch.special.erfc"}, "numpy": {"erfc": "erfc"}}
_PREFIX = {"torch": "torch.", "numpy": "np."}


def _definitions(module: str, parsed: dict) -> tuple[list[str], dict[str, ast.stmt]]:
    """A module's source lines and its top-level functions, classes and assignments by name (kept in ``parsed``
    for the rest of one printing)."""
    if module in parsed:
        return parsed[module]
    text = inspect.getsource(importlib.import_module(module))
    defs: dict[str, ast.stmt] = {}
    for node in ast.parse(text).body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in ("gelu_core", "ui"):
            for alias in node.names:  # a name taken from another module of the app: printed from there
                if alias.asname is None and alias.name in _definitions(node.module, parsed)[1]:
                    defs[alias.name] = node
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defs[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                for name in [target] if isinstance(target, ast.Name) else getattr(target, "elts", []):
                    if isinstance(name, ast.Name):
                        defs[name.id] = node
    parsed[module] = text.splitlines(), defs
    return parsed[module]


def _text(lines: list[str], node: ast.stmt) -> str:
    """The node's source, its docstring cut to the first paragraph (no doctests in a student's script)."""
    start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]) - 1
    body = lines[start:node.end_lineno]
    docstring = getattr(node, "body", [None])[0]
    if (isinstance(docstring, ast.Expr) and isinstance(docstring.value, ast.Constant)
            and isinstance(docstring.value.value, str)):
        first, last = docstring.lineno - 1 - start, docstring.end_lineno - 1 - start
        for i in range(first + 1, last + 1):
            stripped = body[i].strip()
            if not stripped or stripped.startswith(">>>"):
                body = body[:first] + body[first:i - 1] + [body[i - 1].rstrip() + '"""'] + body[last + 1:]
                break
    return "\n".join(body)


def source(*objects: Callable[..., Any] | str, backend: str = "torch",
           names: Mapping[str, Callable[..., Any]] | None = None) -> str:
    """The source of these functions or classes (or "module:NAME" for a constant), with the constants and helpers
    of their module they use, in the module's order: the very code the app runs, for a script to print.

    A gelu_core formula ``f(ops, x, ...)`` (gelu_core._backend) is written for ``backend``, "torch" or "numpy"
    (with scipy's erfc); a private name loses its underscore; ``names`` gives more functions with the name each
    takes in the script, whatever the app calls it.

    >>> from gelu_core.activations import GATES
    >>> code = source(names={"gate": GATES["sigmoid"]})
    >>> [line for line in code.splitlines() if line.startswith("def")], "ops" in code, "SIGMOID_COEF = 1.702" in code
    (['def sigmoid(t):', 'def gate(x):'], False, True)
    """
    return _source(objects, backend, tuple((names or {}).items()))


@memo(entry_bytes=16 * 1024)  # a page's helpers as text, a few KB; rebuilt on every rerun while the code is open
def _source(objects: tuple, backend: str, named: tuple) -> str:
    names, parsed = dict(named), {}
    chosen: dict[tuple[str, str], ast.stmt] = {}
    pending = [tuple(obj.split(":")) if isinstance(obj, str) else (obj.__module__, obj.__name__)
               for obj in (*objects, *names.values())]
    while pending:
        module, name = pending.pop()
        node = _definitions(module, parsed)[1][name]
        if isinstance(node, ast.ImportFrom):  # taken from another module of the app: printed from there
            found = inspect.unwrap(getattr(importlib.import_module(node.module), name))  # ui.format's: ui.plain's
            pending.append((found.__module__, found.__name__) if callable(found) else (node.module, name))
        elif (module, name) not in chosen:
            chosen[module, name] = node
            used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            pending.extend((module, n) for n in used - {name} if n in _definitions(module, parsed)[1])

    defined = {name for (_, name), node in chosen.items() if isinstance(node, (ast.FunctionDef, ast.ClassDef))}

    # constants first, by line; then functions and classes, module by module; a constant that calls one of them goes
    # among them, after the module that defines it (weights.LINEAR, a Message, after gelu_core.messages)
    def place(item):
        module, node = item
        is_def = isinstance(node, (ast.FunctionDef, ast.ClassDef)) or any(
            isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in defined for n in ast.walk(node))
        return is_def, module if is_def else "", node.lineno

    parts = {False: [], True: []}
    for module, node in sorted({id(n): (m, n) for (m, _), n in chosen.items()}.values(), key=place):  # each once
        text = _text(_definitions(module, parsed)[0], node)
        if isinstance(node, ast.FunctionDef) and node.args.args and node.args.args[0].arg == "ops":
            text = re.sub(r"\(ops(, |\))", lambda m: "(" if m.group(1) == ", " else "()", text)
            text = re.sub(r"\bops\.(\w+)", lambda m: _OPS[backend].get(m.group(1), _PREFIX[backend] + m.group(1)),
                          text)
        parts[place((module, node))[0]].append(text)
    code = "\n\n\n".join(filter(None, ["\n".join(parts[False]), *parts[True]]))
    renames = {n: n.lstrip("_") for _, n in chosen if n.startswith("_")} | {f.__name__: n for n, f in names.items()}
    return re.sub(r"\b(" + "|".join(map(re.escape, sorted(renames, key=len, reverse=True))) + r")\b",
                  lambda m: renames[m.group(1)], code) if renames else code


@memo(entry_bytes=16 * 1024)  # a class's field comments, a few hundred bytes
def _comments(module: str, name: str) -> dict[str, str]:
    """field -> the comment on its line, for a dataclass in the app's source."""
    lines, defs = _definitions(module, {})
    return {n.target.id: lines[n.lineno - 1].partition("  # ")[2] for n in defs[name].body
            if isinstance(n, ast.AnnAssign)}


def fields(instance: Any, names: tuple[str, ...]) -> str:
    """A dict's lines ``"name": value,  # comment`` for these fields of a dataclass instance, each with the comment
    its class's source gives the field."""
    comments = _comments(type(instance).__module__, type(instance).__name__)
    shown = {str: lambda v: f'"{v}"', float: number}
    return "\n".join(f'    "{name}": {shown.get(type(v := getattr(instance, name)), str)(v)},  # {comments[name]}'
                     for name in names)


def imports(code: str) -> str:
    """The import lines ``code`` needs, sorted and grouped as ruff's isort wants them (math, then the rest)."""
    def calls(*names):
        return [n for n in names if re.search(rf"(?<![\w.]){n}\(", code)]

    rest = [line for pattern, line in ((r"\bnp\.", "import numpy as np"), (r"\btorch\.", "import torch"))
            if re.search(pattern, code)]
    rest += [f"from scipy.{module} import {', '.join(found)}"
             for module, found in (("optimize", calls("brentq", "minimize_scalar")), ("special", calls("erfc")))
             if found]
    return "\n\n".join(filter(None, ["import math" if re.search(r"\bmath\.", code) else "", "\n".join(rest)]))


def fill(template: str, **fields: Any) -> str:
    """The template with each ``$name`` replaced (every name must be given) and ``$imports`` by the imports the
    filled text uses, followed by the blank lines ruff's isort wants; no trailing blank lines."""
    head, _gap, rest = Template(template).substitute(fields, imports="\0").partition("\0")
    rest = rest.lstrip("\n")
    first = next((line for line in rest.splitlines() if not line.startswith("#")), "")
    gap = "\n\n\n" if first.startswith(("def ", "class ", "@")) else "\n\n"
    return (head + imports(head + rest) + gap + rest if rest else head).strip() + "\n"
