"""The judge-corrected pass rate (Rogan-Gladen) and its confidence interval, three ways.

A judge with true-positive rate TPR and true-negative rate TNR reports passes at
``p_obs = theta * TPR + (1 - theta) * (1 - TNR)``; solving for the true rate ``theta`` gives the
Rogan-Gladen estimator (Rogan & Gladen 1978). Its interval must carry the uncertainty of TPR and TNR
(measured on a small labelled test set) and, unless the unlabeled set is huge, of ``p_obs`` too:

- ``bootstrap``: judgy's method. Resample the labelled test pairs, keep ``p_obs`` fixed, clip each
  resample to [0, 1], take percentiles; resamples missing a class or with TPR + TNR <= 1 are skipped
  (and counted). Resampling n pairs with replacement is a multinomial draw over the four cells of
  the confusion matrix, so all resamples are drawn at once instead of one Python loop each.
- ``bootstrap-full``: the same, also resampling the unlabeled predictions (binomial ``p_obs``).
- ``adjusted-wald``: the closed-form interval of Lang & Reiczigel (2014), as used by Lee et al.
  (2025, "How to correctly report LLM-as-a-judge evaluations"): add-2 smoothing of TPR and TNR,
  Agresti-Coull smoothing of ``p_obs``, a delta-method standard error over both samples, and a
  bias shift.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from evalkit.calibration.binary import as_binary
from evalkit.calibration.defaults import DEFAULT_ITERATIONS, DEFAULT_METHOD, METHODS
from evalkit.calibration.metrics import DEFAULT_LEVEL, z_value
from evalkit.contracts.types import RateConfidenceInterval
from evalkit.errors import InputError
from evalkit.io.json_case import camel_json
from evalkit.stats import rate_interval


def rogan_gladen(p_obs: Any, tpr: Any, tnr: Any, *, clip: bool = True) -> Any:
    """The true pass rate implied by an observed pass rate and the judge's TPR and TNR.

    ``theta = (p_obs + TNR - 1) / (TPR + TNR - 1)``, clipped to [0, 1] unless ``clip`` is False.
    Works on floats and on numpy arrays alike; the caller makes sure ``TPR + TNR > 1``.
    """
    theta = (p_obs + tnr - 1) / (tpr + tnr - 1)
    return np.clip(theta, 0, 1) if clip else theta


@dataclass(frozen=True)
class CorrectedRate:
    """A corrected pass rate with its interval.

    ``theta`` and its interval ``ci`` are None when ``valid`` is False (``reason`` says why);
    ``p_obs`` is reported whenever there was one to correct (None only when neither unlabeled
    verdicts nor an observed rate were given). ``skipped`` counts bootstrap resamples without a usable correction.
    """

    theta: float | None
    ci: RateConfidenceInterval | None
    p_obs: float | None
    tpr: float | None
    tnr: float | None
    n_test: int
    n_test_pass: int
    n_test_fail: int
    n_unlabeled: int
    method: str
    level: float
    valid: bool
    reason: str | None = None
    iterations: int | None = None
    skipped: int | None = None

    def to_json_obj(self) -> dict[str, Any]:
        """The result as camelCase JSON, the interval as ``ci: {lo, hi, level}``."""
        return camel_json(self)


def _counts(labels: np.ndarray, preds: np.ndarray) -> tuple[int, int, int, int]:
    tp = int(np.count_nonzero(labels & preds))
    pos = int(np.count_nonzero(labels))
    tn = int(np.count_nonzero((1 - labels) & (1 - preds)))
    return tp, pos, tn, len(labels) - pos


def _better_than_chance(tp: Any, pos: Any, tn: Any, neg: Any) -> Any:
    """TPR + TNR > 1, decided on integer counts (tp/pos + tn/neg > 1), for scalars and arrays."""
    return tp * neg + tn * pos > pos * neg


def _percentiles(samples: np.ndarray, level: float) -> tuple[float, float]:
    alpha = 1 - level
    lo, hi = np.percentile(samples, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return float(lo), float(hi)


def _bootstrap(counts: tuple[int, int, int, int], p_obs: float, n_unlabeled: int, *, full: bool,
               level: float, iterations: int, seed: int) -> tuple[float | None, float | None, int]:
    tp, pos, tn, neg = counts
    n = pos + neg
    rng = np.random.default_rng(seed)
    cells = np.array([tp, pos - tp, tn, neg - tn], dtype=np.float64) / n
    draws = rng.multinomial(n, cells, size=iterations)
    b_tp, b_pos, b_tn = draws[:, 0], draws[:, 0] + draws[:, 1], draws[:, 2]
    b_neg = n - b_pos
    usable = (b_pos > 0) & (b_neg > 0)
    usable &= _better_than_chance(b_tp, b_pos, b_tn, b_neg)
    p = rng.binomial(n_unlabeled, p_obs, size=iterations) / n_unlabeled if full else p_obs
    with np.errstate(divide="ignore", invalid="ignore"):
        theta = rogan_gladen(p, b_tp / b_pos, b_tn / b_neg)
    kept = theta[usable]
    skipped = iterations - len(kept)
    if not len(kept):
        return None, None, skipped
    lo, hi = _percentiles(kept, level)
    return lo, hi, skipped


def adjusted_wald_interval(p: float, tnr: float, tpr: float, n: int, m_fail: int, m_pass: int,
                           level: float = DEFAULT_LEVEL) -> tuple[float, float]:
    """The adjusted Wald interval for a corrected pass rate (Lang & Reiczigel 2014; Lee et al. 2025).

    Args:
        p: observed pass rate on the ``n`` unlabeled traces.
        tnr: the judge's TNR, measured on ``m_fail`` labelled fails.
        tpr: the judge's TPR, measured on ``m_pass`` labelled passes.
        n: number of unlabeled traces.
        m_fail: labelled fails.
        m_pass: labelled passes.
        level: confidence level.

    Returns:
        ``(lower, upper)`` clipped to [0, 1]; ``(0, 1)`` when the smoothed TPR + TNR is not above 1.
    """
    z = z_value(level)
    z2 = z * z
    # Agresti-Coull style smoothing: z^2/2 pseudo-successes for p, one success and one failure for each rate.
    p_s, n_s = (n * p + z2 / 2) / (n + z2), n + z2
    q0, m0 = (m_fail * tnr + 1) / (m_fail + 2), m_fail + 2
    q1, m1 = (m_pass * tpr + 1) / (m_pass + 2), m_pass + 2
    denom = q0 + q1 - 1
    if denom <= 0:
        return 0.0, 1.0
    theta = rogan_gladen(p_s, q1, q0, clip=False)
    var0, var1 = q0 * (1 - q0) / m0, q1 * (1 - q1) / m1
    shift = 2 * z2 * (-(1 - theta) * var0 + theta * var1)
    se = math.sqrt(p_s * (1 - p_s) / n_s + (1 - theta) ** 2 * var0 + theta ** 2 * var1) / denom
    center = theta + shift
    return float(min(1.0, max(0.0, center - z * se))), float(min(1.0, max(0.0, center + z * se)))


def _check_options(method: str, level: float, iterations: int) -> None:
    if method not in METHODS:
        raise InputError(f"unknown method {method!r} (one of: {', '.join(METHODS)})", path="method")
    z_value(level)
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations <= 0:
        raise InputError(f"must be a positive integer (got {iterations!r})", path="iterations")


def corrected_pass_rate(test_labels: Sequence[Any] | np.ndarray, test_preds: Sequence[Any] | np.ndarray,
                        unlabeled_preds: Sequence[Any] | np.ndarray, *, method: str = DEFAULT_METHOD,
                        level: float = DEFAULT_LEVEL, iterations: int = DEFAULT_ITERATIONS,
                        seed: int = 0) -> CorrectedRate:
    """The judge's pass rate on unlabeled traces, corrected for its errors, with an interval.

    Args:
        test_labels: human labels of the test set, 0/1 or ``"pass"``/``"fail"``.
        test_preds: the judge's predictions on the same test traces, in the same order.
        unlabeled_preds: the judge's predictions on the traces to estimate the pass rate of.
        method: ``adjusted-wald``, ``bootstrap`` (judgy-compatible) or ``bootstrap-full``.
        level: confidence level of the interval.
        iterations: bootstrap resamples (bootstrap methods only).
        seed: seed of the bootstrap's random generator.

    Returns:
        The corrected rate; ``valid`` is False, with a reason, when the test set lacks a class or
        TPR + TNR <= 1 (a judge no better than chance cannot be corrected for).

    Raises:
        InputError: a value that is not binary, lengths that differ, no unlabeled predictions, or a
            bad option.
    """
    _check_options(method, level, iterations)
    _test_pairs(test_labels, test_preds)
    unlabeled = as_binary(unlabeled_preds, "unlabeled_preds")
    if not len(unlabeled):
        raise InputError("no unlabeled predictions: the observed pass rate is undefined",
                         path="unlabeled_preds")
    p_obs = int(np.count_nonzero(unlabeled)) / len(unlabeled)
    return correct_observed_rate(test_labels, test_preds, p_obs, len(unlabeled), method=method, level=level,
                                 iterations=iterations, seed=seed)


def _test_pairs(test_labels: Sequence[Any] | np.ndarray,
                test_preds: Sequence[Any] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    labels = as_binary(test_labels, "test_labels")
    preds = as_binary(test_preds, "test_preds")
    if len(labels) != len(preds):
        raise InputError(f"test_labels and test_preds differ in length ({len(labels)} vs {len(preds)})",
                         path="test_preds")
    return labels, preds


def _check_observed(p_obs: Any, n_unlabeled: Any) -> None:
    if isinstance(p_obs, bool) or not isinstance(p_obs, int | float) or not 0 <= p_obs <= 1:
        raise InputError(f"the observed pass rate must be a number in [0, 1] (got {p_obs!r})", path="observed")
    if isinstance(n_unlabeled, bool) or not isinstance(n_unlabeled, int) or n_unlabeled <= 0:
        raise InputError(f"the number of judged traces behind the observed rate must be a positive integer "
                         f"(got {n_unlabeled!r})", path="n")


def correct_observed_rate(test_labels: Sequence[Any] | np.ndarray, test_preds: Sequence[Any] | np.ndarray,
                          p_obs: float, n_unlabeled: int, *, method: str = DEFAULT_METHOD,
                          level: float = DEFAULT_LEVEL, iterations: int = DEFAULT_ITERATIONS,
                          seed: int = 0) -> CorrectedRate:
    """A pass rate the judge reported elsewhere (a published table, another tool), corrected.

    The same as :func:`corrected_pass_rate` when only the rate and its count are known: every method
    needs the unlabeled predictions only through their pass rate and their number.

    Args:
        test_labels: human labels of the test set, 0/1 or ``"pass"``/``"fail"``.
        test_preds: the judge's predictions on the same test traces, in the same order.
        p_obs: the judge's pass rate on the traces to estimate the pass rate of.
        n_unlabeled: how many traces that rate was observed on.
        method, level, iterations, seed: see :func:`corrected_pass_rate`.

    Raises:
        InputError: a rate outside [0, 1], a count that is not a positive integer, or what
            :func:`corrected_pass_rate` refuses.
    """
    _check_options(method, level, iterations)
    _check_observed(p_obs, n_unlabeled)
    labels, preds = _test_pairs(test_labels, test_preds)
    p_obs = float(p_obs)
    counts = tp, pos, tn, neg = _counts(labels, preds)
    tpr, tnr = (tp / pos if pos else None), (tn / neg if neg else None)
    boot = method != "adjusted-wald"
    base = {"p_obs": p_obs, "tpr": tpr, "tnr": tnr, "n_test": pos + neg, "n_test_pass": pos,
            "n_test_fail": neg, "n_unlabeled": n_unlabeled, "method": method, "level": level,
            "iterations": iterations if boot else None}
    reason = None
    if not pos or not neg:
        reason = f"the test set has no human {'passes' if not pos else 'fails'}: TPR and TNR need both"
    elif not _better_than_chance(tp, pos, tn, neg):
        reason = (f"TPR + TNR = {tpr + tnr:.3f} <= 1: the judge is no better than chance, "
                  "so its pass rate cannot be corrected")
    if reason:
        return CorrectedRate(None, None, valid=False, reason=reason, **base)
    theta = float(rogan_gladen(p_obs, tpr, tnr))
    if not boot:
        bounds = adjusted_wald_interval(p_obs, tnr, tpr, n_unlabeled, neg, pos, level)
        return CorrectedRate(theta, rate_interval(bounds, level), valid=True, **base)
    lower, upper, skipped = _bootstrap(counts, p_obs, n_unlabeled, full=method == "bootstrap-full",
                                       level=level, iterations=iterations, seed=seed)
    if lower is None:
        return CorrectedRate(None, None, valid=False, skipped=skipped, **base,
                             reason="no bootstrap resample had both classes and TPR + TNR > 1")
    return CorrectedRate(theta, rate_interval((lower, upper), level), valid=True, skipped=skipped, **base)
