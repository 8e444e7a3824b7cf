"""From outcomes to a scorecard: counts, pass rates with Wilson intervals, corrected rates, the gate.

The gate is the matrix's: a failed CRIT or HIGH criterion fails its component; with none failed, an
uncertain, errored, missing or skipped CRIT or HIGH outcome makes it incomplete (a gating criterion nobody
decided is not a pass; skipped is never a fail either); a skip rate of at least :data:`SKIP_WARN_RATE`
warns. The run takes its worst component (fail > incomplete > pass).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evalkit.calibration import adjusted_wald_interval, judge_status, rogan_gladen
from evalkit.checks.router import Outcome, RoutedCriterion
from evalkit.contracts.scorecard import (
    ComponentScore,
    CriterionScore,
    OutcomeCounts,
    RateInterval,
    RunVerdict,
    Scorecard,
)
from evalkit.errors import InputError
from evalkit.stats import DEFAULT_LEVEL, wilson_bounds

GATING_SEVERITIES = ("CRIT", "HIGH")
"""Severities whose failure fails the component."""

SKIP_WARN_RATE = 0.5
"""A criterion (or component) with at least this share of skipped outcomes is warned about."""

_STATUS_FIELD = {"pass": "passed", "fail": "failed", "uncertain": "uncertain", "error": "errored",
                 "missing": "missing", "skipped": "skipped"}
_ORDER: dict[RunVerdict, int] = {"pass": 0, "incomplete": 1, "fail": 2}


@dataclass(frozen=True)
class JudgeValidation:
    """What the scorecard needs from a judge's calibration to correct its pass rate.

    ``labelled_pass``/``labelled_fail`` (the test labels of each class) give the corrected rate its
    interval (adjusted Wald); without them only the corrected point is reported.
    """

    criterion_id: str
    status: str
    tpr: float | None
    tnr: float | None
    labelled_pass: int | None = None
    labelled_fail: int | None = None

    @classmethod
    def of(cls, source: Any) -> JudgeValidation:
        """From a ``ValidationResult``, a ``CriterionCalibration`` or a ``JudgeValidation``."""
        if isinstance(source, JudgeValidation):
            return source
        test = getattr(source, "test", None)
        if test is not None:  # CriterionCalibration: the confusion on the test split has the class counts
            return cls(source.criterion_id, judge_status(test), test.tpr, test.tnr,
                       test.tp + test.fn, test.tn + test.fp)
        return cls(source.criterion_id, source.status, source.tpr, source.tnr)


def _corrected(passed: int, n: int, v: JudgeValidation, level: float) -> tuple[RateInterval | None, str]:
    if v.status != "validated":
        return None, f"judge {v.status}: no corrected rate"
    if v.tpr is None or v.tnr is None or v.tpr + v.tnr <= 1:
        return None, "judge TPR + TNR not above 1: the rate cannot be corrected"
    p = passed / n
    theta = float(rogan_gladen(p, v.tpr, v.tnr))
    if v.labelled_pass is None or v.labelled_fail is None:
        return None, (f"corrected {theta:.3f}; no interval: the labelled pass/fail counts of the test split "
                      "were not given")
    lo, hi = adjusted_wald_interval(p, v.tnr, v.tpr, n, v.labelled_fail, v.labelled_pass, level)
    lo, hi = min(lo, theta), max(hi, theta)  # the shifted centre may sit beside a clipped point
    return RateInterval(rate=theta, lo=lo, hi=hi, level=level, method="rogan-gladen+adjusted-wald"), (
        f"corrected with TPR {v.tpr:.3f}, TNR {v.tnr:.3f} ({v.labelled_pass} + {v.labelled_fail} test labels)")


def _criterion_score(rc: RoutedCriterion, counts: dict[str, int], failing: list[str], trace_count: int,
                     validation: JudgeValidation | None, level: float) -> CriterionScore:
    seen = sum(counts.values())
    counts["missing"] += max(0, trace_count - seen)  # a trace with no outcome at all is missing too
    oc = OutcomeCounts(**{_STATUS_FIELD[k]: v for k, v in counts.items()})
    decided = oc.passed + oc.failed
    rate = None
    if decided:
        lo, hi = wilson_bounds(oc.passed, decided, level)  # type: ignore[misc]
        rate = RateInterval(rate=oc.passed / decided, lo=lo, hi=hi, level=level, method="wilson")
    corrected, note = None, None
    if validation is not None and rc.track != "deterministic" and decided:
        corrected, note = _corrected(oc.passed, decided, validation, level)
    total = sum(counts.values())
    return CriterionScore(
        criterion_id=rc.criterion_id, severity=rc.criterion.severity, check_method=rc.criterion.check_method,
        track=rc.track, counts=oc, pass_rate=rate, corrected=corrected, corrected_note=note,
        skip_rate=oc.skipped / total if total else 0.0, gating=rc.criterion.severity in GATING_SEVERITIES,
        failing_traces=failing)


def gate(criteria: Sequence[CriterionScore]) -> tuple[RunVerdict, list[str]]:
    """A component's verdict from its criteria, and the reasons (empty on a clean pass)."""
    failed = [c for c in criteria if c.gating and c.counts.failed]
    if failed:
        return "fail", [f"{c.severity} {c.criterion_id} failed on {c.counts.failed} trace(s)" for c in failed]
    reasons = []
    for c in criteria:
        if not c.gating:
            continue
        open_ = [(n, what) for n, what in ((c.counts.uncertain, "uncertain"), (c.counts.errored, "errored"),
                                           (c.counts.missing, "missing"), (c.counts.skipped, "skipped")) if n]
        if open_:
            reasons.append(f"{c.severity} {c.criterion_id} " + ", ".join(f"{n} {what}" for n, what in open_))
    return ("incomplete", reasons) if reasons else ("pass", [])


