"""validate_judge: thresholds, the corrected rate, and the measure-once test-set ledger."""

from __future__ import annotations

import json

import pytest

from evalkit.calibration import TestLedger, TestSetAlreadyMeasured, validate_judge
from evalkit.contracts.labels import HumanLabel
from evalkit.contracts.verdict import CriterionVerdict
from evalkit.errors import InputError

CRIT = "cites-order-id"


def _verdict(trace: str, result: str) -> CriterionVerdict:
    return CriterionVerdict(criterion_id=CRIT, trace_id=trace, result=result, confidence=1.0, critique="...")


def _data(passes: int, fails: int, missed_passes: int, missed_fails: int):
    """Test labels and verdicts, plus a dev label and 100 unlabeled verdicts (70 pass)."""
    labels, verdicts = [], []
    for i in range(passes):
        labels.append(HumanLabel(trace_id=f"p{i}", label="pass", split="test"))
        verdicts.append(_verdict(f"p{i}", "fail" if i < missed_passes else "pass"))
    for i in range(fails):
        labels.append(HumanLabel(trace_id=f"f{i}", label="fail", split="test"))
        verdicts.append(_verdict(f"f{i}", "pass" if i < missed_fails else "fail"))
    labels.append(HumanLabel(trace_id="dev0", label="pass", split="dev"))
    verdicts.append(_verdict("dev0", "fail"))  # labelled (dev), so not part of the unlabeled rate
    verdicts += [_verdict(f"u{i}", "pass" if i < 70 else "fail") for i in range(100)]
    return labels, verdicts


def _validate(labels, verdicts, ledger, **kw):
    args = {"criterion_id": CRIT, "judge_model": "judge-1", "prompt_digest": "sha256:abc",
            "ledger": ledger, "measured_at": "2026-01-02T03:04:05Z", **kw}
    return validate_judge(labels, verdicts, **args)


def test_a_good_judge_on_enough_labels_is_validated_and_corrected(tmp_path):
    result = _validate(*_data(40, 30, 2, 1), tmp_path / "ledger.jsonl")
    assert result.status == "validated" and result.note is None
    assert result.label_count == 70
    assert result.tpr == 0.95 and result.tnr == pytest.approx(29 / 30)
    assert result.observed_pass_rate == 0.7
    assert result.corrected_rate == pytest.approx((0.7 + 29 / 30 - 1) / (0.95 + 29 / 30 - 1))
    assert result.correction_valid and result.ci.lo < result.corrected_rate < result.ci.hi


def test_below_threshold_or_too_few_labels_is_unvalidated_but_still_corrected(tmp_path):
    result = _validate(*_data(30, 20, 6, 1), tmp_path / "ledger.jsonl")
    assert result.status == "unvalidated"
    assert "only 50 usable test labels (need at least 60)" in result.note
    assert "TPR 0.800 < 0.9" in result.note
    assert result.corrected_rate is not None and result.correction_valid


def test_the_test_set_is_measured_once_per_prompt_unless_forced(tmp_path):
    ledger = tmp_path / "ledger.jsonl"
    labels, verdicts = _data(40, 30, 2, 1)
    _validate(labels, verdicts, ledger)
    first_line = ledger.read_bytes()
    with pytest.raises(TestSetAlreadyMeasured, match="already measured for criterion 'cites-order-id'"):
        _validate(labels, verdicts, ledger)
    assert ledger.read_bytes() == first_line  # a refused measurement records nothing
    _validate(labels, verdicts, ledger, prompt_digest="sha256:other")  # a new prompt may be measured
    forced = _validate(labels, verdicts, ledger, force=True, measured_at="2026-01-03T00:00:00Z")
    assert "measured again (forced)" in forced.note
    text = ledger.read_text()
    assert text.startswith(first_line.decode())  # earlier lines untouched
    entries = TestLedger(ledger).entries()
    assert [(e.prompt_digest, e.forced) for e in entries] == [
        ("sha256:abc", False), ("sha256:other", False), ("sha256:abc", True)]
    line = json.loads(text.splitlines()[0])
    assert list(line) == sorted(line) and line["measuredAt"] == "2026-01-02T03:04:05Z"
    assert line["testSetDigest"].startswith("sha256:")


def test_labels_without_a_split_are_refused(tmp_path):
    labels, verdicts = _data(40, 30, 2, 1)
    labels[3] = labels[3].model_copy(update={"split": None})
    with pytest.raises(InputError, match=r"labels\[3\]\.split: .* has no split"):
        _validate(labels, verdicts, tmp_path / "ledger.jsonl")
    assert not (tmp_path / "ledger.jsonl").exists()


def test_a_damaged_ledger_line_is_located(tmp_path):
    ledger = tmp_path / "ledger.jsonl"
    labels, verdicts = _data(40, 30, 2, 1)
    _validate(labels, verdicts, ledger)
    with ledger.open("a") as fh:
        fh.write('{"criterionId": "x"}\n')
    with pytest.raises(InputError) as err:
        _validate(labels, verdicts, ledger, prompt_digest="sha256:new")
    assert err.value.render().startswith(f"{ledger}:2: ")
    assert "required field is missing" in err.value.render()


def test_dev_history_scores_each_prompt_iteration_on_dev_only():
    from evalkit.calibration import dev_history
    from evalkit.contracts.labels import HumanLabel
    from evalkit.contracts.verdict import CriterionVerdict

    labels = [HumanLabel(trace_id=f"t{i}", label="pass" if i < 6 else "fail", split="dev", criterion_id="c")
              for i in range(8)] + [HumanLabel(trace_id="x", label="fail", split="test", criterion_id="c")]

    def run(fail_ids):
        return [CriterionVerdict(criterion_id="c", trace_id=lb.trace_id, confidence=0.9, critique="-",
                                 result="fail" if lb.trace_id in fail_ids else "pass") for lb in labels]

    rows = dev_history(labels, [("v1", run({"t0", "t6"})), ("v2", run({"t6", "t7", "x"}))], criterion_id="c")
    got = {(r["prompt"], r["rate"]): (r["value"], r["n"]) for r in rows}
    assert got == {("v1", "TPR"): (5 / 6, 6), ("v1", "TNR"): (0.5, 2), ("v2", "TPR"): (1.0, 6), ("v2", "TNR"): (1.0, 2)}
