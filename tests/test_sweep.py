"""The default run's share of a sweep (tests.conftest.sweep and across): CI's slow tier gets the rest, so the two
together are every case, once.  Reference: the product of rows and variants written out with itertools here."""

from __future__ import annotations

import itertools

import pytest

from tests.conftest import across, sweep


def _split(params) -> tuple[list, list]:
    """(the default run's cases, the slow tier's), each as (values, id)."""
    default, slow = [], []
    for p in params:
        slow_mark = [m for m in p.marks if m.name == "slow"]
        (slow if slow_mark else default).append((p.values, p.id))
    return default, slow


def test_sweep_keeps_the_named_indices_and_marks_the_rest_slow():
    default, slow = _split(sweep(["a", "b", "c", "d"], ["A", "B", "C", "D"], kept=[0, 2]))
    assert default == [(("a",), "A"), (("c",), "C")]
    assert slow == [(("b",), "B"), (("d",), "D")]
    default, _ = _split(sweep([(1, "x"), (2, "y")], ["one", "two"], kept=range(0, 2, 2)))
    assert default == [((1, "x"), "one")]  # a tuple is several argnames' values


def test_sweep_refuses_ids_that_do_not_match_the_cases():
    with pytest.raises(ValueError):
        sweep(["a", "b"], ["A"], kept=[0])


@pytest.mark.parametrize("rows, variants", [(5, 2), (8, 2), (4, 3), (1, 2), (3, 1)])
def test_across_is_the_whole_product_and_the_default_run_meets_each_row_once_and_every_variant(rows, variants):
    row_values, variant_values = [f"r{i}" for i in range(rows)], [(f"v{j}", j) for j in range(variants)]
    params = across(row_values, [f"R{i}" for i in range(rows)], variant_values, [f"V{j}" for j in range(variants)])
    want = [((r, *v), f"R{i}-V{j}") for (i, r), (j, v) in
            itertools.product(enumerate(row_values), enumerate(variant_values))]
    assert [(p.values, p.id) for p in params] == want  # row-major, the ids parametrize's stacked decorators gave
    default, slow = _split(params)
    assert sorted(default + slow) == sorted(want)
    assert [values[0] for values, _ in default] == row_values  # each row once
    assert {values[1:] for values, _ in default} == set(variant_values[:rows])  # every variant, while rows last


def test_across_takes_only_the_kept_rows_in_the_default_run():
    params = across(["a", "b", "c", "d"], ["A", "B", "C", "D"], ["x", "y"], ["X", "Y"], kept_rows=[0, 3])
    default, slow = _split(params)
    assert default == [(("a", "x"), "A-X"), (("d", "y"), "D-Y")]  # row 3 with variant 3 mod 2
    assert len(slow) == 6
