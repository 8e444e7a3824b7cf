""":func:`~evalkit.traces.frame.trace_stats` on a LazyFrame: the same statistics, streamed.

Each figure is a polars query run by the streaming engine, so a dataset of millions of observations
is summarised in memory bounded by its groups (types, names, traces), never by its rows. The result
is the dict ``trace_stats`` gives for the same observations in memory.
"""

from __future__ import annotations

from typing import Any

import polars as pl

_QUANTILES = (0.5, 0.9, 0.99)


def _distribution_exprs(col: str) -> list[pl.Expr]:
    c = pl.col(col).drop_nulls()
    return [c.len().alias("count"), c.mean().alias("mean"),
            *(c.quantile(p, interpolation="linear").alias(f"p{int(p * 100)}") for p in _QUANTILES),
            c.min().alias("min"), c.max().alias("max")]


def _distribution(row: dict[str, Any]) -> dict[str, float | int | None]:
    """The shape of ``frame._distribution``: only the count when nothing was measured."""
    if not row["count"]:
        return {"count": 0}
    q = {f"p{int(p * 100)}": round(float(row[f"p{int(p * 100)}"]), 3) for p in _QUANTILES}
    return {"count": int(row["count"]), "mean": round(float(row["mean"]), 3), **q,
            "min": round(float(row["min"]), 3), "max": round(float(row["max"]), 3)}


def _counts(frame: pl.LazyFrame, col: str) -> pl.LazyFrame:
    return frame.group_by(col).len().sort(["len", col], descending=[True, False], nulls_last=True)


def _as_counts(table: pl.DataFrame) -> dict[str, int]:
    return {("(none)" if k is None else str(k)): int(v) for k, v in table.iter_rows()}


def lazy_trace_stats(frame: pl.LazyFrame, n_traces: int | None = None) -> dict[str, Any]:
    """Counts per type and name, tools, latency and token distributions, errors, coverage.

    Args:
        frame: a lazy ``to_frame`` table (``scan_frame`` of a dataset, or any LazyFrame with its columns).
        n_traces: the number of traces (traces without observations have no row); counted from the
            frame when None.

    Returns:
        The dict :func:`~evalkit.traces.frame.trace_stats` returns for the same rows.
    """
    is_gen, is_tool = pl.col("type") == "GENERATION", pl.col("type") == "TOOL"
    gens = frame.filter(is_gen)
    per_trace = frame.group_by("trace_id").agg(
        pl.len().cast(pl.Float64).alias("observations"),
        ((pl.col("end_time").max() - pl.col("start_time").min()).dt.total_microseconds() / 1000).alias("ms"),
    )
    has_tokens = pl.any_horizontal(pl.col(c).is_not_null()
                                   for c in ("input_tokens", "output_tokens", "total_tokens"))
    queries: dict[Any, pl.LazyFrame] = {
        # Distinct trace ids filtered first, then counted: a filter inside the count holds every id.
        "traces": frame.select(pl.col("trace_id").n_unique()),
        "traces_with_errors": frame.filter(pl.col("level") == "ERROR").select(pl.col("trace_id").n_unique()),
        "traces_timed": frame.filter(pl.col("latency_ms").is_not_null()).select(pl.col("trace_id").n_unique()),
        "totals": frame.select(
            pl.len().alias("observations"), pl.col("latency_ms").is_not_null().sum().alias("timed"),
            is_gen.sum().alias("generations"), (is_gen & has_tokens).sum().alias("generations_with_tokens"),
            (is_gen & pl.col("model").is_not_null()).sum().alias("generations_with_model"),
            pl.col("level").is_not_null().sum().alias("with_level"), is_tool.sum().alias("tools"),
        ),
        "by_type": _counts(frame, "type"),
        "by_name": _counts(frame, "name"),
        "tools": _counts(frame.filter(is_tool), "name"),
        "models": _counts(gens.filter(pl.col("model").is_not_null()), "model"),
        "levels": _counts(frame.filter(pl.col("level").is_not_null()), "level"),
        "duration": per_trace.select(_distribution_exprs("ms")),
        "per_trace": per_trace.select(_distribution_exprs("observations")),
        "input": gens.select(_distribution_exprs("input_tokens")),
        "output": gens.select(_distribution_exprs("output_tokens")),
        "total_sum": gens.select(pl.col("total_tokens").sum()),
    }
    # A grouped quantile holds every row's group key; one query per type holds only its latencies.
    types = sorted(frame.select(pl.col("type").unique()).collect(engine="streaming")["type"].to_list())
    queries |= {("latency", t): frame.filter(pl.col("type") == t).select(_distribution_exprs("latency_ms"))
                for t in types}
    # One query at a time: run together, their buffers add up.
    got = {name: query.collect(engine="streaming") for name, query in queries.items()}
    totals = got["totals"].row(0, named=True) | {k: got[k].item() for k in ("traces", "traces_with_errors",
                                                                          "traces_timed")}
    coverage_keys = ("observations", "timed", "traces_timed", "generations", "generations_with_tokens",
                     "generations_with_model", "with_level", "tools")
    return {
        "traces": n_traces if n_traces is not None else int(totals["traces"]),
        "observations": int(totals["observations"]),
        "by_type": _as_counts(got["by_type"]),
        "by_name": _as_counts(got["by_name"]),
        "tools": _as_counts(got["tools"]),
        "models": _as_counts(got["models"]),
        "levels": _as_counts(got["levels"]),
        "traces_with_errors": int(totals["traces_with_errors"]),
        "latency_ms_by_type": {t: _distribution(got["latency", t].row(0, named=True)) for t in types},
        "trace_duration_ms": _distribution(got["duration"].row(0, named=True)),
        "observations_per_trace": _distribution(got["per_trace"].row(0, named=True)),
        "tokens": {
            "input": _distribution(got["input"].row(0, named=True)),
            "output": _distribution(got["output"].row(0, named=True)),
            "total_sum": float(got["total_sum"].item() or 0),
        },
        "coverage": {k: int(totals[k]) for k in coverage_keys},
    }
