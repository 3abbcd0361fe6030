"""AppTest of the Home page: the five inputs, the table, the chart, the links onward.

References: mpmath at 50 digits (tests.test_ui_explorer_pages helpers), each cell its correctly rounded four decimals
(the full-precision values: tests/test_ui_explorer_pages.py, rel 1e-13).
"""

from __future__ import annotations

import pytest

from tests.conftest import chart_spec, show_me
from tests.stacking import WORDS, next_after
from tests.test_ui_explorer_pages import arr, gate_ref, gelu_ref, shown
from ui.home import HOME_DEFAULT_INPUTS, INPUTS, five_inputs_table


def answer(form: str = "tanh") -> tuple[str, str]:
    """The question's right choice and a number its reveal must quote: GELU(-1) in the lesson's form (mpmath)."""
    return "a small negative number", shown(gelu_ref(-1, form))


@pytest.fixture
def home(app):
    """The app as it opens: on Home, past its question ("Show me")."""
    return show_me(app.run())


def test_home_opens_on_the_five_inputs_of_the_source(home):
    """Reference: the source text's chapter 4 table of the five inputs (tanh GELU) and mpmath for exact GELU."""
    assert not home.exception
    assert [home.number_input(key=c.key).value for c in INPUTS] == list(HOME_DEFAULT_INPUTS)
    table = home.table[0].value
    assert table["GELU (tanh)"].tolist() == ["-0.0454", "-0.1588", "0.0000", "0.8412", "1.9546"]
    assert table["GELU (exact)"].tolist() == ["-0.0455", "-0.1587", "0.0000", "0.8413", "1.9545"]


def cells(at) -> list[tuple[str, ...]]:
    return list(at.table[0].value.itertuples(index=False))


def test_table_matches_mpmath_to_its_four_decimals(home):
    """Every cell is the correctly rounded four-decimal value of mpmath's (50 digits), in the page's columns."""
    assert list(home.table[0].value.columns) == list(five_inputs_table(HOME_DEFAULT_INPUTS))
    for x_text, r, g, t, e in cells(home):
        x = float(x_text)
        assert (r, g, t, e) == (shown(max(0.0, x)), shown(gate_ref(x, "tanh")), shown(gelu_ref(x, "tanh")),
                                shown(gelu_ref(x)))


def test_far_inputs_never_show_minus_zero(app):
    """At x = -20 both GELUs are -0.0 or a tiny negative in float64 (mpmath: about -5.5e-88): the page shows 0.0000."""
    app.query_params["home_x1"] = "-20"
    app.run()
    x, relu, gate, gelu, exact = cells(app)[0]
    assert x == "-20.0000" and (relu, gate, gelu, exact) == ("0.0000",) * 4
    assert exact == shown(gelu_ref(-20)) and gelu == shown(gelu_ref(-20, "tanh"))


@pytest.mark.parametrize("index", range(5))
def test_each_input_changes_table_and_chart(home, index):
    key = INPUTS[index].key
    before = chart_spec(home)
    home.number_input(key=key).set_value(3.5).run()
    assert not home.exception
    assert chart_spec(home) != before
    row = cells(home)[index]
    assert row[0] == "3.5000" and row[4] == shown(gelu_ref(3.5))
    marks = [t for t in chart_spec(home)["data"] if t.get("meta") == "marker:gelu_tanh"][0]
    assert arr(marks["x"])[index] == 3.5


def test_query_parameter_sets_an_input(app):
    app.query_params["home_x2"] = "-0.25"
    app.run()
    assert app.number_input(key="home_x2").value == -0.25
    assert app.table[0].value["GELU (tanh)"][1] == shown(gelu_ref(-0.25, "tanh"))


@pytest.mark.parametrize("bad", ["abc", "1e9", "", "nan"])
def test_bad_query_value_falls_back_to_the_default(app, bad):
    app.query_params["home_x2"] = bad
    app.run()
    assert not app.exception and not app.error
    assert app.number_input(key="home_x2").value == -1.0


def test_home_links_to_every_lesson(home):
    links = {link.proto.page for link in home.get("page_link")}
    assert {"curves", "gate", "derivative", "approximations", "steps", "ffn"} <= {p.strip("/") for p in links}


def test_numbers_in_the_prose_are_true(home):
    """The sentence under the table quotes GELU at the most negative input (-2) in both forms and tanh GELU(1):
    each must be the 4-decimal rounding of the mpmath value."""
    text = " ".join(m.value for m in home.markdown if "x = -2.00" in m.value)
    assert f"**{shown(gelu_ref(-2, 'tanh'))}** (tanh form; the exact form {shown(gelu_ref(-2))})" in text
    assert f"{shown(gelu_ref(1, 'tanh'))} of 1.00" in text


def test_the_prose_follows_a_changed_input(home):
    home.number_input(key="home_x1").set_value(-0.5).run()
    home.number_input(key="home_x2").set_value(0.5).run()
    text = " ".join(m.value for m in home.markdown if "Look at" in m.value)
    assert f"x = -0.50**: ReLU gives exactly 0, GELU gives **{shown(gelu_ref(-0.5, 'tanh'))}**" in text


def test_the_table_and_the_chart_follow_the_inputs(home):
    """Phone order: the five inputs (a wrapping row), the table (its CSV button under it), the chart; the prose
    after them."""
    assert next_after(home, "number_input:home_x5", WORDS + ("download_button",))[:2] == [
        "table:", "plotly_chart:chart_home"]
