"""evalkit's own trace files: JSONL (one canonical trace per line) and Parquet (one row per observation).

Parquet keeps payloads as JSON text, with an explicit marker for an absent payload, so a trace
written to Parquet reads back equal to the one written, including the absent/null distinction.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from evalkit.contracts.trace import Observation, Trace
from evalkit.errors import InputError
from evalkit.io.atomic import atomic_write_lines, atomic_writer
from evalkit.io.bulk import paused_gc
from evalkit.io.canonical import canonical_line, compact_json, orjson_text
from evalkit.io.regular import check_regular
from evalkit.io.strict_json import loads_strict
from evalkit.traces.source import SourceValue
from evalkit.traces.storage import stored_form

_TRACE_KEYS = frozenset(Trace.model_fields[f].alias or f for f in Trace.model_fields)
_OBS_KEYS = frozenset(Observation.model_fields[f].alias or f for f in Observation.model_fields)


_OTHER_FORMATS_KEYS = frozenset({
    # Langfuse's trace and observation fields: a record holding one is Langfuse's, not evalkit's with a typo
    "traceId", "parentObservationId", "usageDetails", "costDetails", "projectId", "scores", "timestamp", "trace",
    "sessionId", "userId", "completionStartTime", "modelParameters", "calculatedTotalCost", "promptTokens",
})
_UNKNOWN_AT_MOST = 3


def looks_like_native(value: Any) -> bool:
    """A record in evalkit's own shape, or one so close to it that it must be read as one and refused.

    A record with evalkit's fields whose ``observations`` is not a list (null, ``{}``, 3, "x"), or that has
    a few fields evalkit does not know and none another format uses, is evalkit's shape gone wrong: read as
    native, the reader names the field. Sniffed as another format instead (a prompt/response record, a
    Langfuse trace), its observations or its unknown fields would vanish without a word.
    """
    if not isinstance(value, dict) or "id" not in value or "observations" not in value:
        return False
    observations = value["observations"]
    if not isinstance(observations, list):
        return set(value) <= _TRACE_KEYS
    sample = observations[:20]
    if not all(isinstance(o, dict) and "type" in o for o in sample):
        return False
    unknown = set(value) - _TRACE_KEYS
    for o in sample:
        unknown |= set(o) - _OBS_KEYS
    return len(unknown) <= _UNKNOWN_AT_MOST and not unknown & _OTHER_FORMATS_KEYS


def trace_from_value(sv: SourceValue) -> Trace:
    """Validate one native record, raising an InputError that names file, line and field."""
    from evalkit.contract_files import validation_problems

    try:
        with paused_gc():
            return Trace.model_validate(sv.value)
    except ValidationError as exc:
        path, msg = validation_problems(exc)[0]
        raise sv.error(msg, path or None) from None


def read_native(values: Iterable[SourceValue]) -> Iterator[Trace]:
    """Traces from native JSONL/JSON values."""
    for sv in values:
        yield trace_from_value(sv)


def trace_line(trace: Trace) -> str:
    """The canonical JSONL line of a trace, each repeated input prefix written once
    (:func:`evalkit.traces.storage.stored_form`).

    Raises:
        InputError: the trace holds NaN or an infinity, which JSON cannot write. Readers refuse such
            numbers; only a text the contract reads as a number ("Infinity" as a token count) gets here.
    """
    try:
        return canonical_line(stored_form(trace))
    except ValueError:
        raise InputError(f"trace {trace.id!r} holds a number that is not finite (NaN or Infinity, perhaps "
                         "written as text in usage); JSON cannot hold it: fix the source") from None


def write_jsonl(traces: Iterable[Trace], path: str | Path) -> int:
    """Write traces as native JSONL, atomically; returns how many were written."""
    return atomic_write_lines(path, (trace_line(trace) for trace in traces))


# --- Parquet -------------------------------------------------------------------------------

# Payload cells hold JSON text ("null" for an explicit null); a null cell means the field was absent.
# Scalar cells (ids, names, times) hold the plain string, so the file is easy to query as a table.
_PAYLOADS = frozenset({"input", "output", "metadata", "usage"})


def parquet_cell(obj: dict[str, Any], key: str) -> str | None:
    """The Parquet cell of field ``key`` of a trace or observation (as ``to_json_obj`` gives it).

    Raises:
        InputError: a payload holding a number JSON cannot hold (NaN, Infinity).
    """
    if key not in _PAYLOADS:
        return obj.get(key)
    if key not in obj:
        return None
    raw = orjson_text(obj[key])
    if raw is not None:
        return raw.decode()
    try:  # an integer beyond 64 bits (json writes it exactly), or NaN / Infinity (refused)
        return compact_json(obj[key], allow_nan=False)
    except ValueError:
        raise InputError(f"{key} of {obj.get('id')!r} holds a number that is not finite (NaN or Infinity); "
                         "JSON cannot hold it: fix the source") from None


def _uncell(key: str, cell: str, file: str) -> Any:
    return loads_strict(cell.encode(), file=file) if key in _PAYLOADS else cell


def parquet_columns() -> list[str]:
    """The columns of evalkit's Parquet trace file, in order: six of the trace, then ``obs_*``."""
    trace_cols = ["trace_id", "trace_name", "trace_input", "trace_output", "trace_metadata", "obs_index"]
    obs_cols = ["id", "type", "name", "parentId", "startTime", "endTime", "model", "level", "statusMessage",
                "input", "output", "usage", "metadata"]
    return trace_cols + [f"obs_{c}" for c in obs_cols]


