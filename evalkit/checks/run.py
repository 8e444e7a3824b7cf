"""One call from an eval matrix and traces to a scorecard file: what ``evalkit scorecard`` runs."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from evalkit.checks.router import Judge, Track, evaluate, route
from evalkit.checks.scorecard import build_scorecard, tally_outcomes
from evalkit.contracts.matrix import EvalMatrix
from evalkit.contracts.scorecard import Scorecard
from evalkit.contracts.trace import Trace
from evalkit.io.atomic import atomic_write_text
from evalkit.io.canonical import canonical_dumps


class _Counted:
    """Counts the traces it streams, so the scorecard knows how many were evaluated."""

    def __init__(self, traces: Iterable[Trace]) -> None:
        self.traces, self.n = traces, 0

    def __iter__(self) -> Iterator[Trace]:
        for t in self.traces:
            self.n += 1
            yield t


def score_traces(matrix: EvalMatrix, traces: Iterable[Trace], *, generated_at: str, judge: Judge | None = None,
                 calibrations: Mapping[str, Any] | None = None, tracks: Iterable[Track] | None = None,
                 subject: str | None = None) -> Scorecard:
    """Route every criterion, decide it on every trace (streamed), and gate the result.

    Args:
        matrix: the eval matrix (code criteria need ``check``; see docs/checks.md).
        traces: the traces, streamed once.
        generated_at: timestamp to record (injected, never read from the clock here).
        judge: decides judge and hybrid criteria; None skips them (counted, warned at 50%).
        calibrations: criterion id -> judge validation, to correct validated judges' rates.
        tracks: only these tracks; criteria on other tracks are left off the card entirely.
        subject: the subject's name (the matrix's by default).

    Raises:
        RoutingError / CheckError: a criterion that cannot be routed or whose check does not build.
    """
    routed = route(matrix)
    if tracks is not None:
        keep = set(tracks)
        routed = [rc for rc in routed if rc.track in keep]
    counted = _Counted(traces)
    tally = tally_outcomes(routed, evaluate(routed, counted, judge))  # streamed: the count is known after
    return build_scorecard(routed, tally, subject=subject or matrix.subject, matrix_version=matrix.version,
                           generated_at=generated_at, trace_count=counted.n, calibrations=calibrations)


def write_scorecard(path: str | Path, card: Scorecard) -> None:
    """Write a scorecard as canonical JSON, atomically."""
    atomic_write_text(path, canonical_dumps(card.to_json_obj()))
