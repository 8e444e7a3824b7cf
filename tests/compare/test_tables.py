"""A comparison as rows for a report: the numbers the CLI prints, and every flip with both critiques."""

from __future__ import annotations

import pytest

from evalkit.compare import compare_runs, comparison_rows, difference_rows, flip_rows
from evalkit.contracts import CriterionVerdict


def _v(trace: str, result: str, critique: str, crit: str = "c1") -> CriterionVerdict:
    return CriterionVerdict(criterion_id=crit, trace_id=trace, result=result, critique=critique, confidence=1.0)


def test_rows_carry_the_table_the_interval_and_each_flip_side_by_side():
    old = [_v(f"t{i}", "pass", f"old {i}") for i in range(20)]
    new = [_v(f"t{i}", "fail" if i < 8 else "pass", f"new {i}") for i in range(20)]
    comparison = compare_runs(old, new, old_name="monday", new_name="tuesday", iterations=2000)
    (row,) = comparison_rows(comparison)
    assert (row["paired"], row["pass->fail"], row["fail->pass"]) == (20, 8, 0)
    assert (row["monday"], row["tuesday"], row["new-old"]) == (1.0, 0.6, pytest.approx(-0.4))
    assert row["lo"] < -0.4 < row["hi"] < 0 and row["McNemar p"] == pytest.approx(2 * 0.5 ** 8)
    (diff,) = difference_rows(comparison)
    assert diff["kind"] == "significant" and diff["value"] == pytest.approx(-0.4)
    flips = flip_rows(comparison)
    assert [f["item"] for f in flips] == [f"t{i}" for i in range(8)]
    assert flips[0] == {"criterion": "c1", "item": "t0", "monday": "pass", "tuesday": "fail",
                        "monday critique": "old 0", "tuesday critique": "new 0"}


def test_the_difference_axis_is_symmetric_and_holds_every_interval():
    from evalkit.compare import difference_domain

    rows = [{"lo": -0.105, "hi": 0.07}, {"lo": -0.02, "hi": 0.12}]
    assert difference_domain(rows) == (-0.15, 0.15)
    assert difference_domain([{"lo": -0.9, "hi": 0.99}]) == (-1.0, 1.0)
