"""The charts the notebooks draw, built once here so every section of a report looks alike."""

from __future__ import annotations

import math
from collections.abc import Mapping

import altair as alt
import polars as pl

WIDTH = 560
ACCENT = "#3457d5"

LEVEL_COLORS = {"DEBUG": "#9e9e9e", "DEFAULT": ACCENT, "WARNING": "#f28e2b", "ERROR": "#c62828"}
"""A level's colour in every chart: red is for ERROR alone (DEFAULT in red read as a trace full of errors)."""

TYPE_COLORS = {"GENERATION": "#f28e2b", "TOOL": "#59a14f", "AGENT": "#4c78a8", "SPAN": "#9d9d9d",
               "EVENT": "#b07aa1", "CHAIN": "#76b7b2", "RETRIEVER": "#edc948", "EMBEDDING": "#ff9da7",
               "EVALUATOR": "#9c755f", "GUARDRAIL": "#bab0ac"}
"""An observation type's colour in every chart; none is red, the colour of errors."""

_FEW = 10
"""Up to this many, a count axis gets a tick at every whole number (0 1 2), never at halves rounded (0 1 1):
Vega's ``tickMinStep`` alone still draws them on a domain of 0 to 1."""


def count_axis(largest: float, **options: object) -> alt.Axis:
    """An axis of whole counts: every integer up to a small ``largest``, else whole-number ticks only."""
    if largest < 0:  # not counts
        return alt.Axis(**options)
    if largest <= _FEW:
        return alt.Axis(values=list(range(int(largest) + 1)), format="d", **options)
    return alt.Axis(tickMinStep=1, format="d", **options)


def bar_counts(counts: Mapping[str, int], *, label: str, value: str = "count",
               color: str | Mapping[str, str] = ACCENT) -> alt.Chart:
    """Horizontal bars of ``counts``, largest first, each with its count written at its end.

    ``color`` is one colour, or a colour per label (:data:`LEVEL_COLORS`).

    Raises:
        ValueError: when ``counts`` is empty: an empty chart says nothing, say so in words instead.
    """
    if not counts:
        raise ValueError(f"no {label} to draw: say in words that there are none instead of drawing an empty chart")
    data = pl.DataFrame({label: list(counts.keys()), value: list(counts.values())},
                        schema={label: pl.String, value: pl.Int64})
    base = alt.Chart(data).encode(
        x=alt.X(f"{value}:Q", title=value, axis=count_axis(max(counts.values()))),
        y=alt.Y(f"{label}:N", sort="-x", title=label, axis=alt.Axis(labelLimit=LABEL_LIMIT)),
        tooltip=[label, value])
    if isinstance(color, str):
        bars = base.mark_bar(color=color)
    else:
        shown = list(counts)
        bars = base.mark_bar().encode(color=alt.Color(f"{label}:N", legend=None, scale=alt.Scale(
            domain=shown, range=[color.get(k, ACCENT) for k in shown])))
    text = base.mark_text(align="left", dx=3, fontSize=11).encode(text=f"{value}:Q")
    return (bars + text).properties(width=WIDTH, height=max(60, 22 * len(counts)))


def _nice_step(span: float, bins: int) -> float:
    """A bin width of 1, 2 or 5 times a power of ten giving at most ``bins`` bins over ``span`` (as Vega's)."""
    raw = span / bins if span > 0 else 1.0
    magnitude = 10.0 ** math.floor(math.log10(raw))
    return next(magnitude * m for m in (1, 2, 5, 10) if magnitude * m >= raw * (1 - 1e-9))