def worst(verdicts: Iterable[RunVerdict]) -> RunVerdict:
    """fail > incomplete > pass; ``pass`` for none."""
    return max(verdicts, key=_ORDER.__getitem__, default="pass")


@dataclass
class Tally:
    """Outcome counts and failing trace ids per criterion: all a scorecard keeps of the outcomes."""

    routed: Sequence[RoutedCriterion]
    counts: dict[str, dict[str, int]]
    failing: dict[str, list[str]]


def tally_outcomes(routed: Sequence[RoutedCriterion], outcomes: Iterable[Outcome], *,
                   into: Tally | None = None) -> Tally:
    """Count outcomes per criterion, streaming (memory grows with criteria and failures, not traces).

    Args:
        routed: the criteria.
        outcomes: their outcomes.
        into: a tally to add to (a run counted batch by batch); a new one when None.

    Raises:
        InputError: an outcome for a criterion the matrix does not have.
    """
    if into is None:
        into = Tally(routed, {rc.criterion_id: dict.fromkeys(_STATUS_FIELD, 0) for rc in routed},
                     {rc.criterion_id: [] for rc in routed})
    counts, failing = into.counts, into.failing
    for o in outcomes:
        table = counts.get(o.criterion_id)
        if table is None:
            raise InputError(f"outcome for criterion {o.criterion_id!r} on trace {o.trace_id!r}, which the matrix "
                             f"does not have (known: {', '.join(counts)})", path="outcomes")
        table[o.status] += 1
        if o.status == "fail":
            failing[o.criterion_id].append(o.trace_id)
    return into


def build_scorecard(routed: Sequence[RoutedCriterion], outcomes: Iterable[Outcome] | Tally, *, subject: str,
                    matrix_version: str, generated_at: str, trace_count: int,
                    calibrations: Mapping[str, Any] | None = None, level: float = DEFAULT_LEVEL) -> Scorecard:
    """The scorecard of a run.

    Args:
        routed: the matrix's criteria, from :func:`evalkit.checks.route`.
        outcomes: each criterion's outcome per trace (streamed), or their :func:`tally_outcomes`.
        subject: the subject's name.
        matrix_version: the eval matrix version.
        generated_at: the timestamp to record (injected, never read from the clock here).
        trace_count: the traces evaluated; a criterion with fewer outcomes has the rest counted missing.
        calibrations: criterion id -> its judge's validation (``ValidationResult``,
            ``CriterionCalibration`` or :class:`JudgeValidation`); a validated judge's rate is corrected.
        level: confidence level of every interval.

    Raises:
        InputError: an outcome for a criterion the matrix does not have.
    """
    tally = outcomes if isinstance(outcomes, Tally) else tally_outcomes(routed, outcomes)
    counts, failing = tally.counts, tally.failing
    checks = {k: JudgeValidation.of(v) for k, v in (calibrations or {}).items()}
    components: dict[str, list[CriterionScore]] = {}
    names: dict[str, str] = {}
    for rc in routed:
        names[rc.component_id] = rc.component_name
        components.setdefault(rc.component_id, []).append(_criterion_score(
            rc, dict(counts[rc.criterion_id]), list(failing[rc.criterion_id]), trace_count, checks.get(rc.criterion_id), level))
    scores, warnings = [], []
    for cid, criteria in components.items():
        verdict, reasons = gate(criteria)
        scores.append(ComponentScore(component_id=cid, component_name=names[cid], verdict=verdict,
                                     reasons=reasons, criteria=criteria))
        for c in criteria:
            if c.skip_rate >= SKIP_WARN_RATE:
                warnings.append(f"{cid} {c.criterion_id}: {c.skip_rate:.0%} of outcomes skipped")
        total = sum(sum(c.counts.model_dump().values()) for c in criteria)
        skipped = sum(c.counts.skipped for c in criteria)
        if total and skipped / total >= SKIP_WARN_RATE and len(criteria) > 1:
            warnings.append(f"{cid}: {skipped / total:.0%} of its outcomes skipped")
    unknown = sorted(set(checks) - set(counts))
    if unknown:
        warnings.append(f"calibrations for criteria the matrix does not have: {', '.join(unknown)}")
    return Scorecard(subject=subject, matrix_version=matrix_version, generated_at=generated_at,
                     trace_count=trace_count, verdict=worst(s.verdict for s in scores), components=scores,
                     warnings=warnings)