def write_parquet(traces: Iterable[Trace], path: str | Path) -> int:
    """Write traces as Parquet, one row per observation (a trace without observations gets one row)."""
    import polars as pl

    rows: dict[str, list[Any]] = {c: [] for c in parquet_columns()}
    n = 0
    for trace in traces:
        n += 1
        t = trace.to_json_obj()
        observations = t.get("observations") or [None]
        for i, o in enumerate(observations):
            rows["trace_id"].append(t["id"])
            rows["trace_name"].append(parquet_cell(t, "name"))
            rows["trace_input"].append(parquet_cell(t, "input"))
            rows["trace_output"].append(parquet_cell(t, "output"))
            rows["trace_metadata"].append(parquet_cell(t, "metadata"))
            rows["obs_index"].append(None if o is None else i)
            for col in parquet_columns()[6:]:
                key = col[4:]
                rows[col].append(None if o is None else parquet_cell(o, key))
    frame = pl.DataFrame(rows, schema={c: (pl.Int64 if c == "obs_index" else pl.String) for c in rows})
    with atomic_writer(path, "wb") as fh:
        frame.write_parquet(fh, compression="zstd", statistics=False)
    return n


def read_parquet(path: str | Path) -> Iterator[Trace]:
    """Traces from a Parquet file written by :func:`write_parquet`."""
    import polars as pl

    file = str(path)
    check_regular(path)
    try:
        frame = pl.read_parquet(path)
    except Exception as exc:  # polars raises several error types for unreadable files
        raise InputError(f"cannot read Parquet: {exc}", file=file) from None
    missing = [c for c in parquet_columns() if c not in frame.columns]
    if missing:
        raise InputError(f"not an evalkit Parquet trace file (missing columns: {', '.join(missing)})", file=file)
    current: dict[str, Any] | None = None
    first_row = 0

    def finish(t: dict[str, Any], row: int) -> Trace:
        return trace_from_value(SourceValue(t, file, None, row))

    for row_no, row in enumerate(frame.iter_rows(named=True)):
        if current is None or current["id"] != row["trace_id"]:
            if current is not None:
                yield finish(current, first_row)
            current, first_row = {"id": row["trace_id"], "observations": []}, row_no
            for key in ("name", "input", "output", "metadata"):
                cell = row[f"trace_{key}"]
                if cell is not None:
                    current[key] = _uncell(key, cell, file)
        if row["obs_index"] is None:
            continue
        obs: dict[str, Any] = {}
        for col in parquet_columns()[6:]:
            cell = row[col]
            if cell is not None:
                obs[col[4:]] = _uncell(col[4:], cell, file)
        current["observations"].append(obs)
    if current is not None:
        yield finish(current, first_row)
