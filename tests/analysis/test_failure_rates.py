"""Failure-mode rates with Wilson intervals, co-occurrence, and breakdown by a dataset dimension."""

from __future__ import annotations

import pytest
from analysis_builders import make_trace, note

from evalkit.analysis import Taxonomy, failure_mode_rates, mode_cooccurrence, modes_by
from evalkit.errors import InputError
from evalkit.stats import wilson_bounds as wilson_score_interval


def _taxonomy(**parents) -> Taxonomy:
    modes = [{"id": m, "name": m.title(), "definition": f"{m} happened"}
             for m in ("tool-failure", "bad-args", "hallucination", "never-seen")]
    for m in modes:
        if m["id"] in parents:
            m["parent"] = parents[m["id"]]
    return Taxonomy.model_validate({"subject": "s", "version": 1, "modes": modes})


def test_wilson_interval_matches_published_values():
    lo, hi = wilson_score_interval(81, 263)  # Newcombe (1998), example: 81/263 -> 0.2553 to 0.3662
    assert (round(lo, 4), round(hi, 4)) == (0.2553, 0.3662)
    lo, hi = wilson_score_interval(0, 10)
    assert lo == 0 and round(hi, 4) == 0.2775  # does not collapse at zero successes
    assert wilson_score_interval(0, 0) is None
    with pytest.raises(InputError, match="level"):
        wilson_score_interval(1, 2, level=1.5)


def test_rates_are_per_reviewed_trace_sorted_descending_with_latest_labels():
    labels = [note(f"p{i}") for i in range(6)]
    labels += [note("f1", "fail", ("hallucination",)), note("f2", "fail", ("hallucination", "bad-args")),
               note("f3", "fail", ("bad-args",)), note("f4", "fail", ("hallucination",)),
               note("d1", "defer"), note("f5", "fail", text="something odd")]
    labels.append(note("p0", "fail", ("tool-failure",), minute=9))  # relabel: p0 now fails
    rates = failure_mode_rates(labels)
    assert (rates.annotator, rates.reviewed, rates.failed, rates.passed, rates.deferred) == ("ana", 11, 6, 5, 1)
    assert rates.untagged_fails == 1
    assert [(r.mode, r.count) for r in rates.modes] == [("hallucination", 3), ("bad-args", 2), ("tool-failure", 1)]
    top = rates.modes[0]
    assert top.rate == pytest.approx(3 / 11)
    assert (top.lo, top.hi) == pytest.approx(wilson_score_interval(3, 11))
    assert top.lo < top.rate < top.hi


def test_a_taxonomy_lists_every_mode_and_rolls_children_up_into_parents():
    labels = [note("a", "fail", ("bad-args",)), note("b", "fail", ("tool-failure",)), note("c")]
    rates = failure_mode_rates(labels, _taxonomy(**{"bad-args": "tool-failure"}))
    counts = {r.mode: (r.count, r.name) for r in rates.modes}
    assert counts == {"tool-failure": (2, "Tool-Failure"), "bad-args": (1, "Bad-Args"),
                      "hallucination": (0, "Hallucination"), "never-seen": (0, "Never-Seen")}
    assert [r.mode for r in rates.modes][:2] == ["tool-failure", "bad-args"]


def test_rates_refuse_modes_the_taxonomy_lacks_and_pick_the_annotator():
    labels = [note("a", "fail", ("made-up",)), note("a", "pass", annotator="ben"), note("b", annotator="ben")]
    with pytest.raises(InputError, match="unknown failure mode 'made-up'"):
        failure_mode_rates(labels, _taxonomy(), annotator="ana")
    assert failure_mode_rates(labels).annotator == "ben"  # ben labelled the most traces
    assert failure_mode_rates(labels, annotator="ana").failed == 1


def test_cooccurrence_counts_modes_tagged_together():
    labels = [note("a", "fail", ("x", "y")), note("b", "fail", ("x", "y")), note("c", "fail", ("x",)),
              note("d", "fail", ("y", "z"))]
    table = mode_cooccurrence(labels)
    rows = {(r["mode"], r["other"]): (r["both"], r["share_of_mode"]) for r in table.iter_rows(named=True)}
    assert rows[("x", "y")] == (2, pytest.approx(2 / 3))
    assert rows[("y", "x")] == (2, pytest.approx(2 / 3))
    assert rows[("z", "y")] == (1, 1.0)
    assert ("x", "z") not in rows
    assert table["both"].to_list() == sorted(table["both"].to_list(), reverse=True)


def test_modes_broken_down_by_a_metadata_field():
    traces = [make_trace(f"r{i}", metadata={"intent": "refund"}) for i in range(4)]
    traces += [make_trace(f"s{i}", metadata={"intent": "status"}) for i in range(2)]
    labels = [note("r0", "fail", ("bad-args",)), note("r1", "fail", ("bad-args",)), note("r2"), note("r3", "defer"),
              note("s0", "fail", ("hallucination",)), note("s1")]
    table = modes_by(labels, traces, "intent")
    rows = {(r["group"], r["mode"]): (r["count"], r["reviewed"], r["rate"]) for r in table.iter_rows(named=True)}
    assert rows[("refund", "bad-args")] == (2, 3, pytest.approx(2 / 3))
    assert rows[("refund", "hallucination")] == (0, 3, 0.0)
    assert rows[("status", "hallucination")] == (1, 2, 0.5)
    with pytest.raises(InputError, match="not among the traces given"):
        modes_by([note("elsewhere", "fail", ("x",))], traces, "intent")
