"""Choosing which traces to read first: random, stratified, outlier, failure-driven and uncertainty sampling.

Every strategy returns traces in the order to review them and is deterministic for a seed. The random
draw and every tie are decided by a seeded digest of each trace's id, never by its position in the file
or by the order a dict or a set happens to have: the same set of traces gives the same sample however
the file orders them.

A trace dataset too large for memory gets the same picks (:func:`sample_dataset`): random and uncertainty
sampling read only the trace ids; outlier, failure-driven and stratified sampling read the dataset a file
at a time and keep one small row per trace (its features, or its group), never every observation. The
picked traces are then read back from the files that hold them.
"""

from __future__ import annotations

import hashlib
import os
import statistics
from collections.abc import Callable, Sequence

import polars as pl

from evalkit.analysis.defaults import STRATEGIES
from evalkit.analysis.features import GROUPING_FEATURES, MISSING, group_of, trace_features
from evalkit.analysis.features import groups as group_traces
from evalkit.analysis.outcomes import Outcome
from evalkit.contracts.trace import Trace
from evalkit.contracts.verdict import CriterionVerdict
from evalkit.errors import InputError
from evalkit.traces import dataset_trace_ids, iter_dataset_batches, iter_dataset_traces

LOW_CONFIDENCE = 0.7
"""A judge verdict below this confidence counts as uncertain for uncertainty sampling (evalkit's choice:
the lower end of the range a calibrated judge reports on cases it gets right)."""

OUTLIER_FEATURES = ("observations", "tool_calls", "failed_tools", "errors", "duration_ms", "tokens",
                    "output_chars")
"""What makes a trace unusual: its length, latency, tool count, errors and the size of its answer."""

_MAD_TO_SIGMA = 1.4826
"""Scales the median absolute deviation to a standard deviation for normal data."""


def sample_traces(traces: Sequence[Trace] | str | os.PathLike[str], n: int, strategy: str = "random",
                  seed: int = 0, *, by: str | None = None, verdicts: Sequence[CriterionVerdict] | None = None,
                  low_confidence: float = LOW_CONFIDENCE, outcome: Outcome | None = None) -> list[Trace]:
    """Pick up to ``n`` traces to review, in the order to review them.

    Args:
        traces: the traces to choose from (ids must be unique), or the folder of a trace dataset too
            large for memory (read a file at a time; see :func:`sample_dataset`).
        n: how many to pick; fewer come back when the strategy finds fewer candidates.
        strategy: ``random``; ``stratified`` (equal turns for each group of ``by``, so rare groups
            are seen early); ``outlier`` (most unusual length, latency, tool count or errors first);
            ``failure-driven`` (traces with error levels, failed tools, judge fails or a failing
            ``outcome``, most signals first); ``uncertainty`` (uncertain or low-confidence judge
            verdicts, least sure first).
        seed: the seed; the same set of traces and seed always give the same traces in the same
            order, whatever the order of ``traces``.
        by: for ``stratified``: a metadata field (``intent``) or a feature (``tools``, ``name``,
            ``tool_calls``, ``has_error``).
        verdicts: judge verdicts; required for ``uncertainty``, counted by ``failure-driven``.
        low_confidence: verdicts below this confidence count as uncertain.
        outcome: for ``failure-driven``: the recorded outcome that says a trace failed (``reward<1``,
            see :mod:`evalkit.analysis.outcomes`).

    Raises:
        InputError: an unknown strategy, a missing ``by`` or ``verdicts``, ``n`` below 1, duplicate
            trace ids, or no trace qualifying for the strategy (the error says which signals were read).
    """
    if isinstance(traces, str | os.PathLike):
        return sample_dataset(traces, n, strategy, seed, by=by, verdicts=verdicts,
                              low_confidence=low_confidence, outcome=outcome)
    check_sampling(n, strategy, by)
    _check_unique(traces)
    order = review_order([t.id for t in traces], n, strategy, seed, features=lambda: trace_features(traces),
                         groups=lambda: group_traces(traces, by) if by else {}, by=by, verdicts=verdicts,
                         low_confidence=low_confidence,
                         outcome_fails=lambda: outcome_failures(traces, outcome))
    return [traces[i] for i in order]


