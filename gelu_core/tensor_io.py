"""Untrusted tensor files in, float tensors or a clear refusal out.

``load_tensors(data, filename)`` reads the bytes of an uploaded file and returns
``{name: tensor}``; anything it will not read raises ``TensorFileError``, whose
message is one short sentence that is safe to show (``st.error``): it never
repeats markup or long content from the file, and names the file only by a
plain extension.

Formats are told apart by their first bytes, not by the file name (a mismatch
gets a note); the names the tensors come back under:

- zip with ``<dir>/data.pkl``, from ``torch.save``: ``"tensor"`` for a single
  tensor, else the dict's keys, nested dicts joined with dots (a state dict).
- zip of ``.npy`` members, from ``np.savez`` or ``np.savez_compressed``: the array names.
- ``\\x93NUMPY``, from ``np.save``: ``"tensor"``.
- 8-byte little-endian length, then ``{``: safetensors, the tensor names.
- text: a CSV table of numbers (comma, tab or semicolon; a first row that is not
  numbers is a header; ``#`` lines are comments): ``"tensor"``, always 2-D.

What comes back: contiguous CPU tensors that own their memory, float32 or
float64.  float16 and bfloat16 widen to float32 (exactly); integers convert to
float32 with a note (``load_tensors_with_notes``); CSV text is parsed to
float64.  NaN and ±inf are values, not errors (see ``describe_nonfinite``).
Names keep only ``A-Z a-z 0-9 _ . -`` (others become ``_``), at most 100 characters.

How it stays safe on the open internet:

- ``.pt`` files are unpickled only by ``torch.load(weights_only=True)``, so no
  code in a pickle runs; before that, the pickle's opcodes are walked (nothing
  run) to be sure it calls only torch's tensor builders, a bounded number of
  times: weights_only still allows ``bytearray(10**10)``.  Old (pre-zip) torch
  files and plain pickles are refused.
- Every size a file declares is checked before anything is read or allocated:
  the zip directory (members, declared sizes, compression), .npy and
  safetensors headers (shape × itemsize must equal the bytes present), and a
  budget of values and bytes for the whole file (MAX_ELEMENTS, MAX_LOADED_BYTES, from
  the process's memory budget in gelu_core.budget) charged before each allocation: a
  zero-stride view that claims a billion rows on 4 bytes of storage is refused before it is copied.
- Compressed .npz members are inflated in a stream that stops at the size the
  zip declared (and that size was capped first); compressed members in a
  ``.pt`` are refused (torch.save never writes them).
"""

from __future__ import annotations

import ast
import io
import json
import math
import pickle
import pickletools
import re
import struct
import threading
import zipfile
import zlib

import numpy as np
import torch

from gelu_core import budget

MAX_BYTES = 50 * 2**20  # largest file read; .streamlit/config.toml caps uploads at the same 50 MiB
# Memory the tensors of one file may take once loaded, all together (a value counts at the larger of its
# stored and loaded size): budget / 12, 128 MiB at the default budget, however well a .npz compressed them.
MAX_LOADED_BYTES = budget.LOADED_BYTES
# Values in one file: MAX_LOADED_BYTES of float32s, 33,554,432 at the default budget.  Every float32 file up to
# MAX_BYTES fits (13.1 M values), so do five (8, 1024, 768) GPT-2 batches (6.3 M each) and the float16 MLP
# weights of a GPT-2 XL block (2 x 1600 x 6400 = 20.5 M values, 41 MB; the lab's widest block).
MAX_ELEMENTS = budget.LOADED_ELEMENTS
MAX_TENSORS = 1024  # tensors in one file (GPT-2 small's state dict has 149)
MAX_NDIM = 8  # dimensions of one tensor
MAX_CSV_CELLS = 2**21  # numbers in a CSV table: 2,097,152, e.g. 2,730 rows of 768 (parsed in ~1 s)
MAX_HEADER_BYTES = 2**20  # a safetensors JSON header (the library writes ~100 bytes a tensor)
MAX_NPY_HEADER_BYTES = 10_000  # a .npy header (numpy's own limit; np.save writes ~128 bytes)
MAX_PICKLE_BYTES = 2**18  # data.pkl inside a .pt: ~100 bytes a tensor, and read opcode by opcode twice
# Calls a .pt's pickle may make (torch.save makes 2 a tensor): each costs torch's pure-Python
# unpickler ~0.1 ms, and 5 bytes of pickle can repeat one, so a 1 MiB pickle could keep it busy 20 s.
MAX_PICKLE_CALLS = 4 * MAX_TENSORS + 64
MAX_ZIP_MEMBERS = MAX_TENSORS + 16  # a .pt has 6 bookkeeping records besides one per storage
MAX_ZIP_DIRECTORY = 2**20  # bytes of zip central directory
MAX_DEPTH = 16  # nesting of dicts in a .pt
MAX_NAME = 100  # characters kept of a tensor's name

SUPPORTED = (".pt", ".pth", ".npy", ".npz", ".safetensors", ".csv")  # for st.file_uploader(type=...)

_CHUNK = 2**20  # bytes inflated per read from a compressed .npz member
_INT_NOTE = "Integer data ({}) was converted to float32, which is exact up to ±16,777,216."
_HALF_NOTE = "{} values were widened to float32 (exactly)."


class TensorFileError(ValueError):
    """A file that load_tensors will not read; the message is short, human and safe to show."""


class _Budget:
    """Values and bytes a file has claimed so far, charged before each allocation is made."""

    def __init__(self, label: str):
        self.label, self.values, self.bytes = label, 0, 0

    def charge(self, count: int, stored_itemsize: int, loaded_itemsize: int) -> None:
        self.values += count
        self.bytes += count * max(stored_itemsize, loaded_itemsize)
        _check_count(self.values, self.label)
        if self.bytes > MAX_LOADED_BYTES:
            mib = math.ceil(self.bytes / 2**20 * 10) / 10  # rounded up: never shows the limit itself
            raise TensorFileError(f"This {self.label}file would take {mib:,.1f} MiB once loaded; "
                                  f"the limit is {MAX_LOADED_BYTES // 2**20} MiB.")


