"""How a number reads on screen: one format for the whole app, in the reader's language.

Each function is ``ui.plain``'s (the digits, the rounding, one ASCII minus, never ``-0.0000``), its text then
written with the current language's symbols from Babel's locale data (``ui.i18n.current``): the decimal sign and
the grouping sign (``-0,1588`` in German and Spanish), a percentage as the locale writes one (``97,7 %``) and a
count grouped as the locale groups it.  English is ``ui.plain``'s text unchanged.  A script's code and a CSV use
``ui.plain`` itself: machine-readable in every language.

Each function here names its ``ui.plain`` original (``__wrapped__``, with its name and module), so the code for a
view prints the plain one's source.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from ui import plain
from ui.i18n import SOURCE, _, current
from ui.plain import power_of_ten, shape  # noqa: F401  the same in every language

_SYMBOLS: dict[str, tuple[dict[int, str], str, str]] = {}  # language -> (translation table, percent prefix, suffix)


def symbols(lang: str) -> tuple[dict[int, str], str, str]:
    """For ``lang``: the table that writes a plain number's "." and "," as the locale's decimal and group signs,
    and the locale's percent sign with the space around it (Babel's locale data, read once per language)."""
    found = _SYMBOLS.get(lang)
    if found is None:
        from babel import Locale
        from babel.numbers import get_decimal_symbol, get_group_symbol

        locale = Locale.parse(lang, sep="-")
        pattern = locale.percent_formats[None]
        table = str.maketrans({".": get_decimal_symbol(locale), ",": get_group_symbol(locale)})
        found = _SYMBOLS[lang] = (table, pattern.prefix[0], pattern.suffix[0])
    return found


def local(text: str) -> str:
    """A plain number's text (``ui.plain``) in the current language's signs.

    >>> from ui.i18n import using
    >>> with using("de"):
    ...     local("-0.1588"), local("4,722,432"), local("1.528e-04")
    ('-0,1588', '4.722.432', '1,528e-04')
    """
    lang = current()
    return text if lang == SOURCE else text.translate(symbols(lang)[0])


def _number(function: Callable[..., str]) -> Callable[..., str]:
    @functools.wraps(function)
    def shown(*args, **kwargs) -> str:
        return local(function(*args, **kwargs))

    return shown


def percent_text(text: str) -> str:
    """A plain percentage's text ("59.0%") as the current language writes one ("59,0 %").

    >>> from ui.i18n import using
    >>> with using("de"):
    ...     percent_text("59.0%")
    '59,0\xa0%'
    """
    lang = current()
    if lang == SOURCE:
        return text
    table, prefix, suffix = symbols(lang)
    return prefix + text.removesuffix("%").translate(table) + suffix


def _percentage(function: Callable[..., str]) -> Callable[..., str]:
    @functools.wraps(function)
    def shown(*args, **kwargs) -> str:
        text = function(*args, **kwargs)
        return percent_text(text) if text.endswith("%") else _(text)  # "n/a", in the reader's words

    return shown


fixed = _number(plain.fixed)
six = _number(plain.six)
sig = _number(plain.sig)
sci = _number(plain.sci)
full = _number(plain.full)
readable = _number(plain.readable)
percent = _percentage(plain.percent)
share = _percentage(plain.share)


@functools.wraps(plain.count)
def count(n: int) -> str:
    lang = current()
    if lang == SOURCE:
        return plain.count(n)
    from babel.numbers import format_decimal

    return format_decimal(int(n), locale=lang.replace("-", "_"))


def read_back(text: str, lang: str | None = None) -> float:
    """The number a text in ``lang``'s format (this run's language if None) holds: the inverse of the functions
    above, for tests that hold a number shown in any language to the value (a percentage as its fraction).

    >>> read_back("-0,1588", "de"), read_back("97,7\\u00a0%", "es"), read_back("4.722.432", "de")
    (-0.1588, 0.977, 4722432.0)
    """
    lang = current() if lang is None else lang
    table, prefix, suffix = symbols(lang) if lang != SOURCE else ({}, "", "%")
    decimal, group = table.get(ord("."), "."), table.get(ord(","), ",")
    t = text.strip()
    scale = 1.0
    if t.endswith("%"):
        t, scale = t[:-1].rstrip("\u00a0 ").removeprefix(prefix), 0.01
    t = t.replace(group, "").replace(decimal, ".")
    return round(float(t) * scale, 15)


def say(message: object) -> str:
    """A sentence gelu_core wrote (``gelu_core.messages.Message``, or a refusal carrying one as ``.message``) in
    the reader's language: its template through gettext, each parameter in the reader's format (a count grouped,
    a ``Fixed`` with its decimals, a word or phrase translated in turn, a name as it is).  Anything else is shown
    as its text: English ``str()`` is the same sentence.

    >>> from gelu_core.messages import Fixed, Message
    >>> from ui.i18n import using
    >>> note = Message("{size} MiB, {n} values", size=Fixed(1234.5, 1), n=16777216)
    >>> with using("de"):
    ...     say(note)
    '1.234,5 MiB, 16.777.216 values'
    >>> say(note) == str(note)
    True
    """
    from gelu_core.messages import Fixed, Message

    if isinstance(message, BaseException):
        message = getattr(message, "message", str(message))
    if not isinstance(message, Message):
        return str(message)
    if current() == SOURCE:
        return str(message)

    def shown(value: object) -> str:
        if isinstance(value, Message):
            return say(value)
        if isinstance(value, int) and not isinstance(value, bool):
            return count(value)
        if isinstance(value, Fixed):
            return local(str(value))
        return str(value)

    return _(message.template).format(**{name: shown(value) for name, value in message.params.items()})


def refusal(err: BaseException) -> str:
    """Why an input or a run was refused, in the reader's language: gelu_core's sentence (``say``); an error that
    carries no translatable sentence keeps its English text, led in another language by a sentence that says so."""
    from gelu_core.messages import Message

    if current() == SOURCE or isinstance(getattr(err, "message", None), Message):
        return say(err)
    return _("This could not be used. The reason, in English: {reason}").format(reason=err)
