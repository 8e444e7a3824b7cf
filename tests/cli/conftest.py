"""A small subject the eval commands run on: a tiny agent script, three cases, a two-component matrix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from evalkit.suite import new_case

AGENT = '''
import json, re, sys
case = json.load(open(sys.argv[1], encoding="utf-8"))
query = case["query"]
order = re.search(r"ORD-\\d{4}-\\d{6}", query).group(0)
looked = "ORD-2026-000000" if "typo" in query else order   # the failure this agent injects
trace = {"id": "agent-trace", "input": query, "output": "Your order " + looked + " is on its way.",
         "observations": [
             {"id": "o1", "type": "TOOL", "name": "order_lookup", "input": {"order_id": looked},
              "output": {"status": "shipped"}},
             {"id": "o2", "type": "GENERATION", "name": "respond", "input": query,
              "output": {"answer": "Your order " + looked + " is on its way."}}]}
with open(sys.argv[2], "w", encoding="utf-8") as f:
    f.write(json.dumps(trace) + "\\n")
'''

MATRIX = {
    "subject": "shop-bot", "version": "v1", "generatedAt": "2026-01-01T00:00:00Z",
    "designPrinciples": ["One criterion checks one behaviour."],
    "components": [
        {"componentId": "C1", "componentName": "order_lookup", "componentType": "script", "criteria": [{
            "criterionId": "order-id-matches", "checkMethod": "deterministic-script", "severity": "HIGH",
            "dimension": "data-correctness", "existingCoverage": "none",
            "statement": "order_lookup gets the customer's order id.",
            "passCondition": "order_lookup.input.order_id equals the id in the trace input.",
            "evidenceSource": "criterion order-id-matches. the customer's message.",
            "check": {"primitive": "string-equality", "params": {
                "actual": {"obs": "order_lookup", "path": "input.order_id"},
                "expected": {"obs": "$trace", "path": "input", "pattern": "ORD-\\d{4}-\\d{6}"}}}}]},
        {"componentId": "C2", "componentName": "respond", "componentType": "agent", "criteria": [{
            "criterionId": "polite", "checkMethod": "llm-judge", "severity": "HIGH",
            "dimension": "operation-correctness", "existingCoverage": "none",
            "statement": "The reply is polite.", "passCondition": "No rude word in the reply.",
            "evidenceSource": "criterion polite. the reply."}]},
    ],
}

SPEC = """\
id: polite
criterion: Is the support reply polite to the customer?
pass: The reply is courteous.
fail: The reply is rude or dismissive.
judge: {provider: openai, model: gpt-4o-mini}
"""

QUERIES = [
    ("status", "Where is my order ORD-2026-111111?"),
    ("status", "Has ORD-2026-222222 shipped yet, please tell me"),
    ("typo", "My parcel ORD-2026-333333 never came, typo in my address maybe"),
]


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """A subject folder with agent, suite and matrix; returns the subject file."""
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    cases = [new_case({"intent": intent}, query, "seed").to_json_obj() for intent, query in QUERIES]
    dataset = {"subject": "shop-bot", "version": 1, "cases": cases,
               "dimensions": [{"name": "intent", "description": "what the customer wants",
                               "values": ["status", "typo", "refund"]}]}
    (tmp_path / "dataset.json").write_text(json.dumps(dataset), encoding="utf-8")
    (tmp_path / "matrix.yaml").write_text(yaml.safe_dump(MATRIX), encoding="utf-8")
    (tmp_path / "traces.jsonl").write_text("", encoding="utf-8")
    subject = {"name": "shop-bot", "traces": "traces.jsonl", "dataset": "dataset.json",
               "eval_matrix": "matrix.yaml", "notebooks": ["00_overview"],
               "agent": {"command": ["{python}", "agent.py", "{case}", "{out}"], "timeout_s": 30}}
    path = tmp_path / "subject.yaml"
    path.write_text(yaml.safe_dump(subject), encoding="utf-8")
    return path


def with_judge_spec(subject: Path) -> Path:
    """The same subject with a judge spec for ``polite``."""
    (subject.parent / "judges.yaml").write_text(SPEC, encoding="utf-8")
    data = yaml.safe_load(subject.read_text(encoding="utf-8"))
    data["judges"] = ["judges.yaml"]
    subject.write_text(yaml.safe_dump(data), encoding="utf-8")
    return subject
