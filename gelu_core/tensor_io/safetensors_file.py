"""safetensors files: an 8-byte length, a JSON header of names, dtypes, shapes and offsets, then the data.

The header is checked against the bytes present before anything is read: every
tensor's offsets must match its shape, and the tensors must tile the data
exactly.  No torch here (bfloat16 is widened by hand: it is the top half of a float32).
"""

from __future__ import annotations

import json
import math

import numpy as np

from gelu_core.messages import N_
from gelu_core.tensor_io.formats import clean_name, clip
from gelu_core.tensor_io.limits import (
    MAX_HEADER_BYTES,
    MAX_TENSORS,
    Entry,
    Tally,
    TensorFileError,
    check_shape,
    is_count,
)
from gelu_core.tensor_io.numpy_files import DATA_WORDS, numpy_target

# safetensors dtype -> numpy dtype of its stored little-endian bytes (BF16 read as uint16, widened by hand)
_DTYPES = {
    "F64": "<f8", "F32": "<f4", "F16": "<f2", "BF16": "<u2",
    "I8": "i1", "I16": "<i2", "I32": "<i4", "I64": "<i8",
    "U8": "u1", "U16": "<u2", "U32": "<u4", "U64": "<u8",
}
_REFUSED = {"BOOL": DATA_WORDS["b"], "C64": DATA_WORDS["c"], "C128": DATA_WORDS["c"]}


def _no_duplicates(pairs: list) -> dict:
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("duplicate key")
    return dict(pairs)


def read_safetensors(data: bytes, tally: Tally) -> list[Entry]:
    """The tensors of a safetensors file whose header is checked against the bytes present, each charged."""
    bad = N_("This file has a damaged safetensors header.")
    length = int.from_bytes(data[:8], "little")
    if length > MAX_HEADER_BYTES:
        raise TensorFileError(N_("This file's safetensors header is over {limit} MiB."),
                              limit=MAX_HEADER_BYTES // 2**20)
    if 8 + length > len(data):
        raise TensorFileError(N_("This file's safetensors header runs past the end of the file."))
    try:
        header = json.loads(data[8:8 + length].decode("utf-8"), object_pairs_hook=_no_duplicates)
    except Exception:  # UnicodeDecodeError, JSONDecodeError, duplicate keys, RecursionError
        raise TensorFileError(bad) from None
    if not isinstance(header, dict):
        raise TensorFileError(bad)
    metadata = header.pop("__metadata__", None)
    if metadata is not None and not isinstance(metadata, dict):
        raise TensorFileError(bad)
    if len(header) > MAX_TENSORS:
        raise TensorFileError(N_("This file holds more than {limit} tensors."), limit=MAX_TENSORS)
    start, end_of_data = 8 + length, len(data) - 8 - length
    planned = []
    for name, entry in header.items():
        shown = clip(clean_name(name))
        if not isinstance(entry, dict) or set(entry) != {"dtype", "shape", "data_offsets"}:
            raise TensorFileError(bad)
        kind, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
        if not isinstance(kind, str) or not isinstance(shape, list):
            raise TensorFileError(bad)
        if kind not in _DTYPES:
            if kind not in _REFUSED:
                raise TensorFileError(N_("Tensor '{name}' in this file has an unsupported dtype; only real numbers "
                                         "are read."), name=shown)
            raise TensorFileError(N_("Tensor '{name}' in this file holds {what}; only real numbers are read."),
                                  name=shown, what=_REFUSED[kind])
        check_shape(tuple(shape))
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(is_count(o) for o in offsets)):
            raise TensorFileError(bad)
        begin, end = offsets
        count = math.prod(shape)
        itemsize = np.dtype(_DTYPES[kind]).itemsize
        tally.charge(count, itemsize, 8 if kind == "F64" else 4)
        if not begin <= end <= end_of_data or end - begin != count * itemsize:
            raise TensorFileError(N_("Tensor '{name}' in this file has offsets that do not match its shape and the "
                                     "data present."), name=shown)
        planned.append((begin, end, name, kind, tuple(shape)))
    # the format requires the tensors to tile the data exactly: no gaps, no overlaps
    position = 0
    for begin, end, *_ in sorted(planned):
        if begin != position:
            raise TensorFileError(N_("This file's tensors overlap or leave gaps in its data."))
        position = end
    if position != end_of_data:
        raise TensorFileError(N_("This file has data that no tensor in its header covers."))

    def read(begin: int, kind: str, shape: tuple) -> tuple[np.ndarray, str]:
        stored = np.frombuffer(data, dtype=_DTYPES[kind], count=math.prod(shape), offset=start + begin)
        if kind == "BF16":  # bfloat16 is the top half of a float32
            wide = stored.astype(np.uint32)
            wide <<= 16  # in place: the output is the only new array
            return wide.view(np.float32).reshape(shape), "bfloat16"
        # astype copies: never a view of data
        return stored.astype(numpy_target(stored.dtype), copy=True).reshape(shape), stored.dtype.name

    return [Entry(name, shape, lambda b=begin, k=kind, s=shape: read(b, k, s))
            for begin, _, name, kind, shape in planned]
