"""The languages: every message translated, placeholders kept, no sentence glued from fragments, numbers in the
reader's format and read back to the same value, and the app in German.

References: the messages Babel extracts from the code now (``babel.cfg``, the same extraction as ``pybabel
extract``) against each shipped catalog under locales/; the code's syntax tree (``ast``) for glued fragments;
mpmath at 50 digits for GELU(-1) (tests.test_ui_explorer_pages.gelu_ref); Babel's locale data for the signs.
"""

from __future__ import annotations

import ast
import string
from pathlib import Path

import pytest

from tests.test_class_poll import HOME_CHOICES, clean, fresh_store, start_class, tab, teacher_text, told  # noqa: F401
from ui import format as fmt
from ui import plain
from ui.i18n import LOCALES, SOURCE, catalog_path, languages, match, using

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ("de", "es", "zh-Hans")
SCANNED = ("app.py", "draw", "ui", "pages")  # the app's code, which translates (babel.cfg extracts from these)
# gelu_core's and hosting's sentences for the reader, marked N_ and translated by ui (babel.cfg extracts from them too)
MARKED = ("gelu_core", "hosting")


def extracted() -> dict:
    """msgid (a str, or (singular, plural) for ngettext) -> 'file:line' of its first use, as pybabel extracts."""
    from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
    from babel.messages.frontend import parse_mapping_cfg

    found = {}
    with (ROOT / "babel.cfg").open() as cfg:
        method_map, _options = parse_mapping_cfg(cfg)  # what `pybabel extract -F babel.cfg` reads
    for filename, lineno, message, _comments, _context in extract_from_dir(str(ROOT), method_map,
                                                                           keywords=DEFAULT_KEYWORDS):
        key = message if isinstance(message, str) else tuple(message)
        found.setdefault(key, f"{filename}:{lineno}")
    return found


def catalog(lang: str):
    from babel.messages.pofile import read_po

    with catalog_path(lang).open("rb") as po:
        return read_po(po, locale=lang.replace("-", "_"))


def placeholders(text: str) -> set[str]:
    """The named fields of a str.format message: '{x} and {gate}' -> {'x', 'gate'}."""
    return {field for _, field, _, _ in string.Formatter().parse(text) if field is not None}


def test_the_shipped_languages_are_the_catalogs():
    """Reference: the folders under locales/ (a new .po file is a new language, no code)."""
    assert languages() == (SOURCE, *sorted(SHIPPED))
    assert all(catalog_path(lang).is_file() for lang in SHIPPED)


@pytest.mark.parametrize("lang", SHIPPED)
def test_every_message_in_the_code_has_a_translation(lang):
    """Reference: Babel's extraction of the code now; each message has a non-empty translation that is not fuzzy
    (Babel leaves a fuzzy one out, and the reader would see English)."""
    have = {m.id if isinstance(m.id, str) else tuple(m.id): m for m in catalog(lang) if m.id}
    missing = [f"{where}: {key!r}" for key, where in extracted().items()
               if key not in have or have[key].fuzzy
               or not all(have[key].string if isinstance(have[key].string, tuple) else [have[key].string])]
    assert not missing, f"{lang} has no translation for:\n" + "\n".join(missing)


def test_babel_sees_every_message_the_code_marks():
    """Reference: the code's syntax tree (ast), which sees a ``_("...")`` or ``N_("...")`` call with a literal
    anywhere, inside an f-string's braces too (Python 3.11's tokenizer hands Babel an f-string as one string, so
    a message written there is never extracted, and its reader sees English); each must be among Babel's."""
    seen = set(extracted())
    unseen = []
    for path in [ROOT / "app.py", *[f for d in (*SCANNED[1:], *MARKED) for f in sorted((ROOT / d).rglob("*.py"))]]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("_", "N_")
                    and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
                    and node.args[0].value not in seen):
                unseen.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.args[0].value!r}")
    assert not unseen, "messages Babel does not extract (take them out of the f-string):\n" + "\n".join(unseen)


def test_the_template_holds_every_message():
    """Reference: Babel's extraction now against locales/messages.pot, the template a new language starts from."""
    from babel.messages.pofile import read_po

    with (LOCALES / "messages.pot").open("rb") as pot:
        template = {m.id if isinstance(m.id, str) else tuple(m.id) for m in read_po(pot) if m.id}
    assert template == set(extracted()), "run pybabel extract (README, Languages)"


