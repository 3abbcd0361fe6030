"""benchmarks/RESULTS.md: each benchmark's latest table, written by the benchmark that measures it.

A benchmark prints its table and hands the same lines to ``record``, which replaces that benchmark's own section
of RESULTS.md (or adds it at the end) under a line giving the date, the CPU model, the commit and the command:

    from benchmarks.results import printed, record

    if __name__ == "__main__":
        with printed() as lines:        # everything printed inside, printed as ever and kept line by line
            main()
        record("bench_move", None, lines)

``record(name, command, lines)``: ``name`` is the section's heading (``## bench_move``; a benchmark with modes
that measure different things names one section per mode, e.g. ``bench_class --race``); ``command`` the command
that printed ``lines``, or None for the one this process was started with; ``lines`` the table, as printed.  A
run that raises records nothing (``printed`` lets the exception through before ``record`` is reached).

``GELU_RESULTS`` names another file to write, or ``off`` for none (CI's smoke run of a benchmark: its few
students are no figure to keep).
"""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import io
import os
import shlex
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "RESULTS.md"
FENCE = "```"


def command_line() -> str:
    """This process's command as typed from the repository's root: ``python benchmarks/bench_x.py --flag 1``."""
    script = Path(sys.argv[0]).resolve()
    shown = script.relative_to(ROOT).as_posix() if script.is_relative_to(ROOT) else str(script)
    return shlex.join(["python", shown, *sys.argv[1:]])


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo and how many CPUs this process may use."""
    model = "unknown CPU"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return f"{model}, {len(os.sched_getaffinity(0))} CPUs"


def commit() -> str:
    """The checkout's short commit, with "+ changes" when its tracked or new files differ from it (RESULTS.md, which
    the benchmarks write, aside)."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()

    try:
        head = git("rev-parse", "--short", "HEAD")
        dirty = git("status", "--porcelain", "--", ".", f":!{RESULTS.relative_to(ROOT).as_posix()}")
    except (OSError, subprocess.CalledProcessError):
        return "no git checkout"
    return f"{head} + changes" if dirty else head


def section(name: str, command: str, lines: Iterable[str]) -> str:
    """One section of RESULTS.md: its heading, where and how the table was made, the table."""
    when = datetime.date.today().isoformat()
    load = os.getloadavg()[0]
    return (f"## {name}\n\n`{command}`  \n{when} · {cpu_model()} · load average {load:.1f} at the end · "
            f"commit {commit()}\n\n{FENCE}text\n" + "\n".join(lines).rstrip("\n") + f"\n{FENCE}\n")


def replace_section(text: str, name: str, new: str) -> str:
    """``text`` with the section headed ``## name`` (to the next heading outside a code block) replaced by ``new``,
    or ``new`` added at the end."""
    lines = text.splitlines(keepends=True)
    start = end = None
    fenced = False
    for i, line in enumerate(lines):
        if line.startswith(FENCE):
            fenced = not fenced
        elif not fenced and line.startswith("## "):
            if start is not None:
                end = i
                break
            if line.rstrip("\n") == f"## {name}":
                start = i
    if start is None:
        return text.rstrip("\n") + "\n\n" + new
    end = len(lines) if end is None else end
    after = "".join(lines[end:])
    return "".join(lines[:start]) + new + ("\n" + after if after else "")


def record(name: str, command: str | None, lines: Iterable[str]) -> Path | None:
    """Replace the section ``name`` of RESULTS.md with ``lines``, headed by the date, CPU, commit and ``command``
    (None: this process's own); the file written, or None under ``GELU_RESULTS=off``."""
    target = os.environ.get("GELU_RESULTS", "")
    if target == "off":
        return None
    path = Path(target) if target else RESULTS
    new = section(name, command or command_line(), list(lines))
    path.touch()
    with open(path, "r+", encoding="utf-8") as file:  # one writer at a time: two benchmarks may finish together
        fcntl.flock(file, fcntl.LOCK_EX)
        text = replace_section(file.read(), name, new)
        file.seek(0)
        file.truncate()
        file.write(text)
    print(f"(written to {path}, section '{name}')")
    return path


class _Tee(io.TextIOBase):
    """A stdout that writes through to the real one and keeps each finished line."""

    def __init__(self, out, lines: list[str]):
        self.out, self.lines, self.partial = out, lines, ""

    def write(self, text: str) -> int:
        self.out.write(text)
        *done, self.partial = (self.partial + text).split("\n")
        self.lines.extend(done)
        return len(text)

    def flush(self) -> None:
        self.out.flush()


@contextlib.contextmanager
def printed() -> Iterator[list[str]]:
    """The lines printed to stdout inside the block (still printed), as a list filled while it runs."""
    lines: list[str] = []
    tee = _Tee(sys.stdout, lines)
    sys.stdout = tee
    try:
        yield lines
    finally:
        sys.stdout = tee.out
        if tee.partial:
            lines.append(tee.partial)
