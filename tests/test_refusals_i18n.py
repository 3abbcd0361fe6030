"""gelu_core's refusals and notes in the reader's language: each a whole sentence with named parameters, in the
catalogs, shown translated with the reader's numbers, English unchanged, never the English-reason fallback.

References: gelu_core's syntax tree (``ast``) for how each refusal is raised; locales/messages.pot (what Babel
extracts, tests/test_i18n.py holds it in step with the code) for which templates exist; each catalog's msgstr
formatted by hand with Babel's ``format_decimal`` for the reader's numbers; files made here (a .npy of 9
dimensions, a CSV with a word on line 1,234, a .pt cut short, a safetensors header claiming 256 MiB) and
harness.hostile_files' uploads for the refusals themselves.
"""

from __future__ import annotations

import ast
import io
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from gelu_core import tensor_io
from ui.i18n import LOCALES, catalog_path, using

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ("de", "es", "zh-Hans")
# WidthMismatch takes (width, d_model)
REFUSALS = {"TensorFileError", "WeightsError", "LabInputError", "Busy", "Message"}
FALLBACK = "This could not be used. The reason, in English: {reason}"
# a Message of counts and symbols only (gelu_core.lab.nonfinite_report's "{nan} NaN, {neg} -inf"): in no catalog
SYMBOLS_ONLY = re.compile(r"^(\{\w+\} (NaN|\+inf|-inf))(, \{\w+\} (NaN|\+inf|-inf))*$")


def template_ids() -> set[str]:
    from babel.messages.pofile import read_po

    with (LOCALES / "messages.pot").open("rb") as pot:
        return {m.id for m in read_po(pot) if isinstance(m.id, str) and m.id}


def msgstr(lang: str, msgid: str) -> str:
    from babel.messages.pofile import read_po

    with catalog_path(lang).open("rb") as po:
        found = read_po(po, locale=lang.replace("-", "_")).get(msgid)
    assert found is not None and found.string and not found.fuzzy, (lang, msgid)
    return found.string


def babel_number(value, lang: str, pattern: str | None = None) -> str:
    from babel.numbers import format_decimal

    return format_decimal(value, format=pattern, locale=lang.replace("-", "_"))


def refused(data: bytes, filename: str):
    with pytest.raises(tensor_io.TensorFileError) as caught:
        tensor_io.load_tensors_with_notes(data, filename)
    return caught.value


def check_message(message, templates: set[str]) -> list[str]:
    """Templates of a Message and of the Messages among its parameters that the catalogs lack."""
    from gelu_core.messages import Message

    missing = [] if message.template in templates or SYMBOLS_ONLY.match(message.template) else [message.template]
    for value in message.params.values():
        if isinstance(value, Message):
            missing += check_message(value, templates)
    return missing


# ---------------------------------------------------------------- how gelu_core raises them

def _calls(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
            if name in REFUSALS:
                yield node


def test_every_refusal_in_gelu_core_is_a_marked_template_and_never_an_f_string():
    """Reference: gelu_core's syntax tree, and hosting's (the lab's line: who waits, who is refused).  Every
    construction of a refusal or a Message passes its sentence as ``N_("literal")`` (which Babel extracts: it must
    be in messages.pot) or as a name, a subscript or an attribute that holds one, never an f-string, a ``+`` or a
    ``.format`` (a sentence glued before translation); parameters are keyword arguments."""
    templates = template_ids()
    wrong = []
    for path in sorted([*(ROOT / "gelu_core").rglob("*.py"), *(ROOT / "hosting").rglob("*.py")]):
        for node in _calls(ast.parse(path.read_text("utf-8"))):
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            if not node.args:
                continue
            first = node.args[0]
            if any(isinstance(n, ast.JoinedStr) for n in ast.walk(first)) or isinstance(first, ast.BinOp) or (
                    isinstance(first, ast.Call) and isinstance(first.func, ast.Attribute)
                    and first.func.attr == "format"):
                wrong.append(f"{where}: a sentence built before translation")
            elif isinstance(first, ast.Call) and isinstance(first.func, ast.Name) and first.func.id == "N_":
                literal = first.args[0]
                if not (isinstance(literal, ast.Constant) and literal.value in templates):
                    wrong.append(f"{where}: N_ template not in messages.pot")
            elif isinstance(first, ast.Constant):
                wrong.append(f"{where}: a sentence not marked N_")
            elif not isinstance(first, ast.Name | ast.Subscript | ast.Attribute | ast.Call):
                wrong.append(f"{where}: {ast.dump(first)[:60]}")
            if len(node.args) > 1:
                wrong.append(f"{where}: parameters passed by position")
    assert not wrong, "\n".join(wrong)


def test_every_hostile_upload_is_refused_with_a_template_in_the_catalogs():
    """Reference: harness.hostile_files (the uploads tests/test_tensor_io.py refuses), each read as the uploader
    it targets; the refusal's template, and the template of each word among its parameters, is in messages.pot."""
    from gelu_core.weights import check_block_shapes
    from harness.hostile_files import hostile_files

    templates = template_ids()
    missing, seen = [], 0
    for case in hostile_files(large=False):
        check = check_block_shapes if case.uploader == "weights" else None
        try:
            tensor_io.load_tensors_with_notes(case.data, case.filename, check=check)
        except (tensor_io.TensorFileError, ValueError) as err:
            seen += 1
            missing += check_message(err.message, templates)
    assert seen and not missing, missing


# ---------------------------------------------------------------- what the reader sees

def nine_dimensions() -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.zeros((1,) * 9, dtype=np.float32))
    return buffer.getvalue()


