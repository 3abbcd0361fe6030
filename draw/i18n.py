"""The reader's language, chosen for each script run, and the sidebar's language selector.

Which language a visitor reads (``choose``): the link's ``lang=`` when it has one; else the language this session
chose before (the selector, or an earlier link: a page switch clears the URL); else the browser's preferred one
(``st.context.locale``, ``de-AT`` read as ``de``); else English.  A ``lang=`` value the app cannot use (unknown,
malformed, repeated) is dropped from the link, and the page says so as it does for any link value it cannot use,
in English.  The choice is kept in session state, and ``ui.i18n.use`` makes it the language of the run (and of
each part's rerun: draw/frame.py's ``part`` calls ``use_chosen``).  The share box carries it in every link it
copies, and sets ``<html lang>`` (draw/share.js).
"""

from __future__ import annotations

import streamlit as st

from hosting import internals
from ui.i18n import SOURCE, _, languages, match, native_name, use

LANG = "lang"  # the URL parameter
_CHOSEN = "gelu_lang"  # session state: the language of this session
_PICKER = "gelu_lang_picker"  # session state: the selector's value


def chosen() -> str:
    """This session's language (English before ``choose`` has run)."""
    return st.session_state.get(_CHOSEN, SOURCE)


def use_chosen() -> None:
    """This session's language for the rest of this run (a part's rerun, which starts without app.py)."""
    use(chosen())


def choose() -> list[str] | None:
    """Choose this run's language and use it; the link's unusable ``lang`` values, if it had any (else None)."""
    values = st.query_params.get_all(LANG)
    bad = None
    if values:
        lang = match(values[0]) if len(values) == 1 else None
        if lang is None:
            bad = values
            internals.drop_url_values([LANG])
            lang = SOURCE
        st.session_state[_CHOSEN] = lang
    elif _CHOSEN not in st.session_state:
        st.session_state[_CHOSEN] = match(st.context.locale) or SOURCE
    use(chosen())
    return bad


def note_bad(values: list[str]) -> None:
    """The note that the link's language could not be used: the page is in English."""
    shown = ", ".join(f"“{v[:24]}”" for v in values)
    st.info(_("Part of this link could not be used.\n\n**Language**: {value} is not one of {languages}; the page "
              "is in English.").format(value=shown, languages=", ".join(native_name(x) for x in languages())),
            icon=":material/link_off:")


def _picked() -> None:
    lang = st.session_state[_PICKER]
    st.session_state[_CHOSEN] = lang
    st.query_params[LANG] = lang  # the address bar, and so every link copied from it, holds the language


def selector() -> None:
    """The sidebar's language selector, each language named in itself."""
    st.session_state[_PICKER] = chosen()
    label = _("Language")
    st.selectbox(label if chosen() == SOURCE else f"{label} · Language", languages(), key=_PICKER,
                 format_func=native_name, on_change=_picked)
