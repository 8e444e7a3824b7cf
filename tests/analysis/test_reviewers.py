"""Several reviewers: a file each, agreement per mode and criterion, the disagreement queue, gold labels."""

from __future__ import annotations

import json

import pytest

from evalkit.analysis import adjudicate, append_annotations, compare_reviewers, read_reviewer_file
from evalkit.calibration import read_labels
from evalkit.cli.main import main
from evalkit.contracts import HumanLabel
from evalkit.errors import InputError
from tests.analysis.analysis_builders import note

AT = "2026-03-10T09:00:00+00:00"


def _store(tmp_path, name, codes):
    """A reviewer's annotation store: ``codes`` maps trace -> modes (empty: pass)."""
    path = tmp_path / f"{name}.jsonl"
    append_annotations(path, [note(t, "fail" if modes else "pass", tuple(modes), annotator=name, minute=i)
                              for i, (t, modes) in enumerate(codes.items())])
    return path


def _labels(tmp_path, name, values, criterion="grounded", splits=None):
    path = tmp_path / f"{name}-labels.jsonl"
    path.write_text("".join(json.dumps({"traceId": t, "label": v, "annotator": name, "criterionId": criterion,
                                        "labeledAt": AT, **({"split": splits[t]} if splits else {})}) + "\n"
                            for t, v in values.items()), encoding="utf-8")
    return path


ANA = {"t1": ["policy"], "t2": [], "t3": ["policy", "tone"], "t4": [], "t5": ["tone"], "t6": []}
BEN = {"t1": ["policy"], "t2": ["policy"], "t3": ["policy"], "t4": [], "t5": ["tone"], "t6": []}


def test_two_reviewers_files_give_kappa_per_mode_and_a_disagreement_queue(tmp_path):
    files = [read_reviewer_file(_store(tmp_path, "ana", ANA)), read_reviewer_file(_store(tmp_path, "ben", BEN))]
    report = compare_reviewers(files)
    policy = next(a for a in report.agreement if a.about == "policy")
    assert (policy.statistic, policy.items) == ("cohen-kappa", 6)
    assert policy.value == pytest.approx(2 / 3) and policy.ci.lo < policy.value < policy.ci.hi
    assert [(d.trace_id, d.about, d.labels) for d in report.disagreements] == [
        ("t2", "policy", {"ana": "pass", "ben": "fail"}), ("t3", "tone", {"ana": "fail", "ben": "pass"})]


def test_three_reviewers_get_krippendorffs_alpha(tmp_path):
    values = [{"t1": "fail", "t2": "pass", "t3": "fail", "t4": "pass"},
              {"t1": "fail", "t2": "pass", "t3": "fail", "t4": "pass"},
              {"t1": "fail", "t2": "pass", "t3": "pass", "t4": "pass"}]
    files = [read_reviewer_file(_labels(tmp_path, n, v)) for n, v in zip(("ana", "ben", "cy"), values, strict=True)]
    [agreement] = compare_reviewers(files).agreement
    assert agreement.statistic == "krippendorff-alpha"
    assert agreement.value == pytest.approx(1 - (2 / 12) / (70 / 132))  # computed by hand, nominal


def test_a_file_holding_two_reviewers_or_a_record_without_a_name_is_refused(tmp_path):
    path = tmp_path / "both.jsonl"
    append_annotations(path, [note("t1", annotator="ana"), note("t2", annotator="ben")])
    with pytest.raises(InputError, match="labels by ana, ben in one file"):
        read_reviewer_file(path)
    nameless = tmp_path / "nameless.jsonl"
    nameless.write_text(json.dumps({"traceId": "t1", "label": "pass"}) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="no reviewer named"):
        read_reviewer_file(nameless)


def test_adjudication_writes_gold_labels_with_provenance_that_calibrate_reads(tmp_path, capsys):
    ana = _labels(tmp_path, "ana", {"t1": "fail", "t2": "pass", "t3": "pass", "t4": "fail", "t5": "pass", "t6": "pass"})
    ben = _labels(tmp_path, "ben", {"t1": "fail", "t2": "fail", "t3": "pass", "t4": "fail", "t5": "pass", "t6": "fail"})
    decisions = tmp_path / "decisions.jsonl"
    decisions.write_text(json.dumps({"traceId": "t2", "label": "fail", "annotator": "cy", "criterionId": "grounded",
                                     "labeledAt": "2026-03-11T08:00:00+00:00", "notes": "KB says 30 days"}) + "\n")
    gold_file = tmp_path / "gold.jsonl"
    assert main(["analysis", "adjudicate", str(ana), str(ben), "--decisions", str(decisions), "--at", AT,
                 "--out", str(gold_file)]) == 0
    captured = capsys.readouterr()
    assert "5 gold labels (4 agreed, 1 adjudicated)" in captured.out
    assert "left out: 1 disagreement nobody adjudicated (first: t6 grounded)" in captured.err
    gold = {g.trace_id: g for g in read_labels(gold_file)}
    assert gold["t2"].label == "fail" and gold["t2"].adjudication.how == "adjudicated"
    assert gold["t2"].adjudication.by == "cy" and gold["t2"].adjudication.at == "2026-03-11T08:00:00+00:00"
    assert [(r.annotator, r.label) for r in gold["t2"].adjudication.resolved] == [("ana", "pass"), ("ben", "fail")]
    assert gold["t1"].adjudication.how == "agreed" and gold["t1"].adjudication.by == "ana+ben"
    assert "t6" not in gold
    verdicts = tmp_path / "verdicts.jsonl"
    verdicts.write_text("".join(json.dumps({"criterionId": "grounded", "traceId": t, "result": r, "confidence": 0.9,
                                            "critique": "c"}) + "\n"
                                for t, r in (("t1", "fail"), ("t2", "fail"), ("t3", "pass"), ("t4", "pass"),
                                             ("t5", "pass"))))
    assert main(["calibrate", "--labels", str(gold_file), "--verdicts", str(verdicts), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["labelsRead"] == 5 and report["criterionId"] == "grounded"


def test_a_decision_on_an_item_nobody_disputed_is_refused(tmp_path):
    files = [read_reviewer_file(_labels(tmp_path, n, {"t1": "pass"})) for n in ("ana", "ben")]
    decision = HumanLabel(trace_id="t1", label="fail", annotator="cy", criterion_id="grounded")
    with pytest.raises(InputError, match="no disagreement on grounded for trace 't1'"):
        adjudicate(files, [decision], at=AT)


def test_gold_labels_keep_the_split_the_reviewers_gave_and_differing_splits_are_refused(tmp_path):
    splits = {"t1": "dev", "t2": "test"}
    files = [read_reviewer_file(_labels(tmp_path, n, {"t1": "fail", "t2": v}, splits=splits))
             for n, v in (("ana", "pass"), ("ben", "fail"))]
    decision = HumanLabel(trace_id="t2", label="fail", annotator="cy", criterion_id="grounded")
    gold = {g.trace_id: g for g in adjudicate(files, [decision], at=AT).labels}
    assert (gold["t1"].split, gold["t2"].split) == ("dev", "test")  # calibrate tunes on dev, measures on test
    other = read_reviewer_file(_labels(tmp_path, "cy", {"t1": "fail"}, splits={"t1": "test"}))
    with pytest.raises(InputError, match="trace 't1' in different splits \\(dev, test\\)"):
        adjudicate([files[0], other], [], at=AT)
