"""Saturation (no new mode in the last 20 traces) and Cohen's kappa between two annotators."""

from __future__ import annotations

import pytest
from analysis_builders import note

from evalkit.analysis import (
    SATURATION_WINDOW,
    Taxonomy,
    agreement_on,
    annotator_agreement,
    saturation_curve,
)
from evalkit.errors import InputError


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


def test_kappa_matches_a_worked_example():
    # 50 items: both yes 20, both no 15, A yes/B no 5, A no/B yes 10 -> po 0.7, pe 0.5, kappa 0.4
    pairs = [("y", "y")] * 20 + [("n", "n")] * 15 + [("y", "n")] * 5 + [("n", "y")] * 10
    k = agreement_on(pairs)
    assert (k.traces, k.observed, k.expected) == (50, pytest.approx(0.7), pytest.approx(0.5))
    assert k.kappa == pytest.approx(0.4)
    assert agreement_on([("pass", "pass")] * 5).kappa is None  # one category only: undefined
    assert agreement_on([]).kappa is None


def test_agreement_uses_shared_traces_latest_labels_and_leaves_out_defers():
    ana = [note("t1", "fail", ("x",)), note("t2", "pass"), note("t3", "fail", ("y",)), note("t4", "pass"),
           note("t5", "defer"), note("only-ana", "pass")]
    ben = [note("t1", "fail", ("x",), annotator="ben"), note("t2", "fail", ("y",), annotator="ben"),
           note("t3", "fail", ("y",), annotator="ben"), note("t4", "fail", ("x",), annotator="ben"),
           note("t5", "pass", annotator="ben"), note("t4", "pass", annotator="ben", minute=3)]  # ben relabels t4
    result = annotator_agreement(ana + ben, "ana", "ben")
    assert (result.shared_traces, result.deferred) == (5, 1)
    assert result.label.traces == 4
    # labels (ana, ben): (f,f) (p,f) (f,f) (p,p): po 0.75, pe (2*3 + 2*1)/16 = 0.5, kappa 0.5
    assert result.label.kappa == pytest.approx(0.5)
    modes = {k.about: k for k in result.modes}
    assert set(modes) == {"x", "y"}
    assert modes["x"].kappa == pytest.approx(1.0)


def test_agreement_reports_every_taxonomy_mode_and_names_bad_annotators():
    taxonomy = Taxonomy.model_validate({"subject": "s", "version": 0, "modes": [
        {"id": "x", "name": "X", "definition": "x"}, {"id": "never", "name": "N", "definition": "n"}]})
    labels = [note("t1", "fail", ("x",)), note("t1", "fail", ("x",), annotator="ben")]
    assert [k.about for k in annotator_agreement(labels, "ana", "ben", taxonomy).modes] == ["x", "never"]
    with pytest.raises(InputError, match="no annotations by 'zoe'"):
        annotator_agreement(labels, "ana", "zoe")
    with pytest.raises(InputError, match="two different annotators"):
        annotator_agreement(labels, "ana", "ana")
