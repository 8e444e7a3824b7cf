
"""What notebook 04 shows, from an eval-run folder: tables, repeats, the tree drawn, and the notebook itself."""

from __future__ import annotations

import json

import pytest
import yaml

from evalkit.checks.eval_run import eval_subject
from evalkit.checks.scorecard_report import (
    component_frame,
    criterion_frame,
    decision_frame,
    fork_frame,
    rate_rows,
    regression_frame,
    review_frame,
    scorecard_story,
    variance_frame,
)
from evalkit.checks.tree_drawing import draw_tree
from evalkit.cli.main import main

TREE = {
    "subject": "shop-bot", "version": "v1", "generatedAt": "2026-01-01T00:00:00Z", "root": "n-lookup",
    "nodes": [{
        "nodeId": "n-lookup", "label": "Look the order up", "decisionType": "tool-choice",
        "observe": {"obs": "order_lookup", "path": "input.order_id"},
        "scenarios": [{"scenarioId": "s-typo", "when": "The customer mentions a typo.",
                       "expectedDecision": "Look up the order the customer named.", "expectedFork": "TERMINAL",
                       "observedWhen": [{"obs": "$trace", "path": "input", "value": "typo"}],
                       "expectedObserved": ["ORD-2026-333333"]}],
        "edges": [{"edgeId": "e-shipped", "to": "TERMINAL", "condition": "shipped",
                   "takenWhen": [{"obs": "order_lookup", "path": "output.status", "value": "shipped"}]},
                  {"edgeId": "e-lost", "to": "TERMINAL", "condition": "lost",
                   "takenWhen": [{"obs": "order_lookup", "path": "output.status", "value": "lost"}]}]}],
}


def _with_tree(subject):
    (subject.parent / "tree.json").write_text(json.dumps(TREE))
    data = yaml.safe_load(subject.read_text())
    data["behavior_tree"] = "tree.json"
    subject.write_text(yaml.safe_dump(data))
    return subject


@pytest.mark.slow
def test_story_of_an_eval_run_with_repeats(shop, tmp_path):
    subject = _with_tree(shop)
    eval_subject(subject, tmp_path / "eval", repeats=2, concurrency=3)
    story = scorecard_story(subject, tmp_path / "eval")
    assert story.source == "eval run" and story.scorecard.trace_count == 6
    comps = component_frame(story.scorecard)
    assert dict(zip(comps["component"], comps["verdict"], strict=True)) == {"C1 order_lookup": "fail", "C2 respond": "incomplete"}
    crit = criterion_frame(story.scorecard).row(0, named=True)
    assert (crit["criterion"], crit["pass"], crit["fail"], crit["pass rate"]) == ("order-id-matches", 4, 2, 4 / 6)
    assert [r["kind"] for r in rate_rows(story.scorecard)] == ["observed (Wilson)"]     # polite was skipped
    spread = variance_frame(story.stability)
    assert spread.height == 3 and spread["repeats"].to_list() == [2, 2, 2] and not spread["flipped"].any()
    assert story.stability.stable
    decisions = {r["scenario"]: r for r in decision_frame(story.decisions).iter_rows(named=True)}
    assert decisions["s-typo"]["mismatch"] == 2 and decisions["(none)"]["no-scenario"] == 4  # both typo repeats
    forks = dict(zip(fork_frame(story.forks)["fork"], fork_frame(story.forks)["dead or rare"], strict=True))
    assert forks == {"e-shipped": "", "e-lost": "dead"}
    review = dict(zip(review_frame(story.review)["item"], review_frame(story.review)["evidence"], strict=True))
    assert "e-lost" in review["MR-1"] and "s-typo" in review["MR-6"]            # dead fork; decision mismatch

    first = draw_tree(story.tree, story.decisions, story.forks, tmp_path / "a.svg").read_bytes()
    again = draw_tree(story.tree, story.decisions, story.forks, tmp_path / "b.svg").read_bytes()
    assert first == again and b"Look the order up" in first and b"0/6" in first     # the dead fork, counted