def binned_counts(frame: pl.DataFrame, column: str, *, by: str | None = None, bins: int = 30) -> pl.DataFrame:
    """``column``'s values counted in bins of a nice width (``bin_start``, ``bin_end``, [``by``,] ``count``).

    The chart embeds these counts, not the rows: a page of 100,000 observations carries at most ``bins`` rows
    a group (altair refuses to embed more than 5,000 rows, and the page would carry every value).
    """
    keys = [c for c in (column, by) if c]
    data = frame.select(keys).drop_nulls()
    schema = {"bin_start": pl.Float64, "bin_end": pl.Float64, **({by: data.schema[by]} if by else {}),
              "count": pl.Int64}
    if data.is_empty():
        return pl.DataFrame(schema=schema)
    low, high = float(data[column].min()), float(data[column].max())
    step = _nice_step(high - low, bins)
    first = math.floor(low / step) * step
    index = ((pl.col(column) - first) / step).floor().cast(pl.Int64).clip(0, None).alias("bin")
    counted = (data.with_columns(index).group_by(["bin", *([by] if by else [])]).len("count")
               .sort(["bin", *([by] if by else [])]))
    # Rounded so 0.1 steps read 0.3, not 0.30000000000000004, in the page.
    edges = pl.col("bin").cast(pl.Float64) * step + first
    return counted.select(edges.round(12).alias("bin_start"), (edges + step).round(12).alias("bin_end"),
                          *([pl.col(by)] if by else []), pl.col("count").cast(pl.Int64))


def distribution(frame: pl.DataFrame, column: str, *, by: str | None = None, title: str | None = None,
                 log: bool = False, bins: int = 30, y_title: str = "observations",
                 colors: Mapping[str, str] | None = None) -> alt.Chart:
    """A histogram of ``column`` (optionally one colour per ``by`` group, stacked), nulls left out.

    The bins are counted here (:func:`binned_counts`), so the page holds counts, not every value. ``log``
    bins log10 of the positive values and labels the axis so. ``colors`` maps each ``by`` group to its
    colour (in that order); without it observation types and levels get their fixed colours.
    """
    data = frame.select([c for c in (column, by) if c]).drop_nulls()
    axis_title = title or column
    if log:
        data = data.filter(pl.col(column) > 0).select(pl.col(column).log10(), *([pl.col(by)] if by else []))
        axis_title = f"log10 {axis_title}"
    counts = binned_counts(data, column, by=by, bins=bins)
    largest = int(counts.group_by("bin_start").agg(pl.col("count").sum())["count"].max() or 0) if counts.height else 0
    enc = {"x": alt.X("bin_start:Q", bin="binned", title=axis_title), "x2": "bin_end:Q",
           "y": alt.Y("count:Q", title=y_title, stack=True, axis=count_axis(largest)),
           "tooltip": ["bin_start:Q", "bin_end:Q", *([f"{by}:N"] if by else []), "count:Q"]}
    if by:
        groups = sorted(set(counts[by].to_list()))
        if colors is not None:
            scale = alt.Scale(domain=list(colors), range=list(colors.values()))
        else:
            palette = TYPE_COLORS if by == "type" else LEVEL_COLORS if by == "level" else {}
            scale = (alt.Scale(domain=groups, range=[palette.get(g, "#bab0ac") for g in groups])
                     if palette and all(g in palette for g in groups) else alt.Undefined)
        enc["color"] = alt.Color(f"{by}:N", title=None if colors is not None else by, scale=scale)
    return alt.Chart(counts).mark_bar(opacity=0.85).encode(**enc).properties(width=WIDTH, height=220)


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


def cooccurrence_heatmap(frame: pl.DataFrame, *, x: str = "mode", y: str = "other", value: str = "both",
                         title: str = "") -> alt.Chart:
    """A heatmap of a long ``(x, y, value)`` table, counts written in the cells."""
    base = alt.Chart(frame).encode(x=alt.X(f"{x}:N", title=x), y=alt.Y(f"{y}:N", title=y))
    cells = base.mark_rect().encode(color=alt.Color(f"{value}:Q", scale=alt.Scale(scheme="blues"), title=value))
    text = base.mark_text(fontSize=12).encode(text=f"{value}:Q")
    return (cells + text).properties(width=320, height=240, title=title)


def grouped_rates(frame: pl.DataFrame, *, group: str, series: str, rate: str = "rate",
                  count: str = "count", n: str = "reviewed") -> alt.Chart:
    """A grid of ``rate``: one row per ``group`` (labelled with its size, ``n=1``), one column per ``series``.

    Each cell says ``count/n`` (blank when the count is 0) and is shaded by the rate, so a 100% over one
    trace reads as 1/1, not as a full bar. Rows keep the frame's group order.
    """
    data = frame.with_columns(
        (pl.col(group) + pl.lit(" (n=") + pl.col(n).cast(pl.String) + pl.lit(")")).alias("_group"),
        pl.when(pl.col(count) > 0).then(pl.col(count).cast(pl.String) + pl.lit("/") + pl.col(n).cast(pl.String))
        .otherwise(pl.lit("")).alias("_of"),
    )
    rows = list(dict.fromkeys(data["_group"].to_list()))
    return heatmap(data, x=series, y="_group", value=rate, text="_of", y_sort=rows, y_title=group,
                   x_title=series, value_title=rate,
                   tooltip=[group, series, count, n, alt.Tooltip(f"{rate}:Q", format=".1%")])


