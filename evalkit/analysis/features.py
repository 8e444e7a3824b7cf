"""What sampling and breakdowns look at in a trace: its size, latency, tools, errors and metadata."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from evalkit.contracts.trace import Trace
from evalkit.errors import InputError
from evalkit.io.canonical import compact_sorted_json
from evalkit.traces import per_trace, to_frame

FEATURE_COLUMNS = ("observations", "tool_calls", "failed_tools", "errors", "warnings", "duration_ms", "tokens",
                   "output_chars")
"""Numeric per-trace features, in the order of :func:`trace_features`."""

GROUPING_FEATURES = ("name", "tools", "tool_calls", "has_error")
"""Features a trace can be grouped by besides its metadata fields (``by="tools"``)."""

MISSING = "(missing)"
"""The group of a trace that lacks the metadata field grouped by."""


def trace_features(traces: Sequence[Trace]) -> pl.DataFrame:
    """One row per trace, in input order: ``trace_id`` and the numeric ``FEATURE_COLUMNS``.

    A failed tool is a TOOL observation at level ERROR; ``output_chars`` is the length of the trace's
    final output (its compact JSON when not a string). Missing times or tokens give null.
    """
    frame = to_frame(traces)
    base = per_trace(frame)
    extra = frame.group_by("trace_id").agg(
        ((pl.col("type") == "TOOL") & (pl.col("level") == "ERROR")).sum().alias("failed_tools"),
        (pl.col("level") == "WARNING").sum().alias("warnings"),
    )
    order = pl.DataFrame({
        "trace_id": [t.id for t in traces],
        "output_chars": [_output_chars(t) for t in traces],
    }, schema={"trace_id": pl.String(), "output_chars": pl.Int64()})
    joined = order.join(base, on="trace_id", how="left").join(extra, on="trace_id", how="left")
    counts = ("observations", "tool_calls", "failed_tools", "errors", "warnings")
    return joined.with_columns(
        *(pl.col(c).fill_null(0).cast(pl.Int64) for c in counts),
        pl.col("duration_ms").cast(pl.Float64), pl.col("tokens").cast(pl.Float64),
    ).select("trace_id", *FEATURE_COLUMNS)


def _output_chars(trace: Trace) -> int:
    if "output" not in trace.model_fields_set or trace.output is None:
        return 0
    if isinstance(trace.output, str):
        return len(trace.output)
    return len(compact_sorted_json(trace.output))


def _as_group(value: Any) -> str:
    if isinstance(value, str):
        return value
    return compact_sorted_json(value)


def group_of(trace: Trace, by: str) -> str:
    """The group a trace falls in when grouped ``by`` a metadata field or a grouping feature.

    ``by`` is one of ``GROUPING_FEATURES``, or a metadata field (``intent``, or ``metadata.intent``
    when a metadata field shares a feature's name). Non-string values are grouped by their JSON.
    """
    if by.startswith("metadata."):
        field = by[len("metadata."):]
    elif by in GROUPING_FEATURES:
        tools = [o for o in trace.observations if o.type == "TOOL"]
        if by == "name":
            return trace.name if trace.name is not None else MISSING
        if by == "tools":
            return "+".join(sorted({o.name or "(unnamed)" for o in tools})) or "(no tools)"
        if by == "tool_calls":
            return str(len(tools))
        return str(any(o.level == "ERROR" for o in trace.observations)).lower()
    else:
        field = by
    metadata = trace.metadata or {}
    return _as_group(metadata[field]) if field in metadata else MISSING


def groups(traces: Sequence[Trace], by: str) -> dict[str, str]:
    """Trace id -> group for every trace (see :func:`group_of`).

    Raises:
        InputError: when ``by`` is a metadata field that no trace has.
    """
    out = {t.id: group_of(t, by) for t in traces}
    if traces and by not in GROUPING_FEATURES and all(g == MISSING for g in out.values()):
        raise InputError(f"no trace has metadata field {by.removeprefix('metadata.')!r} "
                         f"(features: {', '.join(GROUPING_FEATURES)})", path="by")
    return out
