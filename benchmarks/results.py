"""benchmarks/RESULTS.md: each benchmark's latest table, in a section of its own that its next run replaces.

A section starts with ``## <name>`` and a line saying when, on what CPU, at which commit and with which command it
was measured; the rest of the file is left as it is.
"""

from __future__ import annotations

import contextlib
import datetime
import io
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILE = ROOT / "benchmarks" / "RESULTS.md"
TITLE = "# Benchmark results\n\nEach section is replaced by its benchmark's next run (benchmarks/results.py).\n"


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo ("unknown" where there is none)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def commit() -> str:
    """The checkout's commit, "+ changes" when its tracked files differ from it."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    return head + (" + changes" if git("status", "--porcelain", "--untracked-files=no") else "")


def heading(name: str, command: str | None = None) -> str:
    command = command or "python " + " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]])
    return (f"## {name}\n\n{datetime.date.today().isoformat()}, {cpu_model()}, commit {commit()}, "
            f"`{command}`\n")


def write_section(name: str, lines: list[str], command: str | None = None) -> None:
    """Replace (or add) the section ``name`` of RESULTS.md with ``lines`` under its heading."""
    text = FILE.read_text() if FILE.exists() else TITLE
    section = heading(name, command) + "\n" + "\n".join(lines).rstrip() + "\n"
    pattern = re.compile(rf"^## {re.escape(name)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: section + "\n", text, count=1).rstrip() + "\n"
    else:
        text = text.rstrip() + "\n\n" + section
    FILE.write_text(text)


class _Tee(io.TextIOBase):
    def __init__(self, out):
        self.out, self.kept = out, io.StringIO()

    def write(self, text: str) -> int:
        self.kept.write(text)
        return self.out.write(text)

    def flush(self) -> None:
        self.out.flush()


@contextlib.contextmanager
def recorded(name: str, enabled: bool = True):
    """Print as usual, and keep what is printed: the section ``name`` of RESULTS.md becomes it at the end (unless
    ``enabled`` is false, or the block raised)."""
    if not enabled:
        yield
        return
    tee = _Tee(sys.stdout)
    sys.stdout = tee
    try:
        yield
    finally:
        sys.stdout = tee.out
    write_section(name, ["```", *tee.kept.getvalue().rstrip().splitlines(), "```"])
