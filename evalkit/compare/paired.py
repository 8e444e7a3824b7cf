"""Paired statistics for two runs judged on the same items: McNemar's exact test and a paired bootstrap.

Each item has a pass/fail outcome in the old run and in the new run. Only the discordant items (pass
in one run, fail in the other) carry information about a change: McNemar's exact test asks whether
they split evenly (binomial with p = 1/2 on the discordant count). The paired bootstrap resamples
items, keeping each item's two outcomes together, so the interval for ``new - old`` reflects the
pairing; resampling n items with replacement is a multinomial draw over the four cells of the 2x2
table, so every resample is drawn at once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from evalkit.contracts.types import ConfidenceInterval
from evalkit.errors import InputError
from evalkit.stats import DEFAULT_LEVEL, interval

DEFAULT_ITERATIONS = 10_000
"""Bootstrap resamples: enough for a stable 95% percentile bound on a difference of rates."""


@dataclass(frozen=True)
class PairedTable:
    """The 2x2 table of one criterion over items decided in both runs (pass is the positive class)."""

    both_pass: int
    pass_to_fail: int
    fail_to_pass: int
    both_fail: int

    @property
    def n(self) -> int:
        return self.both_pass + self.pass_to_fail + self.fail_to_pass + self.both_fail

    @property
    def old_rate(self) -> float | None:
        """Pass rate of the old run on the paired items."""
        return (self.both_pass + self.pass_to_fail) / self.n if self.n else None

    @property
    def new_rate(self) -> float | None:
        """Pass rate of the new run on the paired items."""
        return (self.both_pass + self.fail_to_pass) / self.n if self.n else None

    @property
    def difference(self) -> float | None:
        """``new - old`` pass rate: (fail_to_pass - pass_to_fail) / n."""
        return (self.fail_to_pass - self.pass_to_fail) / self.n if self.n else None


def _binom_cdf_half(k: int, n: int) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2), exact in integers until the final division."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    return sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n


def sign_test(successes: int, n: int) -> float:
    """Two-sided exact binomial test of ``successes`` out of ``n`` against a rate of 1/2 (1 when n is 0)."""
    if not 0 <= successes <= n:
        raise InputError(f"must be between 0 and n={n} (got {successes!r})", path="successes")
    return min(1.0, 2 * _binom_cdf_half(min(successes, n - successes), n)) if n else 1.0


@dataclass(frozen=True)
class McNemar:
    """McNemar's exact test on a paired table.

    ``p_two_sided``: a change in either direction. ``p_drop``: one-sided, the new run passes less
    often (more pass->fail than fail->pass flips than chance would give). Both are 1 when no item flipped.
    """

    discordant: int
    pass_to_fail: int
    fail_to_pass: int
    p_two_sided: float
    p_drop: float


def mcnemar_exact(table: PairedTable) -> McNemar:
    """McNemar's exact (binomial) test on the discordant pairs of ``table``.

    Args:
        table: the paired 2x2 table.

    Returns:
        The two-sided p-value ``min(1, 2 P(X <= min(b, c)))`` and the one-sided p-value for a drop
        ``P(X >= b) = P(X <= c)``, with ``X ~ Binomial(b + c, 1/2)``, ``b`` the pass->fail flips and
        ``c`` the fail->pass flips.
    """
    b, c = table.pass_to_fail, table.fail_to_pass
    n = b + c
    two = sign_test(b, n)
    drop = _binom_cdf_half(c, n) if n else 1.0
    return McNemar(discordant=n, pass_to_fail=b, fail_to_pass=c, p_two_sided=two, p_drop=drop)


@dataclass(frozen=True)
class PairedInterval:
    """A percentile bootstrap interval for ``new - old`` pass rate (paired items; ``ci`` None when n is 0)."""

    difference: float | None
    ci: ConfidenceInterval | None
    level: float
    iterations: int
    seed: int


def resampled_differences(table: PairedTable, *, iterations: int = DEFAULT_ITERATIONS,
                          seed: int = 0) -> np.ndarray:
    """``new - old`` pass rate in each of ``iterations`` paired resamples of the table's items.

    Only the discordant cells move the difference, but all four are drawn so each resample has n items.
    """
    n = table.n
    if n == 0:
        return np.zeros(0)
    rng = np.random.default_rng(seed)
    cells = np.array([table.both_pass, table.pass_to_fail, table.fail_to_pass, table.both_fail]) / n
    draws = rng.multinomial(n, cells, size=iterations)
    return (draws[:, 2] - draws[:, 1]) / n


def _check(level: float, iterations: int) -> None:
    if not 0 < level < 1:
        raise InputError(f"must be between 0 and 1 (got {level!r})", path="level")
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations <= 0:
        raise InputError(f"must be a positive integer (got {iterations!r})", path="iterations")


def paired_bootstrap(table: PairedTable, *, level: float = DEFAULT_LEVEL, iterations: int = DEFAULT_ITERATIONS,
                     seed: int = 0) -> PairedInterval:
    """The two-sided percentile interval of ``new - old`` pass rate by paired bootstrap.

    Args:
        table: the paired 2x2 table.
        level: two-sided confidence level; a one-sided bound at ``1 - a`` is the upper (or lower)
            bound at ``level = 1 - 2a``.
        iterations: resamples.
        seed: seed of the random generator (same inputs and seed give the same interval).
    """
    _check(level, iterations)
    diffs = resampled_differences(table, iterations=iterations, seed=seed)
    if not len(diffs):
        return PairedInterval(None, None, level, iterations, seed)
    alpha = 1 - level
    lo, hi = np.percentile(diffs, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return PairedInterval(table.difference, interval((float(lo), float(hi)), level), level, iterations, seed)
