"""hosting.janitor.tune_allocator: where a lab run's tensors come from, in a fresh server-like process.

Reference: glibc's own count of mmapped blocks (mallinfo2().hblks) around tensors torch allocates, in a fresh
interpreter that tunes the allocator first, as the server does at start-up (hosting/__init__.py).  In a process
that has already run other tests, a large free chunk left in the heap may serve a large request without a mapping
(glibc reuses free heap chunks before it maps), so the check runs where the server's conditions hold.  Counts are
integers: tolerance 0.  glibc only (skipped elsewhere).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = """
import ctypes
import torch
from gelu_core.lab import _CHUNK
from hosting import internals, janitor

info = getattr(internals.LIBC, "mallinfo2", None)
if info is None or not janitor.tune_allocator():
    print("skip")
    raise SystemExit(0)


class Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()]


info.restype = Mallinfo2


def mapped_by(shape, dtype) -> int:
    before = info().hblks
    t = torch.empty(shape, dtype=dtype)
    grew = info().hblks - before
    del t
    return grew


print(mapped_by((_CHUNK,), torch.float64), mapped_by((8, 1024, 768), torch.float32))
"""


def test_the_labs_chunk_temporaries_come_from_the_heap_and_a_runs_tensors_from_mmap():
    """A row chunk's largest temporary (gelu_core.lab._CHUNK float64s, 8 MiB) is reused from the heap, not mapped
    afresh (its pages faulted in again) at every chunk; a whole run's tensor (an (8, 1024, 768) float32 output,
    24 MiB) gets a mapping of its own, given back to the system when freed."""
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    if done.stdout.strip() == "skip":
        pytest.skip("not glibc's malloc")
    assert done.stdout.split() == ["0", "1"]