def outcome_failures(traces: Sequence[Trace], outcome: Outcome | None) -> set[str]:
    """The ids of the traces ``outcome`` says failed (none without an outcome)."""
    return {t.id for t in traces if outcome is not None and outcome.failed(t)}


def check_sampling(n: int, strategy: str, by: str | None) -> None:
    """Raise an InputError for an unknown strategy, ``n`` below 1, or stratifying by nothing."""
    if strategy not in STRATEGIES:
        raise InputError(f"unknown sampling strategy {strategy!r} (one of: {', '.join(STRATEGIES)})",
                         path="strategy")
    if n < 1:
        raise InputError(f"must be at least 1 (got {n})", path="n")
    if strategy == "stratified" and not by:
        raise InputError("stratified sampling needs a field to stratify by", path="by")


def review_order(ids: Sequence[str], n: int, strategy: str, seed: int, *,
                 features: Callable[[], pl.DataFrame], groups: Callable[[], dict[str, str]], by: str | None,
                 verdicts: Sequence[CriterionVerdict] | None, low_confidence: float,
                 outcome_fails: Callable[[], set[str]] = set) -> list[int]:
    """The positions in ``ids`` of the traces :func:`sample_traces` picks, in review order.

    ``features`` (``trace_features`` rows in the order of ``ids``) and ``groups`` (trace id -> group
    of ``by``) are called only by the strategies that need them, so a caller holding only ids (a
    trace dataset too large for memory) computes them only when asked; so is ``outcome_fails`` (the ids
    a recorded outcome says failed).

    Raises:
        InputError: no trace qualifies for failure-driven or uncertainty sampling (an empty sample
            would look like a review with nothing to find).
    """
    # One seeded key per trace id: a random order of the set, independent of the order of the file.
    tiebreak = [_draw_key(seed, trace_id) for trace_id in ids]
    if strategy == "random":
        return sorted(range(len(ids)), key=lambda i: tiebreak[i])[:n]
    if strategy == "stratified":
        return _stratified(ids, groups(), n, tiebreak)
    if strategy == "outlier":
        scores = _outlier_scores(features())
        return sorted(range(len(ids)), key=lambda i: (-scores[i], tiebreak[i]))[:n]
    if strategy == "failure-driven":
        keys = _failure_keys(ids, features(), verdicts or (), outcome_fails())
        failing = [i for i in range(len(ids)) if keys[i] != (0, 0)]
        if not failing and ids:
            raise InputError(f"no trace of {len(ids)} shows a failure to sample: no error or warning level, "
                             "no failed tool" + (", no judge fail" if verdicts else "") + ", no failing outcome; "
                             "give the outcome the traces record (--outcome reward<1), judge verdicts "
                             "(--verdicts), or sample another way (--strategy random)", path="strategy")
        return sorted(failing, key=lambda i: (keys[i], tiebreak[i]))[:n]
    if verdicts is None:
        raise InputError("uncertainty sampling needs judge verdicts", path="verdicts")
    keys = _uncertainty_keys(ids, verdicts, low_confidence)
    unsure = [i for i in range(len(ids)) if keys[i] is not None]
    if not unsure and ids:
        raise InputError(f"no verdict on the {len(ids)} traces is uncertain or below confidence {low_confidence}: "
                         "nothing to sample by uncertainty (sample another way, --strategy random)",
                         path="strategy")
    return sorted(unsure, key=lambda i: (keys[i], tiebreak[i]))[:n]


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


