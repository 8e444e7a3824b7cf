"""Every criterion of a subject calibrated at once, with the conclusion and label budget the report shows.

This is what notebook 02 calls: the cells draw, the package decides. A criterion that cannot be
measured (no verdicts, no test labels) is kept with its reason, never dropped silently.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from evalkit.calibration.correction import DEFAULT_ITERATIONS, DEFAULT_METHOD
from evalkit.calibration.criterion import CriterionCalibration, calibrate_criterion
from evalkit.calibration.metrics import DEFAULT_LEVEL
from evalkit.calibration.planning import plan_labels
from evalkit.contracts.labels import HumanLabel
from evalkit.contracts.verdict import CriterionVerdict
from evalkit.errors import InputError

BUDGET_CLAMP = 0.99
"""Planning needs rates strictly inside (0, 1): a judge measured perfect on a few labels is planned as 0.99."""

BUDGET_MIN_PER_CLASS = 10
"""Fewest labels per class a plan asks for, so TPR and TNR each rest on more than a handful."""


@dataclass(frozen=True)
class Calibrations:
    """The calibrated criteria, and the ones that could not be measured with the reason why."""

    results: dict[str, CriterionCalibration]
    skipped: dict[str, str] = field(default_factory=dict)

    def conclusion(self) -> str:
        """The closing paragraph: each judge's status as the package decided it, and its corrected rate."""
        parts = []
        for c, r in self.results.items():
            rate = r.rate
            text = f"{c}: judge {r.status_text}."
            if rate.valid:
                given = " (given)" if r.observed_from == "given" else ""
                text += (f" Corrected pass rate {rate.theta:.3f}, {rate.level:.0%} CI [{rate.ci.lo:.3f}, "
                         f"{rate.ci.hi:.3f}], from an observed {rate.p_obs:.3f} on {rate.n_unlabeled} "
                         f"traces{given}.")
            else:
                text += f" No corrected pass rate: {rate.reason}."
            parts.append(text)
        parts += [f"{c}: not calibrated ({why})." for c, why in self.skipped.items()]
        if not self.results:
            return " ".join(parts) or "No criterion to calibrate: the labels name none."
        if any(r.status == "unvalidated" for r in self.results.values()):
            parts.append("An unvalidated judge is not to be trusted as it is (a corrected rate, where there is "
                         "one, is shown with its interval all the same): iterate its prompt on dev, and label "
                         "more test traces where a rate is undefined or an interval is wide.")
        if any(r.rate.valid for r in self.results.values()):
            parts.append("Report the corrected pass rates with their intervals, not the judge's raw rates.")
        return " ".join(parts)


def observed_rate(pass_rate: float | None, count: int | None) -> tuple[float, int] | None:
    """``(pass rate, count)`` when both are given, None when neither is.

    Raises:
        InputError: only one of them is given (a rate means nothing without how many traces it is on).
    """
    if (pass_rate is None) != (count is None):
        raise InputError("an observed pass rate and its count go together (e.g. 0.857 on 2400 traces); "
                         f"got rate {pass_rate!r} and count {count!r}", path="observed")
    return None if pass_rate is None else (pass_rate, count)  # type: ignore[return-value]


def criteria_of(labels: Sequence[HumanLabel], verdicts: Sequence[CriterionVerdict]) -> list[str]:
    """The criteria the labels name, or, when no label names one, those the verdicts name."""
    named = sorted({lb.criterion_id for lb in labels if lb.criterion_id})
    return named or sorted({v.criterion_id for v in verdicts})


def calibrate_criteria(labels: Sequence[HumanLabel], verdicts: Sequence[CriterionVerdict], *,
                       criterion: str | None = None,
                       unlabeled: Sequence[CriterionVerdict] | None = None,
                       observed: tuple[float, int] | None = None,
                       method: str = DEFAULT_METHOD, level: float = DEFAULT_LEVEL,
                       iterations: int = DEFAULT_ITERATIONS, seed: int = 0, gate: str = "point") -> Calibrations:
    """Calibrate the judge on each criterion (or on one).

    Args:
        labels: human labels.
        verdicts: the judge's verdicts.
        criterion: only this criterion; an unknown one is an error listing the known ones.
        unlabeled: the verdicts to correct (default: verdicts on traces without a label).
        observed: ``(pass rate, count)`` reported elsewhere; it belongs to one criterion, so it needs
            ``criterion`` when the labels name several.
        method, level, iterations, seed, gate: see :func:`calibrate_criterion`.

    Raises:
        InputError: an unknown criterion, or an observed rate without saying which criterion it is for.
    """
    known = criteria_of(labels, verdicts)
    if criterion is not None and criterion not in known:
        raise InputError(f"unknown criterion {criterion!r}; the labels and verdicts name: "
                         f"{', '.join(known) or 'none'}", path="criterion")
    chosen = [criterion] if criterion is not None else known
    if observed is not None and len(chosen) > 1:
        raise InputError(f"an observed pass rate is one judge's rate on one criterion, and the labels name "
                         f"{len(chosen)} ({', '.join(chosen)}); set the criterion it is for", path="observed")
    results, skipped = {}, {}
    for c in chosen:
        try:
            results[c] = calibrate_criterion(labels, verdicts, criterion_id=c, unlabeled=unlabeled,
                                             observed=observed, method=method, level=level,
                                             iterations=iterations, seed=seed, gate=gate)
        except InputError as exc:  # this criterion cannot be measured; the others still can
            if exc.path in ("observed", "n", "method", "level", "iterations", "gate"):
                raise
            skipped[c] = exc.message
    return Calibrations(results, skipped)


def label_budget(results: dict[str, CriterionCalibration], target_width: float) -> list[dict[str, Any]]:
    """Labels per class for a corrected-rate interval of half, once and twice ``target_width``.

    Rows ``{criterion, target width, passes, fails, note}``; a width out of reach says why in ``note``.
    Criteria without a valid correction have no rows (there is no rate to plan around).
    """
    rows = []
    for c, r in results.items():
        rate = r.rate
        if not rate.valid:
            continue
        for width in (target_width * 2, target_width, target_width / 2):
            row: dict[str, Any] = {"criterion": c, "target width": width, "passes": None, "fails": None, "note": ""}
            try:
                plan = plan_labels(width, tpr=min(rate.tpr, BUDGET_CLAMP), tnr=min(rate.tnr, BUDGET_CLAMP),
                                   pass_rate=min(max(rate.theta, 1 - BUDGET_CLAMP), BUDGET_CLAMP),
                                   n_unlabeled=rate.n_unlabeled, min_per_class=BUDGET_MIN_PER_CLASS)
                row.update(passes=plan.passes, fails=plan.fails,
                           note=f"about {plan.random_sample_size} traces labelled at random"
                           if plan.random_sample_size else "")
            except ValueError as exc:  # out of reach with this many unlabeled traces, or judge at chance
                row["note"] = exc.message if isinstance(exc, InputError) else str(exc)
            rows.append(row)
    return rows
