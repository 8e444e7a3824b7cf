"""A small subject whose traces, verdicts and review labels carry HTML and script, and a run folder naming them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from evalkit.io import canonical_line

XSS = "<script>window.__xss=1</script><img src=x onerror=\"window.__xss=2\"></textarea>\"'&"


def trace(i: int) -> dict:
    """A chat trace: a model call that calls a tool, the tool, the answer."""
    question = f"Where is order ORD-{i:04d}? {XSS}"
    return {"id": f"t{i}", "name": "agent", "input": question, "output": {"answer": f"Order ORD-{i:04d} ships Monday."},
            "metadata": {"channel": "chat"},
            "observations": [
                {"id": f"t{i}-g1", "type": "GENERATION", "name": "plan", "model": "m-1",
                 "startTime": "2026-01-01T00:00:00Z", "endTime": "2026-01-01T00:00:00.400Z",
                 "usage": {"input": 100, "output": 20, "total": 120},
                 "input": [{"role": "user", "content": question}],
                 "output": {"role": "assistant", "content": "Looking it up.",
                            "tool_calls": [{"id": "c1", "type": "function", "function": {
                                "name": "order_lookup", "arguments": json.dumps({"order_id": f"ORD-{i:04d}"})}}]}},
                {"id": f"t{i}-x1", "type": "TOOL", "name": "order_lookup", "input": {"order_id": f"ORD-{i:04d}"},
                 "output": {"status": f"shipped Monday {XSS}"},
                 "startTime": "2026-01-01T00:00:00.400Z", "endTime": "2026-01-01T00:00:00.700Z"},
                {"id": f"t{i}-g2", "type": "GENERATION", "name": "answer", "model": "m-1",
                 "input": [{"role": "user", "content": question},
                           {"role": "assistant", "content": "Looking it up.", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "order_lookup", "arguments": json.dumps({"order_id": f"ORD-{i:04d}"})}}]},
                           {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"status": f"shipped Monday {XSS}"})}],
                 "output": {"role": "assistant", "content": f"Order ORD-{i:04d} ships Monday."}}]}


@pytest.fixture
def viewer_subject(tmp_path) -> Path:
    """12 traces; criterion grounded fails on the odd ones (refs cite the tool's status); reviews of the first 6."""
    folder = tmp_path / "subject"
    folder.mkdir()
    (folder / "traces.jsonl").write_text("".join(canonical_line(trace(i)) for i in range(12)), encoding="utf-8")
    verdicts = []
    for i in range(12):
        fail = i % 2 == 1
        verdicts.append({"criterionId": "grounded", "traceId": f"t{i}", "result": "fail" if fail else "pass",
                         "confidence": 0.9, "critique": f"{'Ignores' if fail else 'Uses'} the lookup {XSS}",
                         "refs": [{"obs": f"t{i}-x1", "path": "output.status", "value": f"shipped Monday {XSS}"}]})
    (folder / "verdicts.jsonl").write_text("".join(canonical_line(v) for v in verdicts), encoding="utf-8")
    (folder / "taxonomy.yaml").write_text(yaml.safe_dump({"subject": "viewer", "version": 1, "modes": [
        {"id": "wrong-order", "name": f"Wrong order {XSS}", "definition": "looked up another order"}]}), encoding="utf-8")
    notes = []
    for i in range(6):
        notes.append({"traceId": f"t{i}", "annotator": "ana", "at": "2026-01-01T00:00:00Z",
                      "label": "fail" if i in (1, 3) else "pass", "modes": ["wrong-order"] if i in (1, 3) else [],
                      "note": f"note {i} {XSS}"})
    (folder / "annotations.jsonl").write_text("".join(canonical_line(n) for n in notes), encoding="utf-8")
    (folder / "subject.yaml").write_text(yaml.safe_dump({
        "name": "viewer", "traces": "traces.jsonl", "verdicts": "verdicts.jsonl", "annotations": "annotations.jsonl",
        "taxonomy": "taxonomy.yaml", "notebooks": ["00_overview"]}), encoding="utf-8")
    return folder / "subject.yaml"