# ---------------------------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------------------------


_ONE_LOAD_AT_A_TIME = threading.Lock()


def load_tensors(data: bytes, filename: str) -> dict[str, torch.Tensor]:
    """The tensors in an uploaded file, by name; raises TensorFileError for anything else.

    >>> import io, numpy as np
    >>> buffer = io.BytesIO(); np.save(buffer, np.arange(3, dtype=np.float32))
    >>> load_tensors(buffer.getvalue(), "x.npy")
    {'tensor': tensor([0., 1., 2.])}
    """
    return load_tensors_with_notes(data, filename)[0]


def load_tensors_with_notes(data: bytes, filename: str) -> tuple[dict[str, torch.Tensor], list[str]]:
    """``load_tensors`` plus notes for the reader (conversions made, names cleaned), in plain words.

    One load at a time per process: each may hold up to MAX_LOADED_BYTES while it works, and a class
    uploading together should hold that once, not once per student.
    """
    try:
        with _ONE_LOAD_AT_A_TIME:
            return _load(data, filename)
    except TensorFileError:
        raise
    except Exception:  # a bug or a case not foreseen: still a refusal, never a traceback
        raise TensorFileError(f"This {_ext_label(filename)}file could not be read.") from None


def describe_nonfinite(t: torch.Tensor) -> str | None:
    """'2 NaN, 1 +inf among 6 values' for a float tensor with non-finite values, else None.

    >>> describe_nonfinite(torch.tensor([1.0, float("nan"), float("inf"), float("nan")]))
    '2 NaN, 1 +inf among 4 values'
    >>> describe_nonfinite(torch.ones(3)) is None
    True
    """
    if not t.is_floating_point() or bool(torch.isfinite(t).all()):
        return None
    counts = [
        (int(torch.isnan(t).sum()), "NaN"),
        (int(torch.isposinf(t).sum()), "+inf"),
        (int(torch.isneginf(t).sum()), "−inf"),
    ]
    parts = [f"{n:,} {label}" for n, label in counts if n]
    return f"{', '.join(parts)} among {t.numel():,} values"


def _load(data: bytes, filename: str) -> tuple[dict[str, torch.Tensor], list[str]]:
    """load_tensors_with_notes without the last-resort net (tests fuzz this one)."""
    if not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError(f"data must be bytes, got {type(data).__name__}")
    if not isinstance(filename, str):
        filename = ""
    label = _ext_label(filename)
    size = data.nbytes if isinstance(data, memoryview) else len(data)
    if size == 0:
        raise TensorFileError(f"This {label}file is empty.")
    if size > MAX_BYTES:
        raise TensorFileError(f"This {label}file is {size / 2**20:.1f} MiB; the limit is {MAX_BYTES // 2**20} MiB.")
    data = bytes(data)  # one immutable buffer: BytesIO and frombuffer share it without copying
    kind = _sniff(data, _extension(filename))
    archive = None
    if kind == "zip":
        archive = _open_zip(data, label)
        kind = _zip_kind(archive)
    notes: list[str] = []
    budget = _Budget(label)
    expected = _EXTENSION_KIND.get(_extension(filename))
    if expected is not None and kind != expected and kind in _KIND_LABEL:
        notes.append(f"Read as {_KIND_LABEL[kind]} by its content, though the name ends in {label.strip()}.")
    if kind == "torch":
        triples = _read_torch(data, archive, label)
    elif kind == "npz":
        triples = _read_npz(data, archive, label, budget)
    elif kind == "npy":
        array, source = _read_npy(data, size, label, budget)
        triples = [("tensor", array, source)]
    elif kind == "safetensors":
        triples = _read_safetensors(data, label, budget)
    elif kind == "text":
        table = _read_csv(data, label, notes)
        budget.charge(table.size, 8, 8)
        triples = [("tensor", table, "float64")]
    elif kind == "unknown" and expected in _KIND_LABEL:
        raise TensorFileError(f"This {label}file is not {_KIND_LABEL[expected]}: it does not start like one.")
    else:
        raise TensorFileError(_REFUSAL[kind].format(label=label))
    return _finish(triples, label, notes, budget)


# ---------------------------------------------------------------------------------------------
# Telling formats apart
# ---------------------------------------------------------------------------------------------

_ZIP_MAGIC = b"PK\x03\x04"
_NPY_MAGIC = b"\x93NUMPY"
# torch.save before PyTorch 1.6 opened with a pickled magic number; this is its first 13 bytes.
_LEGACY_TORCH_MAGIC = pickle.dumps(0x1950A86A20F9469CFC6C, protocol=2)[:13]
_EXTENSION_KIND = {
    ".pt": "torch", ".pth": "torch", ".bin": "torch", ".ckpt": "torch",
    ".npy": "npy", ".npz": "npz", ".safetensors": "safetensors",
    ".csv": "text", ".tsv": "text", ".txt": "text",
}
_KIND_LABEL = {"torch": "a torch.save file", "npz": "a .npz archive", "npy": "a .npy array",
               "safetensors": "a safetensors file", "text": "CSV text"}
_SUPPORTED_TEXT = ".pt, .pth, .npy, .npz, .safetensors or .csv"
_REFUSAL = {
    "legacy_torch": "This {label}file uses torch.save's old format (before PyTorch 1.6); "
                    "re-save it with a current PyTorch.",
    "pickle": "This {label}file is a plain Python pickle, which could run code; only torch.save "
              "files are read, and only their tensors.",
    "other_zip": "This {label}file is a zip archive, but not one made by torch.save or np.savez.",
    "empty_zip": "This {label}file is an empty zip archive.",
    "unknown": f"This {{label}}file is not in a format this page reads ({_SUPPORTED_TEXT}).",
}


