"""What one evaluation of the subject says, in the loop's terms, and the rule that calls a swing an improvement.

An :class:`EvalResult` is what the loop keeps of an eval run: per criterion the pass rate with its Wilson
interval, the failing outcomes (with critique and refs, the material of a change request), whether the
repeats were stable, and a digest of the scorecard. It is journaled whole, so a resumed loop needs no
eval-run folder to decide what comes next.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

from pydantic import Field

from evalkit.contracts.base import CamelContract
from evalkit.contracts.types import RateConfidenceInterval
from evalkit.contracts.verdict import Ref
from evalkit.io.canonical import canonical_dumps
from evalkit.stats import wilson_interval


class CriterionRate(CamelContract):
    """One criterion's pass rate over its decided outcomes (pass + fail) and the 95% Wilson interval."""

    criterion_id: str
    severity: str = "MED"
    statement: str = ""
    evidence: str = ""
    """The matrix's evidence source: names the failure mode the criterion catches."""
    passed: int = Field(ge=0)
    failed: int = Field(ge=0)
    undecided: int = Field(default=0, ge=0)
    """Uncertain, errored or missing outcomes: neither pass nor fail."""
    skipped: int = Field(default=0, ge=0)

    @property
    def decided(self) -> int:
        return self.passed + self.failed

    @property
    def rate(self) -> float | None:
        return self.passed / self.decided if self.decided else None

    @property
    def interval(self) -> RateConfidenceInterval | None:
        """The pass rate's 95% Wilson interval; None when nothing was decided."""
        return wilson_interval(self.passed, self.decided)


class FailingOutcome(CamelContract):
    """One failed (case, criterion) outcome of one repeat, with what the verdict said and cited."""

    case_id: str
    trace_id: str
    criterion_id: str
    critique: str = ""
    refs: list[Ref] = Field(default_factory=list)


class EvalResult(CamelContract):
    """One evaluation of the subject, as the loop decides on it."""

    repeats: int = Field(ge=1)
    verdict: str
    """The scorecard's gate verdict: pass, incomplete or fail."""
    criteria: list[CriterionRate]
    failing: list[FailingOutcome] = Field(default_factory=list)
    stability_measured: bool = Field(strict=True)
    """True when every case ran at least twice, so the spread over repeats could be measured."""
    stable: bool = Field(strict=True)
    max_variance: float = Field(default=0.0, ge=0)
    unstable: list[list[str]] = Field(default_factory=list)
    """``[case id, criterion id]`` pairs whose outcome was not the same decided one on every repeat: they
    flipped, or a repeat was uncertain, errored or missing."""
    unsteady: list[str] = Field(default_factory=list)
    """What each unstable pair did over its repeats (``case-1 escalation-correct: 4 pass, 1 uncertain of 5
    repeats``), worst first."""
    missing_runs: int = Field(default=0, ge=0)
    """Agent runs that gave no trace: their cases were not evaluated on that repeat."""
    scorecard_digest: str = ""
    eval_dir: str | None = None
    warnings: list[str] = Field(default_factory=list)

    @property
    def accuracy_met(self) -> bool:
        """The gate passes and no criterion failed on any case or repeat (full accuracy, MED/LOW included)."""
        return self.verdict == "pass" and all(c.failed == 0 for c in self.criteria)

    @property
    def evidence_gaps(self) -> list[str]:
        """Why this evaluation cannot be green whatever its rates say: a gating (CRIT or HIGH) criterion
        skipped, undecided (uncertain, errored, missing) or never evaluated on some case or repeat, or agent
        runs that gave no trace. Empty when every gating criterion was decided everywhere."""
        from evalkit.checks import GATING_SEVERITIES

        gaps = []
        for c in self.criteria:
            if c.severity not in GATING_SEVERITIES:
                continue
            total = c.decided + c.undecided + c.skipped
            if not total:
                gaps.append(f"{c.severity} {c.criterion_id} never evaluated")
                continue
            open_ = [f"{n} {what}" for n, what in ((c.skipped, "skipped"),
                                                    (c.undecided, "undecided (uncertain, errored or missing)"))
                     if n]
            if open_:
                gaps.append(f"{c.severity} {c.criterion_id} {', '.join(open_)} of {total} outcomes")
        if self.missing_runs:
            gaps.append(f"{self.missing_runs} agent run(s) gave no trace")
        return gaps

    @property
    def evidence_complete(self) -> bool:
        """Every gating criterion was decided (pass or fail) on every case and repeat."""
        return not self.evidence_gaps

    def rates(self) -> dict[str, float | None]:
        """Pass rate per criterion, for the ledger and the notebook."""
        return {c.criterion_id: c.rate for c in self.criteria}


