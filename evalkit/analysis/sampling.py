"""Choosing which traces to read first: random, stratified, outlier, failure-driven and uncertainty sampling.

Every strategy returns traces in the order to review them and is deterministic for a seed. The random
draw and every tie are decided by a seeded digest of each trace's id, never by its position in the file
or by the order a dict or a set happens to have: the same set of traces gives the same sample however
the file orders them.
"""

from __future__ import annotations

import hashlib
import statistics
from collections.abc import Sequence

from evalkit.analysis.features import groups as group_traces
from evalkit.analysis.features import trace_features
from evalkit.contracts.trace import Trace
from evalkit.contracts.verdict import CriterionVerdict
from evalkit.errors import InputError

STRATEGIES = ("random", "stratified", "outlier", "failure-driven", "uncertainty")

LOW_CONFIDENCE = 0.7
"""A judge verdict below this confidence counts as uncertain for uncertainty sampling (evalkit's choice:
the lower end of the range a calibrated judge reports on cases it gets right)."""

OUTLIER_FEATURES = ("observations", "tool_calls", "failed_tools", "errors", "duration_ms", "tokens",
                    "output_chars")
"""What makes a trace unusual: its length, latency, tool count, errors and the size of its answer."""

_MAD_TO_SIGMA = 1.4826
"""Scales the median absolute deviation to a standard deviation for normal data."""


def sample_traces(traces: Sequence[Trace], n: int, strategy: str = "random", seed: int = 0, *,
                  by: str | None = None, verdicts: Sequence[CriterionVerdict] | None = None,
                  low_confidence: float = LOW_CONFIDENCE) -> list[Trace]:
    """Pick up to ``n`` traces to review, in the order to review them.

    Args:
        traces: the traces to choose from (ids must be unique).
        n: how many to pick; fewer come back when the strategy finds fewer candidates.
        strategy: ``random``; ``stratified`` (equal turns for each group of ``by``, so rare groups
            are seen early); ``outlier`` (most unusual length, latency, tool count or errors first);
            ``failure-driven`` (traces with error levels, failed tools or judge fails, most signals
            first); ``uncertainty`` (uncertain or low-confidence judge verdicts, least sure first).
        seed: the seed; the same set of traces and seed always give the same traces in the same
            order, whatever the order of ``traces``.
        by: for ``stratified``: a metadata field (``intent``) or a feature (``tools``, ``name``,
            ``tool_calls``, ``has_error``).
        verdicts: judge verdicts; required for ``uncertainty``, counted by ``failure-driven``.
        low_confidence: verdicts below this confidence count as uncertain.

    Raises:
        InputError: an unknown strategy, a missing ``by`` or ``verdicts``, ``n`` below 1, or
            duplicate trace ids.
    """
    if strategy not in STRATEGIES:
        raise InputError(f"unknown sampling strategy {strategy!r} (one of: {', '.join(STRATEGIES)})",
                         path="strategy")
    if n < 1:
        raise InputError(f"must be at least 1 (got {n})", path="n")
    _check_unique(traces)
    # One seeded key per trace id: a random order of the set, independent of the order of the file.
    tiebreak = [_draw_key(seed, t.id) for t in traces]
    if strategy == "random":
        return [traces[i] for i in sorted(range(len(traces)), key=lambda i: tiebreak[i])[:n]]
    if strategy == "stratified":
        if not by:
            raise InputError("stratified sampling needs a field to stratify by", path="by")
        return _stratified(traces, n, by, tiebreak)
    if strategy == "outlier":
        scores = _outlier_scores(traces)
        order = sorted(range(len(traces)), key=lambda i: (-scores[i], tiebreak[i]))
        return [traces[i] for i in order[:n]]
    if strategy == "failure-driven":
        keys = _failure_keys(traces, verdicts or ())
        order = sorted((i for i in range(len(traces)) if keys[i] != (0, 0)), key=lambda i: (keys[i], tiebreak[i]))
        return [traces[i] for i in order[:n]]
    if verdicts is None:
        raise InputError("uncertainty sampling needs judge verdicts", path="verdicts")
    keys = _uncertainty_keys(traces, verdicts, low_confidence)
    order = sorted((i for i in range(len(traces)) if keys[i] is not None),
                   key=lambda i: (keys[i], tiebreak[i]))
    return [traces[i] for i in order[:n]]


