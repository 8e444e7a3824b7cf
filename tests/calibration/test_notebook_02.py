"""Notebook 02 on subjects built from imported files: no crash, and one verdict on the judge (the package's)."""

from __future__ import annotations

import pytest

from evalkit.contracts.summary import NotebookSummary
from evalkit.io.canonical import canonical_line
from evalkit.pipeline import run_subject

pytestmark = pytest.mark.slow

HUMAN = [1] * 34 + [0] * 12
JUDGE = [1] * 31 + [0] * 3 + [1] * 2 + [0] * 10


def _jsonl(path, records) -> str:
    path.write_text("".join(canonical_line(r) for r in records))
    return path.name


def _verdict(criterion, trace, result):
    return {"criterionId": criterion, "traceId": trace, "result": result, "confidence": None, "critique": None}


def _subject(tmp_path, *, human, judge, parameters: str) -> NotebookSummary:
    labels = [{"traceId": f"t{i}", "label": "pass" if h else "fail", "split": "test", "criterionId": "diet"}
              for i, h in enumerate(human)]
    verdicts = [_verdict("diet", f"t{i}", "pass" if j else "fail") for i, j in enumerate(judge)]
    _jsonl(tmp_path / "labels.jsonl", labels)
    _jsonl(tmp_path / "verdicts.jsonl", verdicts)
    _jsonl(tmp_path / "unlabeled.jsonl", [_verdict("diet", f"u{i}", "pass" if i % 4 else "fail") for i in range(40)])
    (tmp_path / "traces.jsonl").write_text("")  # the subject names traces; notebook 02 does not read them
    (tmp_path / "subject.yaml").write_text(
        "name: imported\ntraces: traces.jsonl\nlabels: labels.jsonl\nverdicts: verdicts.jsonl\n"
        f"notebooks: [02_judge_calibration]\nparameters:\n  02_judge_calibration:\n{parameters}")
    manifest = run_subject(tmp_path / "subject.yaml", tmp_path / "run", at="2026-12-01T00:00:00Z")
    assert [n.status for n in manifest.notebooks] == ["ok"], manifest.notebooks
    return NotebookSummary.model_validate_json((tmp_path / "run" / "02_judge_calibration" / "summary.json").read_text())


def test_observed_rate_from_the_subject_and_the_packages_status(tmp_path):
    summary = _subject(tmp_path, human=HUMAN, judge=JUDGE, parameters=(
        "    method: bootstrap\n    observed_pass_rate: 0.8566666666666667\n    observed_count: 2400\n"))
    metrics = {m.name: m for m in summary.metrics}
    assert metrics["diet"].value == "unvalidated"
    assert metrics["diet corrected pass rate"].value == pytest.approx(0.926, abs=0.001)
    assert "judge unvalidated (only 46 usable test labels (need at least 60); only 12 human fails on test (need at least 20 of each class: 8 more test label(s) of fail, judged pass or fail); TNR 0.833 < 0.9)" in summary.conclusion
    assert "judge validated" not in summary.conclusion and "reaches 0.9" not in summary.conclusion


def test_a_judge_at_chance_and_unlabeled_verdicts_from_a_parameter_do_not_crash(tmp_path):
    at_chance = [1] * 17 + [0] * 17 + [1] * 6 + [0] * 6  # TPR 0.5, TNR 0.5
    summary = _subject(tmp_path, human=HUMAN, judge=at_chance, parameters="    unlabeled_verdicts_file: unlabeled.jsonl\n")
    tables = {t.title: t for t in summary.tables}
    (row,) = tables["Corrected pass rates"].rows
    assert dict(zip(tables["Corrected pass rates"].columns, row, strict=True))["observed"] == 0.75
    assert tables["Labels needed for a target interval width"].rows == []
    assert any("no better than chance" in f for f in summary.findings)
    assert "No corrected pass rate: TPR + TNR = 1.000 <= 1" in summary.conclusion