def _extension(filename: str) -> str:
    """'.npy' for 'weights/x.NPY'; '' when the name has no plain extension."""
    match = re.search(r"\.([A-Za-z0-9]{1,12})\s*$", filename or "")
    return "." + match.group(1).lower() if match else ""


def _ext_label(filename: str) -> str:
    """'.npy ' for messages: the extension only, never the raw name."""
    ext = _extension(filename)
    return f"{ext} " if ext else ""


def _sniff(data: bytes, ext: str) -> str:
    """What the bytes are, from their first bytes: torch, npz, npy, safetensors, text, or a refusal kind."""
    if data.startswith(_ZIP_MAGIC):
        return "zip"
    if data.startswith(b"PK\x05\x06"):
        return "empty_zip"
    if data.startswith(_NPY_MAGIC):
        return "npy"
    if data.startswith(_LEGACY_TORCH_MAGIC):
        return "legacy_torch"
    if len(data) >= 2 and data[0] == 0x80 and 2 <= data[1] <= 5:
        return "pickle"
    if len(data) >= 9 and data[8:9] == b"{":
        header_length = int.from_bytes(data[:8], "little")
        if ext == ".safetensors" or header_length <= len(data) - 8:
            return "safetensors"
    if ext in ("", ".csv", ".tsv", ".txt") and b"\x00" not in data[:4096]:
        return "text"
    return "unknown"


# ---------------------------------------------------------------------------------------------
# Zip archives: the central directory is checked before any member is read
# ---------------------------------------------------------------------------------------------

_EOCD = struct.Struct("<4s4H2LH")  # end of central directory record, 22 bytes
_ZIP64_LOCATOR = struct.Struct("<4sLQL")  # 20 bytes
_ZIP64_EOCD = struct.Struct("<4sQ2H2L4Q")  # 56 bytes


def _zip_directory(data: bytes, label: str) -> tuple[int, int, int]:
    """(members, directory size, directory offset) from the end record, with their caps checked.

    torch.save and np.savez write no archive comment, so the end record must be
    the last 22 bytes: then Python's zipfile and torch's reader (miniz) both use it.
    """
    damaged = f"This {label}file is a damaged or unusual zip archive."
    if len(data) < _EOCD.size or data[-_EOCD.size:-_EOCD.size + 4] != b"PK\x05\x06":
        raise TensorFileError(damaged)
    _, disk, cd_disk, here, total, cd_size, cd_offset, comment = _EOCD.unpack(data[-_EOCD.size:])
    if comment or disk or cd_disk or here != total:
        raise TensorFileError(damaged)
    if total == 0xFFFF or cd_size == 0xFFFFFFFF or cd_offset == 0xFFFFFFFF:  # zip64
        at = len(data) - _EOCD.size - _ZIP64_LOCATOR.size
        if at < 0 or data[at:at + 4] != b"PK\x06\x07":
            raise TensorFileError(damaged)
        record = _ZIP64_LOCATOR.unpack(data[at:at + _ZIP64_LOCATOR.size])[2]
        if record + _ZIP64_EOCD.size > at:
            raise TensorFileError(damaged)
        fields = _ZIP64_EOCD.unpack(data[record:record + _ZIP64_EOCD.size])
        if fields[0] != b"PK\x06\x06":
            raise TensorFileError(damaged)
        here, total, cd_size, cd_offset = fields[6:10]
        if here != total:
            raise TensorFileError(damaged)
    if total > MAX_ZIP_MEMBERS:
        raise TensorFileError(f"This {label}file holds {total:,} files; the limit is {MAX_ZIP_MEMBERS:,}.")
    if cd_size > MAX_ZIP_DIRECTORY or cd_offset + cd_size > len(data):
        raise TensorFileError(damaged)
    return total, cd_size, cd_offset


def _open_zip(data: bytes, label: str) -> zipfile.ZipFile:
    """A zip whose end record passed its checks (members, directory size); encrypted ones refused."""
    total, _, _ = _zip_directory(data, label)
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError, EOFError, struct.error):
        raise TensorFileError(f"This {label}file is a damaged zip archive.") from None
    infos = archive.infolist()
    if len(infos) != total or len({info.filename for info in infos}) != len(infos):
        raise TensorFileError(f"This {label}file is a damaged or unusual zip archive.")
    if any(info.flag_bits & 0x1 for info in infos):
        raise TensorFileError(f"This {label}file is an encrypted zip archive.")
    return archive


def _zip_kind(archive: zipfile.ZipFile) -> str:
    """'torch' if the archive has <dir>/data.pkl, 'npz' if every member is .npy, else a refusal kind."""
    names = archive.namelist()
    if not names:
        return "empty_zip"
    if any(re.fullmatch(r"[^/]+/data\.pkl", name) for name in names):
        return "torch"
    if all(name.endswith(".npy") for name in names):
        return "npz"
    return "other_zip"


# ---------------------------------------------------------------------------------------------
# torch.save files
# ---------------------------------------------------------------------------------------------


