"""Writing a change request: which failing cases to hand over, grounded, and the remedy to propose.

The evaluator never asks for a fix it cannot ground: a failing outcome without a ref is not handed over
(it is counted in :attr:`Picked.ungrounded`). In a variance swing the cases whose outcome flipped between
repeats come first (the fix asked for is consistency); in an accuracy swing, every failing case.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from evalkit.contracts.edd import EddChangeRequest, FailingCaseRef
from evalkit.edd.results import EvalResult, FailingOutcome

MAX_CASES_PER_REQUEST = 20
"""A request names at most this many cases (grouped by criterion, worst first); the rest are counted in it."""
MAX_CRITIQUE_CHARS = 600


@dataclass(frozen=True)
class Picked:
    """The failing cases a request hands over, and what was left out and why."""

    cases: list[FailingCaseRef]
    ungrounded: int = 0
    """Failing outcomes with no ref: never handed over."""
    left_out: int = 0
    """Grounded failing cases beyond :data:`MAX_CASES_PER_REQUEST`."""
    by_criterion: dict[str, int] = field(default_factory=dict)
    """Grounded failing cases per criterion (all of them, not only those named)."""


def pick_failing_cases(result: EvalResult, phase: str, *, limit: int = MAX_CASES_PER_REQUEST) -> Picked:
    """One failing outcome per (case, criterion), grounded, flipping ones first in a variance swing."""
    flipping = {(case, crit) for case, crit in result.unstable}
    first: dict[tuple[str, str], FailingOutcome] = {}
    ungrounded = 0
    for f in result.failing:
        if not f.refs:
            ungrounded += 1
            continue
        first.setdefault((f.case_id, f.criterion_id), f)
    severity = {c.criterion_id: c.severity for c in result.criteria}
    order = {"CRIT": 0, "HIGH": 1, "MED": 2, "LOW": 3}

    def key(item: tuple[tuple[str, str], FailingOutcome]) -> tuple:
        (case, crit), _ = item
        return (phase == "variance" and (case, crit) not in flipping, order.get(severity.get(crit, "LOW"), 4),
                crit, case)

    chosen = sorted(first.items(), key=key)
    by_criterion: dict[str, int] = {}
    for (_, crit), _f in chosen:
        by_criterion[crit] = by_criterion.get(crit, 0) + 1
    cases = [FailingCaseRef(case_id=f.case_id, criterion_id=f.criterion_id,
                            critique=_clip(f.critique or f"failed {f.criterion_id} on {f.trace_id}"), refs=f.refs)
             for _, f in chosen[:limit]]
    return Picked(cases, ungrounded, max(0, len(chosen) - limit), by_criterion)


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_CRITIQUE_CHARS else text[: MAX_CRITIQUE_CHARS - 1] + "\u2026"


def proposed_remedy(result: EvalResult, picked: Picked, phase: str) -> str:
    """The remedy in words: per criterion, what it demands, what it catches, and what the judge saw.

    A hypothesis for whoever builds the agent, drawn from the matrix's statements and evidence sources
    (which name the failure modes) and the critiques; never a patch.
    """
    info = {c.criterion_id: c for c in result.criteria}
    lines = []
    if phase == "variance":
        lines.append(f"Make the agent consistent first: {len(result.unstable)} (case, criterion) pair(s) changed "
                     f"outcome between {result.repeats} repeats of the same case.")
    else:
        lines.append("Make the agent pass these criteria on the cases below.")
    for crit, count in picked.by_criterion.items():
        c = info.get(crit)
        rate = f"{c.passed}/{c.decided} passed" if c is not None else "rate unknown"
        line = f"- {crit} ({c.severity if c else '?'}; {rate}; {count} failing case(s))"
        if c is not None and c.statement:
            line += f": the agent must satisfy '{c.statement}'"
        if c is not None and c.evidence:
            line += f" [{c.evidence}]"
        sample = next((fc.critique for fc in picked.cases if fc.criterion_id == crit), None)
        if sample:
            line += f". The judge saw: {sample}"
        lines.append(line)
    if picked.left_out:
        lines.append(f"({picked.left_out} more grounded failing case(s) are not listed.)")
    if picked.ungrounded:
        lines.append(f"({picked.ungrounded} failing outcome(s) carry no ref and are not handed over.)")
    return "\n".join(lines)


def change_request(result: EvalResult, *, swing: int, subject: str, phase: str, remedy_target: str,
                   request_id: str | None = None) -> tuple[EddChangeRequest | None, Picked]:
    """The change request of a swing, or None when no failing case can be grounded.

    The request id is ``SUBJECT-swing-N``: a resumed loop writes the same request again.
    """
    picked = pick_failing_cases(result, phase)
    if not picked.cases:
        return None, picked
    request = EddChangeRequest(request_id=request_id or f"{subject}-swing-{swing}", swing=swing, subject=subject,
                               remedy_target=remedy_target, failing_cases=picked.cases,
                               proposed_remedy=proposed_remedy(result, picked, phase), status="requested")
    return request, picked
