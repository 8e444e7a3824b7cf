"""Comparing two runs criterion by criterion: flips, McNemar's exact test, paired intervals.

Pairing. Verdicts are joined on (criterion, trace) or (criterion, case). Keys present in only one
run make the comparison unpaired; it is refused (naming them) unless ``unpaired=True``, and then the
paired statistics use the keys in both runs while the others are listed, per run, never dropped silently.

Uncertain verdicts. An item that is ``uncertain`` in either run has no pass/fail flip to count: it
is left out of the 2x2 table, McNemar's test and both intervals, and counted (uncertain in the old
run only, the new run only, or both), so a judge that abstains more in one run shows up beside the
rates instead of silently shrinking n.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from evalkit.calibration import Confusion
from evalkit.compare.corrected import CorrectedDifference, corrected_difference
from evalkit.compare.paired import (
    DEFAULT_ITERATIONS,
    McNemar,
    PairedInterval,
    PairedTable,
    mcnemar_exact,
    paired_bootstrap,
)
from evalkit.compare.runs import JoinOn, RunInput, load_run, run_name
from evalkit.errors import InputError
from evalkit.stats import DEFAULT_LEVEL

MAX_LISTED = 10
"""Keys listed in an error message about unpaired items before '... and N more'."""


@dataclass(frozen=True)
class Flip:
    """An item whose verdict changed between the runs, with both critiques for reading side by side."""

    key: str
    old_result: str
    new_result: str
    old_critique: str | None
    new_critique: str | None


@dataclass(frozen=True)
class CriterionComparison:
    """One criterion's comparison of the two runs on the items both judged."""

    criterion_id: str
    table: PairedTable
    mcnemar: McNemar
    interval: PairedInterval
    uncertain_old_only: int
    uncertain_new_only: int
    uncertain_both: int
    flips: tuple[Flip, ...]
    only_old: tuple[str, ...]
    only_new: tuple[str, ...]
    corrected: CorrectedDifference | None = None

    @property
    def uncertain(self) -> int:
        """Paired items left out of the table because a verdict was uncertain."""
        return self.uncertain_old_only + self.uncertain_new_only + self.uncertain_both


@dataclass(frozen=True)
class RunComparison:
    """Two runs compared on every criterion either run judged."""

    old_name: str
    new_name: str
    join_on: str
    criteria: tuple[CriterionComparison, ...]
    unpaired: bool
    notes: tuple[str, ...] = field(default=())

    @property
    def only_old(self) -> int:
        return sum(len(c.only_old) for c in self.criteria)

    @property
    def only_new(self) -> int:
        return sum(len(c.only_new) for c in self.criteria)


def _listed(keys: list[tuple[str, str]]) -> str:
    shown = ", ".join(f"{c}/{k}" for c, k in keys[:MAX_LISTED])
    return shown + (f" ... and {len(keys) - MAX_LISTED} more" if len(keys) > MAX_LISTED else "")


def compare_runs(old: RunInput, new: RunInput, *, join_on: JoinOn = "trace", unpaired: bool = False,
                 old_calibration: Mapping[str, Confusion] | None = None,
                 new_calibration: Mapping[str, Confusion] | None = None,
                 level: float = DEFAULT_LEVEL, iterations: int = DEFAULT_ITERATIONS, seed: int = 0,
                 old_name: str | None = None, new_name: str | None = None) -> RunComparison:
    """Compare two runs' verdicts per criterion.

    Args:
        old: the baseline run's verdicts (file or list).
        new: the new run's verdicts (file or list).
        join_on: ``trace`` (same trace ids) or ``case`` (suite runs: ``CASE-rN`` -> ``CASE``).
        unpaired: allow keys judged in only one run (they are listed); otherwise refuse them.
        old_calibration: per criterion, the old run's judge against human test labels; where both
            runs have one, the difference of corrected rates is reported. Pass only calibrations that
            are still current (``evalkit.calibration.check_calibration``).
        new_calibration: the same for the new run.
        level: two-sided confidence level of the intervals.
        iterations: bootstrap resamples.
        seed: bootstrap seed.
        old_name: how to call the old run (default: its file name, or ``baseline``).
        new_name: how to call the new run (default: its file name, or ``run``).

    Raises:
        InputError: unreadable verdicts, two verdicts on one key, or keys in only one run without
            ``unpaired=True``.
    """
    old_name = old_name or run_name(old, "baseline")
    new_name = new_name or run_name(new, "run")
    a = load_run(old, name=old_name, join_on=join_on)
    b = load_run(new, name=new_name, join_on=join_on)
    only_a = sorted(set(a.by_key) - set(b.by_key))
    only_b = sorted(set(b.by_key) - set(a.by_key))
    if (only_a or only_b) and not unpaired:
        parts = []
        if only_a:
            parts.append(f"{len(only_a)} only in {old_name} ({_listed(only_a)})")
        if only_b:
            parts.append(f"{len(only_b)} only in {new_name} ({_listed(only_b)})")
        raise InputError(f"the runs are not paired on (criterion, {join_on}): {'; '.join(parts)}; "
                         "compare the same items, or pass unpaired=True (--unpaired) to compare the "
                         "items in both and list the others", path="join_on")
    criteria = sorted({c for c, _ in a.by_key} | {c for c, _ in b.by_key})
    out = []
    for crit in criteria:
        counts = {"pp": 0, "pf": 0, "fp": 0, "ff": 0, "uo": 0, "un": 0, "ub": 0}
        flips = []
        keys = sorted(k for c, k in a.by_key if c == crit and (c, k) in b.by_key)
        for key in keys:
            va, vb = a.by_key[(crit, key)], b.by_key[(crit, key)]
            ua, ub = va.result == "uncertain", vb.result == "uncertain"
            if ua or ub:
                counts["ub" if ua and ub else "uo" if ua else "un"] += 1
                continue
            counts[va.result[0] + vb.result[0]] += 1
            if va.result != vb.result:
                flips.append(Flip(key, va.result, vb.result, va.critique, vb.critique))
        table = PairedTable(counts["pp"], counts["pf"], counts["fp"], counts["ff"])
        corrected = None
        if old_calibration and new_calibration and crit in old_calibration and crit in new_calibration:
            corrected = corrected_difference(table, old_calibration[crit], new_calibration[crit],
                                             level=level, iterations=iterations, seed=seed)
        out.append(CriterionComparison(
            criterion_id=crit, table=table, mcnemar=mcnemar_exact(table),
            interval=paired_bootstrap(table, level=level, iterations=iterations, seed=seed),
            uncertain_old_only=counts["uo"], uncertain_new_only=counts["un"], uncertain_both=counts["ub"],
            flips=tuple(flips), only_old=tuple(k for c, k in only_a if c == crit),
            only_new=tuple(k for c, k in only_b if c == crit), corrected=corrected))
    return RunComparison(old_name=old_name, new_name=new_name, join_on=join_on, criteria=tuple(out),
                         unpaired=bool(only_a or only_b), notes=a.notes + b.notes)
