"""Each analysis notebook on a freshly generated sample subject: it must recover the stated ground truth."""

import json
import subprocess
import sys

import pytest

from evalkit.contracts.summary import NotebookSummary
from evalkit.pipeline import run_subject

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    out = tmp_path_factory.mktemp("sample")
    subprocess.run([sys.executable, "-m", "evalkit.sample_subject", "--out", str(out)], check=True, capture_output=True)
    return out


def _run(sample, tmp_path, name) -> NotebookSummary:
    manifest = run_subject(sample / "subject.yaml", tmp_path / "run", only=[name], at="2026-12-01T00:00:00Z")
    assert [n.status for n in manifest.notebooks] == ["ok"], manifest.notebooks
    return NotebookSummary.model_validate_json((tmp_path / "run" / name / "summary.json").read_text())


def _table(summary: NotebookSummary, title: str) -> list[dict]:
    (table,) = [t for t in summary.tables if t.title == title]
    return [dict(zip(table.columns, row, strict=True)) for row in table.rows]


def test_judge_calibration_recovers_the_true_pass_rate(sample, tmp_path):
    summary = _run(sample, tmp_path, "02_judge_calibration")
    truth = json.loads((sample / "ground-truth.json").read_text())["criteria"]
    rows = {r["criterion"]: r for r in _table(summary, "Corrected pass rates")}
    assert set(rows) == set(truth)
    for criterion, row in rows.items():
        true_rate = truth[criterion]["truePassRate"]["unlabelledTraces"]
        assert row["valid"] is True
        assert row["lo"] <= true_rate <= row["hi"], (criterion, row, true_rate)
        assert row["observed"] == pytest.approx(truth[criterion]["judge"]["observedPassRate"], abs=0.08)
    history = _table(summary, "Dev TPR/TNR per prompt iteration")
    assert [r["prompt"] for r in history if r["criterion"] == "grounded-policy" and r["rate"] == "TPR"] == [
        "criterion-verdicts.prompt-v1.jsonl", "criterion-verdicts.prompt-v2.jsonl", "current"]
    splits = _table(summary, "Labels per split")
    assert {r["split"] for r in splits} == {"train", "dev", "test"}
    assert any(c.title.startswith("Confusion matrices") for c in summary.charts)


def test_error_analysis_rates_land_near_the_injected_rates(sample, tmp_path):
    summary = _run(sample, tmp_path, "01_error_analysis")
    truth = json.loads((sample / "ground-truth.json").read_text())
    rows = {r["mode"]: r for r in _table(summary, "Failure-mode rates")}
    assert set(rows) == {m.replace("_", "-") for m in truth["failureModes"]}
    for mode, facts in truth["failureModes"].items():
        row = rows[mode.replace("_", "-")]
        # the reviewed sample's rate, with its interval, covers the rate injected over all traces
        assert row["lo"] <= facts["realisedRateAllTraces"] <= row["hi"], (mode, row, facts)
    metrics = {m.name: m.value for m in summary.metrics}
    assert metrics["reviewed"] == truth["annotations"]["reviewers"]["ana"]["reviewedTraces"]
    assert metrics["saturated"] == "yes"
    titles = {c.title for c in summary.charts}
    assert {"Failure rate per mode", "Saturation curve", "Co-occurring failure modes"} <= titles
