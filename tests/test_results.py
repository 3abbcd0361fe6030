"""benchmarks/results.py writes a benchmark's own section of RESULTS.md and leaves every other one as it was.

Reference: texts written out by hand here; the heading line's parts against /proc/cpuinfo, git and the date.
"""

from __future__ import annotations

import datetime
import subprocess
from pathlib import Path

from benchmarks import results
from tests.conftest import ROOT

BEFORE = """# Benchmark results

Intro.

## bench_a

old a
```text
## not a heading: inside a table
```

## bench_b

old b
"""


def test_a_section_is_replaced_in_place_and_the_others_kept():
    new = "## bench_a\n\nnew a\n"
    assert results.replace_section(BEFORE, "bench_a", new) == BEFORE.replace(
        "## bench_a\n\nold a\n```text\n## not a heading: inside a table\n```\n", "## bench_a\n\nnew a\n")


def test_the_last_section_is_replaced_to_the_end():
    assert results.replace_section(BEFORE, "bench_b", "## bench_b\n\nnew b\n") == BEFORE.replace("old b", "new b")


def test_a_new_section_goes_at_the_end():
    assert results.replace_section(BEFORE, "bench_c", "## bench_c\n\nc\n") == BEFORE + "\n## bench_c\n\nc\n"


def test_a_name_that_is_a_prefix_of_another_is_its_own_section():
    text = "# R\n\n## bench_class --race\n\nrace\n"
    assert results.replace_section(text, "bench_class", "## bench_class\n\nx\n") == text + "\n## bench_class\n\nx\n"


def test_record_writes_the_heading_the_command_and_the_table(tmp_path, monkeypatch):
    target = tmp_path / "RESULTS.md"
    target.write_text(BEFORE)
    monkeypatch.setenv("GELU_RESULTS", str(target))
    assert results.record("bench_b", "python benchmarks/bench_b.py --x 1", ["row 1", "row 2"]) == target
    text = target.read_text()
    assert text.startswith(BEFORE.split("old b")[0])
    section = text.split("## bench_b\n", 1)[1]
    head = section.split("```text\n", 1)[0]
    assert "`python benchmarks/bench_b.py --x 1`" in head
    assert datetime.date.today().isoformat() in head
    model = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                 if line.startswith("model name"))
    assert model in head
    short = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.strip()
    assert f"commit {short}" in head
    assert section.endswith("```text\nrow 1\nrow 2\n```\n")


def test_record_writes_nothing_when_told_off(tmp_path, monkeypatch):
    monkeypatch.setenv("GELU_RESULTS", "off")
    assert results.record("bench_b", "x", ["y"]) is None


def test_printed_keeps_every_line_and_still_prints_it(capsys):
    with results.printed() as lines:
        print("one")
        print("two\nthree", end="")
    assert lines == ["one", "two", "three"]
    assert capsys.readouterr().out == "one\ntwo\nthree"


def test_the_command_is_the_script_from_the_root(monkeypatch):
    monkeypatch.setattr("sys.argv", [str(ROOT / "benchmarks" / "bench_b.py"), "--name", "a b"])
    assert results.command_line() == "python benchmarks/bench_b.py --name 'a b'"


def test_every_benchmark_records_and_every_section_is_a_benchmarks():
    """Reference: the files in benchmarks/ and the headings of benchmarks/RESULTS.md."""
    benchmarks = sorted((ROOT / "benchmarks").glob("bench_*.py"))
    assert benchmarks
    for path in benchmarks:
        assert "record(" in path.read_text(encoding="utf-8"), f"{path.name} does not write benchmarks/RESULTS.md"
    text = (ROOT / "benchmarks" / "RESULTS.md").read_text(encoding="utf-8")
    headings = [line[3:] for line in text.splitlines() if line.startswith("## ")]
    assert headings
    for heading in headings:
        assert (ROOT / "benchmarks" / f"{heading.split()[0]}.py").exists(), heading
