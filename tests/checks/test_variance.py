"""checks.variance: pass rate and variance over repeats per case and criterion; stable at max variance 0."""

from __future__ import annotations

import pytest

from evalkit.checks import (
    outcome_results,
    repeat_stability,
)
from evalkit.checks.variance import case_of_metadata
from evalkit.contracts.verdict import CriterionVerdict
from evalkit.errors import InputError

from .conftest import make_trace


def verdict(trace_id: str, result: str) -> CriterionVerdict:
    blocked = {"kind": "scope", "text": "unclear"} if result == "uncertain" else None
    return CriterionVerdict(criterion_id="c", trace_id=trace_id, result=result, confidence=1.0, critique="x",
                            blocked_by=blocked)


def test_identical_repeats_are_stable_and_one_flip_is_not() -> None:
    same = [("case-1", "c", "pass")] * 5 + [("case-2", "c", "fail")] * 5
    stable = repeat_stability(same)
    assert stable.stable and stable.max_variance == 0
    flip = repeat_stability([*same[:4], ("case-1", "c", "fail"), *same[5:]])
    assert not flip.stable
    [cell] = flip.unstable
    assert (cell.case_id, cell.passed, cell.failed, cell.spread) == ("case-1", 4, 1, 1.0)
    assert cell.variance == pytest.approx(0.8 * 0.2)
    assert repeat_stability([*same[:4], ("case-1", "c", "fail"), *same[5:]], threshold=0.2).stable


def test_repeats_grouped_by_case_from_trace_metadata() -> None:
    traces = [make_trace(f"t{i}", case_id="case-1") for i in range(3)]
    case_of = {t.id: case_of_metadata(t) for t in traces}
    results = list(outcome_results([verdict("t0", "pass"), verdict("t1", "pass"), verdict("t2", "uncertain")],
                                   case_of))
    [cell] = repeat_stability(results).cells
    assert (cell.repeats, cell.passed, cell.undecided, cell.pass_rate) == (3, 2, 1, 1.0)
    with pytest.raises(InputError, match="names no case"):
        case_of_metadata(make_trace("lost"))


def test_single_runs_cannot_show_variance_and_are_listed() -> None:
    result = repeat_stability([("a", "c", "pass"), ("b", "c", "pass"), ("b", "c", "pass")])
    assert result.single == [("a", "c")]
    assert [c.case_id for c in result.cells] == ["b"]


@pytest.mark.parametrize("other", ["uncertain", "error", "missing"])
def test_an_undecided_repeat_makes_the_case_unstable_and_says_which(other) -> None:
    """4 pass + 1 uncertain (or errored, or missing) is not "the same outcome on every repeat"."""
    results = [("case-1", "c", "pass")] * 4 + [("case-1", "c", other)] + [("case-2", "c", "pass")] * 5
    stability = repeat_stability(results)
    assert not stability.stable and stability.max_variance == 0
    [cell] = stability.unstable
    word = {"error": "errored"}.get(other, other)
    assert cell.describe() == f"case-1 c: 4 pass, 1 {word} of 5 repeats"


def test_repeats_asked_for_but_not_run_count_as_missing() -> None:
    results = [("case-1", "c", "pass")] * 3 + [("case-2", "c", "pass")] * 5
    assert repeat_stability(results).stable                       # nobody said five were asked for
    stability = repeat_stability(results, repeats=5)
    [cell] = stability.unstable
    assert (cell.case_id, cell.missing, cell.repeats) == ("case-1", 2, 5) and not stability.stable
