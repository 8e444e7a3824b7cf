"""Sampling a trace dataset too large for memory: the same picks as :func:`sample_traces` in memory.

Random and uncertainty sampling read only the trace ids. Outlier, failure-driven and stratified
sampling read the dataset a file at a time and keep one small row per trace (its features, or its
group), never every observation. The picked traces are then read back from the files that hold them.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import polars as pl

from evalkit.analysis.features import GROUPING_FEATURES, MISSING, group_of, trace_features
from evalkit.analysis.sampling import check_sampling, review_order
from evalkit.contracts.trace import Trace
from evalkit.contracts.verdict import CriterionVerdict
from evalkit.errors import InputError
from evalkit.traces import dataset_trace_ids, iter_dataset_batches, iter_dataset_traces

_READ_WHOLE = ("outlier", "failure-driven", "stratified")
"""Strategies that look inside each trace; the others need its id alone."""


def sample_dataset(path: str | os.PathLike[str], n: int, strategy: str = "random", seed: int = 0, *,
                   by: str | None = None, verdicts: Sequence[CriterionVerdict] | None = None,
                   low_confidence: float) -> list[Trace]:
    """:func:`~evalkit.analysis.sampling.sample_traces` over the folder of a trace dataset.

    Raises:
        InputError: as ``sample_traces``; also a folder that is not a trace dataset.
    """
    check_sampling(n, strategy, by)
    if strategy in _READ_WHOLE:
        ids, parts, group = [], [], {}
        for batch in iter_dataset_batches(path):
            ids += [t.id for t in batch]
            if strategy == "stratified":
                group.update((t.id, group_of(t, by)) for t in batch)
            else:
                parts.append(trace_features(batch))
        _check_unique_ids(ids, path)
        if strategy == "stratified" and ids and by not in GROUPING_FEATURES \
                and all(g == MISSING for g in group.values()):
            raise InputError(f"no trace has metadata field {by.removeprefix('metadata.')!r} "
                             f"(features: {', '.join(GROUPING_FEATURES)})", path="by")
        features = pl.concat(parts) if parts else None
    else:
        ids, features, group = dataset_trace_ids(path), None, {}
    order = review_order(ids, n, strategy, seed, features=lambda: features, groups=lambda: group, by=by,
                         verdicts=verdicts, low_confidence=low_confidence)
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
