"""gelu_core.tensor_io against files made in the test: every good format, every hostile kind.

References: a good file must give back exactly (torch.equal, tolerance 0) the
tensor the test saved, widened to float32 where the loader widens; CSV text
is compared with the float64 the test wrote with repr().  A hostile file must
raise TensorFileError with a short safe message, within SECONDS of CPU time
(time.process_time: what the server spends, steady on a busy machine; wall
time has a generous hang guard) and without a large allocation (peak resident
memory and tracemalloc, bound PEAK_BYTES).
"""

from __future__ import annotations

import io
import pickle
import re
import sys
import time
import tracemalloc

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gelu_core import tensor_io
from gelu_core.lab import nonfinite_report
from gelu_core.tensor_io import (
    INPUT_TYPES,
    MAX_BYTES,
    MAX_CSV_CELLS,
    MAX_CSV_COLUMNS,
    MAX_CSV_LINE_BYTES,
    MAX_ELEMENTS,
    MAX_LOADED_BYTES,
    MAX_TENSORS,
    WEIGHT_TYPES,
    TensorFileError,
    load_tensors,
    load_tensors_with_notes,
    loader,
    numpy_files,
)
from gelu_core.weights import WeightsError, check_block_shapes
from harness.hostile_files import hostile_files
from harness.memory import PeakGrowth
from harness.tensor_corpus import (
    call_pickle,
    csv_bytes,
    deep_dict,
    deflate_prefixed,
    evil_pickles,
    many_calls_pt,
    npy_bytes,
    npy_header_text,
    npy_with_header,
    npz_bytes,
    pt_with_pickle,
    replace_member,
    safetensors_bytes,
    safetensors_with_header,
    torch_bytes,
    torch_members,
    zeros_crc,
    zeros_deflated,
    zip_bytes,
)

SECONDS = 5.0  # CPU seconds a refusal may take (a safety bound, not a benchmark)
HANG_SECONDS = 60.0  # wall-clock guard; wall time itself depends on what else the machine runs
PEAK_BYTES = 200 * 2**20  # allocation bound for hostile files
MESSAGE_CHARS = 200


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def refused(data: bytes, filename: str = "file.bin", *, peak: int = PEAK_BYTES, trace: bool = True,
            check=None) -> str:
    """The message of the TensorFileError that loading raises; checks time, memory and the message.

    Memory: the resident high-water mark (Linux; sees torch's allocations too) and,
    unless trace=False (tracemalloc slows pure-Python unpickling threefold), tracemalloc.
    With a ``check`` (the weights uploader's), the public entry point, whose refusals may be WeightsError.
    """
    if trace:
        tracemalloc.start()
    started, cpu_started = time.perf_counter(), time.process_time()
    try:
        with PeakGrowth() as grown, pytest.raises((TensorFileError, WeightsError)) as caught:
            if check is None:
                loader._load(data, filename)  # without the last-resort net: a bug would show here
            else:
                load_tensors_with_notes(data, filename, check=check)
    finally:
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
        _, traced_peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()  # a no-op when not tracing
    assert cpu < SECONDS and elapsed < HANG_SECONDS, f"refusal took {cpu:.1f} s of CPU, {elapsed:.1f} s in all"
    assert traced_peak < peak, f"traced allocations peaked at {traced_peak / 2**20:.0f} MiB"
    if grown.bytes is not None:
        assert grown.bytes < peak, f"resident memory grew {grown.bytes / 2**20:.0f} MiB"
    message = str(caught.value)
    assert_safe_message(message)
    return message


def assert_safe_message(message: str) -> None:
    assert 0 < len(message) <= MESSAGE_CHARS, message
    assert "Traceback" not in message and "<" not in message and ">" not in message, message
    assert "\n" not in message and "Error" not in message, message


def assert_owned(tensors: dict[str, torch.Tensor], data: bytes) -> None:
    """Contiguous float32/float64 CPU tensors, each the only user of its own storage, none inside data."""
    pointers = set()
    for tensor in tensors.values():
        assert type(tensor) is torch.Tensor and tensor.device.type == "cpu"
        assert tensor.dtype in (torch.float32, torch.float64)
        assert tensor.is_contiguous() and tensor.storage_offset() == 0 and not tensor.requires_grad
        storage = tensor.untyped_storage()
        assert storage.nbytes() == tensor.numel() * tensor.element_size()
        assert storage.data_ptr() not in pointers
        pointers.add(storage.data_ptr())
    tensor_io_buffer = np.frombuffer(data, dtype=np.uint8)
    low = tensor_io_buffer.ctypes.data
    for tensor in tensors.values():
        assert not low <= tensor.data_ptr() < low + len(data), "a tensor is a view of the uploaded bytes"


def loaded(data: bytes, filename: str) -> tuple[dict[str, torch.Tensor], list[str]]:
    started = time.process_time()
    tensors, notes = load_tensors_with_notes(data, filename)
    assert time.process_time() - started < SECONDS
    assert_owned(tensors, data)
    for note in notes:
        assert_safe_message(note)
    return tensors, notes


