"""The trace table's rows: one per observation of traces in memory, in polars.

:func:`evalkit.traces.to_frame` gives this table for traces, and for a trace dataset folder the same
columns read from Parquet (:mod:`evalkit.traces.parquet`, which builds its files' derived columns here).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson
import polars as pl

from evalkit.contracts.trace import Trace
from evalkit.traces.tree import utc_micros

FRAME_SCHEMA: dict[str, pl.DataType] = {
    "trace_id": pl.String(), "index": pl.Int32(), "obs_id": pl.String(), "type": pl.String(),
    "name": pl.String(), "parent_id": pl.String(), "depth": pl.Int32(),
    "start_time": pl.Datetime("us", "UTC"), "end_time": pl.Datetime("us", "UTC"), "latency_ms": pl.Float64(),
    "model": pl.String(), "input_tokens": pl.Float64(), "output_tokens": pl.Float64(),
    "total_tokens": pl.Float64(), "level": pl.String(), "status_message": pl.String(),
    "input_chars": pl.Int64(), "output_chars": pl.Int64(),
}
"""Columns of :func:`evalkit.traces.to_frame`; sizes are characters of the payload's compact JSON (null when absent)."""

_INPUT_KEYS = ("input", "prompt_tokens", "input_tokens", "promptTokens")
_OUTPUT_KEYS = ("output", "completion_tokens", "output_tokens", "completionTokens")
_TOTAL_KEYS = ("total", "total_tokens", "totalTokens")


def _first(usage: dict[str, Any] | None, keys: tuple[str, ...]) -> float | None:
    if not usage:
        return None
    for key in keys:
        if key in usage:
            return float(usage[key])
    return None


def _size(present: bool, value: Any) -> int | None:
    if not present:
        return None
    if isinstance(value, str):
        return len(value)
    try:
        return len(orjson.dumps(value).decode())
    except TypeError:
        return None


def observation_table(traces: Iterable[Trace]) -> pl.DataFrame:
    """One row per observation of ``traces`` (see ``FRAME_SCHEMA``)."""
    cols: dict[str, list[Any]] = {c: [] for c in FRAME_SCHEMA}
    for trace in traces:
        depth_of: dict[str, int] = {}
        for i, o in enumerate(trace.observations):
            depth = depth_of.get(o.parent_id, -1) + 1 if o.parent_id else 0
            depth_of[o.id] = depth
            start, end = utc_micros(o.start_time), utc_micros(o.end_time)
            usage = o.usage
            total = _first(usage, _TOTAL_KEYS)
            inp, out = _first(usage, _INPUT_KEYS), _first(usage, _OUTPUT_KEYS)
            if total is None and inp is not None and out is not None:
                total = inp + out
            row = (trace.id, i, o.id, o.type, o.name, o.parent_id, depth, start, end,
                   (end - start) / 1000 if start is not None and end is not None else None,
                   o.model, inp, out, total, o.level, o.status_message,
                   _size(o.has_input, o.input), _size(o.has_output, o.output))
            for col, value in zip(cols, row, strict=True):
                cols[col].append(value)
    return pl.DataFrame(cols, schema=FRAME_SCHEMA)


