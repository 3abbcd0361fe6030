"""The README and docs/ say what is true: the README's Quickstart test command is what CI runs, its Layout names
every module of the app's packages and no module that is not there, its Figures are the benchmarks' own targets;
docs/links.md's table names every control of every page, and every example link in the README and docs/ uses
values its controls take; every path, setting, environment variable and benchmark command they name exists.

Reference: .ci/run, ui/controls.py's declarations (the browser side of the links: tests/e2e/test_docs_links.py),
the files on disk, the constants in the code that enforces each setting.
"""

from __future__ import annotations

import re
import tomllib
from urllib.parse import parse_qs, urlsplit

from tests.conftest import ROOT
from ui.pages import PAGES

README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = {path.relative_to(ROOT).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted((ROOT / "docs").glob("*.md"))}
EVERY = {"README.md": README, **DOCS}
LINKS = DOCS["docs/links.md"]


def section(text: str, heading: str) -> str:
    """The text under ``heading`` (a whole heading line: ``## Quickstart``), to the next heading of its level."""
    level = heading.split(" ", 1)[0]
    return text.split(f"\n{heading}\n", 1)[1].split(f"\n{level} ", 1)[0]


def quickstart_commands() -> list[str]:
    return re.findall(r"```bash\n(.*?)\n```", section(README, "## Quickstart"), re.S)


def test_the_quickstart_is_two_commands_and_ci_runs_the_test_command_word_for_word():
    serve, test = quickstart_commands()
    assert serve.endswith("streamlit run app.py") and test.endswith("python -m pytest")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert test in ci
    slow = [n for n, line in enumerate(ci) if line.startswith("export GELU_SLOW=1")]
    assert slow and slow[0] < ci.index(test)  # CI runs the slow tier the default run skips (tests/conftest.py)


def test_every_control_is_documented_with_its_key():
    table = section(LINKS, "## Every parameter")
    for controls in (p.controls for p in PAGES.values() if p.controls):
        for c in controls:
            if c.bound:
                assert f"`{c.key}`" in table, f"docs/links.md's table does not name {c.key}"


def example_links(text: str) -> list[str]:
    return re.findall(r"http://localhost:8501/[^\s)`]*", text)


def test_every_example_link_uses_values_its_controls_take():
    assert len(example_links(section(LINKS, "## Examples"))) >= 10
    by_key = {c.key: c for p in PAGES.values() if p.controls for c in p.controls if c.bound}
    for name, text in EVERY.items():
        for link in example_links(text):
            for key, values in parse_qs(urlsplit(link).query, keep_blank_values=True).items():
                if key in ("present", "hide"):
                    continue
                assert key in by_key, (name, link, key)
                assert by_key[key].url_problem(values) is None, (name, link, key, values)


PACKAGES = ("ui", "draw", "gelu_core", "hosting", "harness")


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
    """Every module of the packages is named in the Layout block; a page's own module (the module its row in
    ui/pages.py points to) is named by the rule "a module per page", so a new page needs no line here."""
    parts = layout_text()
    page_modules = {row.module.__name__.rpartition(".")[2] for row in PAGES.values() if row.module is not None}
    for package in PACKAGES:
        text = parts[f"{package}/"]
        for path in sorted((ROOT / package).iterdir()):
            if path.name == "__init__.py" or not (path.suffix == ".py" or (path / "__init__.py").exists()):
                continue
            if package == "ui" and path.stem in page_modules and "a module per page" in text:
                continue
            named = re.search(rf"(?<![\w/]){re.escape(path.stem)}(\.py|/|\b)", text)
            assert named, f"Layout: {package}/ omits {path.name}"
    named = set(re.findall(r"[\w/]+\.py\b", " ".join(parts.values())))
    everywhere = {p.relative_to(ROOT).as_posix() for folder in (*PACKAGES, "pages", "scripts", "benchmarks")
                  for p in (ROOT / folder).rglob("*.py")}
    for name in named:
        assert (ROOT / name).exists() or ("/" not in name and any(p.endswith("/" + name) for p in everywhere)), name


def test_the_layout_names_every_folder_and_only_folders_that_exist():
    folders = {head for head in layout_text() if head.endswith("/")}
    on_disk = {f"{p.name}/" for p in ROOT.iterdir() if p.is_dir() and any(p.glob("*.py")) and p.name != "tests"}
    assert on_disk <= folders, f"Layout omits {on_disk - folders}"
    assert all((ROOT / folder).is_dir() for folder in folders), folders