def _read_torch(data: bytes, archive: zipfile.ZipFile, label: str) -> list[tuple[str, torch.Tensor, None]]:
    """(name, tensor, None) triples from a torch.save zip, unpickled with weights_only=True."""
    infos = archive.infolist()
    if any(re.fullmatch(r"[^/]+/constants\.pkl", info.filename) for info in infos):
        raise TensorFileError(f"This {label}file is a TorchScript program, not saved tensors.")
    # torch's reader takes the folder of the first member and reads <folder>/data.pkl, matching names
    # its own way: one folder and one data.pkl, no names that differ only in case, so that the pickle
    # checked below is the one torch.load reads
    names = [info.filename for info in infos]
    folder = names[0].split("/", 1)[0] + "/"
    pickles = [name for name in names if re.fullmatch(r"[^/]+/data\.pkl", name)]
    if (pickles != [folder + "data.pkl"] or not all(name.startswith(folder) for name in names)
            or len({name.lower() for name in names}) != len(names)):
        raise TensorFileError(f"This {label}file is an unusual zip archive, not one torch.save wrote.")
    for info in infos:
        if info.compress_type != zipfile.ZIP_STORED or info.compress_size != info.file_size:
            raise TensorFileError(f"This {label}file has compressed parts, which torch.save never writes.")
        if info.filename.endswith("/data.pkl") and info.file_size > MAX_PICKLE_BYTES:
            raise TensorFileError(f"This {label}file's table of contents is over {MAX_PICKLE_BYTES // 1024} KiB.")
    if sum(info.file_size for info in infos) > len(data):
        raise TensorFileError(f"This {label}file declares more data than it holds.")
    try:
        _scan_pickle(archive.read(pickles[0]), label)
    except TensorFileError:
        raise
    except Exception:  # genops: unknown opcode, truncated argument; zipfile: bad CRC
        raise TensorFileError(f"This {label}file is damaged or not a complete torch.save file.") from None
    try:
        obj = torch.load(io.BytesIO(data), weights_only=True, map_location="cpu", mmap=False)
    except pickle.UnpicklingError:
        raise TensorFileError(
            f"This {label}file holds Python objects other than tensors, which could run code; "
            "save a tensor or a dict of tensors."
        ) from None
    except Exception:  # torch's reader reports damage in many ways (RuntimeError, KeyError, EOFError ...)
        raise TensorFileError(f"This {label}file is damaged or not a complete torch.save file.") from None
    pairs: list[tuple[str, torch.Tensor]] = []
    _flatten(obj, "", pairs, 0, label)
    return [(name, _plain_tensor(name, t, label, len(data)), None) for name, t in pairs]


# What torch.save writes for tensors and dicts of them, protocol 2.  torch.load(weights_only=True)
# allows more, and some of it is costly: bytearray(10**10) is 40 bytes of pickle and 10 GB of
# zeroed memory; UntypedStorage(n) and Tensor(n) allocate memory the file never filled.
_CALLABLE_GLOBALS = {
    "torch._utils _rebuild_tensor_v2", "torch._utils _rebuild_tensor_v3", "torch._utils _rebuild_parameter",
    "collections OrderedDict",
}
_GLOBAL_WORDS = {  # what a refused global means, in words
    "torch._utils _rebuild_sparse_tensor": "sparse tensors", "torch.serialization _get_layout": "sparse tensors",
    "torch._utils _rebuild_qtensor": "quantized tensors", "torch._utils _rebuild_nested_tensor": "nested tensors",
    "torch._utils _rebuild_meta_tensor_no_storage": "tensors without data",
    "torch._utils _rebuild_wrapper_subclass": "tensor subclasses",
    "torch._tensor _rebuild_from_type_v2": "tensors with extra Python attributes",
    "torch._utils _rebuild_parameter_with_state": "tensors with extra Python attributes",
    "torch._utils _rebuild_device_tensor_from_numpy": "NumPy arrays",
}
_PUSH_OPCODES = {"NONE", "NEWFALSE", "NEWTRUE", "EMPTY_TUPLE", "EMPTY_LIST", "EMPTY_DICT", "EMPTY_SET", "BININT",
                 "BININT1", "BININT2", "BINFLOAT", "BINUNICODE", "SHORT_BINSTRING", "LONG1"}
_POP_PUSH_OPCODES = {"TUPLE1": (1, 1), "TUPLE2": (2, 1), "TUPLE3": (3, 1), "APPEND": (1, 0), "SETITEM": (2, 0),
                     "BINPERSID": (1, 1), "BUILD": (1, 0), "REDUCE": (2, 1), "NEWOBJ": (2, 1)}


# Globals that may appear as values, never called: storage types (in persistent ids) and dtypes.
# Listed once from torch's namespace: getattr(torch, name) with a name from a file could import
# one of torch's lazily loaded submodules.
_VALUE_GLOBALS = {"torch.storage UntypedStorage"} | {
    f"torch {name}" for name, value in vars(torch).items()
    if isinstance(value, torch.dtype) or (isinstance(value, type) and name.endswith("Storage"))
}


def _scan_pickle(pickled: bytes, label: str) -> None:
    """Walk a .pt's pickle opcode by opcode, running nothing, before torch.load sees it.

    Each stack entry is tracked only as "this global" or "something else", so
    every call (REDUCE, NEWOBJ) is known to call a tensor rebuilder or OrderedDict;
    globals may be those or storage types and dtypes; calls are at most
    MAX_PICKLE_CALLS (torch's pure-Python unpickler takes ~0.1 ms a call, and
    5 bytes of pickle can repeat one).  Opcodes torch's safe loader does not
    read are refused here too.
    """
    stack: list = []
    marks: list[int] = []
    memo: dict = {}
    calls = 0
    for opcode, arg, _ in pickletools.genops(pickled):
        name = opcode.name
        if name == "GLOBAL":
            if arg not in _CALLABLE_GLOBALS and arg not in _VALUE_GLOBALS:
                words = _GLOBAL_WORDS.get(arg) or ("quantized tensors" if " per_" in arg else None)
                if words:
                    raise TensorFileError(f"This {label}file holds {words}; save plain dense tensors.")
                raise TensorFileError(
                    f"This {label}file holds Python objects other than tensors, which could run code; "
                    "save a tensor or a dict of tensors."
                )
            stack.append(("global", arg))
        elif name in _PUSH_OPCODES:
            stack.append(None)
        elif name in ("BINPUT", "LONG_BINPUT"):
            memo[arg] = stack[-1]
        elif name in ("BINGET", "LONG_BINGET"):
            stack.append(memo[arg])
        elif name == "MARK":
            marks.append(len(stack))
        elif name in ("TUPLE", "APPENDS", "SETITEMS"):
            del stack[marks.pop():]
            if name == "TUPLE":
                stack.append(None)
        elif name in _POP_PUSH_OPCODES:
            pops, pushes = _POP_PUSH_OPCODES[name]
            if len(stack) - (marks[-1] if marks else 0) < pops:
                raise ValueError("stack underflow")
            popped = stack[-pops:]
            del stack[-pops:]
            if name in ("REDUCE", "NEWOBJ"):
                calls += 1
                called = popped[0]
                if not (isinstance(called, tuple) and called[1] in _CALLABLE_GLOBALS):
                    raise TensorFileError(f"This {label}file's table of contents calls something other than "
                                          "torch's tensor builders; it is refused.")
            stack.extend([None] * pushes)
        elif name not in ("PROTO", "STOP"):
            raise TensorFileError(f"This {label}file uses pickle features torch's safe loader does not read; "
                                  "save it with torch.save's defaults.")
    if calls > MAX_PICKLE_CALLS:
        raise TensorFileError(f"This {label}file's table of contents makes {calls:,} calls; the limit is "
                              f"{MAX_PICKLE_CALLS:,}.")


