"""Tensor files made in memory at run time, good and hostile, for gelu_core.tensor_io's tests and benchmarks.

Nothing binary is committed; every file here is made by the library that
defines its format (torch.save, np.save, safetensors) or, for the hostile
ones, by hand from the format's specification.
"""

from __future__ import annotations

import builtins
import io
import json
import os
import pickle
import struct
import zlib

import numpy as np
import safetensors.torch
import torch

# ---------------------------------------------------------------------------------------------
# Writers for good files
# ---------------------------------------------------------------------------------------------


def torch_bytes(obj, **kwargs) -> bytes:
    buffer = io.BytesIO()
    torch.save(obj, buffer, **kwargs)
    return buffer.getvalue()


def npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=array.dtype.hasobject)
    return buffer.getvalue()


def npz_bytes(compressed: bool = False, **arrays) -> bytes:
    buffer = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buffer, **arrays)
    return buffer.getvalue()


def safetensors_bytes(tensors: dict) -> bytes:
    return safetensors.torch.save(tensors)


def csv_bytes(table: np.ndarray, header: list[str] | None = None, delimiter: str = ",", newline: str = "\n") -> bytes:
    """Each value written with repr(float(v)): the shortest text that reads back to the same float64."""
    lines = [delimiter.join(header)] if header else []
    lines += [delimiter.join(repr(float(v)) for v in row) for row in np.atleast_2d(table)]
    return (newline.join(lines) + newline).encode()


# ---------------------------------------------------------------------------------------------
# A zip writer that can lie: declared sizes, CRCs and offsets are whatever the test asks for
# ---------------------------------------------------------------------------------------------


def zip_bytes(entries: list[dict]) -> bytes:
    """A zip from entries {name, data, method=0 stored / 8 deflated, size=, crc=, offset_of=}.

    `size`, `compress_size` and `crc` override what the central directory and local header declare;
    `offset_of=k` points this entry's central record at entry k's local header
    (overlapping entries, as in the overlap zip bombs); `compressed` gives raw
    deflate bytes to store as they are.
    """
    body, central, offsets = bytearray(), bytearray(), []
    for entry in entries:
        name = entry["name"].encode()
        raw = entry.get("data", b"")
        method = entry.get("method", 0)
        payload = entry.get("compressed")
        if payload is None:
            payload = raw if method == 0 else _raw_deflate(raw)
        size = entry.get("size", len(raw))
        crc = entry.get("crc", zlib.crc32(raw))
        if "offset_of" in entry:
            offset = offsets[entry["offset_of"]]
            comp_size, local_size = entry.get("compress_size", len(payload)), size
        else:
            offset = len(body)
            comp_size, local_size = entry.get("compress_size"), None
            declared = len(payload) if comp_size is None else comp_size
            body += struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, method, 0, 0, crc, declared, size, len(name), 0)
            body += name + payload
        offsets.append(offset)
        central += struct.pack(
            "<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, method, 0, 0, crc,
            comp_size if comp_size is not None else len(payload), local_size if local_size is not None else size,
            len(name), 0, 0, 0, 0, 0, offset,
        )
        central += name
    count = len(entries)
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, count & 0xFFFF, count & 0xFFFF, len(central), len(body), 0)
    return bytes(body + central + end)


def _raw_deflate(data: bytes, level: int = 9) -> bytes:
    compressor = zlib.compressobj(level, zlib.DEFLATED, -15)
    return compressor.compress(data) + compressor.flush()


def zeros_deflated(nbytes: int) -> bytes:
    """Raw deflate of nbytes zero bytes, about nbytes / 1000 long, made in microseconds.

    A mebibyte of zeros is compressed once and ended with a full flush, which
    makes it a self-contained run of deflate blocks; the stream repeats that
    run and closes with an empty final block (b"\\x03\\x00").
    """
    def run(size: int) -> bytes:
        compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
        return compressor.compress(bytes(size)) + compressor.flush(zlib.Z_FULL_FLUSH)

    whole, rest = divmod(nbytes, 2**20)
    return run(2**20) * whole + (run(rest) if rest else b"") + b"\x03\x00"


def deflate_prefixed(prefix: bytes, deflated_rest: bytes) -> bytes:
    """Raw deflate of ``prefix`` followed by an already deflated stream (a stored block, then the rest)."""
    return bytes([0]) + struct.pack("<HH", len(prefix), len(prefix) ^ 0xFFFF) + prefix + deflated_rest


def zeros_crc(prefix: bytes, nbytes: int) -> int:
    """CRC-32 of ``prefix`` followed by nbytes zero bytes, a mebibyte at a time."""
    crc, block = zlib.crc32(prefix), bytes(min(nbytes, 2**20))
    whole, rest = divmod(nbytes, len(block) or 1)
    for _ in range(whole):
        crc = zlib.crc32(block, crc)
    return zlib.crc32(block[:rest], crc)