def _stratified(ids: Sequence[str], group: dict[str, str], n: int, tiebreak: list[bytes]) -> list[int]:
    strata: dict[str, list[int]] = {}
    for i, trace_id in enumerate(ids):
        strata.setdefault(group[trace_id], []).append(i)
    queues = [sorted(members, key=lambda i: tiebreak[i]) for _, members in sorted(strata.items())]
    out: list[int] = []
    turn = 0
    while len(out) < n and any(turn < len(q) for q in queues):
        out += [q[turn] for q in queues if turn < len(q)][: n - len(out)]
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


def _outlier_scores(features: pl.DataFrame) -> list[float]:
    columns = [_robust_z(features[name].to_list()) for name in OUTLIER_FEATURES]
    return [max(col[i] for col in columns) for i in range(features.height)]


def _failure_keys(ids: Sequence[str], features: pl.DataFrame, verdicts: Sequence[CriterionVerdict],
                  outcome_fails: set[str]) -> list[tuple[int, int]]:
    """Sort key per trace: (minus the number of kinds of failure signal, minus their total count)."""
    judge_fails: dict[str, int] = {}
    for v in verdicts:
        if v.result == "fail":
            judge_fails[v.trace_id] = judge_fails.get(v.trace_id, 0) + 1
    keys = []
    for row, trace_id in zip(features.iter_rows(named=True), ids, strict=True):
        signals = (row["errors"] + row["warnings"], row["failed_tools"], judge_fails.get(trace_id, 0),
                   int(trace_id in outcome_fails))
        keys.append((-sum(1 for s in signals if s), -sum(signals)))
    return keys


def _uncertainty_keys(ids: Sequence[str], verdicts: Sequence[CriterionVerdict],
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
    for trace_id in ids:
        count, low = uncertain.get(trace_id, 0), lowest.get(trace_id, 1.0)
        out.append((-count, low) if count or low < low_confidence else None)
    return out


_READ_WHOLE = ("outlier", "failure-driven", "stratified")
"""Strategies that look inside each trace; the others need its id alone."""


def sample_dataset(path: str | os.PathLike[str], n: int, strategy: str = "random", seed: int = 0, *,
                   by: str | None = None, verdicts: Sequence[CriterionVerdict] | None = None,
                   low_confidence: float, outcome: Outcome | None = None) -> list[Trace]:
    """:func:`sample_traces` over the folder of a trace dataset.

    Raises:
        InputError: as ``sample_traces``; also a folder that is not a trace dataset.
    """
    check_sampling(n, strategy, by)
    if strategy in _READ_WHOLE:
        ids, parts, group, fails = [], [], {}, set()
        for batch in iter_dataset_batches(path):
            ids += [t.id for t in batch]
            if strategy == "stratified":
                group.update((t.id, group_of(t, by)) for t in batch)
            else:
                parts.append(trace_features(batch))
                fails |= outcome_failures(batch, outcome)
        _check_unique_ids(ids, path)
        if strategy == "stratified" and ids and by not in GROUPING_FEATURES \
                and all(g == MISSING for g in group.values()):
            raise InputError(f"no trace has metadata field {by.removeprefix('metadata.')!r} "
                             f"(features: {', '.join(GROUPING_FEATURES)})", path="by")
        features = pl.concat(parts) if parts else None
    else:
        ids, features, group, fails = dataset_trace_ids(path), None, {}, set()
    order = review_order(ids, n, strategy, seed, features=lambda: features, groups=lambda: group, by=by,
                         verdicts=verdicts, low_confidence=low_confidence, outcome_fails=lambda: fails)
    picked = [ids[i] for i in order]
    found = {t.id: t for t in iter_dataset_traces(path, ids=picked)}
    return [found[i] for i in picked]


def _check_unique_ids(ids: list[str], path: str | os.PathLike[str]) -> None:
    seen: set[str] = set()
    for trace_id in ids:
        if trace_id in seen:
            raise InputError(f"duplicate trace id {trace_id!r}: two files of the dataset hold it",
                             file=str(path))
        seen.add(trace_id)
