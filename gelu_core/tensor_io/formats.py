"""Which files each upload accepts, how a file's first bytes tell its format, and the words that name a format.

No torch here: ui/ffn.py reads the upload lists without loading it.
"""

from __future__ import annotations

import pickle
import re

from gelu_core.messages import N_, Message
from gelu_core.tensor_io.limits import MAX_NAME

# What each of the lab's uploaders offers (st.file_uploader(type=...)): extensions without the dot.
INPUT_TYPES = ("pt", "pth", "npy", "npz", "safetensors", "csv")  # activations: any tensor
WEIGHT_TYPES = ("pt", "pth", "safetensors", "npz")  # a state dict: formats that name several tensors

ZIP_MAGIC = b"PK\x03\x04"
NPY_MAGIC = b"\x93NUMPY"
# torch.save before PyTorch 1.6 opened with a pickled magic number; this is its first 13 bytes.
_LEGACY_TORCH_MAGIC = pickle.dumps(0x1950A86A20F9469CFC6C, protocol=2)[:13]
EXTENSION_KIND = {  # what a name promises; the content decides (a mismatch gets a note)
    ".pt": "torch", ".pth": "torch", ".bin": "torch", ".ckpt": "torch",
    ".npy": "npy", ".npz": "npz", ".safetensors": "safetensors",
    ".csv": "text", ".tsv": "text", ".txt": "text",
}
KIND_LABEL = {"torch": Message(N_("a torch.save file")), "npz": Message(N_("a .npz archive")),
              "npy": Message(N_("a .npy array")), "safetensors": Message(N_("a safetensors file")),
              "text": Message(N_("CSV text"))}
SUPPORTED = " ".join("." + ext for ext in INPUT_TYPES)  # the extensions the refusal of an unknown format names
REFUSAL = {  # a refusal kind's sentence (its parameter, if any, is SUPPORTED)
    "legacy_torch": N_("This file uses torch.save's old format (before PyTorch 1.6); re-save it with a current "
                       "PyTorch."),
    "pickle": N_("This file is a plain Python pickle, which could run code; only torch.save files are read, and "
                 "only their tensors."),
    "other_zip": N_("This file is a zip archive, but not one made by torch.save or np.savez."),
    "empty_zip": N_("This file is an empty zip archive."),
    "unknown": N_("This file is not in a format this page reads ({formats})."),
}


def extension(filename: str) -> str:
    """'.npy' for 'weights/x.NPY'; '' when the name has no plain extension."""
    match = re.search(r"\.([A-Za-z0-9]{1,12})\s*$", filename or "")
    return "." + match.group(1).lower() if match else ""


def sniff(data: bytes, ext: str) -> str:
    """What the bytes are, from their first bytes: zip, npy, safetensors, text, or a refusal kind."""
    if data.startswith(ZIP_MAGIC):
        return "zip"
    if data.startswith(b"PK\x05\x06"):
        return "empty_zip"
    if data.startswith(NPY_MAGIC):
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


def clean_name(name: str) -> str:
    """Only A-Z a-z 0-9 _ . - survive (others become _), at most MAX_NAME characters."""
    return re.sub(r"[^A-Za-z0-9_.\-]+", "_", str(name))[:MAX_NAME] or "_"


def clip(name: str, width: int = 40) -> str:
    return name if len(name) <= width else name[: width - 1] + "…"


def shape_text(shape: tuple) -> str:
    return "(" + ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"
