"""``evalkit calibrate``'s report: one criterion's calibration, whether it covers the verdicts it corrects,
the judge's noise, and the saved validation; as camelCase JSON and as the table the command prints.

The chain (measure, check coverage, withhold an uncovered correction, widen for noise) is the one notebook
02 uses (:mod:`evalkit.judge.calibration_story`); this module adds the command's options and its table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit.calibration import calibrate_criterion, read_labels, read_verdicts
from evalkit.contracts.labels import ValidationResult
from evalkit.errors import InputError
from evalkit.io import atomic_write_text, canonical_dumps
from evalkit.judge.calibration_story import Coverage, cover, noise_by_criterion, saved_validation
from evalkit.judge.run_report import runs_path_of


@dataclass
class CalibrationReport:
    """The report as JSON, and what was left out of the files read (cut-off final lines), to warn about."""

    json: dict[str, Any]
    warnings: list[InputError] = field(default_factory=list)


def calibrate_judge(labels: str | Path, verdicts: str | Path, *, criterion: str | None = None,
                    unlabeled: str | Path | None = None, observed: float | None = None, n: int | None = None,
                    method: str, level: float, iterations: int, seed: int, gate: str, policy_version: str,
                    validation: str | Path | None = None, save_validation: str | Path | None = None) -> CalibrationReport:
    """Calibrate one criterion's judge on human labels and correct its pass rate, where the calibration covers it.

    Args:
        labels: human labels (HumanLabel JSONL).
        verdicts: the judge's verdicts (CriterionVerdict JSONL), measured against the labels.
        criterion: the criterion, when the files hold several.
        unlabeled: verdicts to correct (default: the verdicts on traces without a non-defer label).
        observed: instead, the judge's pass rate on unlabeled traces, with ``n``, how many it was measured on.
        n: see ``observed``.
        method: the interval method; ``level``, ``iterations`` and ``seed`` go with it.
        level: the confidence level.
        iterations: bootstrap resamples.
        seed: bootstrap seed.
        gate: ``point`` or ``lower-bound``.
        policy_version: the labelling policy's version, part of the calibration's binding.
        validation: a validation saved earlier; the correction is given only if it still covers the verdicts.
        save_validation: write the validation result, bound to this judge, labels and policy, here.

    Raises:
        InputError: ``observed`` without ``n`` or with ``unlabeled``; a saved validation of another criterion;
            saving a validation of verdicts without a judge run record.
    """
    if (observed is None) != (n is None):
        raise InputError("--observed and --n go together: the judge's pass rate and how many traces it "
                         "was observed on (e.g. --observed 0.857 --n 2400)", path="--observed")
    if observed is not None and unlabeled:
        raise InputError("give --unlabeled or --observed/--n, not both", path="--unlabeled")
    notes: list[InputError] = []
    to_correct = read_verdicts(unlabeled, notes=notes) if unlabeled else None
    human, measured = read_labels(labels, notes=notes), read_verdicts(verdicts, notes=notes)
    result = calibrate_criterion(human, measured, criterion_id=criterion, unlabeled=to_correct,
                                 observed=(observed, n) if observed is not None else None, method=method,
                                 level=level, iterations=iterations, seed=seed, source=unlabeled or verdicts,
                                 gate=gate)
    saved = saved_validation(validation)
    if saved is not None and saved.criterion_id != result.criterion_id:
        raise InputError(f"the saved validation is for criterion {saved.criterion_id!r}, not "
                         f"{result.criterion_id!r}", file=str(validation), path="criterionId")
    coverage = cover(result, human, measured_verdicts=verdicts, corrected_verdicts=unlabeled,
                     policy_version=policy_version, saved=saved,
                     noise=noise_by_criterion(runs_path_of(unlabeled or verdicts)))
    out = result.to_json_obj()
    applies = coverage.applies
    out["calibration"] = {"status": applies.status, "changed": list(applies.changed), "reason": applies.reason,
                          "binding": applies.binding.model_dump(mode="json", by_alias=True)
                          if applies.binding else None}
    if coverage.withheld:
        out["correctedPassRate"].update(theta=None, ci=None, valid=False, reason=f"uncalibrated: {applies.reason}")
    out["judgeNoise"] = _noise_json(coverage)
    if save_validation:
        _save_validation(save_validation, coverage)
    return CalibrationReport(out, notes)


def _noise_json(coverage: Coverage) -> dict[str, Any] | None:
    noise = coverage.noise
    if noise is None:
        return None
    return {"items": noise.items, "repeatedItems": noise.repeated_items, "unstableItems": noise.unstable_items,
            "flipRate": noise.flip_rate, "abstentions": noise.abstentions, "rateSd": noise.rate_sd,
            "widenedCi": None if coverage.widened is None else coverage.widened.model_dump(mode="json")}


def _save_validation(path: str | Path, coverage: Coverage) -> None:
    result, applies = coverage.result, coverage.applies
    if applies.binding is None:
        raise InputError("cannot save a validation without knowing the judge: the verdicts have no judge run "
                         "record (<verdicts>.runs.jsonl, written by evalkit judge run)", path="--save-validation")
    rate = result.rate
    saved = ValidationResult(
        criterion_id=result.criterion_id, judge_model=applies.binding.judge_model, status=result.status,
        label_count=result.test.total, tpr=result.test.tpr, tnr=result.test.tnr, observed_pass_rate=rate.p_obs,
        corrected_rate=rate.theta if rate.valid else None, correction_valid=rate.valid,
        ci=rate.ci if rate.valid else None, note="; ".join(result.shortfalls) or None, binding=applies.binding)
    atomic_write_text(path, canonical_dumps(saved.model_dump(mode="json", by_alias=True)))


def _fmt(x: float | None, digits: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def _status(validation: dict[str, Any]) -> str:
    reasons = validation["shortfalls"]
    return validation["status"] + (f" ({'; '.join(reasons)})" if reasons else "")


def render_calibration(report: dict[str, Any]) -> str:
    """The report as the command's table: one row per line, the name in a 12-character column."""
    conf, rate, unl = report["confusion"], report["correctedPassRate"], report["unlabeled"]

    def rate_ci(name: str, n: int, cls: str) -> str:
        value, ci = conf[name], conf[name + "Ci"]
        if value is None:
            return f"n/a (no human {cls})"
        return f"{value:.3f}  [{ci['lo']:.3f}, {ci['hi']:.3f}]  on {n} human {cls}"

    scope = "test split" if report["labelScope"] == "test" else "all labels (no splits named)"
    abst = conf["abstentionRate"]
    rows = [
        ("criterion", str(report["criterionId"])),
        ("labels", f"{report['labelsMeasured']} of {report['labelsRead']} measured: {scope}"),
        ("paired", f"{conf['positives'] + conf['negatives']} "
                   f"(tp {conf['tp']}, fn {conf['fn']}, fp {conf['fp']}, tn {conf['tn']})"),
        ("excluded", f"{conf['deferred']} defer labels, {conf['uncertain']} uncertain verdicts, "
                     f"{conf['unjudged']} labels without a verdict"),
        ("TPR", rate_ci("tpr", conf["positives"], "passes")),
        ("TNR", rate_ci("tnr", conf["negatives"], "fails")),
        ("abstention", f"{conf['uncertain']} uncertain on labelled traces"
                       + (f" ({abst:.1%}: {conf['uncertainOnPass']} on passes, "
                          f"{conf['uncertainOnFail']} on fails)" if abst is not None else "")),
        ("status", _status(report["validation"])),
    ]
    if unl["observedFrom"] == "given":
        rows.append(("observed", f"{rate['pObs']:.3f} pass rate on {rate['nUnlabeled']} traces (given)"))
    elif unl["observedFrom"] == "verdicts":
        rows.append(("unlabeled", f"{unl['used']} verdicts used, {unl['uncertain']} uncertain left out"))
        rows.append(("observed", f"{rate['pObs']:.3f} pass rate"))
    else:
        rows.append(("observed", "none: give --unlabeled, or --observed RATE --n COUNT, to correct a pass rate"))
    level = f"{rate['level']:.0%}"
    if rate["valid"]:
        rows.append(("corrected", f"{rate['theta']:.3f}  {level} CI [{rate['ci']['lo']:.3f}, {rate['ci']['hi']:.3f}]"))
    else:
        rows.append(("corrected", f"not valid: {rate['reason']}"))
    noise = report.get("judgeNoise")
    if noise:
        wide = noise["widenedCi"]
        rows.append(("judge noise", f"flip rate {_fmt(noise['flipRate'])}, {noise['unstableItems']} of "
                                    f"{noise['repeatedItems']} repeated items unstable, repeat sd {_fmt(noise['rateSd'])}"
                     + (f"; corrected CI widened for it [{wide['lo']:.3f}, {wide['hi']:.3f}]" if wide else "")))
    cal = report["calibration"]
    rows.append(("applies", cal["status"] + (f": {cal['reason']}" if cal["reason"] else "")))
    method = rate["method"]
    if rate["iterations"]:
        method += f" ({rate['iterations']} resamples, {rate['skipped'] or 0} skipped)"
    rows.append(("method", method))
    return "".join(f"{key:<12}{value}\n" for key, value in rows)
