"""Named hostile uploads for the lab, each with the uploader it targets and words its refusal must contain.

For the tests of the loader and for benchmarks that push files through a real server::

    for case in hostile_files(marker=tmp / "ran"):
        data = case.data                    # built on first use, then kept
        ...upload data as case.filename to case.uploader ("input" or "weights")...
    assert not (tmp / "ran").exists()       # no pickle ran code

``case.words`` is in the refusal gelu_core gives: through ``tensor_io.load_tensors_with_notes`` for the input
uploader, with ``check=gelu_core.weights.check_block_shapes`` for the weights uploader (what pages/ffn.py does).
Files marked ``large`` take tens of megabytes to hold; ``hostile_files(large=False)`` leaves them out.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import torch

from gelu_core.tensor_io import MAX_BYTES
from harness import tensor_corpus as corpus

DEFAULT_MARKER = Path("/tmp/gelu-hostile-files-ran-code")


@dataclass(frozen=True)
class HostileFile:
    """One hostile upload: its bytes are built on first use of ``data``."""

    name: str  # a short id for reports
    filename: str  # the name it is uploaded under (its extension is one the uploader offers)
    uploader: str  # "input" (activations) or "weights" (a state dict)
    words: str  # in the refusal's message
    build: Callable[[], bytes] = field(repr=False, compare=False)
    large: bool = False  # tens of megabytes: left out by hostile_files(large=False)

    @cached_property
    def data(self) -> bytes:
        return self.build()


def _deflated_npz(members: dict[str, tuple[str, tuple[int, ...]]]) -> bytes:
    """An np.savez_compressed-like archive of all-zero arrays {name: (descr, shape)}, valid to the last CRC,
    built without ever holding the arrays: each member is its header then deflated zeros."""
    entries = []
    for name, (descr, shape) in members.items():
        header = corpus.npy_with_header(corpus.npy_header_text(descr, shape))
        nbytes = math.prod(shape) * int(descr[-1])
        entries.append({"name": f"{name}.npy", "method": 8, "size": len(header) + nbytes,
                        "crc": corpus.zeros_crc(header, nbytes),
                        "compressed": corpus.deflate_prefixed(header, corpus.zeros_deflated(nbytes))})
    return corpus.zip_bytes(entries)


def wide_block_npz() -> bytes:
    """A 'block' with d_model = 2**17 and a hidden layer of 1, in about 2.4 kB: the lab would draw a
    (8, 1024, 131072) demo input (4 GiB) for it."""
    d_model = 2**17
    return _deflated_npz({"c_fc.weight": ("<f4", (1, d_model)), "c_fc.bias": ("<f4", (1,)),
                          "c_proj.weight": ("<f4", (d_model, 1)), "c_proj.bias": ("<f4", (d_model,))})


def deep_hidden_npz() -> bytes:
    """A block with d_model = 1 and a 2**24-wide hidden layer, 128 MiB of weights in about 130 kB."""
    hidden = 2**24
    return _deflated_npz({"c_fc.weight": ("<f4", (hidden, 1)), "c_proj.weight": ("<f4", (1, hidden))})


def long_second_row_csv() -> bytes:
    """43.6 MB of CSV: a first row of one value, then one row of 15,000,000 values."""
    return b"1\n" + b"10," * 13_600_000 + b"1," * 1_399_999 + b"1\n"


def csv_over_the_cells() -> bytes:
    """2,049 rows of 1,024 zeros: one row more than MAX_CSV_CELLS (2,097,152) allows."""
    return (b",".join([b"0"] * 1024) + b"\n") * (2**21 // 1024 + 1)


def csv_bad_last_cell() -> bytes:
    """2,730 rows of 768 numbers, 15 MiB, whose very last cell is not a number: only parsing finds it."""
    rows = 2**21 // 768
    return ((b",".join([b"0.1234"] * 768) + b"\n") * (rows - 1)) + b",".join([b"1"] * 767 + [b"x"])


def _zip_bombs() -> dict[str, tuple[Callable[[], bytes], str]]:
    def declared_gib() -> bytes:
        return corpus.zip_bytes([{"name": "x.npy", "method": 8, "compressed": corpus.zeros_deflated(2**30),
                                  "size": 2**30, "crc": 0}])

    def small_declared_large_inflated() -> bytes:
        header = corpus.npy_with_header(corpus.npy_header_text("<f4", (4096,)))
        stream = corpus.deflate_prefixed(header, corpus.zeros_deflated(2**28))
        return corpus.zip_bytes([{"name": "x.npy", "method": 8, "compressed": stream, "size": len(header) + 4 * 4096,
                                  "crc": 0}])  # the CRC of what it declares is wrong

    def overlapping() -> bytes:
        header = corpus.npy_with_header(corpus.npy_header_text("<f4", (2**22,)))
        kernel = corpus.deflate_prefixed(header, corpus.zeros_deflated(2**24))
        size, crc = len(header) + 2**24, corpus.zeros_crc(header, 2**24)
        members = [{"name": "k0.npy", "method": 8, "compressed": kernel, "size": size, "crc": crc}]
        members += [{"name": f"k{i}.npy", "method": 8, "offset_of": 0, "compress_size": len(kernel), "size": size,
                     "crc": crc} for i in range(1, 200)]
        return corpus.zip_bytes(members)

    def deflated_pt_member() -> bytes:
        entries = corpus.torch_members(corpus.torch_bytes(torch.zeros(4)))
        return corpus.zip_bytes(corpus.replace_member(entries, "data/0", method=8, compressed=corpus.zeros_deflated(
            2**30), size=2**30, crc=0))

    return {
        "npz member declaring 1 GiB": (declared_gib, "would unpack to"),
        "npz member declaring 16 kB, inflating 256 MiB": (small_declared_large_inflated, "damaged"),
        "npz of 200 members sharing one 16 MiB kernel": (overlapping, "would unpack to"),
        "pt with a 1 GiB deflated storage": (deflated_pt_member, "compressed"),
        "npz of 65,000 members": (lambda: corpus.zip_bytes([{"name": f"m{i}.npy"} for i in range(65_000)]),
                                  "files; the limit is"),
    }


def hostile_files(marker: str | Path = DEFAULT_MARKER, large: bool = True) -> list[HostileFile]:
    """Every hostile upload, by name; pickles that would run code create ``marker`` if anything unpickles them."""
    cases = [
        HostileFile("npz block with d_model 2^17 (2.4 kB)", "block.npz", "weights", "d_model = 131,072",
                    wide_block_npz),
        HostileFile("npz block with a 2^24 hidden layer (130 kB)", "block.npz", "weights",
                    "hidden layer of 16,777,216", deep_hidden_npz),
        HostileFile("csv of 43.6 MB, second row 15 M values", "table.csv", "input",
                    f"the limit is {MAX_BYTES // 2**20} MiB", long_second_row_csv, large=True),
    ]
    evil = ("OpenMarker-torch-zip", "SystemMarker-torch-zip", "ExecMarker-torch-zip", "SystemMarker-torch-legacy",
            "OpenMarker-raw-p2", "ExecMarker-npy-object", "SystemMarker-npz-object")
    words = {"torch-zip": "could run code", "torch-legacy": "old format", "raw-p2": "plain Python pickle",
             "npy-object": "Python objects", "npz-object": "Python objects"}
    for key in evil:
        kind = key.split("-", 1)[1]
        extension = {"npy-object": "npy", "npz-object": "npz"}.get(kind, "pt")
        uploader = "input" if extension == "npy" else "weights"
        cases.append(HostileFile(f"pickle that runs code: {key}", f"model.{extension}", uploader, words[kind],
                                 lambda key=key: corpus.evil_pickles(marker)[key]))
    for name, (build, refusal) in _zip_bombs().items():
        extension = "pt" if name.startswith("pt") else "npz"
        cases.append(HostileFile(name, f"bomb.{extension}", "input", refusal, build))
    cases += [
        HostileFile("pt with a zero-stride view of 10^9 rows", "x.pt", "input", "the limit is",
                    lambda: corpus.torch_bytes(torch.zeros(1).expand(10**9))),
        HostileFile("pt whose pickle calls bytearray(10^9)", "x.pt", "input", "could run code",
                    lambda: corpus.pt_with_pickle(corpus.call_pickle("builtins", "bytearray", 10**9))),
        HostileFile("pt whose pickle rebuilds a tensor 50,000 times", "x.pt", "input", "calls; the limit is",
                    lambda: corpus.many_calls_pt(50_000)),
        HostileFile("npy header declaring 10^12 values", "x.npy", "input", "the limit is",
                    lambda: corpus.npy_with_header(corpus.npy_header_text("<f4", (10**6, 10**6)), bytes(64))),
        HostileFile("safetensors header length 2^40", "x.safetensors", "input", "over 1 MiB",
                    lambda: corpus.safetensors_with_header({}, bytes(64), length=2**40)),
        HostileFile("csv one row over MAX_CSV_CELLS (4 MiB)", "x.csv", "input", "the limit is 2,097,152 numbers",
                    csv_over_the_cells, large=True),
        HostileFile("csv at MAX_CSV_CELLS, last cell not a number (15 MiB)", "x.csv", "input",
                    "Line 2,730, column 768", csv_bad_last_cell, large=True),
        HostileFile(f"{MAX_BYTES // 2**20} MiB + 1 byte", "x.npy", "input", f"the limit is {MAX_BYTES // 2**20} MiB",
                    lambda: bytes(MAX_BYTES + 1), large=True),
    ]
    return [case for case in cases if large or not case.large]