def word_on_line_1234() -> bytes:
    rows = ["1,2"] * 1500
    rows[1233] = "3,three"
    return ("\n".join(rows) + "\n").encode()


def truncated_pt() -> bytes:
    buffer = io.BytesIO()
    torch.save({"w": torch.ones(4)}, buffer)
    return buffer.getvalue()[:-200]


def claims_256_mib() -> bytes:
    """A safetensors header for 2**25 float64 values (the value cap, 256 MiB loaded; the cap is 128) and no data."""
    import json

    header = json.dumps({"x": {"dtype": "F64", "shape": [tensor_io.MAX_ELEMENTS],
                               "data_offsets": [0, 8 * tensor_io.MAX_ELEMENTS]}}).encode()
    return len(header).to_bytes(8, "little") + header


def expected(lang: str, case: str) -> str:
    """The reader's sentence, by hand: the catalog's msgstr with Babel's numbers for ``lang``."""
    if case == "npy":
        return msgstr(lang, "This file has a tensor with {ndim} dimensions; the limit is {limit}.").format(
            ndim=babel_number(9, lang), limit=babel_number(8, lang))
    if case == "csv":
        return msgstr(lang, "Line {line}, column {column} of this file is not a number.").format(
            line=babel_number(1234, lang), column=babel_number(2, lang))
    if case == "pt":
        return msgstr(lang, "This file is a damaged or unusual zip archive.")
    return msgstr(lang, "This file would take {mib} MiB once loaded; the limit is {limit} MiB.").format(
        mib=babel_number(256, lang, "#,##0.0"), limit=babel_number(128, lang))


FILES = {"npy": (nine_dimensions, "x.npy"), "csv": (word_on_line_1234, "x.csv"), "pt": (truncated_pt, "x.pt"),
         "safetensors": (claims_256_mib, "x.safetensors")}
ENGLISH = {"npy": "This file has a tensor with 9 dimensions; the limit is 8.",
           "csv": "Line 1,234, column 2 of this file is not a number.",
           "pt": "This file is a damaged or unusual zip archive.",
           "safetensors": "This file would take 256.0 MiB once loaded; the limit is 128 MiB."}


@pytest.mark.parametrize("case", FILES)
@pytest.mark.parametrize("lang", SHIPPED)
def test_a_refused_file_reads_in_the_readers_language_with_the_readers_numbers(case, lang):
    """Reference: the catalog's msgstr with Babel's format_decimal for the language (de, es: 1.234 and 256,0;
    zh-Hans: 1,234 and 256.0), exactly; never the English-reason fallback or its translation."""
    from ui.format import refusal, say

    make, name = FILES[case]
    err = refused(make(), name)
    with using(lang):
        shown = refusal(err)
        assert shown == say(err) == expected(lang, case)
        assert msgstr(lang, FALLBACK).split("{reason}")[0] not in shown
    assert "The reason, in English" not in shown and shown != str(err)


@pytest.mark.parametrize("case", FILES)
def test_a_refused_file_reads_in_english_as_gelu_core_wrote_it(case):
    """Reference: the English sentence written out here, and ``str(err)``: English is unchanged."""
    from ui.format import refusal

    make, name = FILES[case]
    err = refused(make(), name)
    assert str(err) == ENGLISH[case] and refusal(err) == str(err)


@pytest.mark.parametrize("lang", ["de", "es"])
def test_notes_and_words_among_the_parameters_are_translated(lang):
    """Reference: the catalogs' msgstr for the CSV header note and for the integer note (±16,777,216 = 2**24 in
    Babel's format for the language), and for a word inside a refusal (complex numbers in a .npy)."""
    from ui.format import say

    buffer = io.BytesIO()
    np.save(buffer, np.arange(3, dtype=np.int16))
    _, int_notes = tensor_io.load_tensors_with_notes(buffer.getvalue(), "x.npy")
    _, csv_notes = tensor_io.load_tensors_with_notes(b"a,b\n1,2\n", "x.csv")
    buffer = io.BytesIO()
    np.save(buffer, np.zeros(2, dtype=np.complex64))
    err = refused(buffer.getvalue(), "x.npy")
    with using(lang):
        assert say(csv_notes[0]) == msgstr(lang, "The first row was read as column names.")
        assert say(int_notes[0]) == msgstr(
            lang, "Integer data ({dtypes}) was converted to float32, which is exact up to ±{exact}.").format(
            dtypes="int16", exact=babel_number(2**24, lang))
        assert say(err) == msgstr(lang, "This file holds {what}; only real numbers are read.").format(
            what=msgstr(lang, "complex numbers"))
    assert str(int_notes[0]) == "Integer data (int16) was converted to float32, which is exact up to ±16,777,216."


