"""analysis.saturation: distinct failure modes against traces reviewed; saturated after 20 with no new one."""

from __future__ import annotations

import pytest
from analysis_builders import note

from evalkit.analysis import SATURATION_WINDOW, saturation_curve


def _review(modes_at: dict[int, tuple[str, ...]], total: int, annotator: str = "ana") -> list:
    """``total`` traces reviewed in order; trace i fails with ``modes_at[i]`` where given."""
    return [note(f"t{i:03d}", "fail" if i in modes_at else "pass", modes_at.get(i, ()), annotator=annotator,
                 minute=i) for i in range(1, total + 1)]


def test_curve_counts_distinct_modes_in_review_order():
    curve = saturation_curve(_review({2: ("a",), 5: ("a", "b"), 9: ("c",)}, 12))
    assert [p.distinct for p in curve.points] == [0, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3]
    assert curve.points[4].new == ["b"] and curve.points[8].new == ["c"]
    assert (curve.last_new_at, curve.since_last_new, curve.saturated) == (9, 3, False)


def test_saturated_only_after_twenty_traces_without_a_new_mode():
    assert SATURATION_WINDOW == 20
    nineteen = saturation_curve(_review({3: ("a",), 10: ("b",)}, 10 + 19))
    assert not nineteen.saturated and nineteen.since_last_new == 19
    twenty = saturation_curve(_review({3: ("a",), 10: ("b",)}, 10 + 20))
    assert twenty.saturated
    # a mode seen again is not new: it does not reset the count
    again = saturation_curve(_review({3: ("a",), 10: ("b",), 25: ("a",)}, 30))
    assert again.saturated and again.last_new_at == 10


def test_a_relabel_keeps_its_place_in_review_order_with_its_latest_modes():
    labels = _review({}, 25)
    labels.append(note("t002", "fail", ("late-insight",), minute=99))
    curve = saturation_curve(labels)
    assert curve.points[1].new == ["late-insight"] and curve.last_new_at == 2
    assert curve.saturated  # 23 traces since


def test_window_is_configurable_and_validated():
    assert saturation_curve(_review({1: ("a",)}, 6), window=5).saturated
    with pytest.raises(ValueError, match="window"):
        saturation_curve(_review({}, 3), window=0)


def test_new_modes_per_batch_and_more_review_suggested_until_the_curve_flattens():
    from evalkit.analysis import saturation_by_batch

    modes = [("a",), (), ("b",), (), (), ("a",), (), ("c",), (), (), (), (), (), (), (), (), (), (), ()]
    labels = [note(f"t{i}", "fail" if m else "pass", m, minute=i) for i, m in enumerate(modes)]
    early = saturation_by_batch(labels[:10], batch_size=4)
    assert [(b.batch, b.reviewed, b.new, b.distinct) for b in early.batches] == [
        (1, 4, ["a", "b"], 2), (2, 8, ["c"], 3), (3, 10, [], 3)]
    assert early.suggest_more_review  # the last, partial batch does not count as flat
    later = saturation_by_batch(labels, batch_size=4)
    assert [b.new for b in later.batches] == [["a", "b"], ["c"], [], [], []]
    assert later.flat and not later.suggest_more_review


def test_saturation_by_batch_can_be_fed_by_the_ratified_coding():
    from evalkit.analysis import saturation_by_batch

    order = [note(f"t{i}", "fail", minute=i, text="open note") for i in range(6)]  # open coding: notes, no modes
    coded = [note("t1", "fail", ("handoff",), annotator="kim", minute=20),
             note("t4", "fail", ("handoff", "tour"), annotator="kim", minute=21)]
    curve = saturation_by_batch(order + coded, batch_size=3, annotator="ana", coded_by="kim")
    assert [b.new for b in curve.batches] == [["handoff"], ["tour"]]
