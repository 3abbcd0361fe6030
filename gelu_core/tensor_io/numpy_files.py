""".npy arrays and .npz archives of them: numpy's own header parser, every size capped before the data is read.

The header is read by ``numpy.lib.format`` (``read_magic``, ``read_array_header_1_0`` / ``_2_0``, which parse
it with ``ast.literal_eval``, never executing it).  Before numpy sees it, its length field is checked against
MAX_NPY_HEADER_BYTES: numpy reads the whole declared header before applying its own ``max_header_size``, and a
compressed member could declare gigabytes.  Versions 1.0 and 2.0 are read; 3.0 (utf-8 field names, written
only for structured dtypes, which are refused anyway) is not.  No torch here.
"""

from __future__ import annotations

import io
import math
import struct
import zipfile
import zlib
from contextlib import contextmanager

import numpy as np
from numpy.lib import format as npy_format

from gelu_core.messages import N_, Fixed, Message
from gelu_core.tensor_io.archive import stored_member
from gelu_core.tensor_io.formats import NPY_MAGIC, shape_text
from gelu_core.tensor_io.limits import (
    MAX_LOADED_BYTES,
    MAX_NPY_HEADER_BYTES,
    MAX_TENSORS,
    Entry,
    Tally,
    TensorFileError,
    check_shape,
)

_CHUNK = 2**20  # bytes inflated per read from a compressed .npz member
_HEADER_READERS = {(1, 0): (2, npy_format.read_array_header_1_0), (2, 0): (4, npy_format.read_array_header_2_0)}
_TARGET = {"f2": np.float32, "f4": np.float32, "f8": np.float64}
DAMAGED_MEMBER = N_("This file has a damaged member.")
# what a dtype that is not a real number holds, by numpy's kind (safetensors' and torch's readers say the same)
DATA_WORDS = {"b": Message(N_("true/false values")), "c": Message(N_("complex numbers")), "U": Message(N_("text")),
              "S": Message(N_("bytes")), "V": Message(N_("raw bytes")), "M": Message(N_("dates")),
              "m": Message(N_("time spans")), "f": Message(N_("extended-precision floats")),
              "?": Message(N_("unsupported data"))}
_ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, struct.error, NotImplementedError)


def _read_exact(stream, n: int) -> bytes:
    """n bytes from stream, or fewer at its end (never more)."""
    parts, left = [], n
    while left > 0:
        part = stream.read(min(left, _CHUNK))
        if not part:
            break
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


def _npy_header(stream) -> tuple[np.dtype, tuple[int, ...], bool, int]:
    """(dtype, shape, fortran_order, header bytes) of a .npy stream, read by numpy after the length is capped."""
    bad = N_("This file has a damaged .npy header.")
    start = _read_exact(stream, len(NPY_MAGIC) + 2)
    try:
        version = npy_format.read_magic(io.BytesIO(start))
    except ValueError:
        raise TensorFileError(bad) from None
    if version not in _HEADER_READERS:
        raise TensorFileError(N_("This file uses .npy version {version}, which is not supported."),
                              version=f"{version[0]}.{version[1]}")
    width, read_header = _HEADER_READERS[version]
    length_bytes = _read_exact(stream, width)
    if len(length_bytes) < width:
        raise TensorFileError(bad)
    length = int.from_bytes(length_bytes, "little")
    if length > MAX_NPY_HEADER_BYTES:
        raise TensorFileError(N_("This file's .npy header is over {limit} bytes."), limit=MAX_NPY_HEADER_BYTES)
    raw = _read_exact(stream, length)
    if len(raw) < length:
        raise TensorFileError(bad)
    try:
        shape, fortran, dtype = read_header(io.BytesIO(length_bytes + raw), max_header_size=MAX_NPY_HEADER_BYTES)
    except ValueError as err:
        if isinstance(err.__cause__, TypeError):  # numpy: "descr is not a valid dtype descriptor"
            raise TensorFileError(N_("This file has an unknown dtype.")) from None
        raise TensorFileError(bad) from None
    except Exception:  # RecursionError, MemoryError, a structured descr numpy chokes on
        raise TensorFileError(bad) from None
    check_shape(shape)  # numpy lets through negative sizes and True
    return dtype, shape, fortran, len(start) + width + length


def numpy_target(dtype: np.dtype) -> type:
    """float32 or float64 for a numpy dtype this loader accepts; TensorFileError for the rest."""
    if dtype.hasobject:
        raise TensorFileError(N_("This file holds Python objects; only numbers are read."))
    if dtype.names is not None or dtype.subdtype is not None:
        raise TensorFileError(N_("This file holds records (a structured dtype), not numbers."))
    if dtype.kind == "f" and f"f{dtype.itemsize}" in _TARGET:
        return _TARGET[f"f{dtype.itemsize}"]
    if dtype.kind in "iu":
        return np.float32
    raise TensorFileError(N_("This file holds {what}; only real numbers are read."),
                          what=DATA_WORDS.get(dtype.kind, DATA_WORDS["?"]))


