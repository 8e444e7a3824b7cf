"""The sample's scorecard fails exactly the components whose failure modes its agent spec switched on.

The sample agent runs on four of the sample's cases with the sample's own eval matrix and behavior
tree. The deterministic criteria are decided by their code checks; the judged ones by a stand-in judge
that reads the trace's recorded ground truth (what is tested is the routing and the gate, not a model).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from evalkit.checks.eval_run import eval_subject
from evalkit.judge.providers import ScriptedProvider

pytestmark = pytest.mark.slow

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"
MODES = ["dropped_tool_result", "hallucinated_policy", "missed_escalation", "wrong_tool_args"]
MODE_OF = {"grounded-policy": "hallucinated_policy", "escalation-correct": "missed_escalation",
           "kb-result-threaded": "dropped_tool_result", "order-result-threaded": "dropped_tool_result"}
SPEC = "id: {id}\ncriterion: '[{id}] Judge the support turn.'\npass: It holds.\nfail: It does not.\n"


def _subject(folder: Path, rates: dict[str, float]) -> Path:
    from evalkit.suite import read_dataset, write_dataset

    folder.mkdir()
    dataset = read_dataset(SAMPLE / "dataset.json")
    picked = []
    for intent, tier in (("refund_request", "standard"), ("billing_dispute", "standard"), ("complaint", "premium"),
                         ("policy_question", "standard")):
        picked.append(next(c for c in dataset.cases if c.tuple["intent"] == intent and c.tuple["customer_tier"] == tier))
    write_dataset(folder / "dataset.json", dataset.model_copy(update={"cases": picked}))
    for name in ("eval-matrix.yaml", "behavior-tree.json"):
        (folder / name).write_bytes((SAMPLE / name).read_bytes())
    spec = {"seed": 7, "failure_rates": rates, "order_lookup_timeout_rate": 0.0, "kb_search_error_rate": 0.0}
    (folder / "agent-spec.yaml").write_text(yaml.safe_dump(spec))
    (folder / "judges.yaml").write_text("---\n".join(SPEC.format(id=c) for c in MODE_OF))
    (folder / "traces.jsonl").write_text("")
    sample = yaml.safe_load((SAMPLE / "subject.yaml").read_text())
    subject = {"name": sample["name"], "traces": "traces.jsonl", "dataset": "dataset.json",
               "eval_matrix": "eval-matrix.yaml", "behavior_tree": "behavior-tree.json", "judges": ["judges.yaml"],
               "agent": sample["agent"], "notebooks": ["00_overview"]}
    (folder / "subject.yaml").write_text(yaml.safe_dump(subject))
    return folder / "subject.yaml"


def _oracle(messages, schema, index):
    """Fails a criterion exactly when the trace records its failure mode as injected."""
    criterion = re.search(r"\[([a-z-]+)\]", messages[0]["content"]).group(1)
    failed = MODE_OF[criterion] in messages[1]["content"]
    return json.dumps({"critique": "Read the trace.", "assumptions": [], "confidence": 0.9, "blockedBy": None,
                       "refs": [{"obs": "plan", "path": "name", "value": "plan"}],
                       "result": "fail" if failed else "pass"})


def _failing(tmp_path: Path, name: str, rates: dict[str, float]):
    run = eval_subject(_subject(tmp_path / name, rates), tmp_path / name / "eval", concurrency=4,
                       provider=ScriptedProvider(_oracle))
    assert run.run_counts["ok"] == 4
    card = run.scorecard
    failed_criteria = {k.criterion_id for c in card.components for k in c.criteria if k.counts.failed}
    return card, {c.component_id for c in card.components if c.verdict == "fail"}, failed_criteria


def test_failing_components_follow_the_failure_modes_switched_on(tmp_path):
    card, components, criteria = _failing(tmp_path, "all-on", dict.fromkeys(MODES, 1.0))
    assert card.verdict == "fail" and components == {"C1", "C3"}          # C2 has only a MED criterion
    assert criteria == {"grounded-policy", "escalation-correct", "order-id-matches", "kb-result-threaded",
                        "order-result-threaded"}

    card, components, criteria = _failing(tmp_path, "wrong-args", {**dict.fromkeys(MODES, 0.0), "wrong_tool_args": 1.0})
    assert components == {"C3"} and criteria == {"order-id-matches"}

    card, components, criteria = _failing(tmp_path, "all-off", dict.fromkeys(MODES, 0.0))
    assert card.verdict == "pass" and components == set() and criteria == set()
    assert all(c.verdict == "pass" for c in card.components)