LABEL_LIMIT = 360
"""Long category labels (edges written out as ``from → to [slot]``) are cut only past this many pixels."""


def heatmap(frame: pl.DataFrame, *, x: str, y: str, value: str, text: str | None = None,
            x_sort: list[str] | None = None, y_sort: list[str] | None = None, x_title: str | None = None,
            y_title: str | None = None, value_title: str | None = None,
            tooltip: list[str] | None = None) -> alt.Chart:
    """A grid of ``y`` down and ``x`` across, coloured by ``value`` (0 and up), ``text`` written in.

    Absent pairs stay blank. ``x_sort`` and ``y_sort`` fix the order of the categories (for
    instance, time order); by default they are sorted by name.
    """
    present_x, present_y = set(frame[x].to_list()), set(frame[y].to_list())
    # Only the categories present take a row or column; the given order is kept.
    x_values = [v for v in (x_sort or sorted(present_x)) if v in present_x]
    y_values = [v for v in (y_sort or sorted(present_y)) if v in present_y]
    base = alt.Chart(frame).encode(
        x=alt.X(f"{x}:N", sort=x_values, title=x_title or x,
                axis=alt.Axis(labelAngle=-35, labelLimit=LABEL_LIMIT)),
        y=alt.Y(f"{y}:N", sort=y_values, title=y_title or y, axis=alt.Axis(labelLimit=LABEL_LIMIT)))
    cells = base.mark_rect().encode(
        color=alt.Color(f"{value}:Q", title=value_title or value,
                        scale=alt.Scale(scheme="blues", domainMin=0)),
        tooltip=tooltip or [y, x, value])
    layers = cells
    if text:
        # Dark text on light cells, light text on dark ones: the midpoint of the colour scale.
        top = frame[value].max() if frame.height else 0
        labels = base.mark_text(fontSize=11).encode(
            text=alt.Text(f"{text}:N"),
            color=alt.condition(alt.datum[value] > (top or 0) / 2, alt.value("white"), alt.value("#222")))
        layers = cells + labels
    return layers.properties(width=min(WIDTH, max(120, 44 * len(x_values))),
                             height=max(60, 26 * len(y_values)))


def share_bars(frame: pl.DataFrame, *, label: str, value: str, color: str | None = None,
               x_title: str | None = None, tooltip: list[str] | None = None,
               count: str | None = None, n: int | None = None) -> alt.Chart:
    """Horizontal bars of a share (0 to 1) per ``label``, in the frame's order, optionally coloured.

    With ``count`` (the column the share was counted from) and ``n`` (what it is a share of), each
    bar is labelled ``count/n``, so a bar over one trace of ten says so.
    """
    enc = {"x": alt.X(f"{value}:Q", title=x_title or value, scale=alt.Scale(domain=[0, 1]),
                      axis=alt.Axis(format="%")),
           "y": alt.Y(f"{label}:N", sort=None, title=None, axis=alt.Axis(labelLimit=LABEL_LIMIT)),
           "tooltip": tooltip or [label, alt.Tooltip(f"{value}:Q", format=".1%")]}
    if color:
        enc["color"] = alt.Color(f"{color}:N", title=color)
    height = max(60, 20 * frame.height)
    if count is None or n is None:
        return alt.Chart(frame).mark_bar().encode(**enc).properties(width=WIDTH, height=height)
    data = frame.with_columns((pl.col(count).cast(pl.String) + pl.lit(f"/{n}")).alias("_of"))
    bars = alt.Chart(data).mark_bar().encode(**enc)
    text = alt.Chart(data).mark_text(align="left", dx=3, fontSize=10).encode(
        x=enc["x"], y=enc["y"], text="_of:N")
    return (bars + text).properties(width=WIDTH, height=height)