def same(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Exact equality, NaN equal to NaN, and the same dtype and shape (tolerance 0)."""
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(torch.nan_to_num(a), torch.nan_to_num(b)) and \
        torch.equal(torch.isnan(a), torch.isnan(b))


@pytest.fixture(scope="module")
def sample() -> torch.Tensor:
    generator = torch.Generator().manual_seed(4)
    return torch.randn(4, 6, 8, generator=generator)


# ---------------------------------------------------------------------------------------------
# Good files, every format: values equal exactly what the test saved
# ---------------------------------------------------------------------------------------------


def test_pt_single_tensor(sample):
    tensors, notes = loaded(torch_bytes(sample), "x.pt")
    assert list(tensors) == ["tensor"] and same(tensors["tensor"], sample) and notes == []


def test_pt_nested_dict_flattened_with_dots(sample):
    obj = {"model": {"c_fc": {"weight": sample, "bias": sample[0, 0]}}, "x": sample.double(), 3: sample[1]}
    tensors, _ = loaded(torch_bytes(obj), "state.pth")
    assert set(tensors) == {"model.c_fc.weight", "model.c_fc.bias", "x", "3"}
    assert same(tensors["model.c_fc.weight"], sample)
    assert same(tensors["model.c_fc.bias"], sample[0, 0].clone())
    assert same(tensors["x"], sample.double())
    assert same(tensors["3"], sample[1].clone())


def test_pt_state_dict_and_parameters():
    torch.manual_seed(0)
    layer = torch.nn.Linear(5, 3)
    tensors, _ = loaded(torch_bytes(layer.state_dict()), "linear.pt")
    assert same(tensors["weight"], layer.weight.detach()) and same(tensors["bias"], layer.bias.detach())
    tensors, _ = loaded(torch_bytes({"p": layer.weight}), "param.pt")  # a Parameter comes back a plain tensor
    assert same(tensors["p"], layer.weight.detach())


def test_pt_views_come_back_owning_their_memory(sample):
    base = sample.clone()
    obj = {"t": base.t() if base.dim() == 2 else base.transpose(0, 2), "slice": base[1:3], "again": base,
           "expanded": torch.ones(3).expand(4, 3)}
    tensors, _ = loaded(torch_bytes(obj), "views.pt")
    assert same(tensors["t"], obj["t"].contiguous())
    assert same(tensors["slice"], base[1:3].clone())
    assert same(tensors["again"], base)
    assert same(tensors["expanded"], torch.ones(4, 3))
    tensors["again"].zero_()  # writing one tensor leaves the others alone
    assert same(tensors["slice"], base[1:3].clone())


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_pt_half_precision_widened_exactly(sample, dtype):
    tensors, notes = loaded(torch_bytes({"h": sample.to(dtype)}), "h.pt")
    assert same(tensors["h"], sample.to(dtype).float())
    assert any("widened to float32" in note for note in notes)


@pytest.mark.parametrize("dtype", [torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64])
def test_pt_integers_cast_with_a_note(dtype):
    values = torch.arange(-5, 120).to(dtype)
    tensors, notes = loaded(torch_bytes(values), "ints.pt")
    assert same(tensors["tensor"], values.float())
    assert any("converted to float32" in note and str(dtype).removeprefix("torch.") in note for note in notes)


@pytest.mark.parametrize("dtype", ["<f4", ">f4", "<f8", ">f8", "<f2", "<i4", ">i8", "|u1"])
def test_npy_dtypes(dtype):
    array = (np.arange(60).reshape(3, 4, 5) - 30).astype(dtype)
    tensors, notes = loaded(npy_bytes(array), "a.npy")
    expected = np.float64 if dtype.endswith("f8") else np.float32
    assert list(tensors) == ["tensor"]
    assert same(tensors["tensor"], torch.from_numpy(array.astype(expected)))
    assert (dtype[1] in "iu") == any("converted to float32" in note for note in notes)


def test_npy_fortran_order_scalar_and_nonfinite():
    array = np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4))
    array[0, 1], array[2, 3] = np.nan, -np.inf
    tensors, _ = loaded(npy_bytes(array), "f.npy")
    assert same(tensors["tensor"], torch.from_numpy(np.ascontiguousarray(array)))
    tensors, _ = loaded(npy_bytes(np.float64(2.5)), "s.npy")
    assert tensors["tensor"].shape == () and tensors["tensor"].item() == 2.5


@pytest.mark.parametrize("compressed", [False, True])
def test_npz_several_arrays(compressed):
    arrays = {"x": np.linspace(-3, 3, 24, dtype=np.float32).reshape(2, 3, 4), "w": np.eye(3),
              "h": np.array([0.5, -1.25], dtype=np.float16)}
    tensors, _ = loaded(npz_bytes(compressed, **arrays), "a.npz")
    assert set(tensors) == {"x", "w", "h"}
    assert same(tensors["x"], torch.from_numpy(arrays["x"]))
    assert same(tensors["w"], torch.from_numpy(arrays["w"]))
    assert same(tensors["h"], torch.from_numpy(arrays["h"].astype(np.float32)))


def test_safetensors_dtypes(sample):
    saved = {"f32": sample, "f64": sample.double(), "f16": sample.half(), "bf16": sample.bfloat16(),
             "i64": torch.arange(-4, 4), "u8": torch.arange(200, 210, dtype=torch.uint8)}
    tensors, notes = loaded(safetensors_bytes(saved), "m.safetensors")
    assert set(tensors) == set(saved)
    for name, tensor in saved.items():
        widened = tensor if tensor.dtype in (torch.float32, torch.float64) else tensor.float()
        assert same(tensors[name], widened), name
    assert any("bfloat16" in note for note in notes) and any("int64" in note for note in notes)


def test_csv_with_and_without_header():
    table = np.random.default_rng(1).standard_normal((7, 5))
    tensors, notes = loaded(csv_bytes(table), "t.csv")
    assert same(tensors["tensor"], torch.from_numpy(table)) and notes == []
    tensors, notes = loaded(csv_bytes(table, header=["a", "b", "c", "d", "e"]), "t.csv")
    assert same(tensors["tensor"], torch.from_numpy(table)) and any("column names" in n for n in notes)


@pytest.mark.parametrize("text, where", [(b"1,2,three\n4,5,6\n", "Line 1, column 3"),
                                         (b"# made here\n\nx,7\n1,2\n", "Line 3, column 1"),
                                         (b"1,2\n3,x\n", "Line 2, column 2")])
def test_csv_a_first_row_with_a_number_is_data_and_a_word_in_it_is_refused_where_it_stands(text, where):
    """Reference: the files made here. Only a first row without a single number is a header (column names);
    a word beside numbers, in the first row or a later one, is refused with its line and column."""
    assert f"{where} of this file is not a number" in refused(text, "t.csv")


@pytest.mark.parametrize("delimiter,newline", [("\t", "\n"), (";", "\r\n"), (",", "\r")])
def test_csv_delimiters_and_line_endings(delimiter, newline):
    table = np.arange(12, dtype=np.float64).reshape(4, 3) / 7
    tensors, _ = loaded(csv_bytes(table, delimiter=delimiter, newline=newline), "t.csv")
    assert same(tensors["tensor"], torch.from_numpy(table))


def test_csv_nan_and_inf_are_values_and_a_column_is_2d():
    tensors, _ = loaded(b"# exported\nx\n1.5\nnan\ninf\n-Infinity\n\"2\"\n", "t.csv")
    expected = torch.tensor([[1.5], [float("nan")], [float("inf")], [float("-inf")], [2.0]], dtype=torch.float64)
    assert same(tensors["tensor"], expected)
    assert "1 NaN, 1 +inf, 1 -inf (3 of 5 tokens affected; first: token 1)" in nonfinite_report(tensors["tensor"])


def test_content_decides_over_the_extension(sample):
    tensors, notes = loaded(safetensors_bytes({"a": sample}), "renamed.npy")
    assert same(tensors["a"], sample) and any("by its content" in note for note in notes)
    tensors, notes = loaded(npy_bytes(sample.numpy()), "weights.pt")
    assert same(tensors["tensor"], sample) and any("by its content" in note for note in notes)


def test_weird_names_inside_files_are_cleaned(sample):
    tensors, notes = loaded(safetensors_bytes({"<script>alert(1)</script>": sample, "a b": sample[0].clone()}),
                             "x.safetensors")
    assert all(re.fullmatch(r"[A-Za-z0-9_.\-]{1,100}", name) for name in tensors)
    assert any("cleaned" in note for note in notes)
    tensors, _ = loaded(npz_bytes(**{"x" * 500: np.ones(2, np.float32)}), "x.npz")
    assert [len(name) for name in tensors] == [tensor_io.MAX_NAME]


def test_empty_tensors_are_skipped_with_a_note(sample):
    tensors, notes = loaded(torch_bytes({"a": sample, "empty": torch.zeros(0, 768)}), "x.pt")
    assert list(tensors) == ["a"] and any("empty" in note for note in notes)


def test_load_tensors_is_the_dict_alone(sample):
    assert same(load_tensors(torch_bytes(sample), "x.pt")["tensor"], sample)
    assert same(load_tensors(bytearray(npy_bytes(sample.numpy())), "x.npy")["tensor"], sample)


def test_nonfinite_values_come_back_for_the_lab_to_count():
    """NaN and inf load as values; gelu_core.lab.nonfinite_report (the one place they are counted) reads them."""
    t = torch.tensor([float("nan")] * 1500 + [float("-inf")] + [0.0])
    tensors, _ = loaded(npy_bytes(t.numpy()), "x.npy")
    assert same(tensors["tensor"], t)
    assert nonfinite_report(torch.ones(3)) is None
    assert "1,500 NaN, 1 -inf (1 of 1 tokens affected; first: the only token)" in nonfinite_report(tensors["tensor"])


def test_caps_are_printable_numbers():
    assert MAX_BYTES == 40 * 2**20 and MAX_ELEMENTS >= 8 * 1024 * 768 and MAX_TENSORS >= 149
    assert MAX_LOADED_BYTES == 4 * MAX_ELEMENTS
    assert MAX_ELEMENTS * 4 >= MAX_BYTES  # every float32 file under the byte cap fits the element cap


def _file_of_type(ext: str, tensors: dict[str, torch.Tensor]) -> bytes:
    """A file in the format an extension names, written by that format's own library, holding ``tensors``."""
    arrays = {name: t.numpy() for name, t in tensors.items()}
    writers = {
        "pt": lambda: torch_bytes(tensors), "pth": lambda: torch_bytes(tensors),
        "npy": lambda: npy_bytes(next(iter(arrays.values()))), "npz": lambda: npz_bytes(True, **arrays),
        "safetensors": lambda: safetensors_bytes(tensors),
        "csv": lambda: csv_bytes(next(iter(arrays.values())).astype(np.float64)),
    }
    return writers[ext]()  # a KeyError here is a listed type nobody can write


@pytest.mark.parametrize("ext", INPUT_TYPES)
def test_every_input_type_the_uploader_offers_loads(ext, sample):
    """Reference: the tensor the test wrote in that format (exact); the name's extension is the format read."""
    x = sample[0].double() if ext == "csv" else sample[0]  # (6, 8): CSV holds 2-D tables of float64
    tensors, notes = loaded(_file_of_type(ext, {"x": x}), f"acts.{ext}")
    assert same(next(iter(tensors.values())), x)
    assert not any("by its content" in note for note in notes), notes


@pytest.mark.parametrize("ext", WEIGHT_TYPES)
def test_every_weight_type_the_uploader_offers_gives_a_block(ext):
    """Reference: GPT-2 names in the file; gelu_core.weights builds the block with the file's own weights (exact)."""
    from gelu_core.weights import load_block

    generator = torch.Generator().manual_seed(2)
    sd = {"h.0.mlp.c_fc.weight": torch.randn(4, 16, generator=generator), "h.0.mlp.c_fc.bias": torch.zeros(16),
          "h.0.mlp.c_proj.weight": torch.randn(16, 4, generator=generator), "h.0.mlp.c_proj.bias": torch.ones(4)}
    tensors, notes = loaded(_file_of_type(ext, sd), f"w.{ext}")
    assert not any("by its content" in note for note in notes), notes
    block = load_block(tensors).block
    assert torch.equal(block.c_fc.weight.detach(), sd["h.0.mlp.c_fc.weight"].T)
    assert torch.equal(block.c_proj.bias.detach(), sd["h.0.mlp.c_proj.bias"])


# ---------------------------------------------------------------------------------------------
# Code-running pickles: refused, and the marker file is never created
# ---------------------------------------------------------------------------------------------


def test_no_pickle_runs_code(tmp_path):
    marker = tmp_path / "marker"
    files = evil_pickles(marker)
    assert not marker.exists()
    # the corpus is live ammunition: plain pickle.loads would create the marker
    pickle.loads(files["OpenMarker-raw-p2"]).close()
    assert marker.exists()
    marker.unlink()
    for key, data in files.items():
        for filename in ("model.pt", "x.npy", "x.bin"):
            message = refused(data, filename)
            assert not marker.exists(), f"{key} as {filename} ran code"
            expected = ("could run code", "old format", "Python objects", "not a torch.save", "not a .npy",
                        "not in a format")
            assert any(words in message for words in expected), (key, message)
    assert "could run code" in refused(files["SystemMarker-torch-zip"], "m.pt")
    assert "old format" in refused(files["ExecMarker-torch-legacy"], "m.pt")
    assert "plain Python pickle" in refused(files["OpenMarker-raw-p5"], "m.pt")
    assert "Python objects" in refused(files["OpenMarker-npy-object"], "m.npy")


def test_pt_globals_that_torch_allows_but_cost_memory():
    # torch.load(weights_only=True) allows builtins.bytearray: 40 bytes of pickle, a zeroed buffer of any size
    live = torch.load(io.BytesIO(pt_with_pickle(call_pickle("builtins", "bytearray", 1000))), weights_only=True)
    assert live == bytearray(1000)
    assert "could run code" in refused(pt_with_pickle(call_pickle("builtins", "bytearray", 10**9)), "x.pt")
    # storage types are allowed as values (in persistent ids), never as calls: UntypedStorage(n) is n bytes unread
    assert "calls something other" in refused(pt_with_pickle(call_pickle("torch.storage", "UntypedStorage", 10**9)),
                                              "x.pt")
    for module, name in [("torch", "Tensor"), ("torch", "Size"), ("collections", "Counter"), ("_codecs", "encode")]:
        assert "could run code" in refused(pt_with_pickle(call_pickle(module, name, 10**9)), "x.pt")


def test_pt_the_pickle_checked_is_the_pickle_torch_reads(sample):
    bomb = call_pickle("builtins", "bytearray", 10**9)
    entries = torch_members(torch_bytes(sample))
    for extra in ({"name": "zzz/data.pkl", "data": bomb}, {"name": "archive/DATA.pkl", "data": bomb}):
        assert "unusual zip archive" in refused(zip_bytes([*entries, extra]), "x.pt")
    moved = [dict(entry, name="other/" + entry["name"].split("/", 1)[1]) for entry in entries]
    assert "unusual zip archive" in refused(zip_bytes([{"name": "first/readme", "data": b""}, *moved]), "x.pt")


def test_pt_globals_are_never_looked_up_in_torch():
    # getattr(torch, "_dynamo") would import a large submodule; the allowed names are listed up front
    already = "torch._dynamo" in sys.modules
    message = refused(pt_with_pickle(b"\x80\x02ctorch\n_dynamo\n."), "x.pt")
    assert "could run code" in message
    assert already or "torch._dynamo" not in sys.modules


def test_pt_pickle_protocol_4_is_refused_clearly(sample):
    assert "pickle features" in refused(torch_bytes(sample, pickle_protocol=4), "x.pt")


def test_legacy_torch_file_and_renamed_pickle_are_refused(sample):
    assert "old format" in refused(torch_bytes(sample, _use_new_zipfile_serialization=False), "old.pt")
    assert "plain Python pickle" in refused(pickle.dumps({"w": sample.numpy()}, protocol=4), "w.pt")


# ---------------------------------------------------------------------------------------------
# Not tensors
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("obj,words", [
    ([torch.ones(2)], "a list"),
    ((torch.ones(2),), "a tuple"),
    ("hello", "text"),
    (7, "a number"),
    (None, "None"),
    ({"w": torch.ones(2), "step": 3}, "a number at 'step'"),
    ({"w": torch.ones(2), "cfg": {"lr": 0.1}}, "a number at 'cfg.lr'"),
    ({"w": [torch.ones(2)]}, "a list at 'w'"),
    ({torch.ones(1).dtype: torch.ones(2)}, "keys are not names"),
    (deep_dict(30), "nests dicts"),
    ({}, "no values"),
])
def test_not_tensors(obj, words):
    message = refused(torch_bytes(obj), "x.pt")
    assert words in message, message


def _with_attribute(t: torch.Tensor) -> torch.Tensor:
    t.note = "an attribute torch.save keeps"
    return t


@pytest.mark.parametrize("make,words", [
    (lambda: torch.ones(3, dtype=torch.bool), "true/false"),
    (lambda: torch.ones(3, dtype=torch.complex64), "complex"),
    (lambda: torch.ones(3).to_sparse(), "sparse"),
    (lambda: torch.quantize_per_tensor(torch.ones(3), 0.1, 0, torch.qint8), "quantized"),
    (lambda: torch.ones(3, device="meta"), "without data"),
    (lambda: torch.ones([1] * 9), "9 dimensions"),
    (lambda: _with_attribute(torch.ones(2)), "extra Python attributes"),
    (lambda: {"p": _with_attribute(torch.nn.Parameter(torch.ones(2)))}, "extra Python attributes"),
    (lambda: {"a": torch.ones(2), "b": torch.ones(2, dtype=torch.float8_e4m3fn)}, "dtype float8_e4m3fn"),
])
@pytest.mark.filterwarnings("ignore:torch.quantize_per_tensor")
def test_unusual_torch_tensors(make, words):
    message = refused(torch_bytes(make()), "x.pt")
    assert words in message, message


def test_too_many_tensors():
    shared = torch.ones(1)
    data = torch_bytes({f"t{i}": shared[:] for i in range(MAX_TENSORS + 1)})
    assert f"more than {MAX_TENSORS:,} tensors" in refused(data, "x.pt", trace=False)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_torchscript_is_refused():
    buffer = io.BytesIO()
    torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), buffer)
    assert "TorchScript" in refused(buffer.getvalue(), "m.pt")