@pytest.mark.parametrize("lang", SHIPPED)
def test_every_translation_keeps_its_messages_placeholders(lang):
    """Reference: the message's own ``{name}`` fields (str.format), its bold marks (``**``, which a page splits
    the sentence at) and its chart markup (``<br>``, ``<b>``), exactly, in every translation and plural form."""
    wrong = []
    for m in catalog(lang):
        if not m.id:
            continue
        ids = [m.id] if isinstance(m.id, str) else list(m.id)
        forms = [m.string] if isinstance(m.string, str) else list(m.string)
        want = set().union(*(placeholders(i) for i in ids))
        for form in forms:
            if placeholders(form) != want and not (len(ids) > 1 and placeholders(form) <= want):
                wrong.append(f"{m.id!r}: {sorted(placeholders(form))} for {sorted(want)}")
            for mark in ("**", "<br>", "<b>", "</b>"):  # where a page or the live layer cuts the text
                if form.count(mark) != ids[0].count(mark):
                    wrong.append(f"{m.id!r}: {form.count(mark)} {mark} for {ids[0].count(mark)}")
    assert not wrong, "\n".join(wrong)


# ---------------------------------------------------------------- no sentence glued from fragments

TRANSLATING = {"_", "ngettext"}


def _translated(node) -> bool:
    """A call of ``_``/``ngettext``, or of ``.format`` on one."""
    if isinstance(node, ast.Call):
        f = node.func
        if isinstance(f, ast.Name) and f.id in TRANSLATING:
            return True
        if isinstance(f, ast.Attribute) and f.attr == "format":
            return _translated(f.value)
    return False


def glued(tree: ast.AST) -> list[int]:
    """Lines where a translated text is joined to other text by ``+``, or set inside an f-string beside other
    words: a sentence a translator cannot see whole."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and (
                _translated(node.left) or _translated(node.right)):
            lines.append(node.lineno)
        elif isinstance(node, ast.JoinedStr):
            parts = node.values
            inside = [p for p in parts if isinstance(p, ast.FormattedValue) and _translated(p.value)]
            words = [p for p in parts if isinstance(p, ast.Constant) and any(c.isalpha() for c in str(p.value))]
            if inside and (words or len(parts) > 1):
                lines.append(node.lineno)
    return lines


def test_the_glue_detector_finds_glued_sentences():
    """Reference: three glued sentences written here, and two whole ones."""
    code = ('a = _("At x = ") + str(x)\nb = f"{_(\'The gate\')} is open"\nc = _("x") + _("y")\n'
            'd = _("At x = {x}.").format(x=x)\ne = "\\n\\n".join([_("One."), _("Two.")])\n')
    assert glued(ast.parse(code)) == [1, 2, 3]


def test_no_sentence_is_glued_from_translated_fragments():
    """Reference: the syntax tree of every file Babel extracts from; each glued sentence named by file:line."""
    found = []
    for root in SCANNED:
        for path in sorted([ROOT / root] if root.endswith(".py") else (ROOT / root).rglob("*.py")):
            found += [f"{path.relative_to(ROOT)}:{line}" for line in glued(ast.parse(path.read_text("utf-8")))]
    assert not found, "translated fragments glued together at:\n" + "\n".join(found)


# ---------------------------------------------------------------- which language

@pytest.mark.parametrize(("tag", "lang"), [("de", "de"), ("de-AT", "de"), ("de_CH", "de"), ("es-419", "es"),
                                           ("es-ES", "es"), ("zh-Hans", "zh-Hans"), ("zh-CN", "zh-Hans"),
                                           ("zh", "zh-Hans"), ("zh-Hans-SG", "zh-Hans"), ("en-GB", "en"),
                                           ("zh-TW", None), ("fr", None), ("", None), ("de;drop", None),
                                           ("x" * 80, None), (None, None)])
def test_a_tag_finds_its_language(tag, lang):
    """Reference: BCP 47's fallback (a region or script dropped), Simplified Chinese for mainland China."""
    assert match(tag) == lang


# ---------------------------------------------------------------- numbers in the reader's format

@pytest.mark.parametrize("lang", ["de", "es"])
def test_gelu_of_minus_one_reads_with_a_decimal_comma(lang):
    """Reference: mpmath's tanh GELU(-1) = -0.158808..., shown to four decimals: '-0,1588' exactly (the text), and
    read back within half a unit of its last decimal (0.00005)."""
    import gelu_core
    from tests.test_ui_explorer_pages import gelu_ref

    with using(lang):
        text = fmt.fixed(gelu_core.gelu(-1.0, approximate="tanh"))
    assert text == "-0,1588"
    assert abs(fmt.read_back(text, lang) - float(gelu_ref(-1, "tanh"))) <= 0.5e-4


