"""A judge's calibration as people read it: measured, checked to cover the verdicts it corrects, widened for
the judge's noise, audited for bias; what ``evalkit calibrate`` prints and notebook 02 shows.

The chain is decided once, here: a correction is withheld when the calibration does not cover the verdicts
(:func:`evalkit.calibration.calibration_applies`), and the interval is widened when the run record holds
repeats (:func:`evalkit.compare.widen_for_noise`). The command line and the notebook call the same
functions, so a rule changed here changes both, and is unit-tested without papermill.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit.calibration import (
    Applicability,
    Calibrations,
    CriterionCalibration,
    calibrate_criteria,
    calibration_applies,
    dev_history,
    label_budget,
    observed_rate,
    read_labels,
    read_verdicts,
    sensitivity,
)
from evalkit.compare import JudgeNoise, judge_noise, repeats_from_runs, widen_for_noise
from evalkit.contract_files import read_model
from evalkit.contracts.labels import HumanLabel, ValidationResult
from evalkit.contracts.summary import CriterionHeadline, Headline
from evalkit.contracts.types import RateConfidenceInterval
from evalkit.contracts.verdict import CriterionVerdict
from evalkit.errors import InputError
from evalkit.judge.run_report import runs_path_of
from evalkit.stats import wilson_bounds


@dataclass(frozen=True)
class Coverage:
    """One criterion's calibration with what a correction needs: does it cover the verdicts, how noisy is
    the judge, and the interval widened for that noise."""

    result: CriterionCalibration
    applies: Applicability
    noise: JudgeNoise | None
    """The judge's noise over repeated items, None when the run record has no item judged twice."""
    widened: RateConfidenceInterval | None

    @property
    def withheld(self) -> bool:
        """The correction is not given: the judge measured is not the judge whose verdicts are corrected."""
        return self.applies.status == "uncalibrated"


def saved_validation(path: str | Path | None) -> ValidationResult | None:
    """A validation result saved earlier (``evalkit calibrate --save-validation``), or None."""
    return read_model(path, ValidationResult) if path else None


def noise_by_criterion(runs: Path) -> dict[str, JudgeNoise]:
    """The judge's noise per criterion from a run record; empty when there is no record."""
    return judge_noise(repeats_from_runs(runs)) if runs.exists() else {}


def cover(result: CriterionCalibration, labels: Sequence[HumanLabel], *, measured_verdicts: str | Path,
          corrected_verdicts: str | Path | None, policy_version: str, saved: ValidationResult | None,
          noise: dict[str, JudgeNoise]) -> Coverage:
    """Check that ``result`` covers the verdicts to correct, and widen its interval for the judge's noise.

    Args:
        result: the criterion's calibration.
        labels: the human labels it was measured on.
        measured_verdicts: the verdicts measured against the labels (their run record names the judge).
        corrected_verdicts: the verdicts whose pass rate is corrected, when they come from another file.
        policy_version: the labelling policy's version.
        saved: a validation saved earlier for this criterion; it decides instead of the measured judge.
        noise: the judge's noise per criterion (:func:`noise_by_criterion`).
    """
    applies = calibration_applies(labels, criterion_id=result.criterion_id,
                                  measured_runs=runs_path_of(measured_verdicts),
                                  corrected_runs=runs_path_of(corrected_verdicts) if corrected_verdicts else None,
                                  policy_version=policy_version, saved=saved)
    judge_noise_ = noise.get(result.criterion_id)
    if judge_noise_ is not None and not judge_noise_.repeated_items:
        judge_noise_ = None
    withheld = applies.status == "uncalibrated"
    widened = widen_for_noise(result.rate, judge_noise_) if judge_noise_ is not None and not withheld else None
    return Coverage(result, applies, judge_noise_, widened)


