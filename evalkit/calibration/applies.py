"""Does a judge's measurement still cover the verdicts being corrected? Checked before every correction.

A calibration measures one judge (prompt digest, model, temperature, read from the judge run's sidecar
``<verdicts>.runs.jsonl``) on one label set under one labelling policy. The verdicts a pass rate is
corrected from must come from that same judge; otherwise its TPR and TNR say nothing about them and
the corrected rate would be confidently wrong. Three cases:

- a saved, bound validation result is given: :func:`~evalkit.calibration.check_calibration` decides
  against the judge behind the verdicts to correct and the current labels and policy;
- no saved result: the judge measured now (the labelled verdicts) must be the judge whose verdicts
  are corrected (the unlabeled ones, when they come from another file);
- no judge run record on either side: ``unknown``; the correction is given, with the reason it could
  not be checked (verdicts written by another tool carry no prompt digest).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic.alias_generators import to_camel

from evalkit.calibration.defaults import DEFAULT_POLICY_VERSION
from evalkit.calibration.expiry import (
    BINDING_PARTS,
    JudgeIdentity,
    check_calibration,
    judge_of_run,
    label_set_digest,
    make_binding,
)
from evalkit.contracts.labels import CalibrationBinding, HumanLabel, ValidationResult

APPLIES = ("calibrated", "uncalibrated", "unknown")


@dataclass(frozen=True)
class Applicability:
    """Whether one criterion's calibration covers the verdicts to correct, and the binding to record."""

    criterion_id: str
    status: str
    """``calibrated``, ``uncalibrated`` (do not correct) or ``unknown`` (no judge run record to check)."""
    changed: tuple[str, ...]
    """The binding parts that differ (camelCase)."""
    reason: str | None
    measured: JudgeIdentity | None
    corrected: JudgeIdentity | None
    binding: CalibrationBinding | None
    """The measurement's binding (judge measured now, current labels and policy), for a saved result."""

    def row(self) -> dict[str, object]:
        """A table row for a report."""
        def judge(j: JudgeIdentity | None) -> str | None:
            return None if j is None else f"{j.judge_model} T={j.temperature:g} prompt {j.prompt_digest[:19]}"

        return {"criterion": self.criterion_id, "status": self.status, "measured judge": judge(self.measured),
                "corrected verdicts' judge": judge(self.corrected), "changed": ", ".join(self.changed) or None,
                "reason": self.reason, "binding": self.binding.digest[:19] if self.binding else None}


def _identity(runs: Path | None, criterion_id: str) -> JudgeIdentity | None:
    if runs is None or not runs.exists():
        return None
    return judge_of_run(runs, criterion_id=criterion_id)


def calibration_applies(labels: Sequence[HumanLabel], *, criterion_id: str, measured_runs: str | Path | None,
                        corrected_runs: str | Path | None = None, policy_version: str = DEFAULT_POLICY_VERSION,
                        saved: ValidationResult | None = None) -> Applicability:
    """Check that the judge measured on the labels is the judge whose verdicts are corrected.

    Args:
        labels: the current human labels (their digest is part of the binding).
        criterion_id: the criterion.
        measured_runs: the judge run sidecar of the labelled verdicts (``<verdicts>.runs.jsonl``).
        corrected_runs: the sidecar of the verdicts to correct when they are another file; None when
            the same verdicts are corrected (their unlabeled traces).
        policy_version: the labelling policy's version now.
        saved: a validation result saved earlier (bound); when given it decides, against the judge of
            the verdicts to correct.

    Raises:
        InputError: a sidecar naming several judges for the criterion (see ``judge_of_run``).
    """
    measured_path = Path(measured_runs) if measured_runs is not None else None
    measured = _identity(measured_path, criterion_id)
    corrected = _identity(Path(corrected_runs), criterion_id) if corrected_runs is not None else measured
    digest = label_set_digest(labels, criterion_id=criterion_id)
    binding = None if measured is None else make_binding(
        prompt_digest=measured.prompt_digest, judge_model=measured.judge_model, temperature=measured.temperature,
        label_set_digest=digest, policy_version=policy_version)
    if saved is not None:
        if corrected is None:
            return Applicability(criterion_id, "unknown", (), "the verdicts to correct have no judge run record "
                                 "naming the judge (<verdicts>.runs.jsonl with judgeDigest): the saved "
                                 "calibration cannot be checked against them",
                                 measured, corrected, binding)
        check = check_calibration(saved, judge=corrected, label_set_digest=digest, policy_version=policy_version)
        return Applicability(criterion_id, check.status, check.changed, check.reason, measured, corrected, binding)
    if measured is None or corrected is None:
        side = "labelled verdicts" if measured is None else "verdicts to correct"
        return Applicability(criterion_id, "unknown", (), f"the {side} have no judge run record naming the "
                             "judge (<verdicts>.runs.jsonl with judgeDigest, written by evalkit judge run): "
                             "which judge wrote them cannot be checked", measured, corrected, binding)
    changed = tuple(to_camel(p) for p in BINDING_PARTS[:3] if getattr(measured, p) != getattr(corrected, p))
    if changed:
        details = ", ".join(f"{to_camel(p)} {getattr(measured, p)!r} -> {getattr(corrected, p)!r}"
                            for p in BINDING_PARTS[:3] if getattr(measured, p) != getattr(corrected, p))
        return Applicability(criterion_id, "uncalibrated", changed,
                             f"the verdicts to correct come from another judge than the one measured ({details}): "
                             "measure that judge on the labels before correcting its verdicts",
                             measured, corrected, binding)
    return Applicability(criterion_id, "calibrated", (), None, measured, corrected, binding)
