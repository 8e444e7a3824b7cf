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

A gate that could not have failed has not passed: a criterion with fewer items decided in both runs than
:func:`min_decided` (the fewest on which McNemar's exact test can reach ``p < alpha`` at all: 5 at
alpha 0.05, every one of them a pass->fail flip) is ``incomplete``, and so is the run (exit 3). A judge
that broke (every verdict ``uncertain``) or an empty run with ``unpaired`` decides nothing, and must not
go green in CI.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from evalkit.compare.comparison import CriterionComparison, RunComparison, compare_runs
from evalkit.compare.paired import DEFAULT_ITERATIONS, paired_bootstrap
from evalkit.compare.runs import JoinOn, RunInput
from evalkit.errors import InputError

DEFAULT_MAX_DROP = 0.02
"""Pass-rate drop (absolute) tolerated before a significant drop fails the gate."""

DEFAULT_ALPHA = 0.05
"""One-sided significance level of the gate."""

GateOutcome = Literal["pass", "fail", "incomplete"]
"""A criterion's (or the run's) gate outcome; the run takes the worst: fail > incomplete > pass."""

EXIT_STATUS: dict[str, int] = {"pass": 0, "fail": 1, "incomplete": 3}
"""``evalkit gate``'s exit code per outcome (2 is a broken call)."""


def min_decided(alpha: float) -> int:
    """The fewest items decided in both runs on which the gate can fail at all: McNemar's exact one-sided
    p for k pass->fail flips and none back is 0.5**k, below ``alpha`` from k = floor(log2(1/alpha)) + 1."""
    return math.floor(math.log2(1 / alpha)) + 1


@dataclass(frozen=True)
class GateCriterion:
    """One criterion's gate decision and the numbers behind it."""

    comparison: CriterionComparison
    upper: float | None
    """One-sided ``1 - alpha`` upper bound of ``new - old`` (None without paired decided items)."""
    failed: bool
    reason: str
    incomplete: bool = False
    """Too few items decided in both runs for the gate to fail at all: not a pass."""

    @property
    def outcome(self) -> GateOutcome:
        return "fail" if self.failed else "incomplete" if self.incomplete else "pass"


@dataclass(frozen=True)
class GateResult:
    """The gate over every criterion; the run's outcome is the worst criterion's (fail > incomplete >
    pass), and ``exit_status`` is 1 on fail, 3 on incomplete, 0 on pass."""

    criteria: tuple[GateCriterion, ...]
    comparison: RunComparison
    max_drop: float
    alpha: float
    min_decided: int = 1

    @property
    def outcome(self) -> GateOutcome:
        outcomes = {c.outcome for c in self.criteria}
        if not self.criteria:
            return "incomplete"
        return "fail" if "fail" in outcomes else "incomplete" if "incomplete" in outcomes else "pass"

    @property
    def passed(self) -> bool:
        return self.outcome == "pass"

    @property
    def exit_status(self) -> int:
        return EXIT_STATUS[self.outcome]


def _decide(c: CriterionComparison, upper: float | None, max_drop: float, alpha: float,
            least: int) -> tuple[bool, str]:
    t = c.table
    if t.n < least:
        undecided = f" ({c.uncertain} uncertain)" if c.uncertain else ""
        return False, (f"incomplete: {t.n} item(s) decided in both runs{undecided}; the gate needs at least "
                       f"{least} to be able to fail")
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
         seed: int = 0, least_decided: int | None = None) -> GateResult:
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
        least_decided: items decided in both runs a criterion needs, else it is incomplete; None (and the
            least allowed) is :func:`min_decided` of ``alpha``.

    Raises:
        InputError: a bad margin, level or minimum, or what :func:`compare_runs` refuses.
    """
    if not 0 <= max_drop < 1:
        raise InputError(f"must be in [0, 1) (got {max_drop!r})", path="max_drop")
    if not 0 < alpha < 0.5:
        raise InputError(f"must be in (0, 0.5) (got {alpha!r})", path="alpha")
    floor = min_decided(alpha)
    least = floor if least_decided is None else least_decided
    if least < floor:
        raise InputError(f"at least {floor} at alpha {alpha:g} (got {least}): on fewer decided items the gate "
                         "could never fail, so passing it would mean nothing", path="least_decided")
    comparison = compare_runs(baseline, run, join_on=join_on, unpaired=unpaired, iterations=iterations,
                              seed=seed, old_name=None, new_name=None)
    out = []
    for c in comparison.criteria:
        # A two-sided interval at 1 - 2 alpha has the one-sided 1 - alpha upper bound as its upper end.
        one_sided = paired_bootstrap(c.table, level=1 - 2 * alpha, iterations=iterations, seed=seed)
        upper = None if one_sided.ci is None else one_sided.ci.hi
        failed, reason = _decide(c, upper, max_drop, alpha, least)
        out.append(GateCriterion(comparison=c, upper=upper, failed=failed, reason=reason,
                                 incomplete=c.table.n < least))
    return GateResult(criteria=tuple(out), comparison=comparison, max_drop=max_drop, alpha=alpha,
                      min_decided=least)