@pytest.mark.parametrize("lang", ["en", *SHIPPED])
@pytest.mark.parametrize("value", [-0.158808, 0.8411919906, -1234.56789, 3.2e-9, 0.0, 20.0])
def test_a_number_reads_back_to_its_value(lang, value):
    """Reference: the value itself; tolerance half a unit of the last digit shown (fixed: 0.5e-4, six: 0.5e-6, sig:
    half a unit of its 4th significant digit, relative); count exactly."""
    with using(lang):
        shown = {"fixed": fmt.fixed(value), "six": fmt.six(value), "sig": fmt.sig(value)}
        counted = fmt.count(int(value * 1000))
    assert abs(fmt.read_back(shown["fixed"], lang) - value) <= 0.5e-4 + 1e-12
    assert abs(fmt.read_back(shown["six"], lang) - value) <= 0.5e-6 + 1e-12
    assert abs(fmt.read_back(shown["sig"], lang) - value) <= 0.5e-3 * abs(value) + 1e-300
    assert fmt.read_back(counted, lang) == int(value * 1000)


@pytest.mark.parametrize("lang", SHIPPED)
def test_a_percentage_reads_back(lang):
    """Reference: Φ(2) = 0.97724986805 (mpmath), shown to one decimal of a percent: within 0.0005."""
    with using(lang):
        text = fmt.percent(0.9772498680518208)
    assert abs(fmt.read_back(text, lang) - 0.97724986805) <= 0.0005


def test_english_and_scripts_keep_the_plain_format():
    """Reference: ui.plain's text (what the code for a view prints and a CSV holds): English shows it unchanged,
    and the functions the code export prints are ui.plain's."""
    assert fmt.fixed(-0.158808) == plain.fixed(-0.158808) == "-0.1588"
    assert fmt.count(4722432) == "4,722,432"
    for name in ("fixed", "six", "sig", "sci", "full", "readable", "percent", "share", "count"):
        assert getattr(fmt, name).__wrapped__ is getattr(plain, name)


def test_chart_separators_follow_the_language():
    """Reference: Babel's decimal and group signs (de: ',' and '.'; zh-Hans: as English)."""
    from ui.theme import base_layout

    with using("de"):
        assert base_layout("x", "y")["separators"] == ",."
    with using("zh-Hans"):
        assert base_layout("x", "y")["separators"] == ".,"
    assert base_layout("x", "y")["separators"] == ".,"


# ---------------------------------------------------------------- the app in another language

def _texts(at) -> str:
    """Every markdown, caption, subheader and info text the run drew, one string."""
    return "\n".join(e.value for kind in ("markdown", "caption", "subheader", "info", "title")
                     for e in getattr(at, kind))


def test_home_in_german_shows_german_words_and_numbers(app):
    """Reference: the German catalog's words for Home (its subheader, the table's gate column) and mpmath's tanh
    GELU(-1) = -0.158808... written -0,1588 in the table, GELU(-2) = -0.045402... -0,0454 in the sentence under it
    (the text, exactly)."""
    app.query_params["lang"] = "de"
    app.query_params["home_x1"] = "-2"  # a link with a setting: the page opens whole
    app.run()
    assert not app.exception, app.exception
    words = _texts(app)
    assert "Fünf Zahlen durch beide" in words and "Erst vorhersagen, dann prüfen" in words
    assert "Five numbers through both" not in words
    table = app.table[0].value
    assert list(table.columns) == ["x", "ReLU(x)", "Tor (tanh)", "GELU (tanh)", "GELU (exakt)"]
    assert table["GELU (tanh)"].tolist() == ["-0,0454", "-0,1588", "0,0000", "0,8412", "1,9546"]
    assert "GELU liefert **-0,0454**" in words and "GELU gives" not in words  # the sentence under the table, x = -2


def test_an_unknown_language_opens_english_with_a_note(app):
    """Reference: the link check's kind of note (st.info, link_off) and the English page; never an exception."""
    app.query_params["lang"] = "xx-<b>"
    app.run()
    assert not app.exception, app.exception
    notes = [e.value for e in app.info]
    assert any("**Language**" in n and "English" in n for n in notes), notes
    assert "Predict, then check" in _texts(app)
    assert "lang" not in app.query_params


def _rebinds_gettext(tree: ast.AST) -> list[int]:
    """Lines that assign to ``_`` outside a comprehension (a throwaway name that would hide gettext's ``_``)."""
    inside = {id(n) for c in ast.walk(tree) if isinstance(c, (ast.ListComp, ast.SetComp, ast.DictComp,
                                                               ast.GeneratorExp)) for n in ast.walk(c)}
    return [n.lineno for n in ast.walk(tree)
            if isinstance(n, ast.Name) and n.id == "_" and isinstance(n.ctx, ast.Store) and id(n) not in inside]


def test_no_code_hides_gettext():
    """Reference: the syntax tree of every file Babel extracts from; each ``_ = ...`` named by file:line."""
    found = []
    for root in SCANNED:
        for path in sorted([ROOT / root] if root.endswith(".py") else (ROOT / root).rglob("*.py")):
            tree = ast.parse(path.read_text("utf-8"))
            found += [f"{path.relative_to(ROOT)}:{line}" for line in _rebinds_gettext(tree)]
    assert not found, "_ assigned (it hides gettext) at:\n" + "\n".join(found)