# ---------------------------------------------------------------------------------------------
# Sizes: zero-stride views, element caps, zip bombs
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [
    lambda: torch.zeros(1).expand(10**9),
    lambda: torch.zeros(1).as_strided((10**6, 10**6), (0, 0)),
    lambda: torch.zeros(4).as_strided((2**40, 4), (0, 1)),
    lambda: {"a": torch.zeros(1).expand(MAX_ELEMENTS), "b": torch.zeros(1).expand(8)},  # each fits, not together
    lambda: {f"v{i}": torch.zeros(1).expand(2**16) for i in range(MAX_ELEMENTS // 2**16 + 1)},
])
def test_zero_stride_views_claiming_many_elements(make):
    data = torch_bytes(make())
    assert len(data) < 2**20  # a few bytes of storage
    assert "the limit is" in refused(data, "bomb.pt")


def test_loaded_memory_cap():
    # MAX_ELEMENTS float32 values are exactly MAX_LOADED_BYTES: a zero-stride float16 view of that size loads
    tensors, _ = loaded(torch_bytes(torch.zeros(1, dtype=torch.float16).expand(MAX_ELEMENTS)), "x.pt")
    assert tensors["tensor"].shape == (MAX_ELEMENTS,) and not tensors["tensor"].any()
    del tensors
    # half as many float64 (or int64, stored at 8 bytes) values fill the same memory; one more is refused
    for dtype in (torch.float64, torch.int64):
        data = torch_bytes(torch.zeros(1, dtype=dtype).expand(MAX_LOADED_BYTES // 8 + 1))
        assert "once loaded; the limit is 128 MiB" in refused(data, "x.pt")
    header = npy_with_header(npy_header_text("<f8", (MAX_LOADED_BYTES // 8 + 1,)))
    stream = deflate_prefixed(header, zeros_deflated(MAX_LOADED_BYTES + 8))
    member = {"name": "x.npy", "method": 8, "compressed": stream, "size": len(header) + MAX_LOADED_BYTES + 8, "crc": 0}
    assert "would take 128.1 MiB once loaded" in refused(zip_bytes([member]), "x.npz")


def test_pt_storage_claim_larger_than_its_record(sample):
    entries = torch_members(torch_bytes(sample))
    pickled = next(e["data"] for e in entries if e["name"].endswith("data.pkl"))
    # the storage's element count is the BININT1 before TUPLE in the persistent id ('K', 192, 't')
    lying = pickled.replace(b"K\xc0t", b"J\x00\x00\x00\x40t")  # 192 -> 2**30 elements (4 GiB)
    assert lying != pickled
    assert "damaged" in refused(zip_bytes(replace_member(entries, "data.pkl", data=lying)), "lie.pt")


def test_pt_with_compressed_members_is_refused(sample):
    entries = [dict(entry, method=8) for entry in torch_members(torch_bytes({"x": sample}))]
    assert "compressed" in refused(zip_bytes(entries), "x.pt")


def test_pt_deflate_bomb_member_is_refused_before_inflating():
    entries = torch_members(torch_bytes(torch.zeros(4)))
    bomb = zeros_deflated(2**30)  # 1 GiB of zeros in ~1 MB
    entries = replace_member(entries, "data/0", method=8, compressed=bomb, size=2**30, crc=0)
    assert "compressed" in refused(zip_bytes(entries), "x.pt")


def test_pt_declared_sizes_larger_than_the_file(sample):
    entries = replace_member(torch_members(torch_bytes(sample)), "data/0", size=10**9, compress_size=10**9)
    assert "more data than it holds" in refused(zip_bytes(entries), "x.pt")


def test_pt_pickle_making_many_calls_is_refused_before_unpickling():
    # 5 bytes a call: 200,000 tensor rebuilds would keep torch's pure-Python unpickler busy ~15 s
    assert "calls; the limit is" in refused(many_calls_pt(50_000), "x.pt", trace=False)


def test_pt_pickle_of_cheap_opcodes_is_quick():
    entries = torch_members(torch_bytes(torch.ones(1)))
    pickled = next(e["data"] for e in entries if e["name"].endswith("data.pkl"))
    filler = b"N" * (tensor_io.MAX_PICKLE_BYTES - len(pickled) - 10)  # NONE pushed 250,000 times
    refused(zip_bytes(replace_member(entries, "data.pkl", data=pickled[:-1] + filler + b".")), "x.pt", trace=False)


def test_pt_huge_pickle_is_refused(sample):
    entries = torch_members(torch_bytes(sample))
    entries = replace_member(entries, "data.pkl", data=next(
        e["data"] for e in entries if e["name"].endswith("data.pkl")) + b" " * tensor_io.MAX_PICKLE_BYTES)
    assert "table of contents" in refused(zip_bytes(entries), "x.pt")


def test_npz_deflate_bomb_declared_size():
    payload = zeros_deflated(2**28)  # 256 MiB of zeros, honestly declared
    header = npy_header_text("<f4", (2**26,)).encode()
    member = {"name": "x.npy", "method": 8, "compressed": deflate_prefixed(header, payload),
              "size": len(header) + 10 + 2**28, "crc": 0}
    assert "would unpack to" in refused(zip_bytes([member]), "bomb.npz")


def test_npz_member_declaring_small_inflating_huge():
    # declares 4,096 float32s (16 kB) and a matching header, but the stream inflates to 256 MiB
    header = npy_with_header(npy_header_text("<f4", (4096,)))
    stream = deflate_prefixed(header, zeros_deflated(2**28))
    member = {"name": "x.npy", "method": 8, "compressed": stream, "size": len(header) + 4 * 4096,
              "crc": 0x12345678}
    message = refused(zip_bytes([member]), "sneaky.npz", peak=64 * 2**20)
    assert "damaged" in message


def test_npz_overlapping_members_bomb():
    # many central-directory entries that all point at one deflated kernel (a non-recursive zip bomb)
    header = npy_with_header(npy_header_text("<f4", (2**22,)))
    kernel = deflate_prefixed(header, zeros_deflated(2**24))
    size = len(header) + 2**24
    members = [{"name": "k0.npy", "method": 8, "compressed": kernel, "size": size, "crc": 0}]
    members += [{"name": f"k{i}.npy", "method": 8, "offset_of": 0, "compress_size": len(kernel), "size": size,
                 "crc": 0} for i in range(1, 200)]
    message = refused(zip_bytes(members), "overlap.npz")
    assert "would unpack to" in message or "damaged" in message, message


def test_zip_with_too_many_members():
    members = [{"name": f"m{i}.npy", "data": b""} for i in range(70_000)]
    message = refused(zip_bytes(members), "many.npz")
    assert "damaged" in message or "files; the limit" in message, message
    members = [{"name": f"m{i}.npy", "data": b""} for i in range(tensor_io.MAX_ZIP_MEMBERS + 1)]
    assert "files; the limit" in refused(zip_bytes(members), "many.npz")


@pytest.mark.parametrize("data,words", [
    (zip_bytes([]), "empty zip"),
    (zip_bytes([{"name": "readme.txt", "data": b"hi"}]), "not one made by torch.save or np.savez"),
    (zip_bytes([{"name": "x.npy", "data": npy_bytes(np.ones(3, np.float32))}]) + b"trailing", "damaged"),
    (zip_bytes([{"name": "x.npy", "data": npy_bytes(np.ones(3, np.float32)), "crc": 1}]), "damaged member"),
    (zip_bytes([{"name": "x.npy", "data": npy_bytes(np.ones(3, np.float32)), "method": 12}]), "compression"),
])
def test_odd_zips(data, words):
    message = refused(data, "a.npz")
    assert words in message, message


# ---------------------------------------------------------------------------------------------
# .npy headers that lie or hold what is not numbers
# ---------------------------------------------------------------------------------------------


def test_npy_shape_larger_or_smaller_than_the_data():
    payload = np.ones(12, np.float32).tobytes()
    assert "bytes follow it" in refused(npy_with_header(npy_header_text("<f4", (4, 4)), payload), "a.npy")
    assert "bytes follow it" in refused(npy_with_header(npy_header_text("<f4", (2, 4)), payload), "a.npy")
    assert "the limit is" in refused(npy_with_header(npy_header_text("<f4", (10**6, 10**6)), payload), "a.npy")


@pytest.mark.parametrize("descr,words", [
    ("|O", "Python objects"),
    ("<c8", "complex"),
    ("|b1", "true/false"),
    ("<U4", "text"),
    ("|S3", "bytes"),
    ("<M8[s]", "dates"),
    ("|V8", "raw bytes"),
    ("<f16", "extended-precision"),
    ("(2,)<f4", "records"),
    ("nonsense", "unknown dtype"),
])
def test_npy_dtypes_refused(descr, words):
    assert words in refused(npy_with_header(npy_header_text(descr, (2,)), bytes(64)), "a.npy")


@pytest.mark.parametrize("header", [
    "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2.5,), }",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (True,), }",
    "{'descr': '<f4', 'fortran_order': 0, 'shape': (2,), }",
    "{'descr': '<f4', 'shape': (2,), }",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}",
    "__import__('os').system('echo hi')",
    "[" * 5000 + "]" * 5000,
    "{'descr': '<f4', 'fortran_order': False, 'shape': (" + "1, " * 20 + "), }",
    "not python",
])
def test_npy_bad_headers(header):
    refused(npy_with_header(header.ljust(118) + "\n", bytes(8)), "a.npy")


def test_npy_header_lengths_and_versions():
    assert "header is over" in refused(npy_with_header("{}", version=(2, 0), length=2**31), "a.npy")
    assert "damaged" in refused(npy_with_header("{'descr'", version=(1, 0), length=5000), "a.npy")
    assert "version 9.9" in refused(npy_with_header(npy_header_text("<f4", (1,)), version=(9, 9)), "a.npy")
    assert "damaged" in refused(b"\x93NUMPY\x01", "a.npy")


# ---------------------------------------------------------------------------------------------
# safetensors headers that lie
# ---------------------------------------------------------------------------------------------


def _entry(dtype="F32", shape=(2,), offsets=(0, 8)):
    return {"dtype": dtype, "shape": list(shape), "data_offsets": list(offsets)}


@pytest.mark.parametrize("data,words", [
    (safetensors_with_header({"a": _entry()}, bytes(8), length=2**40), "over 1 MiB"),
    (safetensors_with_header({"a": _entry()}, bytes(8), length=5000), "runs past the end"),
    (safetensors_with_header(b"{" + b" " * (2**20 + 10) + b"}", bytes(8)), "over 1 MiB"),
    (safetensors_with_header(b'{"a": nope}'), "damaged"),
    (safetensors_with_header(b"{\xff\xfe}"), "damaged"),
    (safetensors_with_header(b'{"a": 1, "a": 2}'), "damaged"),
    (safetensors_with_header(b"{" + b'"a":[' * 3000 + b"]" * 3000 + b"}"), "damaged"),
    (safetensors_with_header({"a": _entry(offsets=(0, 8000))}, bytes(8)), "offsets"),
    (safetensors_with_header({"a": _entry(offsets=(8, 16))}, bytes(8)), "offsets"),
    (safetensors_with_header({"a": _entry(offsets=(-8, 0))}, bytes(8)), "damaged"),
    (safetensors_with_header({"a": _entry(shape=(3,))}, bytes(8)), "offsets"),
    (safetensors_with_header({"a": _entry(shape=(-2,))}, bytes(8)), "not a list of sizes"),
    (safetensors_with_header({"a": _entry(shape=(10**12,), offsets=(0, 8))}, bytes(8)), "the limit is"),
    (safetensors_with_header({"a": _entry(dtype="Q99")}, bytes(8)), "unsupported dtype"),
    (safetensors_with_header({"a": _entry(dtype="BOOL", offsets=(0, 2))}, bytes(2)), "true/false"),
    (safetensors_with_header({"a": _entry(dtype="C64", offsets=(0, 16))}, bytes(16)), "complex"),
    (safetensors_with_header({"a": _entry(), "b": _entry()}, bytes(8)), "overlap"),
    (safetensors_with_header({"a": _entry()}, bytes(16)), "no tensor"),
    (safetensors_with_header({"a": {"dtype": "F32"}}, bytes(8)), "damaged"),
    (safetensors_with_header([1, 2], bytes(8)), "not a safetensors file"),
    (safetensors_with_header(b'"x"     ', bytes(8)), "not a safetensors file"),
    (safetensors_with_header({"__metadata__": "x", "a": _entry()}, bytes(8)), "damaged"),
    (safetensors_with_header({f"t{i}": _entry(offsets=(0, 0), shape=(0,)) for i in range(MAX_TENSORS + 1)}),
     "more than"),
])
def test_safetensors_lying_headers(data, words):
    message = refused(data, "m.safetensors")
    assert words in message, message


# ---------------------------------------------------------------------------------------------
# CSV
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text,words", [
    (b"1,2,3\n4,5\n", "Line 2 of this file has 2 values, not 3"),
    (b"1,2\n3,4,5\n", "has 3 values"),
    (b"a,b\n1,2\n3,x\n", "Line 3, column 2"),
    (b"1,2\n3,\n", "column 2"),
    (b"1,2\n<b>3</b>,4\n", "Line 2, column 1"),
    (b"a,b\n", "header but no rows"),
    (b"\n\n# only comments\n", "no rows"),
    ("1,2\n\u00e9,3\n".encode("latin1"), "UTF-8"),
    (b"1,2\x00\n", "CSV text"),
])
def test_csv_refusals(text, words):
    message = refused(text, "t.csv")
    assert words in message, message


def test_csv_over_the_cell_cap():
    columns = 1024
    rows = MAX_CSV_CELLS // columns + 1
    text = (",".join(["0"] * columns) + "\n") * rows
    assert f"the limit is {MAX_CSV_CELLS:,} numbers" in refused(text.encode(), "big.csv")
    assert "the limit is" in refused(b"0\r" * (MAX_CSV_CELLS + 1), "cr.csv")


def test_csv_with_a_long_second_row_is_refused_from_its_bytes():
    """43.6 MB, a first row of one value and a second of 15 M (before: 37 s and 1.3 GB on the way to a refusal):
    refused from the bytes, growing resident memory by less than 16 MiB (the file itself is held before).  It is
    over the upload cap now, so its size refuses it; the same rows under the cap are refused for the long row."""
    case = next(case for case in hostile_files() if case.name.startswith("csv of 43.6 MB"))
    message = refused(case.data, case.filename, peak=16 * 2**20, trace=False)
    assert message == f"This file is {len(case.data) / 2**20:.1f} MiB; the limit is {MAX_BYTES // 2**20} MiB."
    under_the_cap = case.data[: MAX_BYTES - 1].rpartition(b",")[0] + b"\n"
    message = refused(under_the_cap, case.filename, peak=16 * 2**20, trace=False)
    values = under_the_cap.split(b"\n")[1].count(b",") + 1
    assert message == f"Line 2 of this file has {values:,} values, not 1 like the first row."


LONG_ROWS = {  # id: (file, refusal)
    "1.9 M values on line 3, under the cell cap": (
        b"# two short rows, then a long one\n1,2\n" + b"3," * 1_899_999 + b"3\n",
        "Line 3 of this file has 1,900,000 values, not 2 like the first row."),
    "BOM, comment, blank line, CR endings": (
        b"\xef\xbb\xbf#,,,\r\n\r\n 1;2\r" + b"1;" * 2_100_000 + b"1\r",
        "Line 4 of this file has 2,100,001 values, not 2 like the first row."),
    "CR LF, the long line last and unended": (
        b"1;2\r\n3;4\r\n" + b"5;" * 99_999 + b"5",
        "Line 3 of this file has 100,000 values, not 2 like the first row."),
    "after a header": (
        b"a,b\n" + b"0," * 69_999 + b"0\n", "Line 2 of this file has 70,000 values, not 2 like the first row."),
    "first row too wide": (
        b"0," * 69_999 + b"0\n",
        f"The first row of this file has 70,000 values; the limit is {MAX_CSV_COLUMNS:,} a row."),
    "one value of 4 MB (the first row has no tab, so tabs are not delimiters)": (
        b"1\n" + b"1\t" * 2_097_152 + b"1\n",
        f"Line 2 of this file is 4,194,305 bytes long; the limit is {MAX_CSV_LINE_BYTES:,} a line."),
}


@pytest.mark.parametrize("key", LONG_ROWS)
def test_csv_rows_longer_than_allowed_are_counted_never_split(key):
    """A row with more values than the first, a first row over MAX_CSV_COLUMNS, a line over MAX_CSV_LINE_BYTES:
    found in the bytes and named.  Splitting a 1.9 M-value row into strings would take ~100 MiB and numpy's
    parser ~60 MiB: bound 16 MiB."""
    text, message = LONG_ROWS[key]
    assert refused(text, "t.csv", peak=16 * 2**20, trace=False) == message


def test_csv_comments_after_values_may_hold_delimiters():
    tensors, _ = loaded(b"1,2\n3,4 # a note, with commas, several\n# 5,6,7,8\n", "t.csv")
    assert same(tensors["tensor"], torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64))


def test_csv_at_the_cap_with_a_bad_last_cell_is_refused_in_time():
    columns = 768
    rows = MAX_CSV_CELLS // columns
    text = (",".join(["0.1234"] * columns) + "\n") * (rows - 1) + ",".join(["0.5"] * (columns - 1) + ["oops"])
    assert f"Line {rows:,}, column {columns}" in refused(text.encode(), "big.csv", trace=False)


# ---------------------------------------------------------------------------------------------
# Empty, truncated, random, oversized, unknown, weird names
# ---------------------------------------------------------------------------------------------


def test_empty_and_oversized():
    assert "empty" in refused(b"", "x.pt")
    message = refused(b"\x00" * (MAX_BYTES + 1), "big.npy", peak=PEAK_BYTES)
    assert f"the limit is {MAX_BYTES // 2**20} MiB" in message


def _good_files() -> dict[str, tuple[bytes, str]]:
    generator = torch.Generator().manual_seed(7)
    t = torch.randn(3, 5, generator=generator)
    return {
        "pt": (torch_bytes({"a": t, "b": {"c": t.half()}}), "x.pt"),
        "npy": (npy_bytes(t.numpy()), "x.npy"),
        "npz": (npz_bytes(False, a=t.numpy(), b=np.arange(4)), "x.npz"),
        "npz_deflated": (npz_bytes(True, a=t.numpy(), b=np.arange(4)), "x.npz"),
        "safetensors": (safetensors_bytes({"a": t, "b": t.bfloat16()}), "x.safetensors"),
        "csv": (csv_bytes(t.double().numpy(), header=["p", "q", "r", "s", "t"]), "x.csv"),
    }


GOOD = _good_files()


@pytest.mark.parametrize("kind", sorted(GOOD))
def test_every_truncation_is_refused(kind):
    data, filename = GOOD[kind]
    loaded(data, filename)  # whole: fine
    for cut in sorted({1, 2, 7, 8, 9, 10, 30, len(data) // 3, len(data) // 2, len(data) - 23, len(data) - 1}):
        if kind == "csv":
            continue  # a CSV cut at a line end is a smaller good table; fuzzed below instead
        refused(data[:cut], filename)


@pytest.mark.parametrize("filename", ["x.bin", "x.pt", "x.npy", "x.npz", "x.safetensors", "x", "x.csv"])
def test_random_bytes_are_refused(filename):
    rng = np.random.default_rng(3)
    for size in (1, 7, 100, 4096, 2**20):
        refused(rng.integers(0, 256, size, dtype=np.uint8).tobytes(), filename)


def test_other_formats_are_refused():
    png = b"\x89PNG\r\n\x1a\n" + bytes(100)
    assert "not a .npy array" in refused(png, "image.npy")
    assert "not in a format this page reads" in refused(png, "image.png")
    assert "not a torch.save file" in refused(b"hello world", "notes.pt")


@pytest.mark.parametrize("filename", [
    "<script>alert(1)</script>.npy",
    "../../../etc/passwd",
    "C:\\Users\\me\\secret\\x.pt",
    "a" * 100_000 + ".pt",
    "x.<b>bold</b>",
    "",
    "model.pt\n<img src=x onerror=alert(1)>",
])
def test_weird_filenames_are_never_echoed(filename):
    message = refused(b"garbage that is no format", filename)
    assert "script" not in message and "etc" not in message and "secret" not in message
    assert "aaaa" not in message and "bold" not in message and "img" not in message
    assert re.search(r"This (\.[a-z0-9]{1,12} )?file", message), message


def test_names_inside_files_never_reach_messages_raw():
    evil_name = "<img src=x onerror=alert(1)>" + "z" * 300
    data = safetensors_bytes({evil_name: torch.ones(2)})
    data_bool = torch_bytes({evil_name: torch.ones(2, dtype=torch.bool)})
    message = refused(data_bool, "x.pt")
    assert "img" in message and "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz" not in message
    tensors, _ = loaded(data, "x.safetensors")
    assert all("<" not in name for name in tensors)


def test_the_public_entry_point_turns_surprises_into_refusals(monkeypatch):
    def boom(*args, **kwargs):
        raise KeyError("<internal detail>")

    monkeypatch.setattr(numpy_files, "read_npy", boom)
    with pytest.raises(TensorFileError) as caught:
        load_tensors(npy_bytes(np.ones(2, np.float32)), "x.npy")
    assert_safe_message(str(caught.value))
    assert "internal" not in str(caught.value)


# ---------------------------------------------------------------------------------------------
# The hostile corpus (harness.hostile_files), as the lab's two uploaders see it
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [case.name for case in hostile_files(large=False)])
def test_hostile_corpus_is_refused_by_its_uploader(name, tmp_path):
    """Each file's refusal names what it should, within 32 MiB of resident growth, and no pickle ran code."""
    marker = tmp_path / "ran"
    case = next(case for case in hostile_files(marker=marker, large=False) if case.name == name)
    offered = WEIGHT_TYPES if case.uploader == "weights" else INPUT_TYPES
    assert case.filename.rsplit(".", 1)[1] in offered
    check = check_block_shapes if case.uploader == "weights" else None
    message = refused(case.data, case.filename, peak=32 * 2**20, trace=False, check=check)
    assert case.words in message, message
    assert not marker.exists()


# ---------------------------------------------------------------------------------------------
# A caller's check: it sees every declared shape before any data is read
# ---------------------------------------------------------------------------------------------


class _Stop(Exception):
    """What the test's check raises: it must come out of load_tensors_with_notes unchanged."""


@pytest.mark.parametrize("ext", ["pt", "npz", "npz-stored", "safetensors", "npy", "csv"])
def test_check_sees_the_names_and_shapes_that_would_come_back(ext, sample):
    tensors = {"h.0.mlp.c_fc.weight": sample[0], "odd name": sample[1, :2], "empty": torch.zeros(0, 3)}
    if ext in ("npy", "csv"):
        tensors = {"tensor": sample[0].double() if ext == "csv" else sample[0]}
    data = (npz_bytes(False, **{k: v.numpy() for k, v in tensors.items()}) if ext == "npz-stored"
            else _file_of_type(ext, tensors))
    seen = {}

    def check(shapes):
        seen.update(shapes)
        raise _Stop

    with pytest.raises(_Stop):
        load_tensors_with_notes(data, f"x.{ext.split('-')[0]}", check=check)
    want = {"h.0.mlp.c_fc.weight": (6, 8), "odd_name": (2, 8)} if len(tensors) > 1 else {"tensor": (6, 8)}
    assert seen == want


def test_check_runs_before_a_compressed_member_is_inflated():
    """A .npz whose one member inflates to 64 MiB: refused by the check with under 8 MiB of resident growth;
    the same file without the check loads (the reference: it really holds 64 MiB)."""
    header = npy_with_header(npy_header_text("<f4", (2**24,)))
    member = {"name": "big.npy", "method": 8, "compressed": deflate_prefixed(header, zeros_deflated(2**26)),
              "size": len(header) + 2**26, "crc": zeros_crc(header, 2**26)}
    data = zip_bytes([member])

    def check(shapes):
        raise _Stop(shapes)

    with PeakGrowth() as grown, pytest.raises(_Stop) as stopped:
        load_tensors_with_notes(data, "x.npz", check=check)
    assert stopped.value.args[0] == {"big": (2**24,)}
    assert grown.bytes is None or grown.bytes < 8 * 2**20, grown.bytes
    tensors, _ = load_tensors_with_notes(data, "x.npz")
    assert tensors["big"].shape == (2**24,) and not tensors["big"].any()


# ---------------------------------------------------------------------------------------------
# Fuzzing: random bytes, truncations and corruptions of good files
# ---------------------------------------------------------------------------------------------

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
NAMES = st.sampled_from(["x.pt", "x.pth", "x.npy", "x.npz", "x.safetensors", "x.csv", "x", "x.bin"])


def _tensors_or_refusal(data: bytes, filename: str) -> None:
    started = time.process_time()
    try:
        tensors, notes = loader._load(data, filename)
    except TensorFileError as error:
        assert_safe_message(str(error))
    else:
        assert isinstance(tensors, dict) and tensors
        assert_owned(tensors, data)
        assert all(isinstance(note, str) for note in notes)
    assert time.process_time() - started < SECONDS


@FUZZ
@given(data=st.binary(max_size=4096), filename=NAMES)
def test_fuzz_random_bytes(data, filename):
    _tensors_or_refusal(data, filename)


@FUZZ
@given(kind=st.sampled_from(sorted(GOOD)), cut=st.integers(0, 10**6), filename=NAMES)
def test_fuzz_truncations(kind, cut, filename):
    data = GOOD[kind][0]
    _tensors_or_refusal(data[: cut % (len(data) + 1)], filename)


@FUZZ
@given(kind=st.sampled_from(sorted(GOOD)), edits=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)),
                                                          min_size=1, max_size=8))
