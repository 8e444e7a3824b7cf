"""Calibration that expires: a validation holds only for its judge prompt, model, temperature and label set."""

from __future__ import annotations

import json

import pytest

from evalkit.calibration import (
    Confusion,
    JudgeIdentity,
    check_calibration,
    judge_of_run,
    judge_shortfalls,
    label_set_digest,
    make_binding,
    validate_judge,
)
from evalkit.contracts.labels import HumanLabel, ValidationResult
from evalkit.errors import InputError
from tests.calibration.test_judge_validation import CRIT, _data

JUDGE = JudgeIdentity(prompt_digest="sha256:abc", judge_model="judge-1", temperature=0.0)


def _validated(tmp_path, labels, verdicts, policy="v1"):
    binding = make_binding(prompt_digest=JUDGE.prompt_digest, judge_model=JUDGE.judge_model,
                           temperature=JUDGE.temperature, label_set_digest=label_set_digest(labels),
                           policy_version=policy)
    return validate_judge(labels, verdicts, criterion_id=CRIT, judge_model="judge-1", prompt_digest="sha256:abc",
                          ledger=tmp_path / "ledger.jsonl", measured_at="2026-01-02T03:04:05Z", binding=binding)


def test_the_same_judge_and_labels_are_calibrated_and_corrected(tmp_path):
    labels, verdicts = _data(40, 30, 2, 1)
    result = _validated(tmp_path, labels, verdicts)
    # The binding survives a round trip through the file a validation is saved in.
    saved = ValidationResult.model_validate_json(result.model_dump_json(by_alias=True))
    assert saved.binding.digest.startswith("sha256:") and saved.binding.policy_version == "v1"
    check = check_calibration(saved, judge=JUDGE, label_set_digest=label_set_digest(labels), policy_version="v1")
    assert check.status == "calibrated" and check.changed == ()
    assert check.corrected_rate == result.corrected_rate and check.ci == result.ci


@pytest.mark.parametrize(("judge", "policy", "relabel", "changed"), [
    (JudgeIdentity("sha256:other", "judge-1", 0.0), "v1", False, ("promptDigest",)),
    (JudgeIdentity("sha256:abc", "judge-2", 0.0), "v1", False, ("judgeModel",)),
    (JudgeIdentity("sha256:abc", "judge-1", 0.7), "v1", False, ("temperature",)),
    (JUDGE, "v2", False, ("policyVersion",)),
    (JUDGE, "v1", True, ("labelSetDigest",)),
    (JudgeIdentity("sha256:abc", "judge-1", None), "v2", False, ("temperature", "policyVersion")),
])
def test_any_change_in_the_digest_reports_the_verdicts_uncalibrated(tmp_path, judge, policy, relabel, changed):
    labels, verdicts = _data(40, 30, 2, 1)
    result = _validated(tmp_path, labels, verdicts)
    now = list(labels)
    if relabel:
        now[0] = now[0].model_copy(update={"label": "fail"})
    check = check_calibration(result, judge=judge, label_set_digest=label_set_digest(now), policy_version=policy)
    assert check.status == "uncalibrated" and check.changed == changed
    assert check.corrected_rate is None and check.ci is None
    assert "calibration expired" in check.reason and changed[0] in check.reason


def test_a_result_without_binding_is_uncalibrated(tmp_path):
    labels, verdicts = _data(40, 30, 2, 1)
    result = _validated(tmp_path, labels, verdicts).model_copy(update={"binding": None})
    check = check_calibration(result, judge=JUDGE, label_set_digest=label_set_digest(labels), policy_version="v1")
    assert check.status == "uncalibrated" and check.changed == ("binding",)


def test_label_set_digest_ignores_order_and_notes_but_not_labels_or_splits():
    a = [HumanLabel(trace_id="t1", label="pass", split="test"), HumanLabel(trace_id="t2", label="fail", split="dev")]
    assert label_set_digest(a) == label_set_digest(a[::-1])
    assert label_set_digest(a) == label_set_digest([a[0].model_copy(update={"notes": "reworded"}), a[1]])
    assert label_set_digest(a) != label_set_digest([a[0].model_copy(update={"split": "dev"}), a[1]])
    assert label_set_digest(a) != label_set_digest(a[:1])


