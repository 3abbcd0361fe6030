"""CSV text: a table of numbers (comma, tab or semicolon), a first row without a single number read as a header.

Its size is judged from the bytes, at C speed, before any text is decoded or
split: the first data row's width against MAX_CSV_COLUMNS, lines times that
width against MAX_CSV_CELLS, and every line against MAX_CSV_LINE_BYTES and
the first row's width (one regular-expression match over the whole file, no
backtracking).  A file over any of these is refused in milliseconds, however
long its rows; what reaches numpy's parser (which holds ~8 bytes a character of
the line it reads) and the Python fallbacks has short lines, none with more
values than the first row, so no row is split into more than MAX_CSV_COLUMNS
strings.  No torch here.
"""

from __future__ import annotations

import io
import re

import numpy as np

from gelu_core.messages import N_, Message
from gelu_core.tensor_io.limits import MAX_CSV_CELLS, MAX_CSV_COLUMNS, MAX_CSV_LINE_BYTES, TensorFileError

_DELIMITERS = (",", "\t", ";")
_SPACE = rb"[ \t\f\v\x1c-\x1f]"  # blanks str.strip removes, in ASCII
_LINE_START = rb"(?:\A(?:\xef\xbb\xbf)?+|(?<=[\r\n]))"  # a BOM belongs to the first line
# The start of the first line that holds data: after blanks, anything but a newline or a '#'.
_FIRST_DATA = re.compile(_LINE_START + _SPACE + rb"*+[^ \t\f\v\x1c-\x1f\r\n#]")


def _text(data: bytes) -> io.TextIOWrapper:
    """The file as text, decoded as it is read (UTF-8, a BOM skipped, any line endings)."""
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", newline=None)


def _data_lines(text: io.TextIOBase):
    """(line index, line) of the lines that hold data: not blank, not a # comment."""
    for index, line in enumerate(text):
        if line.strip() and not line.lstrip().startswith("#"):
            yield index, line.rstrip("\n")


def _lines(data: bytes) -> int:
    """Lines, whatever the line endings: an upper bound on rows (blank and comment lines count too)."""
    return max(data.count(b"\n"), data.count(b"\r")) + (data[-1:] not in (b"\n", b"\r"))


def _line_number(data: bytes, position: int) -> int:
    """The 1-based line of a byte position, a CR LF pair counting as one line end."""
    return data.count(b"\n", 0, position) + data.count(b"\r", 0, position) - data.count(b"\r\n", 0, position) + 1


def _check_size(data: bytes, rows: int) -> None:
    """Refuse, from the bytes alone, a table over MAX_CSV_COLUMNS or MAX_CSV_CELLS, or with a line over
    MAX_CSV_LINE_BYTES or with more values than the first row."""
    found = _FIRST_DATA.search(data)
    if found is None:
        return  # no data: the reader says so in words
    start = found.start()
    end = _end_of_line(data, start)
    delimiter = next((d.encode() for d in _DELIMITERS if data.find(d.encode(), start, end) >= 0), b",")
    columns = data.count(delimiter, start, end) + 1
    _check_cells(rows, columns)
    # every line of at most MAX_CSV_LINE_BYTES whose values before any '#' are at most the first row's, one after
    # another, in one match at C speed; where the match stops, a line breaks one of the two (comments never count)
    d = re.escape(delimiter)
    cell = rb"[^\r\n#" + d + rb"]*+"
    short = rb"(?=[^\r\n]{0," + str(MAX_CSV_LINE_BYTES).encode() + rb"}+(?:[\r\n]|\Z))"
    line = short + cell + rb"(?:" + d + cell + rb"){0," + str(columns - 1).encode() + rb"}+(?:#[^\r\n]*+)?+"
    at = re.compile(rb"(?:" + line + rb"(?:\r\n?|\n))*+").match(data).end()
    end = _end_of_line(data, at)
    comment = data.find(b"#", at, end)
    count = data.count(delimiter, at, end if comment < 0 else comment) + 1
    if count > columns:
        raise TensorFileError(N_("Line {line} of this file has {count} values, not {columns} like the first row."),
                              line=_line_number(data, at), count=count, columns=columns)
    if end - at > MAX_CSV_LINE_BYTES:
        raise TensorFileError(N_("Line {line} of this file is {size} bytes long; the limit is {limit} a line."),
                              line=_line_number(data, at), size=end - at, limit=MAX_CSV_LINE_BYTES)