def _draw_key(seed: int, trace_id: str) -> bytes:
    """A trace's place in the seeded random order: a digest of the seed and its id (not its position).

    Same recipe as the label splits of :mod:`evalkit.calibration.splits`, so a seed means one thing.
    """
    return hashlib.sha256(f"{seed}\x00{trace_id}".encode()).digest()


def _check_unique(traces: Sequence[Trace]) -> None:
    seen: set[str] = set()
    for i, trace in enumerate(traces):
        if trace.id in seen:
            raise InputError(f"duplicate trace id {trace.id!r}", path=f"traces[{i}].id")
        seen.add(trace.id)


def _stratified(traces: Sequence[Trace], n: int, by: str, tiebreak: list[bytes]) -> list[Trace]:
    group = group_traces(traces, by)
    strata: dict[str, list[int]] = {}
    for i, trace in enumerate(traces):
        strata.setdefault(group[trace.id], []).append(i)
    queues = [sorted(members, key=lambda i: tiebreak[i]) for _, members in sorted(strata.items())]
    out: list[Trace] = []
    turn = 0
    while len(out) < n and any(turn < len(q) for q in queues):
        out += [traces[q[turn]] for q in queues if turn < len(q)][: n - len(out)]
        turn += 1
    return out


def _robust_z(values: list[float | None]) -> list[float]:
    present = sorted(v for v in values if v is not None)  # sums in one order, whatever the file order
    if len(present) < 2:
        return [0.0] * len(values)
    median = statistics.median(present)
    scale = _MAD_TO_SIGMA * statistics.median(abs(v - median) for v in present)
    if scale == 0:
        # Over half the traces share one value (0 errors, say): any other value is unusual, and the
        # standard deviation says how unusual.
        scale = statistics.pstdev(present)
    if scale == 0:
        return [0.0] * len(values)
    return [0.0 if v is None else abs(v - median) / scale for v in values]


def _outlier_scores(traces: Sequence[Trace]) -> list[float]:
    features = trace_features(traces)
    columns = [_robust_z(features[name].to_list()) for name in OUTLIER_FEATURES]
    return [max(col[i] for col in columns) for i in range(len(traces))]


def _failure_keys(traces: Sequence[Trace], verdicts: Sequence[CriterionVerdict]) -> list[tuple[int, int]]:
    """Sort key per trace: (minus the number of kinds of failure signal, minus their total count)."""
    judge_fails: dict[str, int] = {}
    for v in verdicts:
        if v.result == "fail":
            judge_fails[v.trace_id] = judge_fails.get(v.trace_id, 0) + 1
    features = trace_features(traces)
    keys = []
    for row, trace in zip(features.iter_rows(named=True), traces, strict=True):
        signals = (row["errors"] + row["warnings"], row["failed_tools"], judge_fails.get(trace.id, 0))
        keys.append((-sum(1 for s in signals if s), -sum(signals)))
    return keys


def _uncertainty_keys(traces: Sequence[Trace], verdicts: Sequence[CriterionVerdict],
                      low_confidence: float) -> list[tuple[int, float] | None]:
    """Sort key per trace: (minus its uncertain verdicts, its lowest confidence); None if it is sure."""
    uncertain: dict[str, int] = {}
    lowest: dict[str, float] = {}
    for v in verdicts:
        if v.result == "uncertain":
            uncertain[v.trace_id] = uncertain.get(v.trace_id, 0) + 1
        if v.confidence is not None:  # imported verdicts may not record a confidence
            lowest[v.trace_id] = min(lowest.get(v.trace_id, 1.0), v.confidence)
    out: list[tuple[int, float] | None] = []
    for trace in traces:
        count, low = uncertain.get(trace.id, 0), lowest.get(trace.id, 1.0)
        out.append((-count, low) if count or low < low_confidence else None)
    return out