def _flatten(obj, prefix: str, out: list, depth: int, label: str) -> None:
    """A tensor, or dicts of tensors nested up to MAX_DEPTH, into (dotted name, tensor) pairs."""
    if isinstance(obj, torch.Tensor):
        if len(out) >= MAX_TENSORS:
            raise TensorFileError(f"This {label}file holds more than {MAX_TENSORS:,} tensors.")
        out.append((prefix or "tensor", obj))
        return
    where = f" at '{_clip(_clean_name(prefix))}'" if prefix else ""
    if isinstance(obj, dict):
        if depth >= MAX_DEPTH:
            raise TensorFileError(f"This {label}file nests dicts more than {MAX_DEPTH} deep.")
        for key, value in obj.items():
            if isinstance(key, bool) or not isinstance(key, str | int):
                raise TensorFileError(f"This {label}file has a dict{where} whose keys are not names.")
            _flatten(value, f"{prefix}.{key}" if prefix else str(key), out, depth + 1, label)
        return
    kind = {list: "a list", tuple: "a tuple", str: "text", bytes: "bytes", int: "a number", float: "a number",
            bool: "a true/false value", type(None): "None"}.get(type(obj), "an object")
    raise TensorFileError(f"This {label}file holds {kind}{where}, not a tensor or a dict of tensors.")


def _plain_tensor(name: str, t: torch.Tensor, label: str, size: int) -> torch.Tensor:
    """t detached (a Parameter becomes a plain tensor), if it is dense, on the CPU and no larger than the file."""
    what = f"Tensor '{_clip(_clean_name(name))}' in this {label}file"
    if type(t) not in (torch.Tensor, torch.nn.Parameter):
        raise TensorFileError(f"{what} is a tensor subclass; save plain tensors.")
    t = torch.Tensor.detach(t)  # the class's own method, whatever attributes the instance carries
    if t.layout != torch.strided or t.is_nested:
        raise TensorFileError(f"{what} is sparse or nested; save dense tensors.")
    if t.is_quantized:
        raise TensorFileError(f"{what} is quantized; save float tensors.")
    if t.device.type != "cpu":
        raise TensorFileError(f"{what} has no data (device {_clean_name(t.device.type)}).")
    if t.dim() > MAX_NDIM:
        raise TensorFileError(f"{what} has {t.dim()} dimensions; the limit is {MAX_NDIM}.")
    if t.untyped_storage().nbytes() > size:
        raise TensorFileError(f"{what} claims more storage than the file holds.")
    return t


# ---------------------------------------------------------------------------------------------
# .npy and .npz
# ---------------------------------------------------------------------------------------------


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


def _npy_header(stream, label: str) -> tuple[np.dtype, tuple[int, ...], bool, int]:
    """(dtype, shape, fortran_order, header bytes) of a .npy stream; the header is parsed, never executed."""
    bad = f"This {label}file has a damaged .npy header."
    start = _read_exact(stream, 8)
    if len(start) < 8 or not start.startswith(_NPY_MAGIC):
        raise TensorFileError(bad)
    major, minor = start[6], start[7]
    if major == 1 and minor == 0:
        width, encoding = 2, "latin1"
    elif major in (2, 3) and minor == 0:
        width, encoding = 4, "latin1" if major == 2 else "utf8"
    else:
        raise TensorFileError(f"This {label}file uses .npy version {major}.{minor}, which is not supported.")
    length_bytes = _read_exact(stream, width)
    if len(length_bytes) < width:
        raise TensorFileError(bad)
    length = int.from_bytes(length_bytes, "little")
    if length > MAX_NPY_HEADER_BYTES:
        raise TensorFileError(f"This {label}file's .npy header is over {MAX_NPY_HEADER_BYTES:,} bytes.")
    raw = _read_exact(stream, length)
    if len(raw) < length:
        raise TensorFileError(bad)
    try:
        header = ast.literal_eval(raw.decode(encoding))
    except Exception:  # SyntaxError, ValueError, RecursionError, MemoryError on hostile text
        raise TensorFileError(bad) from None
    if not isinstance(header, dict) or set(header) != {"descr", "fortran_order", "shape"}:
        raise TensorFileError(bad)
    descr, fortran, shape = header["descr"], header["fortran_order"], header["shape"]
    if not isinstance(descr, str):
        raise TensorFileError(f"This {label}file holds records (a structured dtype), not numbers.")
    if not isinstance(fortran, bool) or not isinstance(shape, tuple):
        raise TensorFileError(bad)
    _check_shape(shape, label)
    try:
        dtype = np.dtype(descr)
    except (TypeError, ValueError, SyntaxError):
        raise TensorFileError(f"This {label}file has an unknown dtype.") from None
    return dtype, shape, fortran, 8 + width + length


