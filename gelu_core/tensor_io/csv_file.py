"""CSV text: a table of numbers (comma, tab or semicolon), a first row that is not numbers read as a header.

No torch here.
"""

from __future__ import annotations

import io

import numpy as np

from gelu_core.tensor_io.limits import MAX_CSV_CELLS, TensorFileError


def _text(data: bytes) -> io.TextIOWrapper:
    """The file as text, decoded as it is read (UTF-8, a BOM skipped, any line endings)."""
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", newline=None)


def _data_lines(text: io.TextIOBase):
    """(line index, line) of the lines that hold data: not blank, not a # comment."""
    for index, line in enumerate(text):
        if line.strip() and not line.lstrip().startswith("#"):
            yield index, line.rstrip("\n")


def read_csv(data: bytes, label: str, notes: list[str]) -> np.ndarray:
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
            problem = _problem(data, skip + header, delimiter, columns, label)
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


def _problem(data: bytes, skip: int, delimiter: str, columns: int, label: str) -> str:
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