def _sidecar(tmp_path, judges):
    rows = [{"criterionId": CRIT, "traceId": f"t{i}", "repeat": 0, "provider": "fake", "model": m,
             "temperature": t, "promptDigest": f"sha256:rendered-{i}", "judgeDigest": d, "result": "pass", "inputTokens": None, "outputTokens": None,
             "attempts": 1, "cached": False, "costUsd": None, "structuredOutput": None}
            for i, (d, m, t) in enumerate(judges)]
    path = tmp_path / "verdicts.runs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_the_judge_of_a_verdict_file_comes_from_its_sidecar(tmp_path):
    path = _sidecar(tmp_path, [("sha256:abc", "judge-1", 0.0)] * 3)
    assert judge_of_run(path, criterion_id=CRIT) == JUDGE
    with pytest.raises(InputError, match="no judge run record for criterion 'other'"):
        judge_of_run(path, criterion_id="other")
    mixed = _sidecar(tmp_path, [("sha256:abc", "judge-1", 0.0), ("sha256:abc", "judge-1", 1.0)])
    with pytest.raises(InputError, match="judged by 2 judges"):
        judge_of_run(mixed, criterion_id=CRIT)


def test_records_from_before_the_judge_digest_name_no_judge(tmp_path):
    """The per-trace prompt digest differs on every trace; it cannot stand for the judge."""
    path = _sidecar(tmp_path, [("sha256:abc", "judge-1", 0.0)] * 3)
    path.write_text("".join(json.dumps({k: v for k, v in json.loads(line).items() if k != "judgeDigest"}) + "\n"
                            for line in path.read_text().splitlines()))
    assert judge_of_run(path, criterion_id=CRIT) is None


def test_lower_bound_gate_needs_the_interval_above_the_threshold(tmp_path):
    conf = Confusion(tp=57, fn=3, fp=3, tn=57)  # TPR = TNR = 0.95 on 60 each; Wilson lower ~0.86
    assert judge_shortfalls(conf) == []
    short = judge_shortfalls(conf, "lower-bound")
    assert len(short) == 2 and short[0].startswith("TPR lower bound 0.86")
    strong = Confusion(tp=400, fn=2, fp=1, tn=300)
    assert judge_shortfalls(strong, "lower-bound") == []
    labels, verdicts = _data(40, 30, 2, 1)
    result = validate_judge(labels, verdicts, criterion_id=CRIT, judge_model="judge-1", prompt_digest="sha256:abc",
                            ledger=tmp_path / "l.jsonl", measured_at="2026-01-02T03:04:05Z", gate="lower-bound")
    assert result.status == "unvalidated" and "TPR lower bound" in result.note
    with pytest.raises(InputError, match="gate"):
        validate_judge(labels, verdicts, criterion_id=CRIT, judge_model="judge-1", prompt_digest="sha256:abd",
                       ledger=tmp_path / "l.jsonl", measured_at="2026-01-02T03:04:05Z", gate="median")


def test_a_binding_for_another_prompt_or_model_is_refused_at_validation(tmp_path):
    labels, verdicts = _data(40, 30, 2, 1)
    for prompt, model, field in (("sha256:zzz", "judge-1", "promptDigest"), ("sha256:abc", "judge-9", "judgeModel")):
        binding = make_binding(prompt_digest=prompt, judge_model=model, temperature=0.0,
                               label_set_digest=label_set_digest(labels), policy_version="v1")
        with pytest.raises(InputError, match=f"binding.{field}"):
            validate_judge(labels, verdicts, criterion_id=CRIT, judge_model="judge-1", prompt_digest="sha256:abc",
                           ledger=tmp_path / f"{field}.jsonl", measured_at="2026-01-02T03:04:05Z", binding=binding)
        assert not (tmp_path / f"{field}.jsonl").exists()  # refused before anything was recorded