_NUMPY_TARGET = {"f2": np.float32, "f4": np.float32, "f8": np.float64}


def _numpy_target(dtype: np.dtype, label: str) -> type:
    """float32 or float64 for a numpy dtype this loader accepts; TensorFileError for the rest."""
    if dtype.hasobject:
        raise TensorFileError(f"This {label}file holds Python objects; only numbers are read.")
    if dtype.names is not None or dtype.subdtype is not None:
        raise TensorFileError(f"This {label}file holds records (a structured dtype), not numbers.")
    if dtype.kind == "f" and f"f{dtype.itemsize}" in _NUMPY_TARGET:
        return _NUMPY_TARGET[f"f{dtype.itemsize}"]
    if dtype.kind in "iu":
        return np.float32
    plain = {"b": "true/false values", "c": "complex numbers", "U": "text", "S": "bytes", "V": "raw bytes",
             "M": "dates", "m": "time spans", "f": "extended-precision floats"}.get(dtype.kind, "unsupported data")
    raise TensorFileError(f"This {label}file holds {plain}; only real numbers are read.")


def _read_npy(source, size: int, label: str, budget: _Budget) -> tuple[np.ndarray, str]:
    """(float32/float64 C-ordered array of our own, stored dtype name) from a .npy of `size` bytes.

    source is the file's bytes (one copy is made, from them into the result) or
    a stream (an inflating .npz member: read in chunks into an array of our own).
    """
    in_memory = isinstance(source, bytes | memoryview)
    head = io.BytesIO(source[: 12 + MAX_NPY_HEADER_BYTES]) if in_memory else source
    dtype, shape, fortran, header_bytes = _npy_header(head, label)
    target = _numpy_target(dtype, label)
    count = math.prod(shape)
    _check_count(count, label)
    payload = count * dtype.itemsize
    if size - header_bytes != payload:
        have = size - header_bytes
        raise TensorFileError(
            f"This {label}file's header says shape {_shape_text(shape)} ({payload:,} bytes) "
            f"but {max(have, 0):,} bytes follow it."
        )
    budget.charge(count, dtype.itemsize, np.dtype(target).itemsize)
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
                raise TensorFileError(f"This {label}file ends before its data does.")
            view[filled:filled + len(part)] = part
            filled += len(part)
        if source.read(1):
            raise TensorFileError(f"This {label}file has data past the end its header declares.")
    array = flat.reshape(shape[::-1]).T if fortran else flat.reshape(shape)
    # always a copy of a view of the upload; of our own buffer, only to change dtype, byte order or layout
    return np.array(array, dtype=np.dtype(target), order="C", copy=True if in_memory else None), dtype.name


def _stored_member(data: bytes, info: zipfile.ZipInfo, label: str) -> memoryview:
    """The bytes of an uncompressed zip member, in place, after its local header and CRC are checked."""
    damaged = TensorFileError(f"This {label}file has a damaged member.")
    at = info.header_offset
    if data[at:at + 4] != _ZIP_MAGIC or at + 30 > len(data):
        raise damaged
    name_length, extra_length = struct.unpack("<HH", data[at + 26:at + 30])
    start = at + 30 + name_length + extra_length
    name = info.orig_filename.encode("utf-8" if info.flag_bits & 0x800 else "cp437")
    if data[at + 30:at + 30 + name_length] != name or start + info.compress_size > len(data):
        raise damaged  # as zipfile.open checks: the local header must name the member the directory does
    member = memoryview(data)[start:start + info.compress_size]
    if zlib.crc32(member) != info.CRC:
        raise damaged
    return member


def _read_npz(data: bytes, archive: zipfile.ZipFile, label: str, budget: _Budget) -> list[tuple[str, np.ndarray, str]]:
    """(name, array, stored dtype) from an np.savez archive; declared sizes are capped before inflating any."""
    infos = archive.infolist()
    if len(infos) > MAX_TENSORS:
        raise TensorFileError(f"This {label}file holds more than {MAX_TENSORS:,} arrays.")
    declared = 0
    for info in infos:
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise TensorFileError(f"This {label}file uses a compression np.savez never writes.")
        if info.compress_type == zipfile.ZIP_STORED and info.compress_size != info.file_size:
            raise TensorFileError(f"This {label}file has a damaged member.")
        declared += info.file_size
    # every member is a header (≤ 10 kB, checked later) plus data, ≤ MAX_LOADED_BYTES in all
    limit = MAX_LOADED_BYTES + len(infos) * (MAX_NPY_HEADER_BYTES + 16)
    if declared > limit:
        raise TensorFileError(
            f"This {label}file would unpack to {declared / 2**20:,.0f} MiB; the limit is {limit / 2**20:,.0f} MiB."
        )
    triples = []
    for info in infos:
        try:
            if info.compress_type == zipfile.ZIP_STORED:
                array, source = _read_npy(_stored_member(data, info, label), info.file_size, label, budget)
            else:  # inflated in chunks, never past the declared size (zipfile stops there and checks the CRC)
                with archive.open(info) as stream:
                    array, source = _read_npy(stream, info.file_size, label, budget)
        except TensorFileError:
            raise
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, struct.error, NotImplementedError):
            raise TensorFileError(f"This {label}file has a damaged member.") from None
        triples.append((info.filename[: -len(".npy")].replace("/", "."), array, source))
    return triples


# ---------------------------------------------------------------------------------------------
# safetensors
# ---------------------------------------------------------------------------------------------