def test_fuzz_corruptions(kind, edits):
    data, filename = GOOD[kind]
    corrupted = bytearray(data)
    for position, value in edits:
        corrupted[position % len(corrupted)] = value
    _tensors_or_refusal(bytes(corrupted), filename)


@FUZZ
@given(kind=st.sampled_from(["npy", "safetensors"]), header=st.binary(max_size=300))
def test_fuzz_header_bytes(kind, header):
    if kind == "npy":
        data = npy_with_header(header, bytes(64))
    else:
        data = safetensors_with_header(header, bytes(64))
    _tensors_or_refusal(data, "x." + kind)


TORCH_ENTRIES = torch_members(torch_bytes({"w": torch.arange(6.0).reshape(2, 3), "b": {"c": torch.ones(2).half()}}))
TORCH_PICKLE = next(entry["data"] for entry in TORCH_ENTRIES if entry["name"].endswith("data.pkl"))


@FUZZ
@given(edits=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=6),
       cut=st.integers(0, 10**6))
def test_fuzz_pickle_inside_a_valid_zip(edits, cut):
    # the zip stays valid (CRCs recomputed), so every mutation reaches the pickle walk and torch.load
    pickled = bytearray(TORCH_PICKLE)
    for position, value in edits:
        pickled[position % len(pickled)] = value
    pickled = bytes(pickled[: len(pickled) - cut % 8])
    _tensors_or_refusal(zip_bytes(replace_member(TORCH_ENTRIES, "data.pkl", data=pickled)), "x.pt")


