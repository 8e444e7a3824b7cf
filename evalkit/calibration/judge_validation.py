"""Validating a judge on the test split: TPR and TNR against thresholds, and the corrected rate.

A judge below the thresholds is "unvalidated", but its pass rate is still corrected and reported:
the correction is what makes an imperfect judge usable, the status says how far to trust it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from evalkit.calibration.correction import DEFAULT_ITERATIONS, DEFAULT_METHOD
from evalkit.calibration.criterion import calibrate_criterion
from evalkit.calibration.expiry import bind_validation
from evalkit.calibration.ledger import LedgerEntry, TestLedger
from evalkit.calibration.metrics import DEFAULT_LEVEL
from evalkit.calibration.status import GATES, judge_shortfalls, judge_status
from evalkit.contracts.labels import CalibrationBinding, HumanLabel, ValidationResult
from evalkit.contracts.verdict import CriterionVerdict
from evalkit.errors import InputError


def _test_set_digest(trace_ids: Sequence[str]) -> str:
    return "sha256:" + hashlib.sha256("\n".join(sorted(trace_ids)).encode()).hexdigest()


def validate_judge(labels: Sequence[HumanLabel], verdicts: Sequence[CriterionVerdict], *,
                   criterion_id: str, judge_model: str, prompt_digest: str, ledger: str | Path,
                   measured_at: str, unlabeled: Sequence[CriterionVerdict] | None = None,
                   observed: tuple[float, int] | None = None,
                   method: str = DEFAULT_METHOD, level: float = DEFAULT_LEVEL, force: bool = False,
                   iterations: int = DEFAULT_ITERATIONS, seed: int = 0, gate: str = "point",
                   binding: CalibrationBinding | None = None) -> ValidationResult:
    """Measure a judge on the test split once, and record the measurement in the ledger.

    Args:
        labels: human labels, each with its ``split`` (see ``split_labels``); the ``test`` ones are
            measured, and every non-``defer`` label marks its trace as labelled.
        verdicts: the judge's verdicts; those on test traces are the test predictions.
        criterion_id: the criterion the judge decides.
        judge_model: the judge's model, as reported.
        prompt_digest: a digest of the judge prompt; one test measurement per criterion and digest.
        ledger: the ledger file.
        measured_at: the timestamp to record (injected, never read from the clock here).
        unlabeled: verdicts on the traces to estimate the pass rate of; when None, the verdicts on
            traces without a non-``defer`` label in any split.
        observed: ``(pass rate, count)`` the judge reported elsewhere, instead of ``unlabeled``.
        method: the interval method for the corrected rate.
        level: confidence level.
        force: measure again although the ledger has this criterion and prompt (recorded as forced).
        iterations: bootstrap resamples.
        seed: bootstrap seed.
        gate: ``point`` (TPR and TNR >= 0.9) or ``lower-bound`` (the lower ends of their Wilson
            intervals >= 0.9), see ``evalkit.calibration.status.GATES``.
        binding: the judge and label set measured (``make_binding``), recorded on the result so a
            verdict file from another judge or label set is reported as uncalibrated
            (``check_calibration``); its prompt digest and model must be ``prompt_digest`` and ``judge_model``.

    Returns:
        ``validated`` when TPR >= 0.9 and TNR >= 0.9 on at least 60 usable test labels, else
        ``unvalidated`` with the reasons in ``note``. The rate is corrected either way.

    Raises:
        TestSetAlreadyMeasured: the ledger already has this criterion and prompt, and not ``force``.
        InputError: a label without a split, or no pass/fail verdicts on unlabeled traces.
    """
    for i, label in enumerate(labels):
        if label.split is None:
            raise InputError(f"label of trace {label.trace_id!r} has no split; split the labels first "
                             "(split_labels) so the test set is fixed before it is measured",
                             path=f"labels[{i}].split")
    if gate not in GATES:
        raise InputError(f"one of {', '.join(GATES)} (got {gate!r})", path="gate")
    if binding is not None and binding.prompt_digest != prompt_digest:
        raise InputError(f"the binding's prompt digest {binding.prompt_digest} is not the measured "
                         f"prompt {prompt_digest}", path="binding.promptDigest")
    book = TestLedger(ledger)
    book.check(criterion_id, prompt_digest, force=force)
    again = bool(book.previous(criterion_id, prompt_digest))
    report = calibrate_criterion(labels, verdicts, criterion_id=criterion_id, unlabeled=unlabeled,
                                 observed=observed, method=method, level=level, iterations=iterations, seed=seed)
    conf, rate, uncertain = report.test, report.rate, report.unlabeled_uncertain
    shortfalls = judge_shortfalls(conf, gate)
    notes = [*shortfalls]
    if not rate.valid:
        notes.append(f"correction invalid: {rate.reason}")
    if conf.uncertain:
        notes.append(f"{conf.uncertain} uncertain verdicts on test traces left out of TPR/TNR")
    if uncertain:
        notes.append(f"{uncertain} uncertain verdicts on unlabeled traces left out of the observed rate")
    if again:
        notes.append("test set measured again (forced)")
    status = judge_status(conf, gate)
    result = ValidationResult(
        criterion_id=criterion_id, judge_model=judge_model, status=status, label_count=conf.total,
        tpr=conf.tpr, tnr=conf.tnr, observed_pass_rate=rate.p_obs, corrected_rate=rate.theta,
        correction_valid=rate.valid, note="; ".join(notes) or None,
        ci=rate.ci)
    if binding is not None:
        result = bind_validation(result, binding)
    book.append(LedgerEntry(
        criterion_id=criterion_id, prompt_digest=prompt_digest, judge_model=judge_model,
        measured_at=measured_at, label_count=conf.total, test_set_digest=_test_set_digest(report.test_trace_ids),
        tpr=conf.tpr, tnr=conf.tnr, status=status, forced=again))
    return result