# safetensors dtype -> numpy dtype of its stored little-endian bytes (BF16 read as uint16, widened by hand)
_SAFETENSORS_DTYPES = {
    "F64": "<f8", "F32": "<f4", "F16": "<f2", "BF16": "<u2",
    "I8": "i1", "I16": "<i2", "I32": "<i4", "I64": "<i8",
    "U8": "u1", "U16": "<u2", "U32": "<u4", "U64": "<u8",
}
_SAFETENSORS_REFUSED = {"BOOL": "true/false values", "C64": "complex numbers", "C128": "complex numbers"}


def _no_duplicates(pairs: list) -> dict:
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("duplicate key")
    return dict(pairs)


def _read_safetensors(data: bytes, label: str, budget: _Budget) -> list[tuple[str, np.ndarray, str]]:
    """(name, array, stored dtype) from a safetensors file whose header is checked against the bytes present."""
    bad = f"This {label}file has a damaged safetensors header."
    length = int.from_bytes(data[:8], "little")
    if length > MAX_HEADER_BYTES:
        raise TensorFileError(f"This {label}file's safetensors header is over {MAX_HEADER_BYTES // 2**20} MiB.")
    if 8 + length > len(data):
        raise TensorFileError(f"This {label}file's safetensors header runs past the end of the file.")
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
        raise TensorFileError(f"This {label}file holds more than {MAX_TENSORS:,} tensors.")
    start, end_of_data = 8 + length, len(data) - 8 - length
    entries = []
    for name, entry in header.items():
        what = f"Tensor '{_clip(_clean_name(name))}' in this {label}file"
        if not isinstance(entry, dict) or set(entry) != {"dtype", "shape", "data_offsets"}:
            raise TensorFileError(bad)
        kind, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
        if not isinstance(kind, str) or not isinstance(shape, list):
            raise TensorFileError(bad)
        if kind not in _SAFETENSORS_DTYPES:
            plain = _SAFETENSORS_REFUSED.get(kind, "an unsupported dtype")
            raise TensorFileError(f"{what} holds {plain}; only real numbers are read.")
        _check_shape(tuple(shape), label)
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(_is_count(o) for o in offsets)):
            raise TensorFileError(bad)
        begin, end = offsets
        count = math.prod(shape)
        itemsize = np.dtype(_SAFETENSORS_DTYPES[kind]).itemsize
        budget.charge(count, itemsize, 8 if kind == "F64" else 4)
        if not begin <= end <= end_of_data or end - begin != count * itemsize:
            raise TensorFileError(f"{what} has offsets that do not match its shape and the data present.")
        entries.append((begin, end, name, kind, tuple(shape)))
    # the format requires the tensors to tile the data exactly: no gaps, no overlaps
    position = 0
    for begin, end, *_ in sorted(entries):
        if begin != position:
            raise TensorFileError(f"This {label}file's tensors overlap or leave gaps in its data.")
        position = end
    if position != end_of_data:
        raise TensorFileError(f"This {label}file has data that no tensor in its header covers.")
    triples = []
    for begin, _, name, kind, shape in entries:
        stored = np.frombuffer(data, dtype=_SAFETENSORS_DTYPES[kind], count=math.prod(shape), offset=start + begin)
        if kind == "BF16":  # bfloat16 is the top half of a float32
            wide = stored.astype(np.uint32)
            wide <<= 16  # in place: the output is the only new array
            array, source = wide.view(np.float32), "bfloat16"
        else:
            array, source = stored.astype(_numpy_target(stored.dtype, label), copy=True), stored.dtype.name
        triples.append((name, array.reshape(shape), source))  # astype copied: never a view of data
    return triples


# ---------------------------------------------------------------------------------------------
# CSV
# ---------------------------------------------------------------------------------------------


def _text(data: bytes) -> io.TextIOWrapper:
    """The file as text, decoded as it is read (UTF-8, a BOM skipped, any line endings)."""
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", newline=None)


def _data_lines(text: io.TextIOBase):
    """(line index, line) of the lines that hold data: not blank, not a # comment."""
    for index, line in enumerate(text):
        if line.strip() and not line.lstrip().startswith("#"):
            yield index, line.rstrip("\n")


def _read_csv(data: bytes, label: str, notes: list[str]) -> np.ndarray:
    """A 2-D float64 array from a CSV table of numbers; a first row that is not numbers is a header."""
    not_text = TensorFileError(f"This {label}file is neither a tensor format nor UTF-8 text.")
    if b"\x00" in data:
        raise not_text
    try:
        lines = _data_lines(_text(data))
        skip, first = next(lines, (0, None))
        second = next(lines, None)
    except UnicodeDecodeError:
        raise not_text from None
    if first is None:
        raise TensorFileError(f"This {label}file has no rows of numbers.")
    delimiter = next((d for d in (",", "\t", ";") if d in first), ",")
    columns = first.count(delimiter) + 1
    # lines, whatever the line endings (an upper bound on rows: blank and comment lines count too)
    rows = max(data.count(b"\n"), data.count(b"\r")) + (data[-1:] not in (b"\n", b"\r"))
    if rows * columns > MAX_CSV_CELLS:
        raise TensorFileError(
            f"This {label}file has up to {rows:,} rows of {columns:,} numbers; the limit is {MAX_CSV_CELLS:,} numbers."
        )
    header = not all(_is_number(cell) for cell in first.split(delimiter))
    if header and second is None:
        raise TensorFileError(f"This {label}file has a header but no rows of numbers.")
    try:
        table = np.loadtxt(_text(data), delimiter=delimiter, dtype=np.float64, ndmin=2, comments="#",
                           skiprows=skip + header, quotechar='"')
        if table.size and table.shape[1] != columns:
            raise ValueError("columns")
    except UnicodeDecodeError:
        raise not_text from None
    except (ValueError, IndexError, TypeError):
        try:
            problem = _csv_problem(data, skip + header, delimiter, columns, label)
        except UnicodeDecodeError:
            raise not_text from None
        raise TensorFileError(problem) from None
    if header:
        notes.append("The first row was read as column names.")
    return table


