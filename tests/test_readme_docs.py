"""The README says what is true: its Quickstart test command is what CI runs, its table of link parameters
names every control of every page, every example link uses values the controls take, and its Layout names
every module of the app's packages and no module that is not there.

Reference: .ci/run, ui/controls.py's declarations (the browser side of the links: tests/e2e/test_readme.py),
the files on disk.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

from tests.conftest import ROOT
from ui.pages import PAGES

README = (ROOT / "README.md").read_text(encoding="utf-8")


def quickstart_commands() -> list[str]:
    section = README.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.*?)\n```", section, re.S)


def test_the_quickstart_is_two_commands_and_ci_runs_the_test_command_word_for_word():
    serve, test = quickstart_commands()
    assert serve.endswith("streamlit run app.py") and test.endswith("python -m pytest")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert test in ci
    slow = [n for n, line in enumerate(ci) if line.startswith("export GELU_SLOW=1")]
    assert slow and slow[0] < ci.index(test)  # CI runs the slow tier the default run skips (tests/conftest.py)


def test_every_control_is_documented_with_its_key():
    section = README.split("### Links to an exact view", 1)[1].split("\n## ", 1)[0]
    for controls in (p.controls for p in PAGES.values() if p.controls):
        for c in controls:
            if c.bound:
                assert f"`{c.key}`" in section, f"README's link table does not name {c.key}"


def test_every_example_link_uses_values_its_controls_take():
    section = README.split("### Links to an exact view", 1)[1].split("\n## ", 1)[0]
    links = re.findall(r"http://localhost:8501/[^\s)`]*", section)
    by_key = {c.key: c for p in PAGES.values() if p.controls for c in p.controls if c.bound}
    assert len(links) >= 10
    for link in links:
        for key, values in parse_qs(urlsplit(link).query, keep_blank_values=True).items():
            if key in ("present", "hide"):
                continue
            assert key in by_key, (link, key)
            assert by_key[key].url_problem(values) is None, (link, key, values)


PACKAGES = ("ui", "gelu_core", "hosting", "harness")


def layout_text() -> dict[str, str]:
    """The Layout block's text by its first column (``ui/``, ``app.py``, ...), continuation lines joined."""
    block = re.search(r"```\n(.*?)\n```", README.split("## Layout", 1)[1], re.S).group(1)
    parts: dict[str, str] = {}
    for line in block.splitlines():
        if line[:1].strip():
            head, _, rest = line.partition(" ")
            parts[head] = rest
        else:
            parts[head] += " " + line.strip()
    return parts


def test_the_layout_names_every_module_and_only_modules_that_exist():
    parts = layout_text()
    for package in PACKAGES:
        text = parts[f"{package}/"]
        for path in sorted((ROOT / package).iterdir()):
            if path.name == "__init__.py" or not (path.suffix == ".py" or (path / "__init__.py").exists()):
                continue
            named = re.search(rf"(?<![\w/]){re.escape(path.stem)}(\.py|/|\b)", text)
            assert named, f"Layout: {package}/ omits {path.name}"
    named = set(re.findall(r"[\w/]+\.py\b", " ".join(parts.values())))
    everywhere = {p.relative_to(ROOT).as_posix() for folder in (*PACKAGES, "pages", "scripts", "benchmarks")
                  for p in (ROOT / folder).rglob("*.py")}
    for name in named:
        assert (ROOT / name).exists() if "/" in name else any(p.endswith("/" + name) for p in everywhere), name
