"""What notebook 02 reports about a judge, decided in the package: sections' metrics and findings, and rows."""

from __future__ import annotations

import pytest
import yaml

from evalkit.judge import calibration_story
from evalkit.subjects import load_subject
from tests.calibration.test_calibrate_cli import _records, _runs, _unlabeled, _verdict, _write


@pytest.fixture
def subject(tmp_path):
    labels = [{"traceId": f"p{i}", "label": "pass"} for i in range(20)]
    labels += [{"traceId": f"f{i}", "label": "fail"} for i in range(10)]
    verdicts = [_verdict(f"p{i}", "fail" if i < 2 else "pass") for i in range(20)]
    verdicts += [_verdict(f"f{i}", "pass" if i < 1 else "fail") for i in range(10)]
    verdicts += [_verdict(f"u{i}", "pass" if i <= 6 else "fail") for i in range(10)]
    _write(tmp_path / "labels.jsonl", labels)
    _write(tmp_path / "verdicts.jsonl", verdicts)
    (tmp_path / "traces.jsonl").write_text("")
    (tmp_path / "subject.yaml").write_text(yaml.safe_dump({
        "name": "s", "traces": "traces.jsonl", "labels": "labels.jsonl", "verdicts": "verdicts.jsonl",
        "notebooks": ["02_judge_calibration"]}))
    return load_subject(tmp_path / "subject.yaml")


def test_a_judge_with_one_prompt_says_there_is_no_history_and_no_noise(subject):
    story = calibration_story(subject, method="adjusted-wald")
    assert list(story.results) == ["c1"]
    assert [m[0] for m in story.metrics["setup"]] == ["criteria"]  # no judge pinned: none named
    assert story.findings["history"][0].startswith("Only the current judge prompt was given")
    assert story.findings["noise"][0].startswith("Judge noise not measured")
    assert story.metrics["corrected"][0][0] == "c1 corrected pass rate"
    assert {r["kind"] for r in story.pass_rows()} == {"observed", "corrected"}
    assert [r["kind"] for r in story.rate_rows()] == ["TPR", "TNR"]


def test_verdicts_of_another_judge_get_no_corrected_rate_and_the_reason(subject, tmp_path):
    _runs(tmp_path / "verdicts.runs.jsonl", _records(tmp_path / "verdicts.jsonl"))
    unlabeled, records = _unlabeled(tmp_path)
    _runs(tmp_path / "unlabeled.runs.jsonl", records, judge="sha256:judge-b")
    story = calibration_story(subject, method="adjusted-wald", unlabeled_verdicts_file=unlabeled)
    assert story.coverage["c1"].withheld
    assert story.pass_rows() == [] and "corrected" not in story.metrics
    assert story.findings["corrected"][0].startswith("c1: no corrected rate: the verdicts to correct come from")
    assert story.findings["coverage"][0].startswith("c1: calibration uncalibrated:")
    assert story.rate_table()[0]["calibration"] == "uncalibrated"


def test_repeats_give_noise_rows_and_a_widened_interval(subject, tmp_path):
    _runs(tmp_path / "verdicts.runs.jsonl", _records(tmp_path / "verdicts.jsonl"))
    unlabeled, records = _unlabeled(tmp_path)
    runs = tmp_path / "unlabeled.runs.jsonl"
    _runs(runs, records)
    second = tmp_path / "second.jsonl"
    _runs(second, [dict(r, result="pass") for r in records], repeat=1)
    runs.write_text(runs.read_text() + second.read_text())
    story = calibration_story(subject, method="adjusted-wald", unlabeled_verdicts_file=unlabeled)
    (row,) = story.noise_rows()
    assert row["repeated items"] == 30 and row["unstable"] == 10 and row["widened lo"] is not None
    assert [b["kind"] for b in story.noise_bars()] == ["corrected", "widened for judge noise"]
    assert "noise" not in story.findings


def test_a_subject_without_labels_is_refused(tmp_path):
    (tmp_path / "traces.jsonl").write_text("")
    (tmp_path / "subject.yaml").write_text(yaml.safe_dump({"name": "s", "traces": "traces.jsonl",
                                                           "notebooks": ["00_overview"]}))
    with pytest.raises(Exception, match="needs `labels` and `verdicts`"):
        calibration_story(load_subject(tmp_path / "subject.yaml"), method="adjusted-wald")