def test_without_a_run_the_subjects_own_traces_are_scored(shop, tmp_path):
    eval_subject(shop, tmp_path / "eval")
    data = yaml.safe_load(shop.read_text())
    data["traces"] = str(tmp_path / "eval" / "traces.jsonl")
    shop.write_text(yaml.safe_dump(data))
    story = scorecard_story(shop)
    assert story.source == "subject traces" and story.scorecard.trace_count == 3
    assert story.scorecard.verdict == "fail" and story.tree is None


@pytest.mark.slow
def test_the_notebook_reads_the_eval_run_named_in_the_subject(shop, tmp_path):
    subject = _with_tree(shop)
    suite = json.loads((shop.parent / "dataset.json").read_text())
    suite["cases"].append({"id": "case-0000beef", "query": "Did ORD-2026-444444 ship? typo in the street name",
                           "tuple": {"outcome": "fail"}, "source": "derived", "originTraceId": "tr-old",
                           "expected": {"failureModes": ["order-id-matches"]}})   # a past failure, back again
    (shop.parent / "dataset.json").write_text(json.dumps(suite))
    assert main(["eval", "run", str(subject), "--out", str(tmp_path / "eval"), "--repeats", "2"]) == 0
    data = yaml.safe_load(subject.read_text())
    data["notebooks"] = ["04_scorecard"]
    data["parameters"] = {"04_scorecard": {"eval_run_path": "eval"}}
    subject.write_text(yaml.safe_dump(data))
    assert main(["run", str(subject), "--out", str(tmp_path / "report")]) == 0
    folder = tmp_path / "report" / "04_scorecard"
    summary = json.loads((folder / "summary.json").read_text())
    metrics = {m["name"]: m["value"] for m in summary["metrics"]}
    assert metrics["run verdict"] == "FAIL" and metrics["C1 order_lookup"] == "FAIL" and metrics["traces"] == 8
    assert metrics["repeat stability"] == "stable" and metrics["decisions differing from the tree"] == 4   # both typo cases, twice
    assert [f["path"] for f in summary["figures"]] == ["behavior-tree.svg"] and (folder / "behavior-tree.svg").is_file()
    assert any("Failing components: C1 order_lookup" in f for f in summary["findings"])
    assert metrics["Regressions fixed"] == "0 of 1"                          # the page shows the regression set
    assert any("case-0000beef (from tr-old: order-id-matches)" in f for f in summary["findings"])
    assert str(tmp_path) not in json.dumps(summary)                          # no machine paths in the summary


def test_the_regression_table_puts_cases_not_fixed_first_in_the_cards_words():
    from evalkit.contracts.scorecard import RegressionCase, RegressionSet, Scorecard

    cases = [RegressionCase(case_id="case-a", origin_trace_id="tr-1", failure_modes=["m"], criteria=["k"],
                            result="pass", traces=2),
             RegressionCase(case_id="case-b", origin_trace_id="tr-2", failure_modes=["k"], criteria=["k"],
                            result="fail", failed_criteria=["k"], traces=2),
             RegressionCase(case_id="case-c", criteria=["k"], result="incomplete", undecided_criteria=["k"],
                            traces=1),
             RegressionCase(case_id="case-d", criteria=["k"], result="not-run", traces=0)]
    card = Scorecard(subject="s", matrix_version="v1", generated_at="t", trace_count=5, verdict="fail", components=[],
                     regressions=RegressionSet(cases=cases, passed=1, failed=1, incomplete=1, not_run=1))
    frame = regression_frame(card)
    assert frame["case"].to_list() == ["case-b", "case-c", "case-d", "case-a"]
    assert frame["now"].to_list() == ["failing again", "undecided", "not run", "fixed"]
    assert frame.row(0, named=True)["failing now"] == "k" and frame.row(1, named=True)["undecided"] == "k"
    assert regression_frame(card.model_copy(update={"regressions": None})).height == 0
