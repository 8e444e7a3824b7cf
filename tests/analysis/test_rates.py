"""analysis.rates: failure-mode rates among reviewed traces, with Wilson intervals, most frequent first."""

from __future__ import annotations

import pytest
from analysis_builders import note

from evalkit.analysis import Taxonomy, failure_mode_rates
from evalkit.errors import InputError
from evalkit.stats import wilson_bounds


def _taxonomy(**parents) -> Taxonomy:
    modes = [{"id": m, "name": m.title(), "definition": f"{m} happened"}
             for m in ("tool-failure", "bad-args", "hallucination", "never-seen")]
    for m in modes:
        if m["id"] in parents:
            m["parent"] = parents[m["id"]]
    return Taxonomy.model_validate({"subject": "s", "version": 1, "modes": modes})


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
    assert (top.lo, top.hi) == pytest.approx(wilson_bounds(3, 11))
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