def test_a_class_in_three_languages_makes_one_tally(fresh_store, app):  # noqa: F811  (the fixture, imported)
    """A teacher reading German, students reading Spanish and Chinese: the store counts choices, not words, so the
    two answers land on one choice of one tally.  Reference: the votes cast (both "a small negative number", choice
    1 of Home's three) against the store's tally, exactly; the teacher's count in German."""
    teacher = clean(tab({"lang": "de"}))
    code, key = start_class(teacher)
    teacher = clean(tab({"present": "true", "class": code, "teacher": key, "lang": "de"}))
    spanish, chinese = clean(tab({"class": code, "lang": "es"})), clean(tab({"class": code, "lang": "zh-Hans"}))
    assert "un número negativo pequeño" in spanish.radio(key="quiz_home").options
    assert "一个小的负数" in chinese.radio(key="quiz_home").options
    for student in (spanish, chinese):  # each picks the words they read for Home's second choice
        radio = student.radio(key="quiz_home")
        radio.set_value(radio.options[HOME_CHOICES.index("a small negative number")])
        clean(student.run())
    assert fresh_store.tally(code, "home", 3).counts == (0, 2, 0)
    assert any(n.startswith("Tu respuesta está registrada") for n in told(spanish))
    assert any(n.startswith("你的答案已提交") for n in told(chinese))
    clean(teacher.run())
    assert "2 von 2 haben geantwortet" in teacher_text(teacher)


def test_the_activations_descriptions_are_extracted_as_gelu_core_writes_them():
    """Reference: gelu_core's registry; Curves shows ``_(description)``, so ui.curves.DESCRIPTIONS (what Babel
    extracts) must hold each description exactly."""
    from gelu_core.activations import ACTIVATIONS
    from ui.curves import DESCRIPTIONS

    assert DESCRIPTIONS == {name: a.description for name, a in ACTIVATIONS.items()}


def test_the_scripts_sent_through_st_html_hold_no_markup():
    """Reference: Streamlit's st.html drops a script whose text holds a tag such as "<html" (seen in Chromium: the
    share box's script, and with it <html lang> and the links' lang=, was gone); the files st.html carries are read
    for any tag-like text."""
    import re

    from draw.assets import text

    for name in ("share.js", "a11y.js"):
        assert not re.search(r"</?\s*(html|script|style|body|head)\b", text(name), flags=re.I), name


@pytest.mark.parametrize("lang", SHIPPED)
def test_every_page_draws_in_every_language_on_its_widest_view(app, lang):
    """Reference: each page runs without an exception in each language, on the widest views tests/e2e/test_fit.py
    opens (which reach the words about large numbers: Approximations' far tails, "37,000 times the true value")
    and on the lab's and the race's defaults."""
    from urllib.parse import parse_qs

    from tests.e2e.test_fit import VIEWS

    for view in [*VIEWS, "ffn?ffn_seed=1", "training?training_steps=100"]:  # a setting: shown whole
        path, _sep, query = view.partition("?")
        at = app.__class__.from_file(app._script_path, default_timeout=60)
        at.query_params["lang"] = lang
        for key, values in parse_qs(query).items():
            at.query_params[key] = values
        if path:
            at.switch_page(f"pages/{path}.py")
        at.run()
        assert not at.exception, (view, lang, at.exception)


@pytest.mark.parametrize(("locale", "title"), [("de-AT", "Start"), ("es-MX", "Inicio"), ("zh-CN", "首页"),
                                               ("fr-FR", "Home"), (None, "Home")])
def test_a_visitor_without_lang_gets_the_browsers_language(app, locale, title):
    """Reference: st.context.locale (navigator.language) read through BCP 47's fallback (``match``); English
    where the app does not speak it.  The page's first caption names the page's step in that language."""
    app.context["locale"] = locale
    app.run()
    assert not app.exception, app.exception
    nav = {"Start": "Schritt 1 von 7", "Inicio": "Paso 1 de 7", "首页": "第 1 步", "Home": "Step 1 of 7"}[title]
    assert app.caption[0].value.startswith(nav), app.caption[0].value


def test_the_link_wins_over_the_browser_and_the_selector_keeps_the_choice(app):
    """Reference: the order README gives (link, then the session's choice, then the browser): a German browser on
    an English link reads English; choosing Español in the sidebar puts lang=es in the link and keeps it."""
    app.context["locale"] = "de-DE"
    app.query_params["lang"] = "en"
    app.run()
    assert app.caption[0].value.startswith("Step 1 of 7")
    app.selectbox(key="gelu_lang_picker").set_value("es").run()
    assert not app.exception, app.exception
    assert app.caption[0].value.startswith("Paso 1 de 7")
    assert app.query_params["lang"] in ("es", ["es"])
