"""The difference of two runs' judge-corrected pass rates, with a paired bootstrap interval.

Each run's observed pass rate is corrected for its judge's TPR and TNR (Rogan-Gladen, the one
formula in ``evalkit.calibration``). The interval resamples, in each bootstrap iteration, the paired
items (as for the raw difference) and each judge's labelled test confusion (a multinomial over its
four cells, as ``evalkit.calibration``'s bootstrap does), so it carries the uncertainty of both the
runs and the calibrations. When both runs were judged by the same calibration (equal confusion
counts), one draw of TPR/TNR serves both runs: the judge's errors then largely cancel in the
difference, which is right for one judge and would be too narrow for two, so two different judges
must have separate calibrations. Resamples lacking a class or with TPR + TNR <= 1 are skipped and counted.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalkit.calibration import Confusion, rogan_gladen
from evalkit.compare.paired import PairedTable
from evalkit.contracts.types import ConfidenceInterval
from evalkit.stats import interval


@dataclass(frozen=True)
class CorrectedDifference:
    """``new - old`` corrected pass rate; None values with ``reason`` when a correction is impossible."""

    old_corrected: float | None
    new_corrected: float | None
    difference: float | None
    ci: ConfidenceInterval | None
    level: float
    same_judge: bool
    skipped: int = 0
    reason: str | None = None


def _uncorrectable(conf: Confusion) -> str | None:
    if not conf.positives or not conf.negatives:
        return "the judge's test set lacks human passes or fails"
    if conf.tp * conf.negatives + conf.tn * conf.positives <= conf.positives * conf.negatives:
        return "the judge's TPR + TNR <= 1: no better than chance"
    return None


def _draw_rates(conf: Confusion, rng: np.random.Generator, iterations: int) -> tuple[np.ndarray, ...]:
    n = conf.total
    cells = np.array([conf.tp, conf.fn, conf.tn, conf.fp]) / n
    d = rng.multinomial(n, cells, size=iterations)
    pos, neg = d[:, 0] + d[:, 1], d[:, 2] + d[:, 3]
    with np.errstate(divide="ignore", invalid="ignore"):
        tpr, tnr = d[:, 0] / pos, d[:, 2] / neg
    usable = (pos > 0) & (neg > 0) & (d[:, 0] * neg + d[:, 2] * pos > pos * neg)
    return tpr, tnr, usable


def corrected_difference(table: PairedTable, old_judge: Confusion, new_judge: Confusion, *,
                         level: float, iterations: int, seed: int) -> CorrectedDifference:
    """The difference of the two runs' corrected pass rates on the paired items, with its interval.

    Args:
        table: the paired 2x2 table of observed verdicts.
        old_judge: the old run's judge against human labels on its test split.
        new_judge: the new run's judge, likewise (equal counts are taken as the same judge).
        level: two-sided confidence level.
        iterations: bootstrap resamples.
        seed: seed of the random generator.
    """
    same = old_judge == new_judge
    reason = _uncorrectable(old_judge) or _uncorrectable(new_judge)
    if reason or not table.n:
        return CorrectedDifference(None, None, None, None, level, same,
                                   reason=reason or "no item decided in both runs")
    old_c = float(rogan_gladen(table.old_rate, old_judge.tpr, old_judge.tnr))
    new_c = float(rogan_gladen(table.new_rate, new_judge.tpr, new_judge.tnr))
    rng = np.random.default_rng(seed)
    n = table.n
    cells = np.array([table.both_pass, table.pass_to_fail, table.fail_to_pass, table.both_fail]) / n
    d = rng.multinomial(n, cells, size=iterations)
    p_old, p_new = (d[:, 0] + d[:, 1]) / n, (d[:, 0] + d[:, 2]) / n
    tpr_o, tnr_o, ok_o = _draw_rates(old_judge, rng, iterations)
    tpr_n, tnr_n, ok_n = (tpr_o, tnr_o, ok_o) if same else _draw_rates(new_judge, rng, iterations)
    usable = ok_o & ok_n
    with np.errstate(divide="ignore", invalid="ignore"):
        diff = rogan_gladen(p_new, tpr_n, tnr_n) - rogan_gladen(p_old, tpr_o, tnr_o)
    kept = diff[usable]
    if not len(kept):
        return CorrectedDifference(old_c, new_c, new_c - old_c, None, level, same, iterations,
                                   reason="no bootstrap resample had both classes and TPR + TNR > 1")
    alpha = 1 - level
    lo, hi = np.percentile(kept, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    ci = interval((float(lo), float(hi)), level)
    return CorrectedDifference(old_c, new_c, new_c - old_c, ci, level, same,
                               iterations - len(kept))
