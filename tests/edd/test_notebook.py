
"""Notebook 05_edd reads a loop folder through the pipeline: rates with intervals per swing, requests, the stop."""

from __future__ import annotations

import json
import sys

import pytest
import yaml

from evalkit.edd import run_loop, run_remedy
from evalkit.pipeline import run_subject
from tests.edd.conftest import FileAgent, write_agent

pytestmark = pytest.mark.slow


def test_the_edd_notebook_summarises_a_loop_folder(tmp_path):
    agent = write_agent(tmp_path, failing=8, flipping=3)
    argv = [sys.executable, str(tmp_path / "remedy.py"), "{request}", "{response}", str(agent), "fix"]
    run_loop("shop-bot", tmp_path / "loop", FileAgent(agent),
             lambda req, rf, sf: run_remedy(argv, req, rf, sf, cwd=tmp_path, timeout_s=30), clock=lambda: 0)
    (tmp_path / "traces.jsonl").write_text("")
    subject = tmp_path / "subject.yaml"
    subject.write_text(yaml.safe_dump({"name": "shop-bot", "traces": "traces.jsonl", "notebooks": ["05_edd"],
                                       "parameters": {"05_edd": {"edd_run_path": "loop"}}}))
    run = run_subject(subject, tmp_path / "run")
    summary = json.loads(next((tmp_path / "run").rglob("summary.json")).read_text())
    metrics = {m["name"]: m for m in summary["metrics"]}
    assert metrics["swings"]["value"] == 4 and metrics["stop reason"]["value"] == "full-green"
    assert metrics["pass rate answer-correct"]["note"] == "20/20, 95% 0.84-1.00, swing 4"
    assert summary["conclusion"].startswith("The loop reached full green after swing 4")
    assert [c["title"] for c in summary["charts"]] == ["Pass rate per criterion by swing (95% Wilson interval)",
                                                        "Flipping pairs per variance swing"]
    rows = summary["tables"][0]["rows"]
    assert len(rows) == 4 and rows[0][-2].startswith("amended") and rows[-1][-1] == "full-green"
    assert run is not None
