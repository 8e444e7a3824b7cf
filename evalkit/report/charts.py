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


def confusion_heatmap(tp: int, fn: int, fp: int, tn: int, *, title: str = "") -> alt.Chart:
    """The 2x2 confusion matrix: human label down, judge verdict across, counts written in."""
    data = pl.DataFrame({"human": ["pass", "pass", "fail", "fail"], "judge": ["pass", "fail", "pass", "fail"],
                         "count": [tp, fn, fp, tn],
                         "agree": ["agree", "disagree", "disagree", "agree"]})
    base = alt.Chart(data).encode(x=alt.X("judge:N", sort=["pass", "fail"], title="judge"),
                                  y=alt.Y("human:N", sort=["pass", "fail"], title="human"))
    cells = base.mark_rect().encode(color=alt.Color("agree:N", scale=alt.Scale(
        domain=["agree", "disagree"], range=["#d8e6fb", "#f9d7d7"]), legend=None))
    text = base.mark_text(fontSize=16).encode(text="count:Q")
    return (cells + text).properties(width=160, height=120, title=title)


def intervals(rows: list[dict], *, x_title: str = "rate", domain: tuple[float, float] = (0, 1)) -> alt.Chart:
    """Points with interval bars: rows ``{label, value, lo, hi, kind}``, one line per label."""
    data = pl.DataFrame(rows, schema={"label": pl.String, "value": pl.Float64, "lo": pl.Float64,
                                      "hi": pl.Float64, "kind": pl.String})
    base = alt.Chart(data).encode(y=alt.Y("label:N", title=None, sort=None),
                                  color=alt.Color("kind:N", title=None))
    scale = alt.Scale(domain=list(domain))
    bars = base.mark_rule(strokeWidth=2).encode(x=alt.X("lo:Q", scale=scale, title=x_title), x2="hi:Q")
    points = base.mark_point(filled=True, size=70).encode(
        x=alt.X("value:Q", scale=scale), tooltip=["label", "kind", "value", "lo", "hi"])
    return (bars + points).properties(width=WIDTH, height=max(60, 26 * len(rows)))


def lines(rows: list[dict], *, x: str, y: str, color: str, x_title: str | None = None,
          y_title: str | None = None) -> alt.Chart:
    """One line per ``color`` group over ``x``."""
    data = pl.DataFrame(rows).drop_nulls()
    return (alt.Chart(data).mark_line(point=True)
            .encode(x=alt.X(f"{x}:Q", title=x_title or x), y=alt.Y(f"{y}:Q", title=y_title or y),
                    color=alt.Color(f"{color}:N", title=color), tooltip=[x, y, color])
            .properties(width=WIDTH, height=220))
