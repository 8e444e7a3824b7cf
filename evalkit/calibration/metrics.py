"""How well a judge agrees with human labels: TPR and TNR with Wilson intervals, and abstentions.

Accuracy is left out on purpose: with 90% passing traces, a judge that always says "pass" is 90%
accurate and useless. TPR (passes recognised) and TNR (failures caught) show both kinds of error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from evalkit.calibration.pairing import Pairing, pair_labels
from evalkit.contracts.labels import HumanLabel
from evalkit.contracts.types import RateConfidenceInterval
from evalkit.contracts.verdict import CriterionVerdict
from evalkit.stats import DEFAULT_LEVEL, wilson_interval, z_value


def _rate(k: int, n: int) -> float | None:
    return k / n if n else None


def _ci_obj(ci: RateConfidenceInterval | None) -> dict[str, Any] | None:
    return ci.to_json_obj() if ci is not None else None


@dataclass(frozen=True)
class Confusion:
    """Counts of a judge against human labels (pass is the positive class), and what was excluded."""

    tp: int
    fn: int
    fp: int
    tn: int
    deferred: int = 0
    uncertain_on_pass: int = 0
    uncertain_on_fail: int = 0
    unjudged: int = 0
    level: float = DEFAULT_LEVEL

    @classmethod
    def from_pairing(cls, pairing: Pairing, level: float = DEFAULT_LEVEL) -> Confusion:
        h, j = pairing.human, pairing.judge
        return cls(tp=int(((h == 1) & (j == 1)).sum()), fn=int(((h == 1) & (j == 0)).sum()),
                   fp=int(((h == 0) & (j == 1)).sum()), tn=int(((h == 0) & (j == 0)).sum()),
                   deferred=pairing.deferred, uncertain_on_pass=pairing.uncertain_on_pass,
                   uncertain_on_fail=pairing.uncertain_on_fail, unjudged=pairing.unjudged, level=level)

    @property
    def positives(self) -> int:
        """Human passes with a decisive verdict."""
        return self.tp + self.fn

    @property
    def negatives(self) -> int:
        """Human fails with a decisive verdict."""
        return self.tn + self.fp

    @property
    def total(self) -> int:
        return self.positives + self.negatives

    @property
    def tpr(self) -> float | None:
        """Share of human passes the judge passed; None without human passes."""
        return _rate(self.tp, self.positives)

    @property
    def tnr(self) -> float | None:
        """Share of human fails the judge failed; None without human fails."""
        return _rate(self.tn, self.negatives)

    @property
    def tpr_ci(self) -> RateConfidenceInterval | None:
        return wilson_interval(self.tp, self.positives, self.level)

    @property
    def tnr_ci(self) -> RateConfidenceInterval | None:
        return wilson_interval(self.tn, self.negatives, self.level)

    @property
    def uncertain(self) -> int:
        return self.uncertain_on_pass + self.uncertain_on_fail

    @property
    def abstention_rate(self) -> float | None:
        """How often the judge said ``uncertain`` on labelled (non-defer) traces it judged."""
        return _rate(self.uncertain, self.total + self.uncertain)

    def summary(self) -> str:
        """One line for a report: TPR and TNR with intervals, abstentions and exclusions; no accuracy."""
        def part(name: str, rate: float | None, ci: RateConfidenceInterval | None, n: int, cls: str) -> str:
            if rate is None or ci is None:
                return f"{name} n/a (no human {cls})"
            return f"{name} {rate:.3f} [{ci.lo:.3f}, {ci.hi:.3f}] on {n} human {cls}"

        abst = self.abstention_rate
        return (f"{part('TPR', self.tpr, self.tpr_ci, self.positives, 'passes')}; "
                f"{part('TNR', self.tnr, self.tnr_ci, self.negatives, 'fails')}; "
                f"uncertain {self.uncertain}" + (f" ({abst:.1%})" if abst is not None else "")
                + f"; excluded {self.deferred} defer, {self.unjudged} without verdict")

    def to_json_obj(self) -> dict[str, Any]:
        """The counts, rates, intervals and exclusions, camelCase keys."""
        return {"tp": self.tp, "fn": self.fn, "fp": self.fp, "tn": self.tn,
                "positives": self.positives, "negatives": self.negatives,
                "tpr": self.tpr, "tnr": self.tnr, "tprCi": _ci_obj(self.tpr_ci), "tnrCi": _ci_obj(self.tnr_ci),
                "deferred": self.deferred, "unjudged": self.unjudged, "uncertain": self.uncertain,
                "uncertainOnPass": self.uncertain_on_pass, "uncertainOnFail": self.uncertain_on_fail,
                "abstentionRate": self.abstention_rate}


def confusion(labels: Sequence[HumanLabel], verdicts: Sequence[CriterionVerdict], *,
              criterion_id: str | None = None, level: float = DEFAULT_LEVEL) -> Confusion:
    """The judge's confusion counts against human labels, joined on trace id.

    ``defer`` labels, ``uncertain`` verdicts and labels without a verdict are excluded and counted.

    Args:
        labels: human labels, at most one per trace (for the criterion).
        verdicts: the judge's verdicts.
        criterion_id: the criterion; may be None when the inputs hold at most one.
        level: confidence level of the Wilson intervals.

    Returns:
        The counts with TPR, TNR, their intervals and the abstention figures.
    """
    z_value(level)
    return Confusion.from_pairing(pair_labels(labels, verdicts, criterion_id=criterion_id), level)
