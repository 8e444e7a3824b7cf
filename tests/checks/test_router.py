"""The router: tracks from checkMethod, the hybrid short-circuit, and errors instead of fallbacks."""

from __future__ import annotations

from typing import Any

import pytest

from evalkit.checks import RoutedCriterion, RoutingError, evaluate, judge_from_verdicts, route
from evalkit.contracts.matrix import EvalMatrix
from evalkit.contracts.trace import Trace
from evalkit.contracts.verdict import CriterionVerdict

from .conftest import make_trace

ORDER_CHECK = {"primitive": "string-equality", "params": {
    "actual": {"obs": "order_lookup", "path": "input.order_id"},
    "expected": {"obs": "$trace", "path": "input", "pattern": r"ORD-\d{4}-\d{6}"}}}


def criterion(cid: str | None, method: str, severity: str = "HIGH", check: dict | None = None,
              evidence: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"dimension": "data-correctness", "statement": "s", "checkMethod": method,
                           "passCondition": "p", "severity": severity, "existingCoverage": "none"}
    if cid:
        out["criterionId"] = cid
    if check:
        out["check"] = check
    out["evidenceSource"] = evidence or "Intended behavior: the test's."
    return out


def matrix(*criteria: dict[str, Any]) -> EvalMatrix:
    return EvalMatrix.model_validate({
        "subject": "s", "version": "v1", "generatedAt": "2026-01-01T00:00:00Z", "designPrinciples": [],
        "components": [{"componentId": "C3", "componentName": "order_lookup", "componentType": "script",
                        "criteria": list(criteria)}]})


class FakeJudge:
    """Records every call; answers pass."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def __call__(self, rc: RoutedCriterion, trace: Trace) -> CriterionVerdict:
        self.calls.append((rc.criterion_id, trace.id))
        return CriterionVerdict(criterion_id=rc.criterion_id, trace_id=trace.id, result="pass", confidence=0.9,
                                critique="judge says fine")


@pytest.mark.parametrize(("method", "track"), [
    ("deterministic-script", "deterministic"), ("typebox-schema", "deterministic"), ("gate", "deterministic"),
    ("trace-cross-ref", "llm-judge"), ("trajectory-diff", "llm-judge"), ("llm-judge", "llm-judge"),
    ("hybrid", "hybrid"),
])
def test_each_method_has_its_track(method: str, track: str) -> None:
    check = ORDER_CHECK if track != "llm-judge" else None
    assert route(matrix(criterion("c", method, check=check)))[0].track == track


def test_hybrid_code_fail_is_final_and_the_judge_is_not_called() -> None:
    judge = FakeJudge()
    m = matrix(criterion("ids", "hybrid", check=ORDER_CHECK))
    bad, good = make_trace("bad", order_looked="ORD-2026-999999"), make_trace("good")
    outcomes = list(evaluate(m, [bad, good], judge))
    assert [(o.trace_id, o.status) for o in outcomes] == [("bad", "fail"), ("good", "pass")]
    assert judge.calls == [("ids", "good")]  # asked only where code passed
    assert outcomes[0].verdict.critique.startswith("[string-equality]")
    assert outcomes[1].verdict.critique == "judge says fine"


def test_deterministic_criterion_never_calls_the_judge() -> None:
    judge = FakeJudge()
    list(evaluate(matrix(criterion("ids", "deterministic-script", check=ORDER_CHECK)), [make_trace()], judge))
    assert judge.calls == []


def test_deterministic_criterion_without_check_is_an_error_naming_component_and_criterion() -> None:
    with pytest.raises(RoutingError) as err:
        route(matrix(criterion("order-id-matches", "deterministic-script")))
    assert "component C3 (order_lookup), criterion order-id-matches" in str(err.value)
    assert err.value.path == "components[0].criteria[0].check"


def test_unknown_method_is_an_error_not_a_fallback() -> None:
    m = matrix(criterion("x", "llm-judge"))
    m.components[0].criteria[0].__dict__["check_method"] = "vibes"  # a method a newer matrix might carry
    with pytest.raises(RoutingError, match="criterion x: unknown checkMethod 'vibes'"):
        route(m)


def test_criterion_ids_explicit_from_evidence_or_positional() -> None:
    routed = route(matrix(criterion("explicit", "llm-judge"),
                          criterion(None, "llm-judge", evidence="criterion from-evidence. Intended: x"),
                          criterion(None, "llm-judge")))
    assert [rc.criterion_id for rc in routed] == ["explicit", "from-evidence", "C3.3"]


def test_duplicate_criterion_id_is_an_error() -> None:
    with pytest.raises(RoutingError, match="already used"):
        route(matrix(criterion("a", "llm-judge"), criterion("a", "llm-judge")))


def test_judge_track_without_judge_is_skipped_and_a_gap_in_verdicts_is_missing() -> None:
    m = matrix(criterion("j", "llm-judge"))
    assert [o.status for o in evaluate(m, [make_trace()])] == ["skipped"]
    judge = judge_from_verdicts([CriterionVerdict(criterion_id="j", trace_id="t1", result="fail", confidence=0.8,
                                                  critique="no")])
    outcomes = list(evaluate(m, [make_trace("t1"), make_trace("t2")], judge))
    assert [o.status for o in outcomes] == ["fail", "missing"]


def test_judge_that_raises_or_answers_the_wrong_pair_is_counted_as_error() -> None:
    def boom(rc: RoutedCriterion, trace: Trace) -> CriterionVerdict:
        raise TimeoutError("provider timed out")

    def wrong(rc: RoutedCriterion, trace: Trace) -> CriterionVerdict:
        return CriterionVerdict(criterion_id="other", trace_id=trace.id, result="pass", confidence=1.0, critique="x")

    m = matrix(criterion("j", "llm-judge"))
    [o] = evaluate(m, [make_trace()], boom)
    assert o.status == "error" and "TimeoutError: provider timed out" in o.note
    [o] = evaluate(m, [make_trace()], wrong)
    assert o.status == "error" and "'other'" in o.note