def scorecard_digest(card_json: object) -> str:
    """sha256 of the scorecard's canonical JSON: two swings with equal digests scored the same."""
    return "sha256:" + hashlib.sha256(canonical_dumps(card_json).encode("utf-8")).hexdigest()


def carry_stability(result: EvalResult, previous: Sequence[EvalResult]) -> EvalResult:
    """An accuracy swing runs each case once: it carries the stability the last measuring swing found."""
    if result.stability_measured:
        return result
    measured = next((r for r in reversed(previous) if r.stability_measured), None)
    if measured is None:
        return result.model_copy(update={"stable": False})
    return result.model_copy(update={"stable": measured.stable, "max_variance": measured.max_variance,
                                     "unstable": measured.unstable, "unsteady": measured.unsteady})


def _bounds(c: CriterionRate) -> tuple[float, float] | None:
    ci = c.interval
    return None if ci is None else (ci.lo, ci.hi)


def improvement(previous: EvalResult, current: EvalResult) -> tuple[bool, str]:
    """Whether ``current`` improved on ``previous``, and why (said in the ledger).

    An improvement is a move the previous swing's own noise cannot explain:

    - rates: some criterion's pass rate now lies above the previous swing's 95% Wilson upper bound, and
      no criterion's rate fell below its previous Wilson lower bound (a regression cancels a gain); or
    - stability: both swings measured repeats, fewer (case, criterion) pairs flipped between repeats,
      and no criterion regressed.

    A gain inside the previous interval (18/20 -> 19/20 on one criterion with n=20 is inside) is not counted:
    the agent can show it by chance. Reaching 100% from any failing rate always clears the upper bound.
    """
    before = {c.criterion_id: c for c in previous.criteria}
    gains, losses = [], []
    for c in current.criteria:
        old = before.get(c.criterion_id)
        if old is None or c.rate is None or old.rate is None:
            continue
        lo, hi = _bounds(old) or (0.0, 1.0)
        if c.rate > hi:
            gains.append(f"{c.criterion_id} {old.rate:.3f} -> {c.rate:.3f} (above {hi:.3f})")
        elif c.rate < lo:
            losses.append(f"{c.criterion_id} {old.rate:.3f} -> {c.rate:.3f} (below {lo:.3f})")
    if losses:
        return False, "regressed: " + "; ".join(losses)
    if gains:
        return True, "improved: " + "; ".join(gains)
    if previous.stability_measured and current.stability_measured and len(current.unstable) < len(previous.unstable):
        return True, f"steadier: {len(previous.unstable)} -> {len(current.unstable)} flipping (case, criterion) pairs"
    return False, "no criterion moved beyond its previous interval"


def criteria_from_counts(rows: Iterable[tuple[str, str, int, int, int, int]], info: dict[str, tuple[str, str]]
                         ) -> list[CriterionRate]:
    """Criterion rates from ``(criterion, severity, passed, failed, undecided, skipped)`` rows."""
    return [CriterionRate(criterion_id=cid, severity=sev, statement=info.get(cid, ("", ""))[0],
                          evidence=info.get(cid, ("", ""))[1], passed=p, failed=f, undecided=u, skipped=s)
            for cid, sev, p, f, u, s in rows]
