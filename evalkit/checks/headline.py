"""A scorecard's headline numbers: the gate, and each criterion's pass rate with its interval."""

from __future__ import annotations

from evalkit.contracts.scorecard import Scorecard
from evalkit.contracts.summary import CriterionHeadline, Headline


def _judge(score) -> str | None:
    if not score.judges:
        return None
    return "; ".join(f"{j.provider}/{j.model} prompt {(j.prompt_digest or 'not recorded')[:19]}" for j in score.judges)


def scorecard_headline(card: Scorecard) -> Headline:
    """The gate verdict with its reasons, and every criterion that has a pass rate: corrected where its
    judge is validated, else observed (Wilson interval), over the items it decided.

    A criterion the scorecard could not rate (every trace skipped) is listed without a rate, so it is
    seen missing rather than left out.
    """
    criteria = []
    for component in card.components:
        for score in component.criteria:
            counts = score.counts
            decided = counts.passed + counts.failed
            chosen = score.corrected or score.pass_rate
            status = "deterministic" if score.track == "deterministic" else (
                "corrected" if score.corrected is not None else score.corrected_note or "observed")
            criteria.append(CriterionHeadline(
                criterion=score.criterion_id, rate=chosen.rate if chosen else None,
                lo=chosen.lo if chosen else None, hi=chosen.hi if chosen else None,
                corrected=score.corrected is not None,
                observed=score.pass_rate.rate if score.pass_rate else None, n=decided, status=status,
                judge=_judge(score)))
    reasons = [f"{c.component_id} {c.component_name}: {'; '.join(c.reasons)}"
               for c in card.components if c.verdict != "pass" and c.reasons]
    return Headline(criteria=criteria, gate=card.verdict, gate_reasons=reasons)
