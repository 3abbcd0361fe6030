"""One memory budget for the whole server process, and every cap that follows from it.

The budget is the memory this process may spend on students' data at once: the
file being loaded, the lab run under way, and the caches that keep recent
results.  The interpreter, torch and Streamlit themselves (their share:
``python benchmarks/bench_browser.py``) come on top of it, which is why it is a
share of the host's memory and not all of it.

How it is set, once, when the process starts:

- ``GELU_MEMORY_BUDGET_MB`` (MiB), if set, is the budget as it is: raise it on
  a large server (``GELU_MEMORY_BUDGET_MB=4096``), lower it on a small one.
- Otherwise it is ``min(1.5 GiB, 60 % of the host limit)``, where the host
  limit is the smallest of this process's cgroup memory limit (v2
  ``memory.max``, v1 ``memory.limit_in_bytes``) and the machine's physical
  memory.  1.5 GiB gives the lab GPT-2 small's full batch (the table below); 60 %
  leaves the rest of a small container (a hosted app's smallest allowance) to the
  libraries.

Every cap is derived from it and charged before the memory is allocated:

==================  ===============  ==========================================================
share               at 1536 MiB      what it bounds
==================  ===============  ==========================================================
budget / 12         128 MiB          ``LOADED_BYTES``: the tensors of one file once loaded
                                     (tensor_io's MAX_LOADED_BYTES; MAX_ELEMENTS float32s);
                                     one load at a time, working peak at most twice that
budget / 16         96 MiB           ``HIDDEN_ELEMENTS`` float32s: the lab's hidden layer,
                                     (8, 1024, 3072) for GPT-2 small; ``RUN_LANES`` (2) runs
                                     at a time, each peaking near three times that
the rest            704 MiB          ``CACHE_BYTES``: what caches may keep, see cache_entries
==================  ===============  ==========================================================

``HIDDEN_ELEMENTS / 4`` (6,291,456: an (8, 1024, 768) batch) caps the lab's
input, since every GPT-2 block widens by four.
"""

from __future__ import annotations

import os
from pathlib import Path

# The widest block the lab builds or reads from a file: GPT-2 XL's, the largest of the family (its weights, float32:
# 2 x 1600 x 6400 x 4 bytes = 82 MB).  Fixed, whatever the budget: the lab teaches GPT-2's block.
MAX_D_MODEL = 1600
MAX_HIDDEN = 4 * MAX_D_MODEL

ENV = "GELU_MEMORY_BUDGET_MB"
RUN_LANES = 2  # lab runs at once at most (hosting.runs.RUN_SLOT: one per core, up to this), each its own peak
DEFAULT_CAP = 1536 * 2**20  # 1.5 GiB: the largest budget taken without being asked
HOST_SHARE = 0.6  # of the host limit, the rest left to Python, torch, Streamlit and the system
_MIB = 2**20


def host_memory(root: Path = Path("/"), physical: int | None = None) -> int | None:
    """Bytes this process may use: the smallest of its cgroup limits (v2, v1) and physical memory; None if unknown.

    ``root`` and ``physical`` are for tests: a directory laid out like ``/`` and a machine size in bytes.
    """
    limits = [physical if physical is not None else _physical_memory()]
    for path in _cgroup_limit_files(root):
        try:
            text = path.read_text().strip()
        except OSError:
            continue
        if text.isdigit():  # "max" (v2) means no limit; v1 writes ~2**63 instead, which the minimum absorbs
            limits.append(int(text))
    known = [n for n in limits if n]
    return min(known) if known else None


