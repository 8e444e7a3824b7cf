"""The charts the notebooks draw, built once here so every section of a report looks alike."""

from __future__ import annotations

from collections.abc import Mapping

import altair as alt
import polars as pl

WIDTH = 560
ACCENT = "#3457d5"


def bar_counts(counts: Mapping[str, int], *, label: str, value: str = "count",
               color: str = ACCENT) -> alt.Chart:
    """Horizontal bars of ``counts``, largest first."""
    data = pl.DataFrame({label: list(counts.keys()), value: list(counts.values())})
    return (
        alt.Chart(data)
        .mark_bar(color=color)
        .encode(x=alt.X(f"{value}:Q", title=value), y=alt.Y(f"{label}:N", sort="-x", title=label),
                tooltip=[label, value])
        .properties(width=WIDTH, height=max(60, 22 * len(counts)))
    )


def distribution(frame: pl.DataFrame, column: str, *, by: str | None = None, title: str | None = None,
                 log: bool = False, bins: int = 30) -> alt.Chart:
    """A histogram of ``column`` (optionally one colour per ``by`` group), nulls left out."""
    data = frame.select([c for c in (column, by) if c]).drop_nulls()
    if log:
        data = data.filter(pl.col(column) > 0)
    x = alt.X(f"{column}:Q", bin=alt.Bin(maxbins=bins), title=title or column,
              scale=alt.Scale(type="log") if log else alt.Undefined)
    if log:
        # Binning on a log scale: bin the log10 value and label the axis in the original unit.
        data = data.with_columns(pl.col(column).log10().alias(f"log10_{column}"))
        x = alt.X(f"log10_{column}:Q", bin=alt.Bin(maxbins=bins), title=f"log10 {title or column}")
    enc = {"x": x, "y": alt.Y("count():Q", title="observations")}
    if by:
        enc["color"] = alt.Color(f"{by}:N", title=by)
    return alt.Chart(data).mark_bar(opacity=0.85).encode(**enc).properties(width=WIDTH, height=220)
