"""A link is anyone's to type: every URL parameter on every page, given a value its control cannot take, falls
back to the control's default with a short note, never an exception or an error box.

Reference: each control's declaration in ui/controls.py (its default, range and options); the values tried are
out of range, non-finite, huge, empty, repeated and malformed, as a table over every page and every key, plus
hypothesis' arbitrary text for every key.  The same is checked in a real browser by tests/e2e/test_links.py.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import ROOT, sweep
from ui.controls import Control
from ui.pages import PAGES

PAGE_FILES = {p.url_path: None if p.default else p.file for p in PAGES.values()}
ALWAYS_SHOWN = {  # controls drawn only once another one is set: the parameter that shows them
    "curves_slope": {"curves_more": ["Leaky ReLU"]},
    "curves_alpha": {"curves_more": ["ELU"]},
    "approximations_fw_dtypes": {"approximations_view": ["What PyTorch computes"]},
    "approximations_fw_range": {"approximations_view": ["What PyTorch computes"]},
    **{key: {"training_steps": ["100"]} for key in ("training_task", "training_a", "training_b", "training_lr",
                                                    "training_width", "training_depth", "training_noise",
                                                    "training_seed")},  # short races
}


def bad_values(c: Control) -> list[list[str]]:
    """Values this control cannot take, by kind: empty, malformed, non-finite, huge, out of range, repeated."""
    if c.widget in ("slider", "number_input"):
        n = len(c.default) if isinstance(c.default, (list, tuple)) else 1
        lo, hi = c.options["min_value"], c.options["max_value"]
        return [[""], ["abc"] * n, ["inf"] * n, ["-Infinity"] * n, ["nan"] * n, ["1e400"] * n, ["9" * 400] * n,
                [str(hi + (hi - lo) + 1)] * n, [str(lo - (hi - lo) - 1)] * n, [str(lo)] * (n + 1), ["0x10"] * n]
    if c.widget == "multiselect":
        return [["Bogus"], [c.choices()[0], c.choices()[0]], ["<script>alert(1)</script>"]]
    if c.widget == "toggle":
        return [["maybe"], [""], ["true", "false"]]
    if c.widget == "text_input":
        return [["1" * (c.options["max_chars"] + 1)], ["a", "b"]]
    return [[""], ["Bogus"], [c.choices()[-1], c.choices()[-1]], ["%00"], ["x" * 5000]]  # choices


CASES = [(p.url_path, c, values) for p in PAGES.values() if p.controls for c in p.controls if c.bound
         for values in bad_values(c)]


def open_with(page: str, query: dict[str, list[str]]):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    if PAGE_FILES[page]:  # a link to another page: the app opens, then the page, with the link's parameters
        at.run()
        at.switch_page(PAGE_FILES[page])
    for key, values in query.items():
        at.query_params[key] = values
    return at.run()


def current(at, c: Control):
    value = at.session_state[c.key]
    return list(value) if isinstance(value, (list, tuple)) else value


# every bad value of every control; the default run takes every fourth case, each kind a slider or a choice can get
# met in turn (tests.conftest.sweep), CI all of them
@pytest.mark.parametrize("page, control, values", sweep(CASES, [f"{c.key}={'&'.join(v)[:24]}" for _, c, v in CASES],
                                                        kept=range(0, len(CASES), 4)))
def test_a_bad_value_falls_back_with_a_note(page, control, values):
    at = open_with(page, {**ALWAYS_SHOWN.get(control.key, {}), control.key: values})
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    default = list(control.default) if isinstance(control.default, (list, tuple)) else control.default
    assert current(at, control) == default
    notes = [i.value for i in at.info if "could not be used" in i.value]
    assert len(notes) == 1 and f"**{control.label}**" in notes[0], [i.value for i in at.info]


@pytest.mark.parametrize("page", [p.url_path for p in PAGES.values() if p.controls])
def test_a_good_link_gets_no_note(page):
    """Reference: the defaults written out as URL values are taken without a word."""
    query = {}
    for c in PAGES[page].controls:
        if c.bound and c.widget in ("slider", "number_input") and not isinstance(c.default, (list, tuple)):
            query[c.key] = [str(c.options["max_value"])]
    shown: dict[str, list[str]] = {}
    for key in query:
        for k, v in ALWAYS_SHOWN.get(key, {}).items():
            shown[k] = list(dict.fromkeys(shown.get(k, []) + v))
    at = open_with(page, {**shown, **query})
    assert not at.exception and not [i for i in at.info if "could not be used" in i.value]
    for key, (value,) in query.items():
        assert float(at.session_state[key]) == float(value)


KEYS = [(p.url_path, c) for p in PAGES.values() if p.controls for c in p.controls if c.bound]


@pytest.mark.parametrize("page, control", sweep(KEYS, [c.key for _, c in KEYS], kept=range(0, len(KEYS), 4)))
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(st.text(max_size=40), min_size=1, max_size=3))
def test_any_text_in_any_parameter_is_safe(page, control, values):
    """Whatever hypothesis types into a parameter: no exception, no error box; the control holds a value it
    accepts (the one typed, when the declaration accepts it, else its default)."""
    at = open_with(page, {**ALWAYS_SHOWN.get(control.key, {}), control.key: values})
    assert not at.exception, at.exception
    assert not at.error
    if control.url_problem(values) is not None:
        default = list(control.default) if isinstance(control.default, (list, tuple)) else control.default
        assert current(at, control) == default


RENAMED = [(p.url_path, old, new) for p in PAGES.values() if p.controls for old, new in p.controls.renamed.items()]


def now_key(name: str) -> str:
    """A control's key now, from its short name on the Approximations page (its GELU form is the lesson's)."""
    return "form" if name == "fw_form" else f"approximations_{name}"


def test_an_old_link_opens_the_same_view():
    """Reference: the same link written with the keys' names now.  Every value of an old link (the Approximations
    page's ``approx_`` keys, and each page's own GELU form) reaches its control, without a note, and the URL then
    holds the new key only."""
    links = {"view": ["What PyTorch computes"], "range": ["-12", "0"], "fw_form": ["tanh"],
             "fw_dtypes": ["float16", "float32"], "fw_range": ["-8", "-2"]}
    assert {old: new for _, old, new in RENAMED if old.startswith("approx_")} == {
        f"approx_{name}": now_key(name) for name in links}
    assert {old: new for _, old, new in RENAMED if not old.startswith("approx_")} == {
        "curves_form": "form", "derivative_form": "form", "approximations_fw_form": "form"}
    old = open_with("approximations", {f"approx_{name}": v for name, v in links.items()})
    new = open_with("approximations", {now_key(name): v for name, v in links.items()})
    for at in (old, new):
        assert not at.exception and not at.error and not [i for i in at.info if "could not be used" in i.value]
    for c in PAGES["approximations"].controls:
        assert current(old, c) == current(new, c), c.key
    assert current(old, PAGES["approximations"].controls["fw_range"]) == [-8.0, -2.0]  # not the default
    assert {k: old.query_params[k] for k in old.query_params} == {k: new.query_params[k] for k in new.query_params}
    assert not [k for k in old.query_params if k.startswith("approx_")]
    shown = [(m.label, m.value) for m in old.metric], [d.value.to_dict() for d in old.dataframe]
    assert shown == ([(m.label, m.value) for m in new.metric], [d.value.to_dict() for d in new.dataframe])


@pytest.mark.parametrize("page, old, new", RENAMED, ids=[old for _, old, _ in RENAMED])
def test_a_bad_value_under_an_old_key_falls_back_with_a_note(page, old, new):
    control = {c.key: c for c in PAGES[page].controls}[new]
    shown = {f"approx_{k.removeprefix('approximations_')}": v for k, v in ALWAYS_SHOWN.get(new, {}).items()}
    at = open_with(page, {**shown, old: bad_values(control)[1]})
    assert not at.exception and not at.error
    notes = [i.value for i in at.info if "could not be used" in i.value]
    assert len(notes) == 1 and f"**{control.label}**" in notes[0], [i.value for i in at.info]