@pytest.mark.parametrize("lang", SHIPPED)
def test_a_lab_input_refusal_reads_in_the_readers_language(lang):
    """Reference: the catalog's msgstr for WidthMismatch with Babel's numbers (1,234 features, d_model 768)."""
    from gelu_core.lab import WidthMismatch, as_tokens
    from ui.format import refusal

    with pytest.raises(WidthMismatch) as caught:
        as_tokens(torch.zeros(2, 1234), 768)
    with using(lang):
        assert refusal(caught.value) == msgstr(
            lang, "Each token of this input has {width} features, but the block expects d_model = {d_model}.").format(
            width=babel_number(1234, lang), d_model=babel_number(768, lang))
    assert str(caught.value) == "Each token of this input has 1,234 features, but the block expects d_model = 768."


def test_an_error_without_a_template_keeps_the_english_reason_led_in_the_readers_language():
    """Reference: the catalog's msgstr of the fallback sentence (an error that carries no template still says in
    the reader's language that its reason is English)."""
    from ui.format import refusal

    err = RuntimeError("The lab is busy.")
    with using("de"):
        assert refusal(err) == msgstr("de", FALLBACK).format(reason="The lab is busy.")
    assert refusal(err) == "The lab is busy."


def test_a_refusal_survives_pickling_with_its_template():
    """Reference: the refusal before pickling (a process pool or a cache may carry it)."""
    import pickle

    err = refused(nine_dimensions(), "x.npy")
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is type(err) and str(back) == str(err)
    assert back.template == err.template and back.params == err.params


def test_the_lab_page_in_german_refuses_a_truncated_pt_in_german(app):
    """Reference: the German catalog's msgstr for a damaged zip (a .pt cut short), exactly, as the page's one error;
    without the English-reason fallback (which the page showed before gelu_core's sentences were translated)."""
    from tests.test_page_ffn import open_lab

    at = open_lab(app, lang="de", ffn_d_model=8, ffn_input="Upload")
    at.file_uploader(key="ffn_file").set_value(("acts.pt", truncated_pt(), "application/octet-stream")).run()
    assert not at.exception, at.exception
    assert [e.value for e in at.error] == [msgstr("de", "This file is a damaged or unusual zip archive.")]


@pytest.mark.parametrize("lang", SHIPPED)
def test_the_labs_line_reads_in_the_readers_language(lang):
    """A student waiting for the lab, and one refused after the wait: reference: the catalogs' msgstrs, nested as
    hosting writes them (the run described, ``hosting.lab_runs.describe_run``, inside the waiting and the busy
    sentences), with Babel's numbers; in English the sentence as it always read."""
    import threading

    from gelu_core.ffn import FeedForward
    from hosting.lab_runs import describe_run
    from hosting.runs import Busy, RunSlot
    from ui.format import refusal, say

    run = describe_run((8, 1024, 768), FeedForward(1536), backward=True)
    slot, started, heard = RunSlot(poll=0.01), threading.Event(), []

    def long_run():
        with slot.hold(run):
            started.set()
            threading.Event().wait(0.3)

    def next_in_line():
        with slot.hold("next"):
            pass

    first = threading.Thread(target=long_run)
    first.start()
    started.wait()
    second = threading.Thread(target=next_in_line)  # in line before the one refused below: "1 more before yours"
    second.start()
    with pytest.raises(Busy) as caught:
        with slot.hold("mine", timeout=0.1, on_wait=lambda what, s: heard.append(what)):
            pass
    first.join()
    second.join()
    described = msgstr(lang, "{shape} through a block of d_model {d_model} and back").format(
        shape="(8, 1024, 768)", d_model=babel_number(1536, lang))
    waiting = [m for m in heard if "more before yours" in str(m)]
    assert waiting, heard
    with using(lang):
        assert refusal(caught.value) == msgstr(
            lang, "The lab is busy with other students' runs: {run}. Try again in a minute.").format(run=described)
        assert say(waiting[0]) == msgstr(lang, "{run} ({ahead} more before yours)").format(run=described, ahead="1")
    assert str(caught.value) == ("The lab is busy with other students' runs: (8, 1024, 768) through a block of "
                                 "d_model 1,536 and back. Try again in a minute.")
    assert str(waiting[0]) == "(8, 1024, 768) through a block of d_model 1,536 and back (1 more before yours)"
