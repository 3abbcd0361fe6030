"""load_tensors: bytes in, checked by every reader's caps, float tensors that own their memory out.

A load runs in two steps.  First the file's reader checks the format and
charges every tensor's size (from headers, a zip directory, a pickle already
scanned) before anything large is allocated or inflated; an optional ``check``
then sees every tensor's name and declared shape and may refuse too.  Only then
is each tensor read, widened and copied into memory of its own.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import torch

from gelu_core.messages import N_, Fixed, Message
from gelu_core.tensor_io import csv_file, numpy_files, safetensors_file, torch_file
from gelu_core.tensor_io.archive import open_zip, zip_kind
from gelu_core.tensor_io.formats import (
    EXTENSION_KIND,
    KIND_LABEL,
    REFUSAL,
    SUPPORTED,
    clean_name,
    extension,
    sniff,
)
from gelu_core.tensor_io.limits import MAX_BYTES, MAX_NAME, Entry, Tally, TensorFileError

Check = Callable[[dict[str, tuple[int, ...]]], None]

_ONE_LOAD_AT_A_TIME = threading.Lock()


class _CheckRefused(Exception):
    """Carries what the caller's check raised past the last-resort net, unchanged."""


def load_tensors(data: bytes, filename: str) -> dict[str, torch.Tensor]:
    """The tensors in an uploaded file, by name; raises TensorFileError for anything else.

    >>> import io, numpy as np
    >>> buffer = io.BytesIO(); np.save(buffer, np.arange(3, dtype=np.float32))
    >>> load_tensors(buffer.getvalue(), "x.npy")
    {'tensor': tensor([0., 1., 2.])}
    """
    return load_tensors_with_notes(data, filename)[0]


def load_tensors_with_notes(data: bytes, filename: str, check: Check | None = None,
                            ) -> tuple[dict[str, torch.Tensor], list[Message]]:
    """``load_tensors`` plus notes for the reader (conversions made, names cleaned), in plain words: each a
    ``gelu_core.messages.Message``, the English sentence with its template and parameters.

    ``check``, if given, is called once with ``{name: shape}`` of every non-empty tensor, under the names they
    will come back with, after every size has been charged and before any tensor's data is read or inflated;
    whatever it raises (e.g. ``gelu_core.weights.check_block_shapes``'s WeightsError) comes out unchanged.

    One load at a time per process: each may hold up to MAX_LOADED_BYTES while it works, and a class
    uploading together should hold that once, not once per student.
    """
    try:
        with _ONE_LOAD_AT_A_TIME:
            return _load(data, filename, check)
    except TensorFileError:
        raise
    except _CheckRefused as refused:
        raise refused.args[0] from None
    except Exception:  # a bug or a case not foreseen: still a refusal, never a traceback
        raise TensorFileError(N_("This file could not be read.")) from None


