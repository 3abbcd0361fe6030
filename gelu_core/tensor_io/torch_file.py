"""torch.save files (.pt, .pth): a zip whose pickle is scanned first, then read by torch.load(weights_only=True)."""

from __future__ import annotations

import io
import pickle
import re
import zipfile

import torch

from gelu_core.messages import N_, Message
from gelu_core.tensor_io.formats import clean_name, clip
from gelu_core.tensor_io.limits import (
    MAX_DEPTH,
    MAX_NDIM,
    MAX_PICKLE_BYTES,
    MAX_TENSORS,
    Entry,
    Tally,
    TensorFileError,
)
from gelu_core.tensor_io.numpy_files import DATA_WORDS
from gelu_core.tensor_io.pickle_scan import PYTHON_OBJECTS, scan_pickle

# dtype a stored dtype is loaded as: floats keep float32/float64, halves widen, integers become float32
TARGET = {torch.float32: torch.float32, torch.float64: torch.float64,
          torch.float16: torch.float32, torch.bfloat16: torch.float32}
DAMAGED = N_("This file is damaged or not a complete torch.save file.")
# what a value that is not a tensor or a dict is, in words
_KIND_WORDS = {list: Message(N_("a list")), tuple: Message(N_("a tuple")), str: Message(N_("text")),
               bytes: Message(N_("bytes")), int: Message(N_("a number")), float: Message(N_("a number")),
               bool: Message(N_("a true/false value")), type(None): "None"}
INTEGERS = {torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8, torch.uint16, torch.uint32, torch.uint64}


def target_dtype(dtype: torch.dtype) -> torch.dtype:
    return TARGET.get(dtype, torch.float32)


