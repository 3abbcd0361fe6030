"""AppTest of the Curves page: sliders by key, the probe readouts, overlays, the values table, URL parameters.

References: mpmath at 50 digits (tests.test_ui_explorer_pages helpers); readouts compared as the correctly rounded
4-decimal string of the mpmath value; table cells in float64 with REL = 1e-13.
"""

from __future__ import annotations

import pytest

from tests.conftest import chart_spec, metrics, open_page
from tests.stacking import next_after
from tests.test_ui_explorer_pages import REL, arr, close, gate_ref, gelu_ref, grad_ref, shown

PAGE = "pages/curves.py"


def answer(form: str = "tanh") -> tuple[str, str]:
    """The question's right choice and a number its reveal must quote: GELU(3) in the lesson's form (mpmath)."""
    return "almost exactly 3", shown(gelu_ref(3, form))


def trace(spec, meta):
    return [t for t in spec["data"] if t.get("meta") == meta][0]


def test_curves_open_as_the_source_draws_them(app):
    """Default view: -3 … 3 with 100 points, tanh GELU, probe at -1 reading the source's -0.1588."""
    at = open_page(app, PAGE)
    assert not at.exception
    spec = chart_spec(at)
    x = arr(trace(spec, "relu")["x"])
    assert x.size == 100 and x[0] == -3.0 and x[-1] == 3.0
    assert metrics(at) == {"ReLU(-1.00)": "0.0000", "GELU(-1.00), tanh": "-0.1588", "gate(-1.00), tanh": "0.1588"}


@pytest.mark.parametrize("x, form", [(0.37, "exact"), (-2.5, "tanh"), (1.0, "sigmoid"), (-0.01, "exact")])
def test_probe_readouts_against_mpmath(app, x, form):
    at = open_page(app, PAGE, curves_x=str(x), form=form)
    label = f"{x:.2f}"
    m = metrics(at)
    assert m[f"ReLU({label})"] == shown(max(x, 0.0))
    assert m[f"GELU({label}), {form}"] == shown(gelu_ref(x, form))
    assert m[f"gate({label}), {form}"] == shown(gate_ref(x, form))
    probe = trace(chart_spec(at), {"exact": "marker:gelu", "tanh": "marker:gelu_tanh",
                                   "sigmoid": "marker:gelu_sigmoid"}[form])
    assert close(arr(probe["y"])[0], gelu_ref(x, form), REL)


@pytest.mark.parametrize("key, value", [("curves_x", 1.25), ("curves_range", (-5.0, 2.0)), ("curves_n", 37)])
def test_each_slider_changes_the_chart(app, key, value):
    at = open_page(app, PAGE)
    before = chart_spec(at)
    at.slider(key=key).set_value(value).run()
    assert not at.exception
    assert chart_spec(at) != before


def test_point_count_and_range_shape_the_grid(app):
    at = open_page(app, PAGE, curves_range=["-6", "1.5"], curves_n="7")
    x = arr(trace(chart_spec(at), "relu")["x"])
    assert x.tolist() == pytest.approx([-6.0 + i * 7.5 / 6 for i in range(7)], rel=0, abs=1e-15)


def test_form_switch_redraws_gelu(app):
    at = open_page(app, PAGE)
    at.button_group(key="form").set_value("exact").run()
    spec = chart_spec(at)
    assert [t for t in spec["data"] if t.get("meta") == "gelu"] and not [
        t for t in spec["data"] if t.get("meta") == "gelu_tanh"]


def test_overlays_and_their_parameter_sliders(app):
    at = open_page(app, PAGE)
    assert not [s for s in at.slider if s.key in ("curves_slope", "curves_alpha")]  # shown only when chosen
    at.multiselect(key="curves_more").set_value(["leaky_relu", "elu", "sigmoid"]).run()
    spec = chart_spec(at)
    assert {"leaky_relu", "elu", "sigmoid"} <= {t.get("meta") for t in spec["data"]}
    for key, value in (("curves_slope", 0.3), ("curves_alpha", 2.5)):
        before = chart_spec(at)
        at.slider(key=key).set_value(value).run()
        assert chart_spec(at) != before
    leaky = trace(chart_spec(at), "leaky_relu")
    x, y = arr(leaky["x"]), arr(leaky["y"])
    assert y[0] == pytest.approx(0.3 * x[0], rel=1e-15)
    columns = [name for d in at.dataframe for name in d.value.columns]  # the values, as tables a phone can show
    assert "Leaky ReLU (a = 0.3)" in columns and "ELU (α = 2.5)" in columns
    assert all(len(d.value.columns) <= 3 and d.value.columns[0] == "x" for d in at.dataframe)


