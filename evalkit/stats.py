"""The statistics several analyses share, each written once: normal quantiles, Wilson intervals, kappa.

Every interval is the one interval type, :class:`evalkit.contracts.ConfidenceInterval`
(``lo``, ``hi``, ``level``).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

from evalkit.contracts.types import ConfidenceInterval, RateConfidenceInterval
from evalkit.errors import InputError
from evalkit.io.json_case import camel_json

DEFAULT_LEVEL = 0.95
"""Confidence level used unless a caller asks for another."""


def z_value(level: float) -> float:
    """The two-sided standard-normal quantile for confidence ``level`` (1.96 at 0.95)."""
    if not 0 < level < 1:
        raise InputError(f"must be between 0 and 1 (got {level!r})", path="level")
    return NormalDist().inv_cdf(0.5 + level / 2)


def wilson_bounds(successes: int, n: int, level: float = DEFAULT_LEVEL) -> tuple[float, float] | None:
    """Wilson's score interval (Wilson 1927) for a binomial rate; None when ``n`` is 0.

    Unlike the Wald interval it stays inside [0, 1] and keeps a useful width at 0 or ``n``
    successes, the usual case for a rare failure mode or a judge's few labelled fails.
    """
    z = z_value(level)
    if n == 0:
        return None
    p = successes / n
    denom = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    lo = 0.0 if successes == 0 else max(0.0, center - half)  # exact at the ends, not 1e-17 off
    hi = 1.0 if successes == n else min(1.0, center + half)
    return lo, hi


def interval(bounds: tuple[float, float] | None, level: float) -> ConfidenceInterval | None:
    """The interval of ``(lo, hi)`` bounds at ``level``; None where there are none (an undefined estimate)."""
    return None if bounds is None else ConfidenceInterval(lo=bounds[0], hi=bounds[1], level=level)


def rate_interval(bounds: tuple[float, float] | None, level: float) -> RateConfidenceInterval | None:
    """:func:`interval` for a rate, whose ends lie in [0, 1]."""
    return None if bounds is None else RateConfidenceInterval(lo=bounds[0], hi=bounds[1], level=level)


def wilson_interval(successes: int, n: int, level: float = DEFAULT_LEVEL) -> RateConfidenceInterval | None:
    """Wilson's score interval (:func:`wilson_bounds`) as the interval type; None when ``n`` is 0."""
    return rate_interval(wilson_bounds(successes, n, level), level)


@dataclass(frozen=True)
class Kappa:
    """Cohen's kappa with its interval; ``kappa`` and ``ci`` are None (with ``reason``) when chance
    agreement is total or nothing was rated by both."""

    kappa: float | None
    ci: ConfidenceInterval | None
    level: float
    n: int
    observed_agreement: float | None
    chance_agreement: float | None
    unpaired: int = 0
    reason: str | None = None

    def to_json_obj(self) -> dict[str, Any]:
        """The result as JSON (camelCase, the interval as ``ci: {lo, hi, level}``)."""
        return camel_json(self)


def cohens_kappa(first: Sequence[Hashable], second: Sequence[Hashable], *,
                 level: float = DEFAULT_LEVEL) -> Kappa:
    """Cohen's kappa (Cohen 1960) between two raters' aligned labels, with a confidence interval.

    The interval uses the large-sample variance of Fleiss, Cohen & Everitt (1969).

    Args:
        first: one rater's labels (any categories, e.g. ``pass``/``fail``/``defer``).
        second: the other rater's labels for the same items, in the same order.
        level: confidence level of the interval.

    Raises:
        InputError: when the two sequences differ in length.
    """
    z = z_value(level)
    if len(first) != len(second):
        raise InputError(f"the raters' labels differ in length ({len(first)} vs {len(second)})",
                         path="second")
    n = len(first)
    if n == 0:
        return Kappa(None, None, level, 0, None, None, reason="no items rated by both")
    cats = sorted(set(first) | set(second), key=repr)
    index = {c: i for i, c in enumerate(cats)}
    table = np.zeros((len(cats), len(cats)))
    np.add.at(table, ([index[a] for a in first], [index[b] for b in second]), 1)
    p = table / n
    rows, cols = p.sum(axis=1), p.sum(axis=0)
    po = float(np.trace(p))
    pe = float(rows @ cols)
    if pe >= 1:
        return Kappa(None, None, level, n, po, pe,
                     reason="both raters used one and the same category: chance agreement is 100%")
    kappa = (po - pe) / (1 - pe)
    weight = rows[:, None] + cols[None, :]  # p_i. + p_.j
    diag = float(np.sum(np.diag(p) * (1 - np.diag(weight) * (1 - kappa)) ** 2))
    off = p * weight.T ** 2  # p_ij (p_.i + p_j.)^2
    off_sum = float(off.sum() - np.trace(off)) * (1 - kappa) ** 2
    var = max(0.0, diag + off_sum - (kappa - pe * (1 - kappa)) ** 2) / (n * (1 - pe) ** 2)
    half = z * math.sqrt(var)
    ci = ConfidenceInterval(lo=max(-1.0, kappa - half), hi=min(1.0, kappa + half), level=level)
    return Kappa(kappa, ci, level, n, po, pe)
