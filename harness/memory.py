"""Resident memory of a process from /proc (Linux): now (VmRSS), at its peak (VmHWM), and how much one call
grows this process's peak.

The kernel's high-water mark VmHWM is reset first (``/proc/<pid>/clear_refs``), so the figure counts what the
call itself touched, torch's and numpy's allocations included, unlike tracemalloc.
"""

from __future__ import annotations

import os


def reset_peak(pid: int | str = "self") -> bool:
    """Reset a process's resident-memory high-water mark; False where that is not allowed (or not Linux)."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as handle:
            handle.write("5")
        return True
    except OSError:
        return False


def status_kib(field: str, pid: int | str = "self") -> int:
    """A memory field of /proc/<pid>/status in KiB, e.g. "VmRSS" or "VmHWM"."""
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def memory_kib(pid: int | str = "self") -> dict[str, int]:
    """VmRSS (resident now) and VmHWM (peak resident) of a process, in KiB."""
    fields = {}
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                fields[key] = int(value.split()[0])
    return fields


class PeakGrowth:
    """``with PeakGrowth() as peak: call()``, then ``peak.bytes``: growth of the resident peak over the call
    (None where it cannot be measured)."""

    def __enter__(self) -> PeakGrowth:
        self.bytes = None
        self._ok = os.path.exists("/proc/self/status") and reset_peak()
        self._before = status_kib("VmRSS") if self._ok else 0
        return self

    def __exit__(self, *exc) -> bool:
        if self._ok:
            self.bytes = (status_kib("VmHWM") - self._before) * 1024
        return False