@dataclass
class CalibrationStory:
    """Everything notebook 02 shows, computed: each section's rows, and its metrics and findings in order."""

    labels: list[HumanLabel]
    verdicts: list[CriterionVerdict]
    calibration: Calibrations
    coverage: dict[str, Coverage]
    history: list[dict[str, Any]]
    runs: list[tuple[str, list[CriterionVerdict]]]
    metrics: dict[str, list[tuple[str, Any, str | None]]] = field(default_factory=dict)
    findings: dict[str, list[str]] = field(default_factory=dict)
    judge_model: str | None = None
    """The subject's pinned judge model, named where the run records do not name the judge."""
    verdicts_file: str | None = None
    """The subject's current verdicts, as it names them."""

    @property
    def results(self) -> dict[str, CriterionCalibration]:
        return self.calibration.results

    def say(self, section: str, text: str) -> None:
        self.findings.setdefault(section, []).append(text)

    def measure(self, section: str, name: str, value: Any, note: str | None = None) -> None:
        self.metrics.setdefault(section, []).append((name, value, note))

    def split_rows(self) -> list[dict[str, Any]]:
        """Labels per criterion and split: pass, fail and defer counts."""
        return [{"criterion": c, "split": split, **{k: counts.get(k, 0) for k in ("pass", "fail", "defer")}}
                for c, r in self.results.items() for split, counts in r.split_counts.items()]

    def rate_rows(self) -> list[dict[str, Any]]:
        """TPR and TNR on test with their intervals, per criterion (those that could be measured)."""
        return [{"label": f"{c} {kind}", "value": value, "lo": ci.lo, "hi": ci.hi, "kind": kind}
                for c, r in self.results.items()
                for kind, value, ci in (("TPR", r.test.tpr, r.test.tpr_ci), ("TNR", r.test.tnr, r.test.tnr_ci))
                if value is not None]

    def pass_rows(self) -> list[dict[str, Any]]:
        """Observed and corrected pass rates with intervals, for the criteria whose correction is not withheld."""
        rows = []
        for c, r in self.results.items():
            rate = r.rate
            if self.coverage[c].withheld:
                continue
            if rate.p_obs is not None:
                rows.append({"label": c, "value": rate.p_obs, "lo": rate.p_obs, "hi": rate.p_obs, "kind": "observed"})
            if rate.valid:
                rows.append({"label": c, "value": rate.theta, "lo": rate.ci.lo, "hi": rate.ci.hi,
                             "kind": "corrected"})
        return rows

    def rate_table(self) -> list[dict[str, Any]]:
        """One row per criterion: observed, corrected with interval, calibration status, TPR, TNR."""
        return [{"criterion": c, "observed": r.rate.p_obs, "from": r.observed_from, "corrected": r.rate.theta,
                 "lo": r.rate.ci.lo if r.rate.ci else None, "hi": r.rate.ci.hi if r.rate.ci else None,
                 "calibration": self.coverage[c].applies.status, "tpr": r.rate.tpr, "tnr": r.rate.tnr,
                 "unlabeled": r.rate.n_unlabeled, "valid": r.rate.valid} for c, r in self.results.items()]

    def noise_rows(self) -> list[dict[str, Any]]:
        """Per criterion judged more than once per item: how often the judge changed its mind."""
        rows = []
        for c, cov in self.coverage.items():
            n, wide = cov.noise, cov.widened
            if n is None:
                continue
            rows.append({"criterion": c, "repeated items": n.repeated_items, "unstable": n.unstable_items,
                         "flip rate": n.flip_rate, "repeat sd": n.rate_sd, "abstentions": n.abstentions,
                         "widened lo": wide.lo if wide else None, "widened hi": wide.hi if wide else None})
        return rows

    def noise_bars(self) -> list[dict[str, Any]]:
        """The corrected interval beside the one widened for the judge's noise."""
        bars = []
        for c, cov in self.coverage.items():
            if cov.widened is None:
                continue
            rate, wide = cov.result.rate, cov.widened
            bars += [{"label": c, "value": rate.theta, "lo": rate.ci.lo, "hi": rate.ci.hi, "kind": "corrected"},
                     {"label": c, "value": rate.theta, "lo": wide.lo, "hi": wide.hi,
                      "kind": "widened for judge noise"}]
        return bars

    def sensitivity_rows(self) -> list[dict[str, Any]]:
        """The corrected rate as TPR or TNR is varied, one at a time, for every valid correction."""
        return [{**row, "curve": f"{c}: {row['rate']} varied"}
                for c, r in self.results.items() if r.rate.valid
                for row in sensitivity(r.rate.p_obs, r.rate.tpr, r.rate.tnr)]

    def headline(self) -> Headline:
        """Per criterion, the number a run is compared by: the corrected pass rate and its interval where
        the correction is valid and covers the verdicts, else the observed rate with its Wilson interval."""
        out = []
        for c, r in self.results.items():
            rate, cov = r.rate, self.coverage[c]
            measured = cov.applies.measured
            judge = (f"{measured.judge_model} prompt {measured.prompt_digest[:19]}" if measured is not None
                     else f"{self.judge_model or 'judge'} on {Path(self.verdicts_file or '').name} (prompt not recorded)")
            n = rate.n_unlabeled if rate.p_obs is not None and r.observed_from == "verdicts" else None
            if rate.valid and not cov.withheld:
                out.append(CriterionHeadline(criterion=c, rate=rate.theta, lo=rate.ci.lo, hi=rate.ci.hi,
                                             corrected=True, observed=rate.p_obs, n=n, status=r.status,
                                             judge=judge))
                continue
            bounds = wilson_bounds(round(rate.p_obs * n), n) if rate.p_obs is not None and n else None
            out.append(CriterionHeadline(criterion=c, rate=rate.p_obs, lo=bounds[0] if bounds else None,
                                         hi=bounds[1] if bounds else None, observed=rate.p_obs, n=n,
                                         status=r.status, judge=judge))
        return Headline(criteria=out)

    def budget_rows(self, target_width: float) -> list[dict[str, Any]]:
        """Labels per class needed for a corrected-rate interval of the target width."""
        return label_budget(self.results, target_width)


