
"""The sample's judge: `evalkit judge run --provider replay` on the bundled sample writes its verdicts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.cli.main import main

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"


@pytest.mark.slow
def test_replaying_the_cassette_writes_the_committed_verdicts_and_run_records(tmp_path, capsys):
    out = tmp_path / "criterion-verdicts.jsonl"
    code = main(["judge", "run", "--spec", str(SAMPLE / "judge-specs.yaml"), "--traces", str(SAMPLE / "traces.jsonl"),
                 "--labels", str(SAMPLE / "human-labels.jsonl"), "--out", str(out), "--provider", "replay",
                 "--cassette", str(SAMPLE / "judge-cassette.jsonl"), "--no-progress"])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "600 items: 600 verdicts, 600 calls" in printed and "0 errors" in printed
    assert out.read_bytes() == (SAMPLE / "criterion-verdicts.jsonl").read_bytes()
    runs = out.with_name("criterion-verdicts.runs.jsonl")
    assert runs.read_bytes() == (SAMPLE / "criterion-verdicts.runs.jsonl").read_bytes()
    first = json.loads(runs.read_text().splitlines()[0])
    assert first["provider"] == "replay" and first["model"] == "sim-judge-2026-01" and first["inputTokens"] > 0


def test_the_sample_specs_hide_the_injected_failures_from_the_judge(capsys):
    assert main(["judge", "prompt", "--spec", str(SAMPLE / "judge-specs.yaml"), "--trace", "tr-0002",
                 "--traces", str(SAMPLE / "traces.jsonl"), "--criterion", "escalation-correct"]) == 0
    prompt = capsys.readouterr().out
    assert "escalate_to_human" in prompt
    assert "injected_failures" not in prompt and "needs_escalation" not in prompt


def test_calibrate_reads_the_runner_verdicts_of_the_sample(capsys):
    assert main(["calibrate", "--labels", str(SAMPLE / "human-labels.jsonl"),
                 "--verdicts", str(SAMPLE / "criterion-verdicts.jsonl"), "--criterion", "grounded-policy",
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["confusion"]["tp"] > 0 and report["confusion"]["tn"] > 0
