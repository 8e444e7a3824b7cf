"""A regression gate for CI: fail when a criterion's pass rate dropped, beyond doubt, by more than a margin.

The rule (per criterion, on the items decided in both runs). A criterion fails the gate when BOTH
  1. McNemar's exact one-sided test for a drop gives ``p_drop < alpha`` (the drop is not chance), and
  2. the one-sided ``1 - alpha`` upper bound of ``new - old`` from the paired bootstrap is below
     ``-max_drop`` (the run is confidently worse by more than the margin).
(2) alone tests "the drop exceeds the margin" but a percentile bootstrap on a handful of flips
(say 0 -> 3 of 100) can put its whole mass below zero; (1) is exact at any n and guards that case.
A point drop larger than the margin without this evidence does not fail the gate: it is shown
as "not significant", so a noisy small run cannot block a merge, and a large run cannot hide a
real drop. With ``max_drop=0`` the rule is McNemar's one-sided test guarded by the bootstrap.
"""

from __future__ import annotations

from dataclasses import dataclass

from evalkit.compare.comparison import CriterionComparison, RunComparison, compare_runs
from evalkit.compare.paired import DEFAULT_ITERATIONS, paired_bootstrap
from evalkit.compare.runs import JoinOn, RunInput
from evalkit.errors import InputError

DEFAULT_MAX_DROP = 0.02
"""Pass-rate drop (absolute) tolerated before a significant drop fails the gate."""

DEFAULT_ALPHA = 0.05
"""One-sided significance level of the gate."""


@dataclass(frozen=True)
class GateCriterion:
    """One criterion's gate decision and the numbers behind it."""

    comparison: CriterionComparison
    upper: float | None
    """One-sided ``1 - alpha`` upper bound of ``new - old`` (None without paired decided items)."""
    failed: bool
    reason: str


@dataclass(frozen=True)
class GateResult:
    """The gate over every criterion: ``exit_status`` is 1 when any criterion failed, else 0."""

    criteria: tuple[GateCriterion, ...]
    comparison: RunComparison
    max_drop: float
    alpha: float

    @property
    def passed(self) -> bool:
        return not any(c.failed for c in self.criteria)

    @property
    def exit_status(self) -> int:
        return 0 if self.passed else 1


def _decide(c: CriterionComparison, upper: float | None, max_drop: float, alpha: float) -> tuple[bool, str]:
    t = c.table
    if not t.n:
        return False, "no item decided in both runs"
    drop = -(t.difference or 0.0)
    significant = c.mcnemar.p_drop < alpha
    beyond = upper is not None and upper < -max_drop
    if significant and beyond:
        return True, (f"dropped {drop:.1%} (upper bound {upper:+.1%} < -{max_drop:.1%}, "
                      f"McNemar p={c.mcnemar.p_drop:.3g})")
    if drop <= 0:
        return False, "no drop"
    if not significant:
        return False, f"drop {drop:.1%} not significant (McNemar p={c.mcnemar.p_drop:.3g})"
    return False, f"drop {drop:.1%} significant but not beyond the margin (upper bound {upper:+.1%})"


def gate(run: RunInput, baseline: RunInput, *, max_drop: float = DEFAULT_MAX_DROP, alpha: float = DEFAULT_ALPHA,
         join_on: JoinOn = "trace", unpaired: bool = False, iterations: int = DEFAULT_ITERATIONS,
         seed: int = 0) -> GateResult:
    """Gate a run against a baseline (see the module docstring for the rule).

    Args:
        run: the new run's verdicts (file or list).
        baseline: the baseline's verdicts.
        max_drop: the tolerated absolute drop in pass rate, in [0, 1).
        alpha: one-sided significance level, in (0, 0.5).
        join_on: ``trace`` or ``case``.
        unpaired: allow items in only one run (listed in the summary).
        iterations: bootstrap resamples.
        seed: bootstrap seed.

    Raises:
        InputError: a bad margin or level, or what :func:`compare_runs` refuses.
    """
    if not 0 <= max_drop < 1:
        raise InputError(f"must be in [0, 1) (got {max_drop!r})", path="max_drop")
    if not 0 < alpha < 0.5:
        raise InputError(f"must be in (0, 0.5) (got {alpha!r})", path="alpha")
    comparison = compare_runs(baseline, run, join_on=join_on, unpaired=unpaired, iterations=iterations,
                              seed=seed, old_name=None, new_name=None)
    out = []
    for c in comparison.criteria:
        # A two-sided interval at 1 - 2 alpha has the one-sided 1 - alpha upper bound as its upper end.
        one_sided = paired_bootstrap(c.table, level=1 - 2 * alpha, iterations=iterations, seed=seed)
        upper = None if one_sided.ci is None else one_sided.ci.hi
        failed, reason = _decide(c, upper, max_drop, alpha)
        out.append(GateCriterion(comparison=c, upper=upper, failed=failed, reason=reason))
    return GateResult(criteria=tuple(out), comparison=comparison, max_drop=max_drop, alpha=alpha)
