"""Untrusted tensor files in, float tensors or a clear refusal out.

``load_tensors(data, filename)`` reads the bytes of an uploaded file and returns
``{name: tensor}``; anything it will not read raises ``TensorFileError``, whose
message is one short sentence that is safe to show (``st.error``): it never
repeats markup or long content from the file, and says "this file" (a note names a
plain extension where name and content disagree).  Refusals and notes are
``gelu_core.messages`` sentences, a template and parameters that ui translates.
``INPUT_TYPES`` and ``WEIGHT_TYPES`` are what the lab's two uploaders offer.

Formats are told apart by their first bytes, not by the file name (a mismatch
gets a note); one module each, and the names the tensors come back under:

- ``torch_file``: zip with ``<dir>/data.pkl``, from ``torch.save``: ``"tensor"`` for a
  single tensor, else the dict's keys, nested dicts joined with dots (a state dict).
  Its pickle is walked first by ``pickle_scan``, the security-critical part, which reads alone.
- ``numpy_files``: ``\\x93NUMPY``, from ``np.save``: ``"tensor"``; a zip of ``.npy`` members,
  from ``np.savez`` or ``np.savez_compressed``: the array names.
- ``safetensors_file``: 8-byte little-endian length, then ``{``: the tensor names.
- ``csv_file``: text, a CSV table of numbers (comma, tab or semicolon; a first row that is not
  numbers is a header; ``#`` lines are comments): ``"tensor"``, always 2-D.
- ``archive`` checks zips for both; ``formats`` sniffs; ``limits`` holds every cap;
  ``loader`` runs a load.

What comes back: contiguous CPU tensors that own their memory, float32 or
float64.  float16 and bfloat16 widen to float32 (exactly); integers convert to
float32 with a note (``load_tensors_with_notes``); CSV text is parsed to
float64.  NaN and ±inf are values, not errors (gelu_core.lab.nonfinite_report
counts them).  Names keep only ``A-Z a-z 0-9 _ . -`` (others become ``_``), at
most 100 characters.

How it stays safe on the open internet:

- ``.pt`` files are unpickled only by ``torch.load(weights_only=True)``, so no
  code in a pickle runs; before that, the pickle's opcodes are walked (nothing
  run) to be sure it calls only torch's tensor builders, a bounded number of
  times: weights_only still allows ``bytearray(10**10)``.  Old (pre-zip) torch
  files and plain pickles are refused.
- Every size a file declares is checked before anything is read or allocated:
  the zip directory (members, declared sizes, compression), .npy and
  safetensors headers (shape × itemsize must equal the bytes present), CSV
  line, delimiter and row-width counts, and a tally of values and bytes for the whole file
  (MAX_ELEMENTS, MAX_LOADED_BYTES, from the process's memory budget in
  gelu_core.budget) charged for every tensor before any is read: a zero-stride
  view that claims a billion rows on 4 bytes of storage is refused before it is copied.
- A caller's ``check`` (``load_tensors_with_notes(..., check=...)``) sees every
  declared shape before any data is read: the lab's weights uploader refuses
  a block wider than the lab runs before a compressed member is inflated.
- Compressed .npz members are inflated in a stream that stops at the size the
  zip declared (and that size was capped first); compressed members in a
  ``.pt`` are refused (torch.save never writes them).

Importing this package does not import torch: the loader comes on first use of
``load_tensors`` or ``load_tensors_with_notes``.
"""

from gelu_core.tensor_io.formats import INPUT_TYPES, WEIGHT_TYPES
from gelu_core.tensor_io.limits import (
    MAX_BYTES,
    MAX_CSV_CELLS,
    MAX_CSV_COLUMNS,
    MAX_CSV_LINE_BYTES,
    MAX_DEPTH,
    MAX_ELEMENTS,
    MAX_HEADER_BYTES,
    MAX_LOADED_BYTES,
    MAX_NAME,
    MAX_NDIM,
    MAX_NPY_HEADER_BYTES,
    MAX_PICKLE_BYTES,
    MAX_PICKLE_CALLS,
    MAX_TENSORS,
    MAX_ZIP_DIRECTORY,
    MAX_ZIP_MEMBERS,
    TensorFileError,
)

_LAZY = {"load_tensors", "load_tensors_with_notes"}


def __getattr__(name):
    if name in _LAZY:
        from gelu_core.tensor_io import loader

        return getattr(loader, name)
    raise AttributeError(f"module 'gelu_core.tensor_io' has no attribute {name!r}")


__all__ = [
    "INPUT_TYPES", "MAX_BYTES", "MAX_CSV_CELLS", "MAX_CSV_COLUMNS", "MAX_CSV_LINE_BYTES", "MAX_DEPTH", "MAX_ELEMENTS",
    "MAX_HEADER_BYTES", "MAX_LOADED_BYTES", "MAX_NAME", "MAX_NDIM", "MAX_NPY_HEADER_BYTES", "MAX_PICKLE_BYTES",
    "MAX_PICKLE_CALLS", "MAX_TENSORS", "MAX_ZIP_DIRECTORY", "MAX_ZIP_MEMBERS", "TensorFileError", "WEIGHT_TYPES",
    "load_tensors", "load_tensors_with_notes",
]
