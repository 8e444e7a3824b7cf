"""The trace table: one row per observation, in polars, and the summary statistics built on it."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

import polars as pl

from evalkit.contracts.trace import Trace
from evalkit.traces.observation_table import FRAME_SCHEMA, observation_table

__all__ = ["FRAME_SCHEMA", "coverage", "data_gaps", "extreme_traces", "per_trace", "to_frame", "trace_stats"]


def to_frame(traces: Iterable[Trace] | str | os.PathLike[str]) -> pl.DataFrame | pl.LazyFrame:
    """One row per observation: trace id, index, type, name, parent, times, latency, model, tokens,
    level and payload sizes (see ``FRAME_SCHEMA``).

    Given the folder of a partitioned trace dataset, the same table as a LazyFrame, read only when
    collected (see :mod:`evalkit.traces.parquet`).
    """
    if isinstance(traces, str | os.PathLike):
        from evalkit.traces.parquet import scan_frame

        return scan_frame(traces)
    return observation_table(traces)


def _distribution(series: pl.Series) -> dict[str, float | int | None]:
    s = series.drop_nulls()
    if s.len() == 0:
        return {"count": 0}
    q = {f"p{int(p * 100)}": round(float(s.quantile(p, interpolation="linear")), 3) for p in (0.5, 0.9, 0.99)}
    return {"count": s.len(), "mean": round(float(s.mean()), 3), **q,
            "min": round(float(s.min()), 3), "max": round(float(s.max()), 3)}


def trace_stats(frame: pl.DataFrame | pl.LazyFrame | str | os.PathLike[str],
                n_traces: int | None = None) -> dict[str, Any]:
    """Counts per type and name, tools used, latency and token distributions, error levels.

    Args:
        frame: a table from :func:`to_frame`; a LazyFrame, or the folder of a trace dataset, is
            summarised by streaming queries in bounded memory (:mod:`evalkit.traces.dataset_stats`).
        n_traces: the number of traces (traces without observations have no row); counted from
            the frame when None (from the whole dataset, empty traces included, for a folder).

    Returns:
        A JSON-ready dict with sorted keys and lists in a stable order.
    """
    if not isinstance(frame, pl.DataFrame):
        from evalkit.traces.dataset_stats import lazy_trace_stats
        from evalkit.traces.parquet import count_traces, scan_frame

        if isinstance(frame, pl.LazyFrame):
            return lazy_trace_stats(frame, n_traces)
        return lazy_trace_stats(scan_frame(frame), n_traces if n_traces is not None else count_traces(frame))

    def counts(df: pl.DataFrame, col: str) -> dict[str, int]:
        grouped = df.group_by(col).len().sort(["len", col], descending=[True, False], nulls_last=True)
        return {("(none)" if k is None else str(k)): int(v) for k, v in grouped.iter_rows()}

    tools = frame.filter(pl.col("type") == "TOOL")
    errors = frame.filter(pl.col("level") == "ERROR")
    per_trace = frame.group_by("trace_id").agg(
        pl.len().alias("observations"),
        ((pl.col("end_time").max() - pl.col("start_time").min()).dt.total_microseconds() / 1000).alias("ms"),
    )
    gens = frame.filter(pl.col("type") == "GENERATION")
    return {
        "traces": n_traces if n_traces is not None else frame["trace_id"].n_unique(),
        "observations": frame.height,
        "by_type": counts(frame, "type"),
        "by_name": counts(frame, "name"),
        "tools": counts(tools, "name"),
        "models": counts(gens.filter(pl.col("model").is_not_null()), "model"),
        "levels": counts(frame.filter(pl.col("level").is_not_null()), "level"),
        "traces_with_errors": errors["trace_id"].n_unique(),
        "latency_ms_by_type": {t: _distribution(frame.filter(pl.col("type") == t)["latency_ms"])
                               for t in sorted(frame["type"].unique().to_list())},
        "trace_duration_ms": _distribution(per_trace["ms"]),
        "observations_per_trace": _distribution(per_trace["observations"].cast(pl.Float64)),
        "tokens": {
            "input": _distribution(gens["input_tokens"]),
            "output": _distribution(gens["output_tokens"]),
            "total_sum": float(gens["total_tokens"].sum() or 0),
        },
        "coverage": coverage(frame),
    }


def coverage(frame: pl.DataFrame) -> dict[str, int]:
    """How many rows carry each kind of data the overview draws, so absent data is said, not drawn as 0.

    Returns:
        ``observations``; ``timed`` (observations with a start and an end), ``traces_timed``;
        ``generations``, ``generations_with_tokens`` (any token count), ``generations_with_model``;
        ``with_level`` (observations with a level), ``tools``.
    """
    gens = frame.filter(pl.col("type") == "GENERATION")
    has_tokens = pl.any_horizontal(pl.col(c).is_not_null() for c in ("input_tokens", "output_tokens", "total_tokens"))
    timed = frame.filter(pl.col("latency_ms").is_not_null())
    return {
        "observations": frame.height,
        "timed": timed.height,
        "traces_timed": timed["trace_id"].n_unique(),
        "generations": gens.height,
        "generations_with_tokens": _generations_with_tokens(frame, has_tokens),
        "generations_with_model": gens.filter(pl.col("model").is_not_null()).height,
        "with_level": frame.filter(pl.col("level").is_not_null()).height,
        "tools": frame.filter(pl.col("type") == "TOOL").height,
    }


def _generations_with_tokens(frame: pl.DataFrame, has_tokens: pl.Expr) -> int:
    """Generations whose tokens are counted: their own, or those of a model call inside them (a wrapper's
    repeated usage is folded into the innermost generation's at import, :mod:`evalkit.traces.usage_folding`)."""
    rows = frame.select("trace_id", "obs_id", "parent_id", pl.col("type") == "GENERATION", has_tokens.alias("t"))
    parent = {(t, o): p for t, o, p, _, _ in rows.iter_rows()}
    covered: set[tuple[str, str]] = set()
    for trace_id, obs_id, _, is_gen, tokens in rows.iter_rows():
        if is_gen and tokens:
            key: tuple[str, str] | None = (trace_id, obs_id)
            while key is not None and key not in covered:
                covered.add(key)
                up = parent.get(key)
                key = (trace_id, up) if up is not None else None
    return sum(1 for t, o, _, is_gen, _ in rows.iter_rows() if is_gen and (t, o) in covered)


def data_gaps(stats: dict[str, Any]) -> list[str]:
    """What the traces lack that an overview would otherwise show, one plain sentence each.

    Args:
        stats: from :func:`trace_stats`.

    Returns:
        Sentences such as "No observation has a start and end time: latency and trace duration are
        left out."; partial coverage is said with its share. Empty when nothing is missing.
    """
    cov = stats["coverage"]
    gaps = []

    def share(part: int, whole: int, none: str, some: str) -> None:
        if whole and part == 0:
            gaps.append(none)
        elif whole and part < whole:
            gaps.append(f"Only {part} of {whole} {some}.")

    share(cov["timed"], cov["observations"],
          "No observation has start and end times: latency and trace duration are left out.",
          "observations have start and end times: latency and durations cover those alone")
    share(cov["generations_with_tokens"], cov["generations"],
          "No generation records token usage: token counts are left out.",
          "generations record token usage: token figures cover those alone")
    share(cov["generations_with_model"], cov["generations"],
          "No generation names its model: models are not counted.", "generations name their model")
    if cov["observations"] and cov["with_level"] == 0:
        # Some sources omit the level of ordinary observations; only a trace set without any level
        # leaves errors unknowable.
        gaps.append("No observation has a level (DEFAULT, WARNING, ERROR): errors cannot be counted from the "
                    "traces alone.")
    if cov["observations"] and cov["tools"] == 0:
        gaps.append("No TOOL observation: the agent called no tools, or the source does not record tool calls.")
    if cov["generations"] == 0 and cov["observations"]:
        gaps.append("No GENERATION observation: model calls are not recorded in these traces.")
    return gaps


def per_trace(frame: pl.DataFrame) -> pl.DataFrame:
    """One row per trace: observations, tool calls, errors, duration and tokens, in trace order."""
    return (
        frame.group_by("trace_id", maintain_order=True)
        .agg(
            pl.len().alias("observations"),
            (pl.col("type") == "TOOL").sum().alias("tool_calls"),
            (pl.col("level") == "ERROR").sum().alias("errors"),
            ((pl.col("end_time").max() - pl.col("start_time").min()).dt.total_microseconds() / 1000)
            .alias("duration_ms"),
            # A trace whose observations carry no token counts has unknown tokens, not zero.
            pl.when(pl.col("total_tokens").is_not_null().any()).then(pl.col("total_tokens").sum())
            .alias("tokens"),
        )
    )


def extreme_traces(frame: pl.DataFrame, by: str, n: int = 10) -> pl.DataFrame:
    """The ``n`` traces with the most of ``by``, largest first (ties by trace id), for a person to read.

    Only the columns the traces carry are kept: ``errors`` when any observation has a level,
    ``duration_s`` (seconds, one decimal) when any is timed, ``tokens`` when any counts tokens.

    Args:
        frame: a table from :func:`to_frame`.
        by: ``duration_s`` (the slowest; empty when nothing is timed) or ``observations`` (the longest).
        n: how many traces.
    """
    table = per_trace(frame).with_columns((pl.col("duration_ms") / 1000).round(1).alias("duration_s"),
                                         pl.col("tokens").round(0).cast(pl.Int64))
    keep = ["trace_id", "observations", "tool_calls"]
    keep += ["errors"] if frame["level"].is_not_null().any() else []
    keep += ["duration_s"] if table["duration_s"].is_not_null().any() else []
    keep += ["tokens"] if table["tokens"].is_not_null().any() else []
    if by not in keep:
        return table.select(keep).clear()
    return table.select(keep).drop_nulls(by).sort([by, "trace_id"], descending=[True, False]).head(n)