def _end_of_line(data: bytes, start: int) -> int:
    ends = [end for end in (data.find(b"\n", start), data.find(b"\r", start)) if end >= 0]
    return min(ends, default=len(data))


def _check_cells(rows: int, columns: int) -> None:
    if columns > MAX_CSV_COLUMNS:
        raise TensorFileError(N_("The first row of this file has {columns} values; the limit is {limit} a row."),
                              columns=columns, limit=MAX_CSV_COLUMNS)
    if rows * columns > MAX_CSV_CELLS:
        raise TensorFileError(
            N_("This file has up to {rows} rows of {columns} numbers; the limit is {limit} numbers."),
            rows=rows, columns=columns, limit=MAX_CSV_CELLS)


def read_csv(data: bytes, notes: list[Message]) -> np.ndarray:
    """A 2-D float64 array from a CSV table of numbers; a first row with no number in it is a header."""
    not_text = TensorFileError(N_("This file is neither a tensor format nor UTF-8 text."))
    if b"\x00" in data:
        raise not_text
    rows = _lines(data)
    _check_size(data, rows)
    try:
        lines = _data_lines(_text(data))
        skip, first = next(lines, (0, None))
        second = next(lines, None)
    except UnicodeDecodeError:
        raise not_text from None
    if first is None:
        raise TensorFileError(N_("This file has no rows of numbers."))
    delimiter = next((d for d in _DELIMITERS if d in first), ",")
    columns = first.count(delimiter) + 1
    _check_cells(rows, columns)  # again: where blanks are any Unicode space, odd files may differ
    numbers = [_is_number(cell) for cell in first.split(delimiter)]
    header = not any(numbers)  # a row that mixes numbers and words is a bad row, not column names
    if not header and not all(numbers):
        raise _not_a_number(skip, numbers.index(False))
    if header and second is None:
        raise TensorFileError(N_("This file has a header but no rows of numbers."))
    try:
        table = np.loadtxt(_text(data), delimiter=delimiter, dtype=np.float64, ndmin=2, comments="#",
                           skiprows=skip + header, quotechar='"')
        if table.size and table.shape[1] != columns:
            raise ValueError("columns")
    except UnicodeDecodeError:
        raise not_text from None
    except (ValueError, IndexError, TypeError):
        try:
            problem = _problem(data, skip + header, delimiter, columns)
        except UnicodeDecodeError:
            raise not_text from None
        raise problem from None
    if header:
        notes.append(Message(N_("The first row was read as column names.")))
    return table


def _is_number(cell: str) -> bool:
    try:
        float(cell.strip().strip('"'))
    except ValueError:
        return False
    return True


def _not_a_number(index: int, cell: int) -> TensorFileError:
    """The refusal for a cell that is not a number (0-based line and cell, counted in words from 1)."""
    return TensorFileError(N_("Line {line}, column {column} of this file is not a number."), line=index + 1,
                           column=cell + 1)


def _problem(data: bytes, skip: int, delimiter: str, columns: int) -> TensorFileError:
    """Where a CSV stops being a table of numbers, in words (lines counted from the file's first).

    A row is split into cells only when it has as many as the first row; others are counted, not split.
    """
    for index, line in _data_lines(_text(data)):
        if index < skip:
            continue
        count = line.count(delimiter) + 1
        if count != columns:
            if count == 1:
                return TensorFileError(N_("Line {line} of this file has one value, not {columns} like the first "
                                          "row."), line=index + 1, columns=columns)
            return TensorFileError(N_("Line {line} of this file has {count} values, not {columns} like the first "
                                      "row."), line=index + 1, count=count, columns=columns)
        cells = line.split(delimiter)
        try:
            list(map(float, cells))  # the quick test; quoted cells fall through to the careful one
        except ValueError:
            for column, cell in enumerate(cells):
                if not _is_number(cell):
                    return _not_a_number(index, column)
    return TensorFileError(N_("This file is not a table of numbers."))