def _is_number(cell: str) -> bool:
    try:
        float(cell.strip().strip('"'))
    except ValueError:
        return False
    return True


def _csv_problem(data: bytes, skip: int, delimiter: str, columns: int, label: str) -> str:
    """Where a CSV stops being a table of numbers, in words (lines counted from the file's first)."""
    for index, line in _data_lines(_text(data)):
        if index < skip:
            continue
        cells = line.split(delimiter)
        if len(cells) != columns:
            count = f"{len(cells):,} value" + ("s" if len(cells) != 1 else "")
            return f"Line {index + 1:,} of this {label}file has {count}, not {columns:,} like the first row."
        try:
            list(map(float, cells))  # the quick test; quoted cells fall through to the careful one
        except ValueError:
            for column, cell in enumerate(cells, start=1):
                if not _is_number(cell):
                    return f"Line {index + 1:,}, column {column:,} of this {label}file is not a number."
    return f"This {label}file is not a table of numbers."


# ---------------------------------------------------------------------------------------------
# Shared checks and the last step
# ---------------------------------------------------------------------------------------------


def _is_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _check_shape(shape: tuple, label: str) -> None:
    if not all(_is_count(n) for n in shape):
        raise TensorFileError(f"This {label}file has a tensor shape that is not a list of sizes.")
    if len(shape) > MAX_NDIM:
        raise TensorFileError(f"This {label}file has a tensor with {len(shape)} dimensions; the limit is {MAX_NDIM}.")
    _check_count(math.prod(shape), label)


def _check_count(count: int, label: str) -> None:
    if count > MAX_ELEMENTS:
        raise TensorFileError(
            f"This {label}file holds {_big(count)} values; the limit is {MAX_ELEMENTS:,} in one file."
        )


def _big(count: int) -> str:
    return f"{count:,}" if count < 10**15 else f"about 10^{len(str(count)) - 1}"


def _shape_text(shape: tuple) -> str:
    return "(" + ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


def _clean_name(name: str) -> str:
    """Only A-Z a-z 0-9 _ . - survive (others become _), at most MAX_NAME characters."""
    return re.sub(r"[^A-Za-z0-9_.\-]+", "_", str(name))[:MAX_NAME] or "_"


def _clip(name: str, width: int = 40) -> str:
    return name if len(name) <= width else name[: width - 1] + "…"


_TORCH_TARGET = {torch.float32: torch.float32, torch.float64: torch.float64,
                 torch.float16: torch.float32, torch.bfloat16: torch.float32}
_TORCH_INTEGERS = {torch.int8, torch.int16, torch.int32, torch.int64,
                   torch.uint8, torch.uint16, torch.uint32, torch.uint64}


def _finish(triples: list, label: str, notes: list[str], budget: _Budget) -> tuple[dict, list[str]]:
    """Check the dtype and size of every tensor first, then give each memory of its own.

    triples are (name, value, stored dtype): numpy arrays arrive already widened
    (the readers charged the budget and copied them), torch tensors as
    torch.load made them (maybe views, charged here before they are copied).
    """
    planned, sources, empty = [], set(), 0
    for name, value, source in triples:
        target = None
        if isinstance(value, torch.Tensor):
            source = str(value.dtype).removeprefix("torch.")
            if value.dtype in _TORCH_TARGET:
                target = _TORCH_TARGET[value.dtype]
            elif value.dtype in _TORCH_INTEGERS:
                target = torch.float32
            else:
                plain = "true/false values" if value.dtype == torch.bool else (
                    "complex numbers" if value.dtype.is_complex else f"dtype {_clean_name(source)}")
                what = f"Tensor '{_clip(_clean_name(name))}' in this {label}file"
                raise TensorFileError(f"{what} holds {plain}; only real numbers are read.")
        count = value.numel() if isinstance(value, torch.Tensor) else value.size
        if isinstance(value, torch.Tensor):  # a zero-stride view counts every element it claims
            budget.charge(count, value.element_size(), 8 if target == torch.float64 else 4)
        if count == 0:
            empty += 1
            continue
        sources.add(source)
        planned.append((name, value, target))
    if not planned:
        raise TensorFileError(f"This {label}file holds no values (every tensor in it is empty).")
    out: dict[str, torch.Tensor] = {}
    seen: set[int] = set()
    renamed = False
    for name, value, target in planned:
        clean = _clean_name(name)
        renamed |= clean != str(name)
        base, n = clean, 2
        while clean in out:
            clean, n = f"{base[: MAX_NAME - 6]}_{n}", n + 1
        if isinstance(value, torch.Tensor):
            tensor = _own(value, target, seen)
        else:
            tensor = torch.from_numpy(value)  # the readers made a fresh C-ordered array for us
        seen.add(tensor.untyped_storage().data_ptr())
        out[clean] = tensor
    integers = sorted(s for s in sources if s.startswith(("int", "uint")))
    halves = sorted(s for s in sources if s in ("float16", "bfloat16"))
    if integers:
        notes.append(_INT_NOTE.format(", ".join(integers)))
    if halves:
        notes.append(_HALF_NOTE.format(" and ".join(halves)))
    if empty:
        notes.append(f"Skipped {empty:,} empty tensor{'s' if empty > 1 else ''}.")
    if renamed:
        notes.append("Some names had unusual characters or were very long; they were cleaned up.")
    return out, notes


def _own(t: torch.Tensor, target: torch.dtype, seen: set[int]) -> torch.Tensor:
    """t as a contiguous tensor of dtype target that is the only user of its storage."""
    sole = (
        t.dtype == target
        and t.is_contiguous()
        and t.storage_offset() == 0
        and t.untyped_storage().nbytes() == t.numel() * t.element_size()
        and t.untyped_storage().data_ptr() not in seen
    )
    if sole:
        return t
    return t.to(dtype=target, memory_format=torch.contiguous_format, copy=True)