def _load(data: bytes, filename: str, check: Check | None = None) -> tuple[dict[str, torch.Tensor], list[Message]]:
    """load_tensors_with_notes without the last-resort net (tests fuzz this one)."""
    if not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError(f"data must be bytes, got {type(data).__name__}")
    if not isinstance(filename, str):
        filename = ""
    size = data.nbytes if isinstance(data, memoryview) else len(data)
    if size == 0:
        raise TensorFileError(N_("This file is empty."))
    if size > MAX_BYTES:
        raise TensorFileError(N_("This file is {size} MiB; the limit is {limit} MiB."), size=Fixed(size / 2**20, 1),
                              limit=MAX_BYTES // 2**20)
    data = bytes(data)  # one immutable buffer: BytesIO and frombuffer share it without copying
    kind = sniff(data, extension(filename))
    archive = None
    if kind == "zip":
        archive = open_zip(data)
        kind = zip_kind(archive)
    notes: list[Message] = []
    tally = Tally()
    expected = EXTENSION_KIND.get(extension(filename))
    if expected is not None and kind != expected and kind in KIND_LABEL:
        notes.append(Message(N_("Read as {kind} by its content, though the name ends in {ext}."), kind=KIND_LABEL[kind],
                             ext=extension(filename)))
    if kind == "torch":
        entries = torch_file.read_torch(data, archive, tally)
    elif kind == "npz":
        entries = numpy_files.read_npz(data, archive, tally)
    elif kind == "npy":
        entries = numpy_files.read_npy(data, tally)
    elif kind == "safetensors":
        entries = safetensors_file.read_safetensors(data, tally)
    elif kind == "text":
        table = csv_file.read_csv(data, notes)
        tally.charge(table.size, 8, 8)
        entries = [Entry("tensor", table.shape, lambda: (table, "float64"))]
    elif kind == "unknown" and expected in KIND_LABEL:
        raise TensorFileError(N_("This file is not {kind}: it does not start like one, though its name ends in {ext}."),
                              ext=extension(filename), kind=KIND_LABEL[expected])
    else:
        raise TensorFileError(REFUSAL[kind], formats=SUPPORTED)  # every refusal's one parameter, where it has one
    return _finish(entries, notes, check)


def _names(entries: list[Entry]) -> list[str | None]:
    """The name each entry comes back under: cleaned, made unique; None for an empty tensor (skipped)."""
    names: list[str | None] = []
    taken: set[str] = set()
    for entry in entries:
        if 0 in entry.shape:
            names.append(None)
            continue
        clean = base = clean_name(entry.name)
        n = 2
        while clean in taken:
            clean, n = f"{base[: MAX_NAME - 6]}_{n}", n + 1
        taken.add(clean)
        names.append(clean)
    return names


def _finish(entries: list[Entry], notes: list[Message], check: Check | None) -> tuple[dict, list[Message]]:
    """Let the caller's check see the declared shapes, then read each tensor into memory of its own.

    The readers return numpy arrays already widened and copied, and torch tensors as torch.load made
    them (maybe views of shared storages, already charged): those are copied here.
    """
    names = _names(entries)
    if not any(names):
        raise TensorFileError(N_("This file holds no values (every tensor in it is empty)."))
    if check is not None:
        try:
            check({name: tuple(entry.shape) for name, entry in zip(names, entries, strict=True) if name})
        except Exception as refusal:
            raise _CheckRefused(refusal) from None
    out: dict[str, torch.Tensor] = {}
    seen: set[int] = set()
    sources: set[str] = set()
    for name, entry in zip(names, entries, strict=True):
        if name is None:
            continue
        value, source = entry.read()
        if isinstance(value, torch.Tensor):
            tensor = _own(value, torch_file.target_dtype(value.dtype), seen)
        else:
            tensor = torch.from_numpy(value)  # the readers made a fresh C-ordered array for us
        seen.add(tensor.untyped_storage().data_ptr())
        sources.add(source)
        out[name] = tensor
    integers = sorted(s for s in sources if s.startswith(("int", "uint")))
    halves = sorted(s for s in sources if s in ("float16", "bfloat16"))
    empty = names.count(None)
    if integers:
        notes.append(Message(N_("Integer data ({dtypes}) was converted to float32, which is exact up to ±{exact}."),
                             dtypes=", ".join(integers), exact=2**24))
    if len(halves) == 2:
        notes.append(Message(N_("float16 and bfloat16 values were widened to float32 (exactly).")))
    elif halves:
        notes.append(Message(N_("{dtype} values were widened to float32 (exactly)."), dtype=halves[0]))
    if empty == 1:
        notes.append(Message(N_("Skipped one empty tensor.")))
    elif empty:
        notes.append(Message(N_("Skipped {count} empty tensors."), count=empty))
    if any(name is not None and name != str(entry.name) for name, entry in zip(names, entries, strict=True)):
        notes.append(Message(N_("Some names had unusual characters or were very long; they were cleaned up.")))
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