def _plan(head, size: int, tally: Tally) -> tuple:
    """The header of a .npy of ``size`` bytes, checked against that size and charged: (dtype, shape, fortran,
    header bytes, target dtype)."""
    dtype, shape, fortran, header_bytes = _npy_header(head)
    target = numpy_target(dtype)
    count = math.prod(shape)  # at most MAX_ELEMENTS: _npy_header checked the shape
    payload = count * dtype.itemsize
    if size - header_bytes != payload:
        have = size - header_bytes
        raise TensorFileError(N_("This file's header says shape {shape} ({size} bytes) but {have} bytes follow it."),
                              shape=shape_text(shape), size=payload, have=max(have, 0))
    tally.charge(count, dtype.itemsize, np.dtype(target).itemsize)
    return dtype, shape, fortran, header_bytes, target


def _array(source, plan: tuple) -> tuple[np.ndarray, str]:
    """(float32/float64 C-ordered array of our own, stored dtype name) from a planned .npy.

    source is the file's bytes (one copy is made, from them into the result) or a stream
    (an inflating .npz member, positioned after its header: read in chunks into an array of our own).
    """
    dtype, shape, fortran, header_bytes, target = plan
    count = math.prod(shape)
    payload = count * dtype.itemsize
    in_memory = isinstance(source, bytes | memoryview)
    if not count:
        flat = np.empty(0, dtype=dtype)
    elif in_memory:
        flat = np.frombuffer(source, dtype=dtype, count=count, offset=header_bytes)  # a view of the upload
    else:
        flat = np.empty(count, dtype=dtype)
        view, filled = memoryview(flat).cast("B"), 0
        while filled < payload:
            part = source.read(min(_CHUNK, payload - filled))
            if not part:
                raise TensorFileError(N_("This file ends before its data does."))
            view[filled:filled + len(part)] = part
            filled += len(part)
    if not in_memory and source.read(1):
        raise TensorFileError(N_("This file has data past the end its header declares."))
    array = flat.reshape(shape[::-1]).T if fortran else flat.reshape(shape)
    # always a copy of a view of the upload; of our own buffer, only to change dtype, byte order or layout
    return np.array(array, dtype=np.dtype(target), order="C", copy=True if in_memory else None), dtype.name


def read_npy(data: bytes, tally: Tally) -> list[Entry]:
    """The one array of a .npy file, as "tensor"."""
    plan = _plan(io.BytesIO(data[: 12 + MAX_NPY_HEADER_BYTES]), len(data), tally)
    return [Entry("tensor", plan[1], lambda: _array(data, plan))]


def read_npz(data: bytes, archive: zipfile.ZipFile, tally: Tally) -> list[Entry]:
    """The arrays of an np.savez archive: declared sizes capped, then every member's header read and charged,
    before any member's data is inflated."""
    infos = archive.infolist()
    if len(infos) > MAX_TENSORS:
        raise TensorFileError(N_("This file holds more than {limit} arrays."), limit=MAX_TENSORS)
    declared = 0
    for info in infos:
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise TensorFileError(N_("This file uses a compression np.savez never writes."))
        if info.compress_type == zipfile.ZIP_STORED and info.compress_size != info.file_size:
            raise TensorFileError(DAMAGED_MEMBER)
        declared += info.file_size
    # every member is a header (≤ 10 kB, checked later) plus data, ≤ MAX_LOADED_BYTES in all
    limit = MAX_LOADED_BYTES + len(infos) * (MAX_NPY_HEADER_BYTES + 16)
    if declared > limit:
        raise TensorFileError(N_("This file would unpack to {size} MiB; the limit is {limit} MiB."),
                              size=Fixed(declared / 2**20, 0), limit=Fixed(limit / 2**20, 0))
    entries = []
    for info in infos:
        name = info.filename[: -len(".npy")].replace("/", ".")
        with _damage_as_refusal():
            if info.compress_type == zipfile.ZIP_STORED:
                member = stored_member(data, info)
                plan = _plan(io.BytesIO(member[: 12 + MAX_NPY_HEADER_BYTES]), info.file_size, tally)
                entries.append(Entry(name, plan[1], lambda m=member, p=plan: _array(m, p)))
            else:  # only the header is inflated now; the data waits until every member has been charged
                with archive.open(info) as stream:
                    plan = _plan(stream, info.file_size, tally)
                entries.append(Entry(name, plan[1], lambda a=archive, i=info, p=plan: _inflate(a, i, p)))
    return entries


def _inflate(archive: zipfile.ZipFile, info: zipfile.ZipInfo, plan: tuple) -> tuple[np.ndarray, str]:
    """A deflated member's array: inflated in chunks, never past the declared size (zipfile stops there and checks
    the CRC at the end)."""
    with _damage_as_refusal(), archive.open(info) as stream:
        if len(_read_exact(stream, plan[3])) < plan[3]:  # the header, read and checked when planned
            raise TensorFileError(DAMAGED_MEMBER)
        return _array(stream, plan)


@contextmanager
def _damage_as_refusal():
    """Turns what zipfile and zlib raise on a damaged member into one refusal; lets TensorFileError through."""
    try:
        yield
    except TensorFileError:
        raise
    except _ZIP_ERRORS:
        raise TensorFileError(DAMAGED_MEMBER) from None
