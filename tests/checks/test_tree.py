"""checks.tree: observed decisions against the behavior tree, per scenario, and fork frequencies."""

from __future__ import annotations

from evalkit.checks import (
    DecisionCheck,
    compare_tree,
    decision_summary,
)
from evalkit.contracts.behavior_tree import BehaviorNode, BehaviorTree
from evalkit.contracts.trace import Trace
from evalkit.judge.grounding import resolve_ref

from .tree_fixtures import traces_for_tree, tree_obj


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