def _setup(story: CalibrationStory, judge: Any) -> None:
    results, skipped = story.results, story.calibration.skipped
    story.measure("setup", "criteria", len(results), f"{len(skipped)} not calibrated" if skipped else None)
    if judge is not None:
        story.measure("setup", "judge", judge.model, f"temperature {judge.temperature:g}")
    for c, why in skipped.items():
        story.say("setup", f"{c}: not calibrated ({why}).")
    for c, r in results.items():
        if r.dev is not None and not r.dev.total:
            story.say("confusion", f"{c}: no dev confusion: none of the dev labels has a pass/fail verdict "
                                   f"({r.dev.unjudged} without a verdict, {r.dev.uncertain} uncertain).")
    if not (len(story.runs) > 1 and story.history):
        story.say("history", "Only the current judge prompt was given: no dev history to show (subject "
                             "`judge_runs`).")
    for c, r in results.items():
        story.measure("status", c, r.status, f"on {r.test.total} test labels")
        story.say("status", f"{c}: judge {r.status_text}.")


def _corrections(story: CalibrationStory) -> None:
    for c, cov in story.coverage.items():
        if cov.applies.status != "calibrated":
            story.say("coverage", f"{c}: calibration {cov.applies.status}: {cov.applies.reason}.")
    for c, r in story.results.items():
        rate = r.rate
        if story.coverage[c].withheld:
            story.say("corrected", f"{c}: no corrected rate: {story.coverage[c].applies.reason}.")
        elif rate.valid:
            story.measure("corrected", f"{c} corrected pass rate", round(rate.theta, 3),
                          f"{rate.level:.0%} CI [{rate.ci.lo:.3f}, {rate.ci.hi:.3f}], observed {rate.p_obs:.3f} "
                          f"on {rate.n_unlabeled} traces" + (" (given)" if r.observed_from == "given" else ""))
        else:
            story.say("corrected", f"{c}: no valid correction ({rate.reason}).")
    if not story.noise_rows():
        story.say("noise", "Judge noise not measured: one verdict per item (run `evalkit judge run --repeats 3` "
                           "to see how often the judge changes its mind).")


def calibration_story(subject: Any, *, method: str, criterion: str | None = None,
                      unlabeled_verdicts_file: str | Path | None = None, observed_pass_rate: float | None = None,
                      observed_count: int | None = None, gate: str = "point", policy_version: str = "1",
                      validation_file: str | Path | None = None) -> CalibrationStory:
    """Calibrate every criterion of a subject's judge and decide what notebook 02 reports about it.

    Args:
        subject: the subject (:class:`evalkit.subjects.ResolvedSubject`); it must name labels and verdicts.
        method: the corrected rate's interval method.
        criterion: calibrate only this criterion.
        unlabeled_verdicts_file: verdicts to correct; default: the subject's verdicts on unlabeled traces.
        observed_pass_rate: instead, the judge's pass rate on unlabeled traces as published elsewhere.
        observed_count: how many traces ``observed_pass_rate`` was measured on.
        gate: ``point`` or ``lower-bound``: how TPR and TNR must reach the bar to validate.
        policy_version: the labelling policy's version, part of what a calibration is bound to.
        validation_file: a validation saved earlier, checked against these verdicts.

    Raises:
        InputError: the subject names no labels or no verdicts.
    """
    s = subject.subject
    if s.labels is None or s.verdicts is None:
        raise InputError("judge calibration needs `labels` and `verdicts` in the subject file", path="labels")
    labels = read_labels(subject.resolve(s.labels))
    verdicts = read_verdicts(subject.resolve(s.verdicts))
    unlabeled = read_verdicts(unlabeled_verdicts_file) if unlabeled_verdicts_file else None
    calibration = calibrate_criteria(labels, verdicts, criterion=criterion, unlabeled=unlabeled,
                                     observed=observed_rate(observed_pass_rate, observed_count), method=method,
                                     seed=s.seed, gate=gate)
    runs = [(run, read_verdicts(subject.resolve(run))) for run in s.judge_runs] + [("current", verdicts)]
    history = [{**row, "criterion": c, "curve": f"{c} {row['rate']}"}
               for c in calibration.results for row in dev_history(labels, runs, criterion_id=c)]
    measured = subject.resolve(s.verdicts)
    noise = noise_by_criterion(runs_path_of(unlabeled_verdicts_file or measured))
    saved = saved_validation(validation_file)
    coverage = {c: cover(r, labels, measured_verdicts=measured, corrected_verdicts=unlabeled_verdicts_file,
                         policy_version=policy_version,
                         saved=saved if saved is not None and saved.criterion_id == c else None, noise=noise)
                for c, r in calibration.results.items()}
    story = CalibrationStory(labels=labels, verdicts=verdicts, calibration=calibration, coverage=coverage,
                             history=history, runs=runs, judge_model=s.judge.model if s.judge else None,
                             verdicts_file=s.verdicts)
    _setup(story, s.judge)
    _corrections(story)
    return story