def values(at):
    """Every column of the page's value tables, joined on x (each table holds x and at most two functions)."""
    import pandas as pd

    tables = [d.value for d in at.dataframe]
    assert all(t["x"].tolist() == tables[0]["x"].tolist() for t in tables)
    return pd.concat([tables[0]] + [t.drop(columns="x") for t in tables[1:]], axis=1)


def test_values_table_against_mpmath(app):
    at = open_page(app, PAGE, curves_points="-3, -0.5, 0.25, 4", form="exact")
    table = values(at)
    assert table["x"].tolist() == [-3.0, -0.5, 0.25, 4.0]
    for x, r, g, gate in table[["x", "ReLU(x)", "GELU(x), exact", "gate(x), exact"]].itertuples(index=False):
        assert r == max(x, 0.0) and close(g, gelu_ref(x), REL) and close(gate, gate_ref(x), REL)


def test_bad_points_text_gets_a_message_not_a_traceback(app):
    at = open_page(app, PAGE)
    at.text_input(key="curves_points").input("1, two").run()
    assert not at.exception
    assert any("“two” is not a number" in i.value for i in at.info)
    assert at.dataframe[0].value["x"].tolist() == [-2.0, -1.0, 0.0, 1.0, 2.0]  # the default points meanwhile


@pytest.mark.parametrize("key, bad, default", [
    ("curves_x", "99", -1.0), ("curves_x", "abc", -1.0), ("curves_n", "100000", 100), ("curves_n", "1.5", 100),
])
def test_bad_slider_query_values_fall_back_to_defaults(app, key, bad, default):
    at = open_page(app, PAGE, **{key: bad})
    assert not at.exception and not at.error
    assert at.slider(key=key).value == default


def test_bad_choice_query_values_fall_back_to_defaults(app):
    at = open_page(app, PAGE, form="cubic", curves_more=["SiLU", "Bogus"])
    assert not at.exception and not at.error
    assert at.button_group(key="form").value == "tanh"
    assert at.multiselect(key="curves_more").value == []  # a list with an unknown name is dropped whole
    note = at.info[0].value
    assert "GELU form" in note and "“cubic”" in note and "Overlay other activations" in note and "“Bogus”" in note


@pytest.mark.parametrize("ends, expected", [(["2", "-1"], (-1.0, 2.0)), (["1", "1"], (0.0, 2.0))])
def test_reversed_or_empty_range_from_a_url_still_draws(app, ends, expected):
    """Streamlit accepts a reversed range pair from the URL; the page orders it (and widens a single point)."""
    at = open_page(app, PAGE, curves_range=ends)
    assert not at.exception and not at.error
    x = arr(trace(chart_spec(at), "relu")["x"])
    assert (x[0], x[-1]) == expected


def test_query_parameters_restore_a_whole_view(app):
    at = open_page(app, PAGE, curves_x="0.5", form="sigmoid", curves_more=["SiLU", "Leaky ReLU"],
                     curves_slope="0.25", curves_points="1, 2")
    assert at.slider(key="curves_x").value == 0.5
    assert at.button_group(key="form").value == "sigmoid"
    assert at.multiselect(key="curves_more").value == ["silu", "leaky_relu"]
    assert at.slider(key="curves_slope").value == 0.25
    assert at.dataframe[0].value["x"].tolist() == [1.0, 2.0]


@pytest.mark.parametrize("form", ["exact", "tanh", "sigmoid"])
def test_the_opening_sentence_quotes_the_chosen_form(app, form):
    """GELU's dip (mpmath: the root of GELU' by findroot, GELU there) and GELU(3), to 4 decimals; "a little"
    because the dip is less than a quarter."""
    import mpmath as mp

    at = open_page(app, PAGE, form=form)
    text = next(m.value for m in at.markdown if "dips" in m.value)
    root = mp.findroot(lambda t: grad_ref(t, form), -0.75)
    low = gelu_ref(root, form)
    assert f"dips a little below zero, to {shown(low)} at x = {shown(root)}" in text and -low < 0.25
    assert f"GELU(3) = {shown(gelu_ref(3, form))}." in text


def test_the_chart_follows_the_probe(app):
    """Phone order: the probe slider, then the chart it moves and its readouts, then the rest (the lesson's GELU
    form sits above the page)."""
    at = open_page(app, PAGE)
    assert next_after(at, "slider:curves_x")[:3] == ["plotly_chart:chart_curves", "metric:ReLU(-1.00)",
                                                     "metric:GELU(-1.00), tanh"]
