"""Code checks as partition work: the one function both ``evalkit scorecard`` paths run.

A partition's traces get every routed criterion decided (code checks; judge criteria answered by the
judge given, e.g. a judge run's verdicts), and what the scorecard keeps of the outcomes is returned:
counts per criterion and the failing trace ids, in trace order. Tallies added in partition order are
the tally of one stream over every trace, so the scorecard is the same bytes however the traces were
spread. With ``verdict_lines`` the verdicts themselves are the partition's text (one canonical line
each, trace by trace, criteria in matrix order).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evalkit.contracts.trace import Trace
from evalkit.distributed.partitions import PartitionResult, partition_traces

if TYPE_CHECKING:
    from evalkit.checks import Judge, RoutedCriterion
    from evalkit.contracts.matrix import EvalMatrix
    from evalkit.contracts.scorecard import Scorecard
    from evalkit.traces import LineRange


@dataclass(frozen=True)
class CheckOptions:
    """What every partition decides: the matrix, some tracks only (None: all), whether to write verdicts."""

    matrix: EvalMatrix
    tracks: tuple[str, ...] | None = None
    verdict_lines: bool = False

    def routed(self) -> list[RoutedCriterion]:
        """The matrix's criteria on the chosen tracks (raises RoutingError/CheckError as ``route`` does)."""
        from evalkit.checks import route

        routed = route(self.matrix)
        return routed if self.tracks is None else [rc for rc in routed if rc.track in self.tracks]


@dataclass
class CheckTally:
    """Outcome counts and failing trace ids per criterion, and the traces decided: a partition's summary."""

    traces: int = 0
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    failing: dict[str, list[str]] = field(default_factory=dict)

    def add(self, other: CheckTally) -> None:
        """Fold in the tally of the partition after this one (partitions in order)."""
        self.traces += other.traces
        for cid, counts in other.counts.items():
            mine = self.counts.setdefault(cid, dict.fromkeys(counts, 0))
            for status, n in counts.items():
                mine[status] = mine.get(status, 0) + n
        for cid, failing in other.failing.items():
            self.failing.setdefault(cid, []).extend(failing)


def check_partition(traces: list[Trace], options: CheckOptions,
                    judge: Judge | None = None) -> PartitionResult:
    """Decide every criterion on a partition's traces, in order.

    Args:
        traces: consecutive traces of the input.
        options: the matrix, the tracks, whether to return the verdicts as text.
        judge: decides judge and hybrid criteria (None: they are skipped, and counted so).

    Returns:
        The verdict lines (empty without ``verdict_lines``) and the partition's :class:`CheckTally`.
    """
    from evalkit.checks import decide, tally_outcomes
    from evalkit.io import canonical_line

    routed = options.routed()
    outcomes = [decide(rc, trace, judge) for trace in traces for rc in routed]
    tally = tally_outcomes(routed, outcomes)
    text = ""
    if options.verdict_lines:
        text = "".join(canonical_line(o.verdict.to_json_obj()) for o in outcomes if o.verdict is not None)
    return PartitionResult(text, CheckTally(len(traces), tally.counts, tally.failing))


def check_work(work: list[Trace] | LineRange, options: CheckOptions,
               judge: Judge | None = None) -> PartitionResult:
    """:func:`check_partition` of traces sent by the client, or of lines the worker reads itself."""
    return check_partition(partition_traces(work), options, judge)


def scorecard_of(options: CheckOptions, tallies: Iterable[CheckTally], *, generated_at: str,
                 calibrations: Mapping[str, Any] | None = None, subject: str | None = None) -> Scorecard:
    """The scorecard of the partitions' tallies (in partition order): what ``score_traces`` gives on
    the same traces in one stream.

    Args:
        options: the options the partitions ran with.
        tallies: their summaries, in partition order.
        generated_at: the timestamp to record (injected).
        calibrations: criterion id -> judge validation, to correct validated judges' rates.
        subject: the subject's name (the matrix's by default).
    """
    from evalkit.checks import Tally, build_scorecard, tally_outcomes

    routed = options.routed()
    total = CheckTally()
    empty = tally_outcomes(routed, [])  # every criterion, even with no trace at all
    total.add(CheckTally(0, empty.counts, empty.failing))
    for tally in tallies:
        total.add(tally)
    return build_scorecard(routed, Tally(routed, total.counts, total.failing),
                           subject=subject or options.matrix.subject, matrix_version=options.matrix.version,
                           generated_at=generated_at, trace_count=total.traces, calibrations=calibrations)