DESCRS = st.sampled_from(["<f4", ">f8", "<f2", "|u1", "<i8", "|b1", "<c8", "|O", "<U3", "V4", "<f16", "f0", "", "x"])
SIZES = st.one_of(st.integers(-3, 6), st.integers(0, 2**70), st.just(True), st.floats(allow_nan=False))


@FUZZ
@given(descr=DESCRS, fortran=st.sampled_from(["True", "False", "0", "None"]),
       shape=st.lists(SIZES, max_size=10), payload=st.integers(0, 200))
def test_fuzz_npy_header_fields(descr, fortran, shape, payload):
    shape_text = "(" + "".join(f"{size!r}, " for size in shape) + ")"
    header = f"{{'descr': {descr!r}, 'fortran_order': {fortran}, 'shape': {shape_text}, }}"
    _tensors_or_refusal(npy_with_header(header.ljust(118) + "\n", bytes(payload)), "x.npy")


@FUZZ
@given(entries=st.dictionaries(
    st.text(max_size=12),
    st.fixed_dictionaries({"dtype": st.sampled_from(["F32", "F64", "F16", "BF16", "I64", "U8", "BOOL", "Q", 3]),
                           "shape": st.lists(SIZES, max_size=4),
                           "data_offsets": st.lists(st.integers(-4, 80), min_size=0, max_size=3)}),
    max_size=4), payload=st.integers(0, 80))
