"""How a number reads as a machine and a script read it: one format for the whole app, in English's symbols.

The page shows these through ``ui.format``, which writes them in the reader's language; a script's code
(``ui.code_export``, which prints these functions' source) and a CSV keep them as they are here.

One minus sign everywhere, the ASCII ``-`` that Streamlit's sliders, number
inputs and tables print (and that a student types), so a value beside its
slider reads the same as the slider.  A value that rounds to zero at the shown
precision is written without a sign (never ``-0.0000``).  Formulas (LaTeX) keep
the mathematical minus.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def _unsigned_zero(text: str) -> str:
    """"-0.0000" -> "0.0000"; anything else unchanged."""
    if text.startswith("-") and float(text) == 0:
        return text[1:]
    return text


def fixed(value: float, digits: int = 4) -> str:
    """Fixed decimals: the app's everyday number.

    >>> fixed(-0.158808), fixed(-1e-9), fixed(2.0, 2), fixed(-3.0, 0)
    ('-0.1588', '0.0000', '2.00', '-3')
    """
    return _unsigned_zero(f"{value:.{digits}f}")


def six(value: float) -> str:
    """Six decimals, as the source texts print each step of the tanh formula.

    >>> six(0.8411919906), six(-0.15880800939), six(-1e-9)
    ('0.841192', '-0.158808', '0.000000')
    """
    return fixed(value, 6)


def sig(value: float, digits: int = 4) -> str:
    """``digits`` significant digits, trailing zeros kept (a measured value: a mean, a norm).

    >>> sig(0.0583229), sig(-0.30726), sig(1.83), sig(1234.5), sig(3.2e-9)
    ('0.05832', '-0.3073', '1.830', '1234', '3.200e-09')
    """
    return f"{value:#.{digits}g}".rstrip(".")


def sci(value: float, digits: int = 3) -> str:
    """Scientific notation: a difference or an error far below the shown decimals.

    >>> sci(-1.5282e-4), sci(2.5e-7)
    ('-1.528e-04', '2.500e-07')
    """
    return f"{value:.{digits}e}"


def full(value: float) -> str:
    """Every digit a float64 has: the shortest text that reads back to the same number.

    >>> full(0.1), full(-2.5e-300)
    ('0.1', '-2.5e-300')
    """
    return repr(float(value))


def readable(value: float, digits: int = 6) -> str:
    """``digits`` decimals, unless that would print a non-zero number as 0.000000: then scientific notation.

    >>> readable(0.8411919906), readable(-6.6789e-33), readable(0.0), readable(-0.15880800939, 4)
    ('0.841192', '-6.679e-33', '0.000000', '-0.1588')
    """
    return fixed(value, digits) if value == 0 or abs(value) >= 0.5 * 10.0**-digits else sci(value)


def percent(p: float) -> str:
    """A probability as a percentage, never rounded to a false 0 % or 100 %: two significant digits
    of the distance to the nearer end below 1 % and above 99 %, else one decimal.

    >>> percent(0.9772498680518208), percent(0.5), percent(0.0013498980316301), percent(0.99996832875816688)
    ('97.7%', '50.0%', '0.13%', '99.9968%')
    """
    pct = 100.0 * p
    if pct <= 0 or pct >= 100:
        return f"{pct:.0f}%"
    if pct < 1:
        return f"{pct:.2g}%"
    if pct > 99:
        decimals = max(1, 1 - math.floor(math.log10(100.0 - pct)))
        return f"{pct:.{decimals}f}%"
    return f"{pct:.1f}%"


def share(p: float, digits: int = 1) -> str:
    """A fraction of a count as a percentage with ``digits`` decimals; "n/a" when there is nothing to share.

    >>> share(0.50092), share(0.0), share(float("nan"))
    ('50.1%', '0.0%', 'n/a')
    """
    if p != p:  # NaN
        return "n/a"
    return f"{100.0 * p:.{digits}f}%"


def count(n: int) -> str:
    """A whole number with thousands separators.

    >>> count(4722432)
    '4,722,432'
    """
    return f"{int(n):,}"


def shape(s: Sequence[int]) -> str:
    """A tensor shape as Python prints it.

    >>> shape([2, 3, 768]), shape((768,))
    ('(2, 3, 768)', '(768,)')
    """
    return str(tuple(int(v) for v in s))


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def power_of_ten(exponent: int) -> str:
    """10 to an integer power, as printed (and as Plotly's power format writes it).

    >>> power_of_ten(-8), power_of_ten(12)
    ('10⁻⁸', '10¹²')
    """
    return "10" + str(int(exponent)).translate(_SUPERSCRIPT)