def _largest_stack(frame: pl.DataFrame, label: str, value: str) -> float:
    """The longest bar of a stacked chart; a share (below 1 everywhere) gets no whole-number axis."""
    totals = frame.group_by(label).agg(pl.col(value).sum())[value].to_list() if frame.height else [0]
    largest = max(totals)
    return largest if all(float(v).is_integer() for v in frame[value].to_list()) else -1.0


def stacked_bars(frame: pl.DataFrame, *, label: str, value: str, stack: str, order: list[str],
                 colors: list[str] | None = None, x_title: str | None = None) -> alt.Chart:
    """Horizontal bars per ``label`` (in the frame's order), split by ``stack`` in ``order``."""
    labels = list(dict.fromkeys(frame[label].to_list()))
    data = frame.with_columns(pl.col(stack).replace_strict({s: i for i, s in enumerate(order)},
                                                            default=len(order)).alias("_stack_order"))
    scale = alt.Scale(domain=order, range=colors) if colors else alt.Scale(domain=order)
    return (alt.Chart(data).mark_bar()
            .encode(x=alt.X(f"{value}:Q", title=x_title or value, stack="zero",
                            axis=count_axis(_largest_stack(frame, label, value))),
                    y=alt.Y(f"{label}:N", sort=labels, title=None, axis=alt.Axis(labelLimit=LABEL_LIMIT)),
                    color=alt.Color(f"{stack}:N", title=stack, scale=scale, sort=order),
                    order=alt.Order("_stack_order:Q"),
                    tooltip=[label, stack, value])
            .properties(width=WIDTH, height=max(60, 24 * len(labels))))


def trend(rows: list[dict], changes: list[dict] | None = None) -> alt.FacetChart:
    """Pass rate over runs, one panel per criterion: a point and interval bar per run, a dashed red rule
    where the judge changed.

    Args:
        rows: ``{run, criterion, rate, lo, hi, kind}``; ``run`` labels the run (the x axis keeps the
            rows' order), ``kind`` says whether the rate is ``corrected`` or ``observed``.
        changes: ``{run, criterion, change}``: the runs whose judge differs from the run before.
    """
    runs = list(dict.fromkeys(r["run"] for r in rows))
    schema = {"what": pl.String, "run": pl.String, "criterion": pl.String, "rate": pl.Float64, "lo": pl.Float64,
              "hi": pl.Float64, "kind": pl.String, "change": pl.String}
    data = pl.DataFrame([{**{k: None for k in schema}, **r, "what": "rate"} for r in rows]
                        + [{**{k: None for k in schema}, **c, "what": "change"} for c in changes or []],
                        schema=schema)
    x = alt.X("run:N", sort=runs, title="run", axis=alt.Axis(labelAngle=-30, labelLimit=LABEL_LIMIT))
    y = alt.Y("rate:Q", scale=alt.Scale(domain=[0, 1]), title="pass rate", axis=alt.Axis(format="%"))
    rated = alt.Chart().transform_filter(alt.datum.what == "rate")
    kind = alt.Color("kind:N", title=None, scale=alt.Scale(domain=["corrected", "observed"],
                                                            range=[ACCENT, "#8a94a6"]))
    bars = rated.mark_rule(strokeWidth=2).encode(x=x, y=alt.Y("lo:Q", scale=alt.Scale(domain=[0, 1])), y2="hi:Q",
                                                 color=kind)
    line = rated.mark_line(color="#b8c2d6").encode(x=x, y=y)
    points = rated.mark_point(filled=True, size=60).encode(
        x=x, y=y, color=kind, tooltip=["run", "criterion", "kind", alt.Tooltip("rate:Q", format=".1%"),
                                       alt.Tooltip("lo:Q", format=".1%"), alt.Tooltip("hi:Q", format=".1%")])
    marks = alt.Chart().transform_filter(alt.datum.what == "change").mark_rule(
        strokeDash=[5, 3], color="#c62828", strokeWidth=1.5).encode(x=x, tooltip=["run", "change"])
    return (alt.layer(bars, line, points, marks, data=data).properties(width=WIDTH, height=110)
            .facet(row=alt.Row("criterion:N", title=None, header=alt.Header(labelAngle=0, labelAlign="left"))))
