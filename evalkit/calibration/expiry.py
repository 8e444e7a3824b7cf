"""Calibration that expires: a validation result holds only for the judge and the labels it was measured on.

A judge's TPR and TNR belong to one judge prompt, one model at one temperature, measured against one
label set labelled under one policy. Change any of them and the old TPR/TNR say nothing about the new
verdicts: correcting them anyway would give a confident, wrong rate. So a validation result carries a
:class:`~evalkit.contracts.labels.CalibrationBinding` (the five parts and their digest), and a verdict
file is checked against it before its rate is corrected; under a different digest it is reported as
**uncalibrated**, naming what changed, and no corrected rate is given.

The label-set digest covers, per label, the trace, criterion, label, split and annotator (what the
measurement depends on); notes and timestamps are left out so rewording a note does not expire a judge.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic.alias_generators import to_camel

from evalkit.contract_files import read_models
from evalkit.contracts.judge_run import JudgeRunRecord
from evalkit.contracts.labels import CalibrationBinding, HumanLabel, ValidationResult
from evalkit.contracts.types import RateConfidenceInterval
from evalkit.errors import InputError
from evalkit.io.canonical import canonical_dumps

BINDING_PARTS = ("prompt_digest", "judge_model", "temperature", "label_set_digest", "policy_version")
"""The parts of a calibration's identity; a change in any one expires it."""


def _sha256(obj: object) -> str:
    return "sha256:" + hashlib.sha256(canonical_dumps(obj).encode()).hexdigest()


def label_set_digest(labels: Sequence[HumanLabel], *, criterion_id: str | None = None) -> str:
    """A digest of the label set a judge is measured on (order of the records does not matter).

    Args:
        labels: the human labels.
        criterion_id: keep only the labels of this criterion (and those without one).
    """
    rows = sorted([lb.trace_id, lb.criterion_id or "", lb.label, lb.split or "", lb.annotator or ""]
                  for lb in labels if criterion_id is None or lb.criterion_id in (None, criterion_id))
    return _sha256(rows)


def calibration_digest(*, prompt_digest: str, judge_model: str, temperature: float | None,
                       label_set_digest: str, policy_version: str) -> str:
    """``sha256:`` of the canonical JSON of the five parts of a calibration's identity."""
    return _sha256({"promptDigest": prompt_digest, "judgeModel": judge_model, "temperature": temperature,
                    "labelSetDigest": label_set_digest, "policyVersion": policy_version})


def make_binding(*, prompt_digest: str, judge_model: str, temperature: float | None, label_set_digest: str,
                 policy_version: str) -> CalibrationBinding:
    """The binding of a calibration to its judge and label set, digest included."""
    parts = {"prompt_digest": prompt_digest, "judge_model": judge_model, "temperature": temperature,
             "label_set_digest": label_set_digest, "policy_version": policy_version}
    return CalibrationBinding(**parts, digest=calibration_digest(**parts))


def bind_validation(result: ValidationResult, binding: CalibrationBinding) -> ValidationResult:
    """The validation result with its binding recorded (a copy; the result is otherwise unchanged)."""
    if binding.judge_model != result.judge_model:
        raise InputError(f"the binding's judge model {binding.judge_model!r} is not the validated judge "
                         f"{result.judge_model!r}", path="binding.judgeModel")
    return result.model_copy(update={"binding": binding})


@dataclass(frozen=True)
class JudgeIdentity:
    """The judge that produced a verdict file: its prompt digest, model and temperature."""

    prompt_digest: str
    judge_model: str
    temperature: float | None


def judge_of_run(records: Iterable[JudgeRunRecord] | str | Path, *, criterion_id: str) -> JudgeIdentity | None:
    """The judge behind one criterion's verdicts, from the run's sidecar (``<verdicts>.runs.jsonl``).

    The judge's digest is the record's ``judgeDigest`` (its spec and prompt builder), not the per-trace
    ``promptDigest``. Returns None when the records predate ``judgeDigest`` (the judge cannot be told).

    Raises:
        InputError: no record for the criterion, or records made by more than one judge (a file
            mixing judges has no single calibration).
    """
    file = str(records) if isinstance(records, str | Path) else None
    if file is not None:
        records = read_models(file, JudgeRunRecord)
    mine = [r for r in records if r.criterion_id == criterion_id]
    if not mine:
        raise InputError(f"no judge run record for criterion {criterion_id!r}", file=file, path="criterionId")
    if any(r.judge_digest is None for r in mine):
        return None
    found = {(r.judge_digest, r.model, r.temperature) for r in mine}
    if len(found) > 1:
        shown = "; ".join(f"{m} T={t} judge {d}" for d, m, t in sorted(found, key=repr))
        raise InputError(f"criterion {criterion_id!r} was judged by {len(found)} judges ({shown}): "
                         "one calibration cannot cover them; split the file by judge", file=file)
    digest, model, temperature = found.pop()
    return JudgeIdentity(digest, model, temperature)


@dataclass(frozen=True)
class CalibrationCheck:
    """Whether a validation covers a verdict file; the corrected rate only when it does."""

    status: str
    """``calibrated`` or ``uncalibrated``."""
    changed: tuple[str, ...]
    """The binding parts that differ (camelCase); ``binding`` when the result has none."""
    reason: str | None
    corrected_rate: float | None
    ci: RateConfidenceInterval | None


def check_calibration(result: ValidationResult, *, judge: JudgeIdentity, label_set_digest: str,
                      policy_version: str) -> CalibrationCheck:
    """Check that a validation result was measured on this judge and this label set.

    Args:
        result: the validation result, bound (:func:`bind_validation`).
        judge: the judge that produced the verdicts to correct (:func:`judge_of_run`).
        label_set_digest: the digest of the current label set (:func:`label_set_digest`).
        policy_version: the current labelling policy's version.

    Returns:
        ``calibrated`` with the corrected rate and interval when every part matches; otherwise
        ``uncalibrated``, naming what changed, with no corrected rate.
    """
    now = make_binding(prompt_digest=judge.prompt_digest, judge_model=judge.judge_model,
                       temperature=judge.temperature, label_set_digest=label_set_digest,
                       policy_version=policy_version)
    bound = result.binding
    if bound is None:
        return CalibrationCheck("uncalibrated", ("binding",), "the validation result records no binding "
                                "(judge prompt, model, temperature, label set): validate the judge again",
                                None, None)
    diff = [p for p in BINDING_PARTS if getattr(bound, p) != getattr(now, p)]
    changed = tuple(to_camel(p) for p in diff)
    if changed or bound.digest != now.digest:
        details = ", ".join(f"{to_camel(p)} {getattr(bound, p)!r} -> {getattr(now, p)!r}" for p in diff)
        return CalibrationCheck("uncalibrated", changed or ("digest",),
                                f"calibration expired: {details or 'digest differs'}; validate the judge "
                                "again on the test split before correcting these verdicts", None, None)
    return CalibrationCheck("calibrated", (), None, result.corrected_rate, result.ci)
