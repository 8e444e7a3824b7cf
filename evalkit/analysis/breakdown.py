"""Where failure modes occur together, and how their rates differ across a dataset dimension."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import polars as pl

from evalkit.analysis.features import GROUPING_FEATURES, groups
from evalkit.analysis.store import labels_of
from evalkit.contracts.annotation import Annotation
from evalkit.contracts.trace import Trace
from evalkit.errors import InputError
from evalkit.stats import DEFAULT_LEVEL, wilson_bounds

COOCCURRENCE_SCHEMA = {"mode": pl.String(), "other": pl.String(), "both": pl.Int64(), "mode_traces": pl.Int64(),
                       "share_of_mode": pl.Float64()}
BREAKDOWN_SCHEMA = {"group": pl.String(), "mode": pl.String(), "count": pl.Int64(), "reviewed": pl.Int64(),
                    "rate": pl.Float64(), "lo": pl.Float64(), "hi": pl.Float64()}


def mode_cooccurrence(annotations: Sequence[Annotation], annotator: str | None = None) -> pl.DataFrame:
    """For each ordered pair of modes tagged on a trace together: how often, and as a share of the first.

    Rows are ``mode``, ``other``, ``both`` (traces tagged with both), ``mode_traces`` (traces tagged
    with ``mode``) and ``share_of_mode`` (``both / mode_traces``), sorted by ``both`` descending. Pairs
    that never occur together are left out.
    """
    _, labels = labels_of(annotations, annotator)
    tagged = [set(a.modes) for a in labels if a.label == "fail"]
    totals: dict[str, int] = {}
    pairs: dict[tuple[str, str], int] = {}
    for modes in tagged:
        for m in modes:
            totals[m] = totals.get(m, 0) + 1
            for other in modes - {m}:
                pairs[(m, other)] = pairs.get((m, other), 0) + 1
    rows = [(m, o, k, totals[m], k / totals[m]) for (m, o), k in pairs.items()]
    rows.sort(key=lambda r: (-r[2], r[0], r[1]))
    return pl.DataFrame(rows, schema=COOCCURRENCE_SCHEMA, orient="row")


def modes_by(annotations: Sequence[Annotation], traces: Sequence[Trace], by: str,
             annotator: str | None = None, level: float = DEFAULT_LEVEL) -> pl.DataFrame:
    """Each failure mode's rate within each group of a metadata field or trace feature.

    Args:
        annotations: store records in file order.
        traces: the traces labelled (to read the field from); labels on other traces are an error.
        by: a metadata field (a dataset dimension such as ``intent``) or a grouping feature.
        annotator: whose labels; by default the annotator who labelled the most traces.
        level: the confidence level of the Wilson intervals.

    Returns:
        Rows ``group``, ``mode``, ``count``, ``reviewed`` (decided labels in the group), ``rate``,
        ``lo``, ``hi``; sorted by group, then rate descending. ``defer`` labels are left out.
    """
    _, labels = labels_of(annotations, annotator)
    group = groups(traces, by)
    decided = [a for a in labels if a.label != "defer"]
    missing = sorted({a.trace_id for a in decided if a.trace_id not in group})
    if missing:
        raise InputError(f"{len(missing)} labelled trace(s) are not among the traces given, "
                         f"e.g. {missing[0]!r}", path="traces")
    modes = sorted({m for a in decided for m in a.modes})
    rows = []
    for value in sorted({group[a.trace_id] for a in decided}):
        members = [a for a in decided if group[a.trace_id] == value]
        for mode in modes:
            count = sum(1 for a in members if mode in a.modes)
            lo, hi = wilson_bounds(count, len(members), level) or (None, None)
            rows.append((value, mode, count, len(members), count / len(members), lo, hi))
    rows.sort(key=lambda r: (r[0], -r[2], r[1]))
    return pl.DataFrame(rows, schema=BREAKDOWN_SCHEMA, orient="row")


FIELDS_NAMED = 8
"""How many metadata fields a note about a missing breakdown field suggests instead."""


def metadata_fields(traces: Sequence[Trace]) -> dict[str, int]:
    """Each metadata field and how many traces carry it, most common first (then by name)."""
    counts = Counter(key for t in traces for key in (t.metadata or {}))
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def breakdown_gap(traces: Sequence[Trace], by: str, notebook: str = "01_error_analysis") -> str | None:
    """Why a breakdown ``by`` a field cannot be drawn on these traces, or None when it can.

    A field no trace carries gives a note naming the fields the traces do have and how to choose one
    in the subject file, so a report shows the gap instead of failing or drawing one "(missing)" bar.
    """
    if by in GROUPING_FEATURES or not traces:
        return None
    field = by.removeprefix("metadata.")
    fields = metadata_fields(traces)
    if field in fields:
        return None
    named = ", ".join(f"{k} ({v})" for k, v in list(fields.items())[:FIELDS_NAMED])
    has = f"their metadata fields (traces carrying each): {named}" if fields else "they carry no metadata"
    return (f"No trace has metadata field {field!r}, so the breakdown by it is left out; {has}; features: "
            f"{', '.join(GROUPING_FEATURES)}. Choose one in the subject file: "
            f"parameters: {{{notebook}: {{by: FIELD}}}}.")