def _physical_memory() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def _cgroup_limit_files(root: Path) -> list[Path]:
    """The memory limit files that may bind this process: its own cgroup's (from /proc/self/cgroup) and the root's."""
    base = root / "sys/fs/cgroup"
    files = [base / "memory.max", base / "memory/memory.limit_in_bytes"]
    try:
        lines = (root / "proc/self/cgroup").read_text().splitlines()
    except OSError:
        lines = []
    for line in lines:  # "0::/path" (v2) or "4:memory:/path" (v1)
        _, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        relative = path.strip().lstrip("/")
        if not relative:
            continue
        if controllers == "":
            files.append(base / relative / "memory.max")
        elif "memory" in controllers.split(","):
            files.append(base / "memory" / relative / "memory.limit_in_bytes")
    return files


def memory_budget(environ=os.environ, root: Path = Path("/"), physical: int | None = None) -> int:
    """The budget in bytes: ``GELU_MEMORY_BUDGET_MB`` if set, else min(1.5 GiB, 60 % of the host limit).

    >>> memory_budget({"GELU_MEMORY_BUDGET_MB": "2048"}) // 2**20
    2048
    >>> memory_budget({}, root=Path("/nonexistent"), physical=1000 * 2**20) // 2**20  # 60 % of 1000 MiB
    600
    """
    raw = environ.get(ENV, "").strip()
    if raw:
        try:
            mib = float(raw)
        except ValueError:
            mib = float("nan")
        if not mib > 0 or mib == float("inf"):
            raise ValueError(f"{ENV} must be a positive number of MiB, such as 1536; it is {raw[:40]!r}.")
        return max(_MIB, int(mib * _MIB))
    host = host_memory(root, physical)
    if host is None:
        return DEFAULT_CAP
    return max(_MIB, min(DEFAULT_CAP, int(host * HOST_SHARE)))


def _whole_mib(n: float) -> int:
    """n bytes rounded down to whole MiB (at least one), so that messages can name the limit exactly."""
    return max(1, int(n) // _MIB) * _MIB


def shares(budget: int) -> dict[str, int]:
    """The caps a budget of ``budget`` bytes gives (see the table above).

    >>> s = shares(1536 * 2**20); s["loaded_bytes"] // 2**20, s["hidden_elements"], s["input_elements"]
    (128, 25165824, 6291456)
    """
    loaded = _whole_mib(budget / 12)
    hidden_bytes = _whole_mib(budget / 16)
    return {
        "budget": budget,
        "loaded_bytes": loaded,  # tensors of one file once loaded
        "loaded_elements": loaded // 4,  # as float32
        "hidden_elements": hidden_bytes // 4,  # float32 hidden activations of one lab run
        "input_elements": hidden_bytes // 16,  # a quarter of the hidden layer: the block widens by 4
        "cache_bytes": max(0, budget - 2 * loaded - 3 * RUN_LANES * hidden_bytes),  # what is left for caches
    }


BUDGET = memory_budget()
_SHARES = shares(BUDGET)
LOADED_BYTES = _SHARES["loaded_bytes"]
LOADED_ELEMENTS = _SHARES["loaded_elements"]
HIDDEN_ELEMENTS = _SHARES["hidden_elements"]
INPUT_ELEMENTS = _SHARES["input_elements"]
CACHE_BYTES = _SHARES["cache_bytes"]


def cache_entries(bytes_per_entry: int, share: float = 1.0, cache_bytes: int | None = None) -> int:
    """How many entries of ``bytes_per_entry`` a cache may keep in ``share`` of CACHE_BYTES; at least 1.

    Every cache of the app is a ``hosting.runs.SharedRuns`` bounded this way (``SharedRuns.within``, ``memo``),
    each entry sized at its largest (a loaded file at LOADED_BYTES, a block at its float32 weights): the lab's
    results, blocks and files a quarter each, the finished races 5 %, each of the pages' memos and the lesson's
    answers 0.5 %.  tests/test_memo.py checks that all of them at their bound fit in CACHE_BYTES.

    >>> cache_entries(128 * 2**20, share=0.5, cache_bytes=992 * 2**20)
    3
    """
    available = CACHE_BYTES if cache_bytes is None else cache_bytes
    return max(1, int(available * share) // max(1, int(bytes_per_entry)))
