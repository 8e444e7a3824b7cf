"""From chat records shaped like tau-bench's results (a conversation per task, a reward) to a report whose
failed criterion's row opens a failing trace on that criterion's verdict, its cited tool error marked: the
path a user takes with code checks' verdicts, end to end in headless Chromium, offline."""

from __future__ import annotations

import json

import pytest
import yaml

from evalkit.cli import main

pytestmark = pytest.mark.slow

POLICY = "# Airline Agent Policy\nYou can book, modify or cancel reservations."


def _call(n: int, name: str, args: dict) -> dict:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": f"call_{n}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]}


def _record(task: int, reward: float, result: str) -> dict:
    """A conversation: the user asks, the agent looks the reservation up, then books (``result`` comes back)."""
    return {"task_id": task, "trial": 0, "reward": reward, "info": {}, "traj": [
        {"role": "system", "content": POLICY},
        {"role": "user", "content": f"Please move reservation R{task} to May 20."},
        _call(1, "get_reservation_details", {"reservation_id": f"R{task}"}),
        {"role": "tool", "tool_call_id": "call_1", "name": "get_reservation_details",
         "content": json.dumps({"reservation_id": f"R{task}", "cabin": "economy"})},
        _call(2, "update_reservation_flights", {"reservation_id": f"R{task}", "date": "2024-05-20"}),
        {"role": "tool", "tool_call_id": "call_2", "name": "update_reservation_flights", "content": result},
        {"role": "assistant", "content": "Done." if reward else "I could not change it."},
        {"role": "user", "content": "###STOP###"}]}


def _criterion(cid: str, severity: str, primitive: str, params: dict) -> dict:
    return {"criterionId": cid, "checkMethod": "deterministic-script", "check": {"primitive": primitive, "params": params},
            "dimension": "operation-correctness", "evidenceSource": "tool results and the task's reward",
            "existingCoverage": "none", "passCondition": cid, "severity": severity, "statement": cid}


MATRIX = {"subject": "airline", "version": "v1", "generatedAt": "2026-01-01T00:00:00.000Z", "designPrinciples": ["x"],
          "components": [{"componentId": "C1", "componentName": "airline-agent", "componentType": "agent", "criteria": [
              _criterion("tool-calls-succeed", "MED", "tool-output-failure", {}),
              _criterion("task-rewarded", "CRIT", "string-equality",
                         {"actual": {"obs": "$trace", "path": "metadata.reward"}, "value": "1.0"})]}]}


def test_a_failed_criterions_row_opens_its_trace_on_the_verdict_with_the_error_marked(tmp_path, capsys, offline_page):
    records = [_record(0, 1.0, json.dumps({"status": "changed"})),
               _record(1, 0.0, "Error: not enough seats on flight HAT229"),
               _record(2, 1.0, json.dumps({"status": "changed"}))]
    (tmp_path / "results.json").write_text(json.dumps(records, indent=2), encoding="utf-8")
    (tmp_path / "matrix.yaml").write_text(yaml.safe_dump(MATRIX), encoding="utf-8")
    traces, verdicts = str(tmp_path / "traces.jsonl"), str(tmp_path / "verdicts.jsonl")
    assert main(["traces", "import", str(tmp_path / "results.json"), "--out", traces, "--messages-key", "traj",
                 "--id-key", "task_id,trial", "--keep", "reward,task_id,trial"]) == 0
    assert main(["scorecard", str(tmp_path / "matrix.yaml"), traces, "--verdicts-out", verdicts]) == 0
    (tmp_path / "subject.yaml").write_text(yaml.safe_dump({
        "name": "airline", "traces": "traces.jsonl", "verdicts": "verdicts.jsonl", "eval_matrix": "matrix.yaml",
        "notebooks": ["04_scorecard"]}), encoding="utf-8")
    assert main(["run", str(tmp_path / "subject.yaml"), "--out", str(tmp_path / "run"), "--no-history"]) == 0
    capsys.readouterr()

    page = offline_page
    page.goto((tmp_path / "run" / "index.html").as_uri())
    page.wait_for_selector("html[data-traces-ready]", timeout=20_000)
    row = page.locator("tr.tv-row:has(a.tv-link:text-is('tool-calls-succeed'))")
    assert "MED" in row.inner_text()
    row.locator("td").last.click()
    page.wait_for_function("document.querySelectorAll('#tv-results li').length === 1")
    assert page.eval_on_selector_all("#tv-results li", "ls => ls.map(l => l.dataset.trace)") == ["1/0"]
    page.click("#tv-results li >> nth=0")
    focus = page.wait_for_selector("#tv-viewer .tv-verdict.focus.fail[data-criterion='tool-calls-succeed']")
    assert "update_reservation_flights" in focus.inner_text()
    marked = page.eval_on_selector_all("#tv-viewer .convo .bubble.cited mark.tv-ref", "ms => ms.map(m => m.textContent)")
    assert marked == ["Error"]
    assert "not enough seats" in page.inner_text("#tv-viewer .convo .bubble.cited")
    assert page.console_errors == [] and page.page_errors == [] and page.blocked == []
