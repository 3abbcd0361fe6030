"""The reader's language: every sentence through gettext, every number in the reader's format.

Pure: no Streamlit, no server.  One PO catalog per language under ``locales/<tag>/LC_MESSAGES/messages.po``
(a tag as Babel writes it: ``de``, ``es``, ``zh_Hans``), read with Babel when a language is first used and kept
for the process; no compiled ``.mo`` is committed.  A new ``.po`` file is a new language, with no change here.

The language of this script run is ``current()``: draw/i18n.py sets it at the start of each run and each part's
rerun (``use``); a test or a thread sets it for a block with ``using(lang)``.  Outside both it is English.

* ``_(message)``, ``ngettext(singular, plural, n)``: the message in the current language (English: as written).
* ``N_(message)``: marks a message written at import (a page's title, a question's choice) for extraction; the
  reader's words are ``_(that)`` where it is shown.
* ``memo``: gelu_core's memo with the language in its key, for everything ui builds that holds words or numbers.
* ``match(tag)``: a link's or browser's language tag (``de-AT``, ``zh-CN``, ``es_419``) as a shipped language.
"""

from __future__ import annotations

import functools
import io
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from gelu_core.shared import memo as shared_memo

LOCALES = Path(__file__).resolve().parents[1] / "locales"
SOURCE = "en"  # the language the code's messages are written in
_LANG: ContextVar[str] = ContextVar("gelu_lang", default=SOURCE)
_TAG = re.compile(r"^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8}){0,3}$")


def _tag(folder: str) -> str:
    """A catalog folder's name as a link writes it: ``zh_Hans`` -> ``zh-Hans``."""
    return folder.replace("_", "-")


def languages() -> tuple[str, ...]:
    """Every language the app speaks: English, then each catalog's, in the order of their tags."""
    found = sorted(_tag(p.parent.parent.name) for p in LOCALES.glob("*/LC_MESSAGES/messages.po"))
    return (SOURCE, *found)


_SHIPPED: list[tuple[str, ...]] = []


def _languages() -> tuple[str, ...]:
    """``languages()``, read once per process."""
    if not _SHIPPED:
        _SHIPPED.append(languages())
    return _SHIPPED[0]


def native_name(lang: str) -> str:
    """A language's name in itself, from Babel's locale data: "Deutsch", "Español", "中文 (简体)"."""
    from babel import Locale

    locale = Locale.parse(lang, sep="-")
    name = locale.get_display_name(locale) or lang
    return name[:1].upper() + name[1:]


def match(tag: str | None) -> str | None:
    """The shipped language a tag asks for, or None: exact (case aside), else its language with its script, else
    its language alone (``de-AT`` -> ``de``); Chinese in mainland China or Singapore (``zh``, ``zh-CN``, ``zh-SG``)
    is Simplified.

    >>> match("de-AT"), match("zh-CN"), match("ZH-hans"), match("es_419"), match("fr"), match("<b>")
    ('de', 'zh-Hans', 'zh-Hans', 'es', None, None)
    """
    if not tag or not _TAG.match(tag):
        return None
    parts = tag.replace("_", "-").split("-")
    shipped = {lang.lower(): lang for lang in _languages()}
    language = parts[0].lower()
    wanted = ["-".join(parts).lower()]
    script = next((p for p in parts[1:] if len(p) == 4), None)
    if script:
        wanted.append(f"{language}-{script.lower()}")
    if language == "zh" and script is None and not {p.upper() for p in parts[1:]} & {"TW", "HK", "MO"}:
        wanted.append("zh-hans")
    wanted.append(language)
    return next((shipped[w] for w in wanted if w in shipped), None)


# ---------------------------------------------------------------- the catalogs

_TRANSLATIONS: dict[str, object] = {}
_GUARD = threading.Lock()


def catalog_path(lang: str) -> Path:
    return LOCALES / lang.replace("-", "_") / "LC_MESSAGES" / "messages.po"


def translations(lang: str):
    """The language's ``babel.support.Translations``, read from its .po once per process (None for English)."""
    if lang == SOURCE:
        return None
    found = _TRANSLATIONS.get(lang)
    if found is None:
        with _GUARD:
            found = _TRANSLATIONS.get(lang)
            if found is None:
                from babel.messages.mofile import write_mo
                from babel.messages.pofile import read_po
                from babel.support import Translations

                with catalog_path(lang).open("rb") as po:
                    catalog = read_po(po, locale=lang.replace("-", "_"))
                mo = io.BytesIO()
                write_mo(mo, catalog)  # fuzzy entries left out: an unchecked translation reads as English
                mo.seek(0)
                found = _TRANSLATIONS[lang] = Translations(mo, domain="messages")
    return found


def current() -> str:
    """The language of this script run (or of a ``using`` block)."""
    return _LANG.get()


def use(lang: str) -> None:
    """From now on in this context (a script run: draw/i18n.py), ``lang``."""
    _LANG.set(lang if lang in _languages() else SOURCE)


@contextmanager
def using(lang: str) -> Iterator[None]:
    """``lang`` within the block (a test, a worker thread), then the language before it."""
    token = _LANG.set(lang if lang in _languages() else SOURCE)
    try:
        yield
    finally:
        _LANG.reset(token)


def _(message: str) -> str:  # noqa: N802 - gettext's own name, which Babel extracts
    found = translations(_LANG.get())
    return message if found is None else found.gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """The singular or plural message for ``n`` in the current language (its own plural rule)."""
    found = translations(_LANG.get())
    if found is None:
        return singular if n == 1 else plural
    return found.ngettext(singular, plural, n)


def N_(message: str) -> str:  # noqa: N802
    """A message marked for extraction, shown later through ``_``."""
    return message


def memo(entry_bytes: int, share: float = 0.005) -> Callable[[Callable], Callable]:
    """``gelu_core.shared.memo`` with the current language in the key: a result holding words or formatted numbers
    is kept per language, and computed in that language."""

    def wrap(function: Callable) -> Callable:
        @shared_memo(entry_bytes, share)
        def in_language(lang: str, args: tuple, kwargs: tuple):
            with using(lang):
                return function(*args, **dict(kwargs))

        in_language.__qualname__ = function.__qualname__

        @functools.wraps(function)
        def call(*args, **kwargs):
            return in_language(_LANG.get(), args, tuple(sorted(kwargs.items())))

        call.runs = in_language.runs
        return call

    return wrap


FORMS = (N_("exact"), N_("tanh"), N_("sigmoid"))  # gelu_core.form_word's words, for extraction


def form_name(form: str) -> str:
    """A GELU form's word (``gelu_core.form_word``) in the reader's language."""
    from gelu_core import form_word

    return _(form_word(form))
