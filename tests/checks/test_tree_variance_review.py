"""Repeats and variance, the behavior tree against traces, and the methodology review built from both."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evalkit.checks import (
    DecisionCheck,
    compare_tree,
    decision_summary,
    outcome_results,
    repeat_stability,
    review_runs,
)
from evalkit.checks.variance import case_of_metadata
from evalkit.contract_files import read_model
from evalkit.contracts.behavior_tree import BehaviorNode, BehaviorTree
from evalkit.contracts.methodology import MethodologyReview
from evalkit.contracts.trace import Trace
from evalkit.contracts.verdict import CriterionVerdict
from evalkit.errors import InputError
from evalkit.flow import build_flow_graph
from evalkit.io.atomic import atomic_write_text
from evalkit.io.canonical import canonical_dumps
from evalkit.judge.grounding import resolve_ref

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


def tree_obj() -> dict[str, Any]:
    intent = {"obs": "$trace", "path": "metadata.intent"}
    return {
        "subject": "s", "version": "v1", "generatedAt": "2026-01-01T00:00:00Z", "root": "n-route",
        "nodes": [
            {"nodeId": "n-route", "label": "Choose the tools", "decisionType": "tool-choice",
             "observe": {"obs": "plan", "path": "output.tool_calls"},
             "scenarios": [
                 {"scenarioId": "s-refund", "when": "refund asked", "expectedDecision": "kb_search and order_lookup",
                  "observedWhen": [{**intent, "value": "refund_request"}],
                  "expectedObserved": ["kb_search", "order_lookup"]},
                 {"scenarioId": "s-status", "when": "status asked", "expectedDecision": "order_lookup only",
                  "observedWhen": [{**intent, "value": "order_status"}],
                  "expectedObserved": ["order_lookup"], "unexpectedObserved": ["kb_search"]}],
             "edges": [
                 {"edgeId": "e-refund", "to": "n-escalate", "condition": "refund",
                  "takenWhen": [{"obs": "plan", "path": "output.tool_calls", "value": "order_lookup"}]},
                 {"edgeId": "e-escalate", "to": "TERMINAL", "condition": "complaint",
                  "takenWhen": [{"obs": "plan", "path": "output.tool_calls", "value": "escalate_to_human"}]},
                 {"edgeId": "e-unmapped", "to": "TERMINAL", "condition": "other"}]},
            {"nodeId": "n-escalate", "label": "Escalate?", "decisionType": "gate",
             "scenarios": [{"scenarioId": "s-big", "when": "over limit", "expectedDecision": "escalate"}],
             "edges": []},
        ]}


def traces_for_tree() -> list[Trace]:
    return [make_trace("t1"), make_trace("t2", intent="order_status", plan_tools=("order_lookup",)),
            make_trace("t3", intent="order_status"), make_trace("t4", intent="complaint")]


def test_observed_decision_against_expected_per_scenario() -> None:
    tree = BehaviorTree.model_validate(tree_obj())
    checks, _ = compare_tree(tree, traces_for_tree())
    route = {c.trace_id: c for c in checks if c.node_id == "n-route"}
    assert [(route[t].scenario_id, route[t].status) for t in ("t1", "t2", "t3", "t4")] == [
        ("s-refund", "match"), ("s-status", "match"), ("s-status", "mismatch"), (None, "no-scenario")]
    assert route["t3"].note == "has 'kb_search'"
    assert resolve_ref(traces_for_tree()[2], route["t3"].ref)
    # a node without an observation mapping goes to the judge; without one it is skipped, saying why
    assert {c.status for c in checks if c.node_id == "n-escalate"} == {"judge-skipped"}
    summary = decision_summary(checks)
    assert summary[("n-route", "s-status")] == {"match": 1, "mismatch": 1}


def test_unmapped_node_goes_to_the_judge() -> None:
    tree = BehaviorTree.model_validate(tree_obj())
    asked: list[tuple[str, str]] = []

    def judge(node: BehaviorNode, trace: Trace) -> DecisionCheck:
        asked.append((node.node_id, trace.id))
        return DecisionCheck(node.node_id, trace.id, "s-big", "match", "judge", observed="escalated")

    checks, _ = compare_tree(tree, traces_for_tree()[:2], judge)
    assert asked == [("n-escalate", "t1"), ("n-escalate", "t2")]
    assert [c.by for c in checks] == ["code", "judge", "code", "judge"]


def test_fork_frequencies_flag_dead_forks() -> None:
    tree = BehaviorTree.model_validate(tree_obj())
    _, forks = compare_tree(tree, traces_for_tree())
    by_edge = {f.edge_id: f for f in forks}
    assert (by_edge["e-refund"].taken, by_edge["e-refund"].reached) == (4, 4)
    assert by_edge["e-escalate"].dead and by_edge["e-escalate"].taken == 0
    assert by_edge["e-unmapped"].taken is None and not by_edge["e-unmapped"].dead


def test_review_is_advisory_with_computed_evidence_and_validates(tmp_path: Path) -> None:
    tree = BehaviorTree.model_validate(tree_obj())
    traces = traces_for_tree()
    checks, forks = compare_tree(tree, traces)
    graphs = [build_flow_graph(t) for t in traces]
    stability = repeat_stability([("k", "c", "pass"), ("k", "c", "fail")])
    calls: list[str] = []

    def judge(item: str, title: str, evidence: list[str]) -> str | None:
        calls.append(item)
        return "the order of steps is sound" if item == "MR-4" else None

    review = review_runs(tree, checks=checks, forks=forks, graphs=graphs, stability=stability, judge=judge,
                         subject="s", version="v1", generated_at="2026-01-01T00:00:00Z")
    items = {i.id: i for i in review.items}
    assert list(items) == [f"MR-{n}" for n in range(1, 10)]
    assert all(i.advisory for i in review.items)
    assert "n-route -> TERMINAL (e-escalate): never taken" in items["MR-1"].evidence
    assert items["MR-1"].finding.startswith("1 dead or rare fork")
    assert any("n-route / s-status" in e for e in items["MR-6"].evidence)
    assert any("not stable" in e for e in items["MR-6"].evidence)
    assert items["MR-4"].finding == "the order of steps is sound"
    assert calls == [f"MR-{n}" for n in range(1, 10)]
    out = tmp_path / "run.methodology-review.json"
    atomic_write_text(out, canonical_dumps(review.to_json_obj()))
    assert read_model(out, MethodologyReview) == review


def test_review_without_judge_says_what_was_not_reviewed() -> None:
    review = review_runs(subject="s", version="v1", generated_at="now")
    assert {i.finding for i in review.items} == {"no evidence computed and no judge given: not reviewed"}
