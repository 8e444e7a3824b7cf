"""Drawing a flow graph to SVG or PNG: time reads left to right, one lane per observation name.

Handoffs (dispatch tools and their edges) are orange; a node that left an unthreaded output has a
red ring. The same graph always gives the same bytes (for a given matplotlib version): SVG ids are
salted with a fixed string and no date is written.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.errors import InputError
from evalkit.flow.draw_summary import needs_summary, summarize_trace_graph
from evalkit.flow.graph import time_layout, to_networkx
from evalkit.flow.named import AnyFlowGraph
from evalkit.io.atomic import atomic_write_bytes

if TYPE_CHECKING:
    import networkx as nx
    from matplotlib.axes import Axes

DEFAULT_MAX_EDGES = 5000
"""Beyond this many connected node pairs a drawing is unreadable and its SVG runs to megabytes; the
rest are left out and the title says how many were drawn."""

_NODE = "#4c78a8"
_HANDOFF = "#e6550d"
_UNTHREADED = "#d62728"
_THREADED_EDGE = "#8c8c8c"
_FORMATS = {".svg": "svg", ".png": "png"}


LABEL_CHARS = 40
"""Lane labels are cut to this many characters, keeping the end (``…Handler.close``): dotted span
names are long and their last part says the most."""


def _label(name: str) -> str:
    if not name:
        return "(unnamed)"
    return name if len(name) <= LABEL_CHARS else "…" + name[-(LABEL_CHARS - 1):]


def _edge_pairs(g: nx.Graph) -> dict[tuple[str, str], tuple[str, float]]:
    """(source, target) -> (kind, share of traces; 1 for a single trace; the values carried, in a summary),
    in edge order."""
    pairs: dict[tuple[str, str], tuple[str, float]] = {}
    for source, target, data in g.edges(data=True):
        kind, share = pairs.get((source, target), ("threaded", 0.0 if "values" in data else 1.0))
        if data["kind"] == "handoff":
            kind = "handoff"
        pairs[source, target] = (kind, share + data["values"] if "values" in data else data.get("share", share))
    return pairs


def _draw_trace_edges(ax: Axes, pos: dict[str, tuple[float, float]],
                      pairs: list[tuple[tuple[str, str], tuple[str, float]]], weighted: bool = False) -> None:
    from matplotlib.collections import PatchCollection
    from matplotlib.patches import PathPatch
    from matplotlib.path import Path as CurvePath

    # Every edge runs forward in time, so no arrowheads: one arc over the lanes between its ends.
    patches, colors, widths = [], [], []
    for (source, target), (kind, weight) in pairs:
        (x1, y1), (x2, y2) = pos[source], pos[target]
        bend = min(0.45, 0.2 + 0.02 * abs(x2 - x1))
        control = ((x1 + x2) / 2, max(y1, y2) + bend)
        patches.append(PathPatch(CurvePath([(x1, y1), control, (x2, y2)],
                                           [CurvePath.MOVETO, CurvePath.CURVE3, CurvePath.CURVE3])))
        colors.append(_HANDOFF if kind == "handoff" else _THREADED_EDGE)
        widths.append(min(4.0, 0.8 + 0.6 * (weight - 1)) if weighted else 0.8)  # a summary's link: its values
    alpha = 0.7 if len(patches) < 200 else 0.35
    ax.add_collection(PatchCollection(patches, facecolors="none", edgecolors=colors, linewidths=widths,
                                      alpha=alpha, zorder=1))


def _draw_aggregate_edges(ax: Axes, pos: dict[str, tuple[float, float]],
                          pairs: list[tuple[tuple[str, str], tuple[str, float]]]) -> None:
    from matplotlib.patches import Ellipse, FancyArrowPatch

    # Names are not ordered in time the way observations are, so edges get arrowheads here.
    for (source, target), (kind, share) in pairs:
        color, width = _HANDOFF if kind == "handoff" else _THREADED_EDGE, 0.5 + 2.0 * share
        x, y = pos[source]
        if source == target:  # a small loop above the node: a name feeding a later observation of that name
            ax.add_patch(Ellipse((x, y + 0.22), 0.3, 0.44, fill=False, edgecolor=color, linewidth=width,
                                 alpha=0.75, zorder=1))
            continue
        ax.add_patch(FancyArrowPatch(pos[source], pos[target], connectionstyle="arc3,rad=-0.25", arrowstyle="-|>",
                                     mutation_scale=10, color=color, linewidth=width, alpha=0.75, zorder=1,
                                     shrinkA=6.0, shrinkB=6.0))


def _figure(g: nx.Graph, title: str | None, max_edges: int) -> Any:
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    aggregate = g.graph.get("kind") == "aggregate"
    summary = g.graph.get("summary")
    pos = time_layout(g)
    pairs = list(_edge_pairs(g).items())
    drawn = pairs[:max_edges]
    xs = [x for x, _ in pos.values()] or [0.0]
    lanes: dict[float, str] = {}
    for node, (_, y) in pos.items():
        lanes.setdefault(y, _label(node if aggregate else g.nodes[node]["name"]))
    width = min(30.0, max(6.0, 2.5 + 0.25 * (max(xs) - min(xs))))
    height = min(20.0, max(2.5, 1.2 + 0.4 * len(lanes)))
    fig = Figure(figsize=(width, height), dpi=100)
    ax = fig.add_subplot()
    if aggregate:
        _draw_aggregate_edges(ax, pos, drawn)
    else:
        _draw_trace_edges(ax, pos, drawn, weighted=summary is not None)

    nodes = list(g.nodes)
    if aggregate:
        n_traces = max(1, g.graph.get("traces", 1))
        sizes = [60 + 340 * g.nodes[n]["traces"] / n_traces for n in nodes]
        rings = [g.nodes[n]["unthreaded"] > 0 for n in nodes]
    elif summary is not None:  # a node stands for the steps of its lane in its step of time
        sizes = [40 + 25 * min(g.nodes[n]["count"], 12) for n in nodes]
        rings = [bool(g.nodes[n]["unthreaded"]) for n in nodes]
    else:
        sizes = [max(10.0, 70 - len(nodes) / 15)] * len(nodes)
        rings = [bool(g.nodes[n]["unthreaded"]) for n in nodes]
    ax.scatter([pos[n][0] for n in nodes], [pos[n][1] for n in nodes], s=sizes, zorder=3,
               c=[_HANDOFF if g.nodes[n]["is_handoff"] else _NODE for n in nodes],
               edgecolors=[_UNTHREADED if ring else "white" for ring in rings],
               linewidths=[2.0 if ring else 0.5 for ring in rings])

    ax.set_yticks(list(lanes), [lanes[y] for y in lanes])
    ax.set_ylim(min(lanes, default=0.0) - 0.6, max(lanes, default=0.0) + (0.9 if aggregate else 0.6))
    ax.set_xlim(min(xs) - 0.6, max(xs) + 0.6)
    if aggregate:
        ax.set_xticks([])
        ax.set_xlabel("names in the order they first occur in a trace, on average (time →)")
    elif summary is not None:
        ax.set_xlabel("step of the trace (time →); a larger dot holds more observations")
    else:
        ax.set_xlabel("observation index (time →)")
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    if title is None:
        traces = g.graph.get("traces", 0)
        title = (f"aggregate flow of {traces} trace{'' if traces == 1 else 's'}" if aggregate
                 else f"flow of trace {g.graph.get('trace_id', '')}: {len(nodes)} observations, "
                      f"{g.number_of_edges()} edges")
        if summary is not None:
            title = f"flow of trace {g.graph.get('trace_id', '')}, summarised"
        if aggregate and g.graph.get("grouped"):
            title += f": {len(nodes) - 1} names shown (those passing values on first), {g.graph['grouped']} grouped"
    if summary is not None:
        title += f"\n{summary} (every edge: draw_flow(..., full=True))"
    if len(drawn) < len(pairs):
        title += f" ({len(drawn)} of {len(pairs)} connected pairs drawn)"
    ax.set_title(title, fontsize=10, loc="left")
    legend = [
        Line2D([], [], marker="o", linestyle="", color=_NODE, label="observation"),
        Line2D([], [], marker="o", linestyle="", color=_HANDOFF, label="dispatch (handoff)"),
        Line2D([], [], marker="o", linestyle="", color=_NODE, markeredgecolor=_UNTHREADED,
               markeredgewidth=2, label="left an unthreaded output"),
        Line2D([], [], color=_THREADED_EDGE, label="value threaded"),
        Line2D([], [], color=_HANDOFF, label="value handed off"),
    ]
    ax.legend(handles=legend, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    return fig


def draw_flow(graph: AnyFlowGraph | nx.Graph, path: str | Path, *, title: str | None = None,
              max_edges: int = DEFAULT_MAX_EDGES, full: bool = False) -> Path:
    """Draw a flow graph to an SVG or PNG file, written atomically.

    A trace too long to read in full (more than 60 observations or 400 connected pairs) is drawn as a
    summary: steps grouped, a lane per tool, edges between lanes only
    (:mod:`evalkit.flow.draw_summary`); ``full=True`` draws every observation and edge.

    Args:
        graph: one trace's flow graph (as built, as read, or from
            :func:`~evalkit.flow.graph.to_networkx`), or an aggregate from
            :func:`~evalkit.flow.graph.aggregate_graph`.
        path: the file to write; ``.svg`` or ``.png``.
        title: the title; by default it says which trace (or how many traces) and how big.
        max_edges: the most connected node pairs to draw (the first ones in edge order).
        full: draw a long trace whole rather than as a summary.

    Returns:
        The path written.
    """
    import networkx as nx
    from matplotlib import rc_context

    target = Path(path)
    fmt = _FORMATS.get(target.suffix.lower())
    if fmt is None:
        raise InputError(f"{target}: a drawing is written as .svg or .png; give the file one of those suffixes")
    g = graph if isinstance(graph, nx.Graph) else to_networkx(graph)
    if not full and needs_summary(g):
        g = summarize_trace_graph(g)
    buffer = io.BytesIO()
    with rc_context({"svg.hashsalt": "evalkit-flow", "svg.fonttype": "none"}):
        fig = _figure(g, title, max_edges)
        metadata = {"Date": None} if fmt == "svg" else {"Software": None}
        fig.savefig(buffer, format=fmt, metadata=metadata, bbox_inches="tight")
    atomic_write_bytes(target, buffer.getvalue())
    return target