def torch_members(data: bytes) -> list[dict]:
    """The members of a torch.save zip as zip_bytes entries (stored), to edit and re-zip."""
    import zipfile

    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return [{"name": info.filename, "data": archive.read(info)} for info in archive.infolist()]


def replace_member(entries: list[dict], suffix: str, **changes) -> list[dict]:
    return [dict(entry, **changes) if entry["name"].endswith(suffix) else entry for entry in entries]


# ---------------------------------------------------------------------------------------------
# Pickles that would run code if anything unpickled them unsafely
# ---------------------------------------------------------------------------------------------


class OpenMarker:
    """Unpickling calls open(marker, 'w'): the marker file appears."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (builtins.open, (self.marker, "w"))


class SystemMarker(OpenMarker):
    """Unpickling runs `touch marker` in a shell."""

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


class ExecMarker(OpenMarker):
    """Unpickling exec()s Python that creates the marker."""

    def __reduce__(self):
        return (builtins.exec, (f"open({self.marker!r}, 'w').close()",))


MARKERS = (OpenMarker, SystemMarker, ExecMarker)


def evil_pickles(marker) -> dict[str, bytes]:
    """Every way this corpus smuggles a code-running pickle in, by a short id."""
    files = {}
    for kind in MARKERS:
        name = kind.__name__
        evil = kind(marker)
        files[f"{name}-torch-zip"] = torch_bytes({"w": torch.ones(2), "x": evil})
        files[f"{name}-torch-legacy"] = torch_bytes({"x": evil}, _use_new_zipfile_serialization=False)
        for protocol in (2, 4, 5):
            files[f"{name}-raw-p{protocol}"] = pickle.dumps(evil, protocol=protocol)
        files[f"{name}-raw-p0"] = pickle.dumps(evil, protocol=0)
        # np.save of an object array stores a pickle after the .npy header
        objects = np.empty(1, dtype=object)
        objects[0] = evil
        files[f"{name}-npy-object"] = npy_bytes(objects)
        files[f"{name}-npz-object"] = zip_bytes([{"name": "x.npy", "data": npy_bytes(objects)}])
    return files


# ---------------------------------------------------------------------------------------------
# Hand-made .npy and safetensors files with lying or hostile headers
# ---------------------------------------------------------------------------------------------


def npy_with_header(header: str | bytes, payload: bytes = b"", version: tuple[int, int] = (1, 0),
                    length: int | None = None) -> bytes:
    """A .npy file with exactly this header text (and header length field, if given)."""
    raw = header.encode("latin1") if isinstance(header, str) else header
    width = "<H" if version[0] == 1 else "<I"
    declared = len(raw) if length is None else length
    return b"\x93NUMPY" + bytes(version) + struct.pack(width, declared) + raw + payload


def npy_header_text(descr: str, shape: tuple, fortran: bool = False) -> str:
    return f"{{'descr': {descr!r}, 'fortran_order': {fortran}, 'shape': {shape!r}, }}".ljust(118) + "\n"


def safetensors_with_header(header, payload: bytes = b"", length: int | None = None) -> bytes:
    """A safetensors file whose header is this object (or raw bytes), with an optional lying length."""
    raw = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(raw) if length is None else length) + raw + payload


def pt_with_pickle(pickled: bytes) -> bytes:
    """A torch.save zip of one small tensor whose data.pkl is replaced by `pickled`."""
    return zip_bytes(replace_member(torch_members(torch_bytes(torch.ones(1))), "data.pkl", data=pickled))


def call_pickle(module: str, name: str, argument: int) -> bytes:
    """A protocol-2 pickle of module.name(argument): GLOBAL, BININT, TUPLE1, REDUCE, STOP."""
    return b"\x80\x02c" + f"{module}\n{name}\n".encode() + b"J" + struct.pack("<i", argument) + b"\x85R."


def many_calls_pt(calls: int) -> bytes:
    """A torch.save zip whose pickle rebuilds one tensor `calls` times in 5 bytes each (BINGET, BINGET, REDUCE)."""
    entries = torch_members(torch_bytes(torch.ones(1)))
    pickled = next(entry["data"] for entry in entries if entry["name"].endswith("data.pkl"))
    body = pickled[2:-1]  # PROTO and STOP dropped: it leaves one tensor on the stack
    assert body[-5:] == b"q\nRq\x0b"  # ... BINPUT 10 (the argument tuple), REDUCE, BINPUT 11; memo 0 is the function
    repeated = b"\x80\x02](" + body + b"h\x00h\nR" * calls + b"e."
    return zip_bytes(replace_member(entries, "data.pkl", data=repeated))


def deep_dict(depth: int) -> dict:
    node: dict = {"leaf": torch.ones(1)}
    for level in range(depth):
        node = {f"level{level}": node}
    return node
