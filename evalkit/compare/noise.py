"""Judge noise: how often a judge changes its mind when asked again, and what that does to an interval.

Input: several verdicts per (criterion, trace), one per repeat, from a judge run's sidecar
(``<verdicts>.runs.jsonl``, one ``judge-run-record`` per repeat) or from several verdict files (file
``i`` is repeat ``i``). Uncertain and error repeats abstain: they are counted, not flipped.

- flip rate: per item, the chance that two of its deciding repeats disagree,
  ``2 p f / (k (k - 1))`` for ``p`` passes and ``f`` fails of ``k``; averaged over items with k >= 2.
- unstable share: items whose deciding repeats are not all the same.
- repeat spread: the pass rate of each repeat over the items, and their standard deviation; it is
  how far a single judge run's observed rate moves on rerun, and widens the corrected interval
  (:func:`widen_for_noise`, see docs/calibration.md).
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from evalkit.calibration import CorrectedRate, read_verdicts
from evalkit.contract_files import read_models
from evalkit.contracts.judge_run import JudgeRunRecord
from evalkit.contracts.types import RateConfidenceInterval
from evalkit.stats import rate_interval, z_value

Repeat = tuple[str, str, int, str | None]
"""(criterion id, trace id, repeat, result or None for an error)."""


@dataclass(frozen=True)
class JudgeNoise:
    """One criterion's judge noise over repeated verdicts."""

    criterion_id: str
    items: int
    repeated_items: int
    """Items with at least two deciding repeats (the ones a flip rate is measured on)."""
    unstable_items: int
    flip_rate: float | None
    abstentions: int
    """Uncertain or errored repeats, left out."""
    repeat_pass_rates: tuple[float, ...]
    """Pass rate of each repeat over its deciding verdicts, by repeat number."""

    @property
    def unstable_share(self) -> float | None:
        return self.unstable_items / self.repeated_items if self.repeated_items else None

    @property
    def rate_sd(self) -> float | None:
        """Standard deviation of the observed pass rate across repeats; None with fewer than two."""
        rates = self.repeat_pass_rates
        return statistics.stdev(rates) if len(rates) >= 2 else None


def repeats_from_runs(records: Iterable[JudgeRunRecord] | str | Path) -> list[Repeat]:
    """The repeats recorded in a judge run's sidecar (the ``.runs.jsonl`` file, or its records)."""
    if isinstance(records, str | Path):
        records = read_models(records, JudgeRunRecord)
    return [(r.criterion_id, r.trace_id, r.repeat, r.result) for r in records]


def repeats_from_files(paths: Sequence[str | Path]) -> list[Repeat]:
    """The repeats in several verdict files, file ``i`` being repeat ``i``."""
    return [(v.criterion_id, v.trace_id, i, v.result) for i, p in enumerate(paths) for v in read_verdicts(p)]


def judge_noise(repeats: Iterable[Repeat]) -> dict[str, JudgeNoise]:
    """Flip rate, unstable share and repeat spread per criterion (see the module docstring)."""
    items: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    by_repeat: dict[str, dict[int, list[str]]] = defaultdict(lambda: defaultdict(list))
    abstained: dict[str, int] = defaultdict(int)
    for crit, trace, rep, result in repeats:
        items[crit].setdefault(trace, [])
        if result not in ("pass", "fail"):
            abstained[crit] += 1
            continue
        items[crit][trace].append(result)
        by_repeat[crit][rep].append(result)
    out = {}
    for crit in sorted(items):
        flips, unstable, repeated = [], 0, 0
        for results in items[crit].values():
            k = len(results)
            if k < 2:
                continue
            repeated += 1
            p = results.count("pass")
            flips.append(2 * p * (k - p) / (k * (k - 1)))
            unstable += 0 < p < k
        rates = tuple(rs.count("pass") / len(rs) for _, rs in sorted(by_repeat[crit].items()) if rs)
        out[crit] = JudgeNoise(crit, len(items[crit]), repeated, unstable,
                               sum(flips) / len(flips) if flips else None, abstained[crit], rates)
    return out


def widen_for_noise(rate: CorrectedRate, noise: JudgeNoise) -> RateConfidenceInterval | None:
    """The corrected-rate interval widened for judge noise; None when either part is missing.

    Each side's half-width ``h`` becomes ``sqrt(h^2 + (z s / (TPR + TNR - 1))^2)``: the repeat
    spread ``s`` of the observed rate, carried through the (linear) Rogan-Gladen correction, added
    in quadrature as an independent source of error. Clipped to [0, 1].
    """
    sd = noise.rate_sd
    if not rate.valid or sd is None or rate.theta is None or rate.ci is None:
        return None
    extra = z_value(rate.level) * sd / (rate.tpr + rate.tnr - 1)
    lo = rate.theta - math.hypot(rate.theta - rate.ci.lo, extra)
    hi = rate.theta + math.hypot(rate.ci.hi - rate.theta, extra)
    return rate_interval((max(0.0, lo), min(1.0, hi)), rate.level)