def test_the_figures_are_the_benchmarks_own_targets():
    """Each row of the README's Figures table: its target is a TARGET constant of the benchmark it names."""
    rows = re.findall(r"^\| (.+?) \| (.+?) \| `python (benchmarks/\w+\.py)[^`]*` \|$", section(README, "## Figures"),
                      re.M)
    assert 3 <= len(rows) <= 8, "a handful of headline figures"
    for what, target, script in rows:
        source = (ROOT / script).read_text(encoding="utf-8")
        constants = {float(v) for v in re.findall(r"^\w*TARGET\w* = ([\d.]+)", source, re.M)}
        assert float(re.search(r"[\d.]+", target).group(0)) in constants, (what, target, script, constants)


def test_every_backquoted_path_exists():
    """A `path/like/this.py`, `folder/` or `.streamlit/config.toml` in the README or docs/ is in the repository, from
    its root; a bare file name (`test_pages.py`, in a list of one folder's files) is some file's name there."""
    folders = (*PACKAGES, "pages", "scripts", "benchmarks", "tests", "deploy", "docs", "assets", ".streamlit", ".ci")
    names = {p.name for folder in folders for p in (ROOT / folder).rglob("*")} | {p.name for p in ROOT.iterdir()}
    for name, text in EVERY.items():
        for path in re.findall(r"`(\.?[\w.-]+(?:/[\w.-]+)*(?:/|\.(?:py|toml|cfg|yml|yaml|md|js|css|txt|json)))`", text):
            if path.startswith(("screenshots/", "benchmarks/out/")):  # made by a script, git-ignored
                continue
            found = (ROOT / path).exists() if "/" in path else path in names
            assert found, f"{name} names {path}, which is not there"


# The class poll's page is written with the poll's own change; a link to it may come first.
COMING = {"docs/class-poll.md"}


def test_every_link_to_a_file_reaches_it():
    for name, text in EVERY.items():
        here = (ROOT / name).parent
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", text):
            path = (here / target).resolve()
            assert path.exists() or path.relative_to(ROOT).as_posix() in COMING, f"{name} links to {target}"


def source_files() -> str:
    files = [*ROOT.glob("*.py"), *(p for folder in (*PACKAGES, "pages", "benchmarks", "scripts", "tests")
                                   for p in (ROOT / folder).rglob("*.py")),
             *(ROOT / "deploy").iterdir(), ROOT / ".ci" / "run", ROOT / "Dockerfile"]
    return "\n".join(p.read_text(encoding="utf-8") for p in files if p.is_file())


def test_every_environment_variable_named_is_read_by_the_code():
    code = source_files()
    for name, text in EVERY.items():
        for variable in set(re.findall(r"\bGELU_[A-Z_]+\b", text)):
            assert re.search(rf"[\"'{{$ ]{variable}\b|^export {variable}=", code, re.M), (name, variable)


def test_every_script_command_names_a_script_and_its_options():
    for name, text in EVERY.items():
        for script, options in re.findall(r"python ((?:benchmarks|scripts)/\w+\.py)([^`\n]*)", text):
            source = (ROOT / script).read_text(encoding="utf-8")
            for option in re.findall(r"(?<!\w)--[\w-]+", options):
                assert f'"{option}"' in source, f"{name}: {script} takes no {option}"


def test_the_limits_the_docs_quote_are_the_codes():
    """Settings and limits the code enforces, quoted in the README and docs/deploy.md."""
    from gelu_core import budget
    from hosting import guard

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    deploy = DOCS["docs/deploy.md"]
    share, cap = f"{budget.HOST_SHARE * 100:.0f} %", f"at most {budget.DEFAULT_CAP / 2**30:g} GiB"
    for text in (README, deploy):
        assert share in text and cap in text
    assert f"Uploads are up to {config['server']['maxUploadSize']} MiB" in README
    assert f"`server.maxUploadSize = {config['server']['maxUploadSize']}` (MiB)" in deploy
    assert f"at most {guard.SESSION_FILES} files and twice that cap" in README
    assert f"past {guard.SESSION_FILES} files or twice the upload cap" in deploy
    grace = re.search(r'"GELU_SESSION_GRACE_S", "(\d+)"', (ROOT / "hosting" / "janitor.py").read_text()).group(1)
    for text in (README, deploy):
        assert f"({grace} by default)" in text
    bench_class = (ROOT / "benchmarks" / "bench_class.py").read_text(encoding="utf-8")
    utilisation = re.search(r"^UTILISATION = ([\d.]+)", bench_class, re.M).group(1)
    assert f"u = {utilisation}" in deploy
