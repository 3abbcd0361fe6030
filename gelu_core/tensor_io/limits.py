"""How much a file may hold, the refusal every reader raises, and the tally that charges sizes before allocating.

The two memory caps come from the process's budget (gelu_core.budget: 128 MiB
and 33,554,432 values at the default 1.5 GiB; GELU_MEMORY_BUDGET_MB changes
them); the others bound parsing work and stay fixed.  No torch here.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

from gelu_core import budget
from gelu_core.messages import N_, Fixed, Refusal

# Largest file read, and .streamlit/config.toml's server.maxUploadSize (the same 40 MiB): the smallest cap that
# takes what the lab runs.  Its widest block, GPT-2 XL's (d_model 1600, hidden 6400), in float16 is
# 2 x 1600 x 6400 x 2 + 8000 x 2 bytes = 39.1 MiB; its largest input, an (8, 1024, 768) float32 batch, 24 MiB.
# (The same block in float32, 78 MiB, does not fit: save it as float16.)
MAX_BYTES = 40 * 2**20
# Memory the tensors of one file may take once loaded, all together (a value counts at the larger of its
# stored and loaded size): budget / 12, 128 MiB at the default budget, however well a .npz compressed them.
MAX_LOADED_BYTES = budget.LOADED_BYTES
# Values in one file: MAX_LOADED_BYTES of float32s, 33,554,432 at the default budget.  Every float32 file up to
# MAX_BYTES fits (13.1 M values), so do five (8, 1024, 768) GPT-2 batches (6.3 M each) and the float16 MLP
# weights of a GPT-2 XL block (2 x 1600 x 6400 = 20.5 M values, 41 MB; the lab's widest block).
MAX_ELEMENTS = budget.LOADED_ELEMENTS
MAX_TENSORS = 1024  # tensors in one file (GPT-2 small's state dict has 149)
MAX_NDIM = 8  # dimensions of one tensor
MAX_CSV_CELLS = 2**21  # numbers in a CSV table: 2,097,152, e.g. 2,730 rows of 768
# One CSV row: numpy's parser holds ~8 bytes a character of the line it reads (a 2,000,000-value row of 38 MiB
# peaks near 300 MiB), and the lab's widest token, 1,600 float64s written in full, is ~40 kB.
MAX_CSV_COLUMNS = 2**16  # numbers in one row
MAX_CSV_LINE_BYTES = 2**20  # bytes in one line
MAX_HEADER_BYTES = 2**20  # a safetensors JSON header (the library writes ~100 bytes a tensor)
MAX_NPY_HEADER_BYTES = 10_000  # a .npy header (numpy's own max_header_size; np.save writes ~128 bytes)
MAX_PICKLE_BYTES = 2**18  # data.pkl inside a .pt: ~100 bytes a tensor, and read opcode by opcode twice
# Calls a .pt's pickle may make (torch.save makes 2 a tensor): each is a tensor rebuild in torch's pure-Python
# unpickler, and 5 bytes of pickle can repeat one, so an unbounded 1 MiB pickle could keep it busy for seconds.
MAX_PICKLE_CALLS = 4 * MAX_TENSORS + 64
MAX_ZIP_MEMBERS = MAX_TENSORS + 16  # a .pt has 6 bookkeeping records besides one per storage
MAX_ZIP_DIRECTORY = 2**20  # bytes of zip central directory
MAX_DEPTH = 16  # nesting of dicts in a .pt
MAX_NAME = 100  # characters kept of a tensor's name


class TensorFileError(Refusal, ValueError):
    """A file that load_tensors will not read; the message is short, human and safe to show: a whole sentence
    (a template and parameters, gelu_core.messages), English as ``str()``."""


class Entry(NamedTuple):
    """A tensor a file declares, its size already charged: ``read()`` then makes it, as (value, stored dtype)."""

    name: str  # as the file names it
    shape: tuple[int, ...]
    read: Callable[[], tuple]


class Tally:
    """Values and bytes a file has claimed so far, charged before each allocation is made."""

    def __init__(self):
        self.values, self.bytes = 0, 0

    def charge(self, count: int, stored_itemsize: int, loaded_itemsize: int) -> None:
        self.values += count
        self.bytes += count * max(stored_itemsize, loaded_itemsize)
        check_count(self.values)
        if self.bytes > MAX_LOADED_BYTES:
            mib = math.ceil(self.bytes / 2**20 * 10) / 10  # rounded up: never shows the limit itself
            raise TensorFileError(N_("This file would take {mib} MiB once loaded; the limit is {limit} MiB."),
                                  mib=Fixed(mib, 1), limit=MAX_LOADED_BYTES // 2**20)


def is_count(value) -> bool:
    """A size: an int (not a bool) that is at least 0."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def check_shape(shape: tuple) -> None:
    """Every size a count, at most MAX_NDIM of them, at most MAX_ELEMENTS values."""
    if not all(is_count(n) for n in shape):
        raise TensorFileError(N_("This file has a tensor shape that is not a list of sizes."))
    if len(shape) > MAX_NDIM:
        raise TensorFileError(N_("This file has a tensor with {ndim} dimensions; the limit is {limit}."),
                              ndim=len(shape), limit=MAX_NDIM)
    check_count(math.prod(shape))


def check_count(count: int) -> None:
    if count > MAX_ELEMENTS and count < 10**15:
        raise TensorFileError(N_("This file holds {count} values; the limit is {limit} in one file."),
                              count=count, limit=MAX_ELEMENTS)
    if count > MAX_ELEMENTS:  # a count of 16 digits and more reads as its power of ten
        raise TensorFileError(N_("This file holds about 10^{power} values; the limit is {limit} in one file."),
                              power=str(len(str(count)) - 1), limit=MAX_ELEMENTS)