def read_torch(data: bytes, archive: zipfile.ZipFile, tally: Tally) -> list[Entry]:
    """The tensors of a torch.save zip, unpickled with weights_only=True, each checked and charged."""
    infos = archive.infolist()
    if any(re.fullmatch(r"[^/]+/constants\.pkl", info.filename) for info in infos):
        raise TensorFileError(N_("This file is a TorchScript program, not saved tensors."))
    # torch's reader takes the folder of the first member and reads <folder>/data.pkl, matching names
    # its own way: one folder and one data.pkl, no names that differ only in case, so that the pickle
    # checked below is the one torch.load reads
    names = [info.filename for info in infos]
    folder = names[0].split("/", 1)[0] + "/"
    pickles = [name for name in names if re.fullmatch(r"[^/]+/data\.pkl", name)]
    if (pickles != [folder + "data.pkl"] or not all(name.startswith(folder) for name in names)
            or len({name.lower() for name in names}) != len(names)):
        raise TensorFileError(N_("This file is an unusual zip archive, not one torch.save wrote."))
    for info in infos:
        if info.compress_type != zipfile.ZIP_STORED or info.compress_size != info.file_size:
            raise TensorFileError(N_("This file has compressed parts, which torch.save never writes."))
        if info.filename.endswith("/data.pkl") and info.file_size > MAX_PICKLE_BYTES:
            raise TensorFileError(N_("This file's table of contents is over {limit} KiB."),
                                  limit=MAX_PICKLE_BYTES // 1024)
    if sum(info.file_size for info in infos) > len(data):
        raise TensorFileError(N_("This file declares more data than it holds."))
    try:
        scan_pickle(archive.read(pickles[0]))
    except TensorFileError:
        raise
    except Exception:  # genops: unknown opcode, truncated argument; zipfile: bad CRC
        raise TensorFileError(DAMAGED) from None
    try:
        obj = torch.load(io.BytesIO(data), weights_only=True, map_location="cpu", mmap=False)
    except pickle.UnpicklingError:
        raise TensorFileError(PYTHON_OBJECTS) from None
    except Exception:  # torch's reader reports damage in many ways (RuntimeError, KeyError, EOFError ...)
        raise TensorFileError(DAMAGED) from None
    pairs: list[tuple[str, torch.Tensor]] = []
    _flatten(obj, "", pairs, 0)
    entries = []
    for name, t in pairs:
        t = _plain_tensor(name, t, len(data))
        _check_dtype(name, t)
        # torch.load made views of the file's storages; a zero-stride view counts every element it claims
        tally.charge(t.numel(), t.element_size(), target_dtype(t.dtype).itemsize)
        entries.append(Entry(name, tuple(t.shape), lambda t=t: (t, str(t.dtype).removeprefix("torch."))))
    return entries


def _flatten(obj, prefix: str, out: list, depth: int) -> None:
    """A tensor, or dicts of tensors nested up to MAX_DEPTH, into (dotted name, tensor) pairs."""
    if isinstance(obj, torch.Tensor):
        if len(out) >= MAX_TENSORS:
            raise TensorFileError(N_("This file holds more than {limit} tensors."), limit=MAX_TENSORS)
        out.append((prefix or "tensor", obj))
        return
    where = clip(clean_name(prefix))
    if isinstance(obj, dict):
        if depth >= MAX_DEPTH:
            raise TensorFileError(N_("This file nests dicts more than {limit} deep."), limit=MAX_DEPTH)
        for key, value in obj.items():
            if isinstance(key, bool) or not isinstance(key, str | int):
                if prefix:
                    raise TensorFileError(N_("This file has a dict at '{name}' whose keys are not names."),
                                          name=where)
                raise TensorFileError(N_("This file has a dict whose keys are not names."))
            _flatten(value, f"{prefix}.{key}" if prefix else str(key), out, depth + 1)
        return
    kind = _KIND_WORDS.get(type(obj)) or Message(N_("an object"))
    if prefix:
        raise TensorFileError(N_("This file holds {what} at '{name}', not a tensor or a dict of tensors."),
                              what=kind, name=where)
    raise TensorFileError(N_("This file holds {what}, not a tensor or a dict of tensors."), what=kind)


def _plain_tensor(name: str, t: torch.Tensor, size: int) -> torch.Tensor:
    """t detached (a Parameter becomes a plain tensor), if it is dense, on the CPU and no larger than the file."""
    shown = clip(clean_name(name))
    if type(t) not in (torch.Tensor, torch.nn.Parameter):
        raise TensorFileError(N_("Tensor '{name}' in this file is a tensor subclass; save plain tensors."), name=shown)
    t = torch.Tensor.detach(t)  # the class's own method, whatever attributes the instance carries
    if t.layout != torch.strided or t.is_nested:
        raise TensorFileError(N_("Tensor '{name}' in this file is sparse or nested; save dense tensors."), name=shown)
    if t.is_quantized:
        raise TensorFileError(N_("Tensor '{name}' in this file is quantized; save float tensors."), name=shown)
    if t.device.type != "cpu":
        raise TensorFileError(N_("Tensor '{name}' in this file has no data (device {device})."), name=shown,
                              device=clean_name(t.device.type))
    if t.dim() > MAX_NDIM:
        raise TensorFileError(N_("Tensor '{name}' in this file has {ndim} dimensions; the limit is {limit}."),
                              name=shown, ndim=t.dim(), limit=MAX_NDIM)
    if t.untyped_storage().nbytes() > size:
        raise TensorFileError(N_("Tensor '{name}' in this file claims more storage than the file holds."),
                              name=shown)
    return t


def _check_dtype(name: str, t: torch.Tensor) -> None:
    """Real numbers only: floats and integers; true/false, complex and exotic dtypes refused by name."""
    if t.dtype in TARGET or t.dtype in INTEGERS:
        return
    source = str(t.dtype).removeprefix("torch.")
    shown = clip(clean_name(name))
    if t.dtype == torch.bool or t.dtype.is_complex:
        raise TensorFileError(N_("Tensor '{name}' in this file holds {what}; only real numbers are read."),
                              name=shown, what=DATA_WORDS["b" if t.dtype == torch.bool else "c"])
    raise TensorFileError(N_("Tensor '{name}' in this file holds dtype {dtype}; only real numbers are read."),
                          name=shown, dtype=clean_name(source))
