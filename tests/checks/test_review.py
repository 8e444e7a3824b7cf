"""checks.review: the advisory methodology review (MR-1..9) built from the computed evidence."""

from __future__ import annotations

from pathlib import Path

from evalkit.checks import (
    compare_tree,
    repeat_stability,
    review_runs,
)
from evalkit.contract_files import read_model
from evalkit.contracts.behavior_tree import BehaviorTree
from evalkit.contracts.methodology import MethodologyReview
from evalkit.flow import build_flow_graph
from evalkit.io.atomic import atomic_write_text
from evalkit.io.canonical import canonical_dumps

from .tree_fixtures import traces_for_tree, tree_obj


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
