
"""The loop on a copy of the sample subject, end to end through ``evalkit edd``: it converges, or it stops."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from evalkit.cli.main import main
from evalkit.sample_subject.edd_demo import prepare

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"
CASES = ["case-f4bb6bbe", "case-b6c95afa", "case-3b1228f5"]
"""A refund over the limit and a premium complaint (both must escalate; both state a policy), a small refund."""


def _copy(tmp_path: Path, factor: float, without_spec: tuple[str, ...] = ()) -> tuple[Path, list[str]]:
    """A loop-ready copy with every failure mode at 50% (no tool errors), 2 repeats a variance swing."""
    subject = prepare(SAMPLE, tmp_path / "sample", factor=factor, without_spec=without_spec)
    spec = {"seed": 7, "kb_search_error_rate": 0.0, "order_lookup_timeout_rate": 0.0,
            "failure_rates": {"dropped_tool_result": 0.5, "wrong_tool_args": 0.5, "hallucinated_policy": 0.5,
                              "missed_escalation": 0.5}}
    (subject.parent / "agent-spec.yaml").write_text(yaml.safe_dump(spec))
    data = yaml.safe_load(subject.read_text())
    data["edd"]["variance_repeats"] = 2
    subject.write_text(yaml.safe_dump(data, sort_keys=False))
    return subject, CASES


@pytest.mark.slow
def test_the_sample_converges_when_the_remedy_turns_the_named_failure_modes_off(tmp_path, capsys):
    subject, cases = _copy(tmp_path, factor=0)
    out = tmp_path / "edd"
    assert main(["edd", "run", str(subject), "--out", str(out), "--case", *cases]) == 0
    printed = capsys.readouterr().out
    assert "done: full-green after swing 3" in printed     # a missed escalation shows up first in swing 2
    spec = yaml.safe_load((subject.parent / "agent-spec.yaml").read_text())
    assert spec["failure_rates"]["dropped_tool_result"] == 0 and spec["failure_rates"]["wrong_tool_args"] == 0
    assert yaml.safe_load((SAMPLE / "agent-spec.yaml").read_text())["failure_rates"]["wrong_tool_args"] > 0
    response = json.loads((out / "swing-001" / "response.json").read_text())
    assert response["status"] == "amended" and "wrong_tool_args 0.5 -> 0" in response["note"]
    assert main(["edd", "history", str(out)]) == 0
    history = capsys.readouterr().out
    assert "order-id-matches" in history and "6/6    1.000" in history and "reply amended" in history
    for criterion in ("grounded-policy", "escalation-correct"):   # judged on every case and repeat, then fixed
        rows = [line for line in history.splitlines() if line.split()[1:2] == [criterion] and line.startswith("    ")
                and line.split()[0] in ("HIGH", "CRIT")]
        assert len(rows) == 3 and "6/6    1.000" in rows[-1] and any("6/6 " not in row for row in rows), rows
    assert "skipped" not in history and "not decided" not in history


@pytest.mark.slow
def test_a_judged_criterion_left_without_a_spec_stops_incomplete_evidence_never_green(tmp_path, capsys):
    subject, cases = _copy(tmp_path, factor=0, without_spec=("escalation-correct",))
    out = tmp_path / "edd"
    assert main(["edd", "run", str(subject), "--out", str(out), "--case", *cases]) == 4
    printed = capsys.readouterr().out
    assert "stopped: incomplete-evidence after swing 2" in printed and "full-green" not in printed
    assert "CRIT escalation-correct 6 skipped of 6 outcomes" in printed
    card = json.loads((out / "swing-002" / "eval" / "scorecard.json").read_text())
    assert card["verdict"] == "incomplete"                   # everything decided passed; the CRIT one was never judged


@pytest.mark.slow
def test_a_remedy_that_never_helps_stops_on_the_no_improvement_streak(tmp_path, capsys):
    subject, cases = _copy(tmp_path, factor=1)
    out = tmp_path / "edd"
    assert main(["edd", "run", str(subject), "--out", str(out), "--case", *cases[:2]]) == 4
    assert "stopped: no-improvement-streak after swing 3" in capsys.readouterr().out
    assert main(["edd", "status", str(out)]) == 0
    assert "streak=2" in capsys.readouterr().out


def test_a_subject_without_a_remedy_command_and_a_folder_without_a_ledger_are_located_errors(tmp_path, capsys):
    assert main(["edd", "run", str(SAMPLE / "subject.yaml"), "--out", str(tmp_path / "x")]) == 1
    assert "subject.yaml: edd: the subject names no remedy command" in capsys.readouterr().err
    assert main(["edd", "status", str(tmp_path)]) == 1
    assert "no edd-ledger.jsonl" in capsys.readouterr().err
