"""Repeats and variance: the same case run N times, per criterion its pass rate and spread.

A binary outcome over N repeats has variance ``p (1 - p)`` (p the pass share of the decided repeats). The
run is stable when the largest variance is at most the threshold (the default 0: every case and criterion
came out the same on every repeat) and no repeat went undecided: an uncertain, errored or missing repeat
is not "the same outcome", so 4 passes and 1 uncertain make the case unstable (the seed's variance gate
needs every repeat's outcome, and ``docs/edd.md`` promises the same outcome on every repeat).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from evalkit.contracts.trace import Trace
from evalkit.errors import InputError

DEFAULT_MAX_VARIANCE = 0.0
"""Largest variance a stable run may show: none."""

CASE_ID_KEYS = ("caseId", "case_id")
"""Trace metadata keys that name the dataset case a trace ran."""


@dataclass(frozen=True)
class CaseSpread:
    """One case and criterion over its repeats."""

    case_id: str
    criterion_id: str
    repeats: int
    passed: int
    failed: int
    uncertain: int = 0
    errored: int = 0
    missing: int = 0
    """Repeats with no outcome at all (fewer outcomes than the repeats that were asked for)."""

    @property
    def undecided(self) -> int:
        """Repeats with an uncertain, errored or missing outcome: left out of the rate, never stable."""
        return self.uncertain + self.errored + self.missing

    @property
    def pass_rate(self) -> float | None:
        decided = self.passed + self.failed
        return self.passed / decided if decided else None

    @property
    def variance(self) -> float:
        """``p (1 - p)`` over the decided repeats (0 when none was decided; ``undecided`` says so)."""
        p = self.pass_rate
        return 0.0 if p is None else p * (1 - p)

    @property
    def spread(self) -> float:
        """Largest minus smallest outcome (1 pass, 0 fail): 0 when steady, 1 when it flipped."""
        return 1.0 if self.passed and self.failed else 0.0

    def describe(self) -> str:
        """``case-1 escalation-correct: 4 pass, 1 uncertain of 5 repeats``: what made the cell unsteady."""
        parts = [f"{n} {what}" for n, what in ((self.passed, "pass"), (self.failed, "fail"),
                                                (self.uncertain, "uncertain"), (self.errored, "errored"),
                                                (self.missing, "missing")) if n]
        return f"{self.case_id} {self.criterion_id}: {', '.join(parts)} of {self.repeats} repeats"


@dataclass(frozen=True)
class RepeatStability:
    """Every case and criterion's spread, and whether the run is stable."""

    cells: list[CaseSpread]
    threshold: float
    single: list[tuple[str, str]] = field(default_factory=list)
    """(case, criterion) pairs seen once only: no variance can be measured for them."""

    @property
    def max_variance(self) -> float:
        return max((c.variance for c in self.cells), default=0.0)

    def steady(self, cell: CaseSpread) -> bool:
        """A cell is steady when its variance is within the threshold and every repeat was decided."""
        return cell.variance <= self.threshold and not cell.undecided

    @property
    def stable(self) -> bool:
        return all(self.steady(c) for c in self.cells)

    @property
    def unstable(self) -> list[CaseSpread]:
        """The cells that are not steady (above the threshold, or with an undecided repeat), worst first."""
        return sorted((c for c in self.cells if not self.steady(c)),
                      key=lambda c: (-c.variance, -c.undecided, c.case_id, c.criterion_id))


def case_of_metadata(trace: Trace) -> str:
    """The case a trace ran, from its metadata (``caseId`` or ``case_id``).

    Raises:
        InputError: the trace names no case.
    """
    meta = trace.metadata or {}
    for key in CASE_ID_KEYS:
        if isinstance(meta.get(key), str) and meta[key]:
            return meta[key]
    raise InputError(f"trace {trace.id!r} names no case (metadata caseId or case_id); repeats are grouped by case",
                     path="metadata.caseId")


_SLOT = {"pass": 0, "fail": 1, "uncertain": 2, "error": 3}


def repeat_stability(results: Iterable[tuple[str, str, str]], *, threshold: float = DEFAULT_MAX_VARIANCE,
                     repeats: int | None = None) -> RepeatStability:
    """Spread per case and criterion from ``(case id, criterion id, status)`` of every repeat.

    Args:
        results: ``status`` is ``pass``, ``fail``, ``uncertain``, ``error`` or ``missing`` (anything else
            counts as missing); ``skipped`` outcomes are not repeats and are left out.
        threshold: the largest variance a steady cell may show.
        repeats: the repeats each case was asked for; a cell with fewer outcomes has the rest counted
            missing (an agent run that wrote no trace). None: the outcomes seen are all there were.
    """
    table: dict[tuple[str, str], list[int]] = {}
    for case_id, criterion_id, status in results:
        if status == "skipped":
            continue
        cell = table.setdefault((case_id, criterion_id), [0, 0, 0, 0, 0])
        cell[_SLOT.get(status, 4)] += 1
    cells, single = [], []
    for (case_id, criterion_id), counts in sorted(table.items()):
        seen = sum(counts)
        if repeats is not None and seen < repeats:
            counts[4] += repeats - seen
        total = sum(counts)
        if total < 2:
            single.append((case_id, criterion_id))
            continue
        cells.append(CaseSpread(case_id, criterion_id, total, *counts))
    return RepeatStability(cells, threshold, single)


def outcome_results(outcomes: Iterable[object], case_of: Mapping[str, str] | Callable[[str], str]
                    ) -> Iterable[tuple[str, str, str]]:
    """``(case, criterion, status)`` of router outcomes (or verdicts), the case looked up by trace id."""
    look = case_of.__getitem__ if isinstance(case_of, Mapping) else case_of
    for o in outcomes:
        status = getattr(o, "status", None) or o.result  # Outcome or CriterionVerdict
        yield look(o.trace_id), o.criterion_id, status  # type: ignore[attr-defined]
