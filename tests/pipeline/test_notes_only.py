"""Error analysis from notes alone: open coding comes before a taxonomy, and the notebook says what it cannot show yet."""

import json
import shutil
from pathlib import Path

import pytest

from evalkit.contracts.summary import NotebookSummary
from evalkit.pipeline import run_subject

from .conftest import RUN_AT

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"


@pytest.mark.slow
def test_a_first_pass_with_pass_fail_and_notes_but_no_modes_runs_and_lists_the_notes(tmp_path):
    shutil.copy(SAMPLE / "traces.jsonl", tmp_path / "traces.jsonl")
    labels = [json.loads(line) for line in (SAMPLE / "annotations.jsonl").read_text().splitlines()][:40]
    (tmp_path / "annotations.jsonl").write_text("".join(json.dumps({**a, "modes": []}) + "\n" for a in labels))
    (tmp_path / "subject.yaml").write_text("name: notes-only\ntraces: traces.jsonl\nannotations: annotations.jsonl\n"
                                           "notebooks: [01_error_analysis]\n")
    manifest = run_subject(tmp_path / "subject.yaml", tmp_path / "run", at=RUN_AT)
    assert [n.status for n in manifest.notebooks] == ["ok"], manifest.notebooks
    summary = NotebookSummary.model_validate_json((tmp_path / "run" / "01_error_analysis" / "summary.json").read_text())
    failed = sum(1 for a in labels if a["label"] == "fail")
    assert any(f.startswith(f"{failed} of 40 reviewed traces failed, and no label names a failure mode yet")
               for f in summary.findings)
    notes = next(t for t in summary.tables if t.title == "Failing traces and their notes")
    assert notes.columns[:3] == ["trace", "modes", "note"] and len(notes.rows) == failed
    assert not summary.charts or all(c.title != "Saturation curve" for c in summary.charts)
    assert summary.conclusion.startswith(f"{failed} of 40 reviewed traces failed. Read their notes")