def test_fuzz_safetensors_header_fields(entries, payload):
    _tensors_or_refusal(safetensors_with_header(entries, bytes(payload)), "x.safetensors")


def test_loads_take_turns(monkeypatch):
    """Reference: a counter of loads under way at once, from four threads; the loader lets in one at a time."""
    from tests.conftest import most_at_once

    buf = io.BytesIO()
    np.save(buf, np.ones((2, 3), dtype=np.float32))
    assert most_at_once(monkeypatch, loader, "_load", lambda: load_tensors(buf.getvalue(), "x.npy")) == 1


def test_the_upload_cap_is_the_smallest_the_lab_needs():
    """Reference: .streamlit/config.toml's server.maxUploadSize (MiB) and files made here: GPT-2 XL's block in
    float16 (the lab's widest, as safetensors) fits under the cap and loads; a cap 1 MiB smaller would refuse it."""
    import tomllib
    from pathlib import Path

    from safetensors.torch import save as safetensors_save

    config = tomllib.loads((Path(__file__).resolve().parents[1] / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] * 2**20 == MAX_BYTES
    d, hidden = 1600, 6400
    block = {"mlp.c_fc.weight": torch.zeros(d, hidden, dtype=torch.float16),
             "mlp.c_fc.bias": torch.zeros(hidden, dtype=torch.float16),
             "mlp.c_proj.weight": torch.zeros(hidden, d, dtype=torch.float16),
             "mlp.c_proj.bias": torch.zeros(d, dtype=torch.float16)}
    data = safetensors_save(block)
    assert MAX_BYTES - 2**20 < len(data) <= MAX_BYTES
    tensors, _ = loaded(data, "gpt2-xl-block.safetensors")
    assert tensors["mlp.c_fc.weight"].shape == (d, hidden)
