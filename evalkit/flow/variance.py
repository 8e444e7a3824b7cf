"""How much the flow varies from trace to trace: how common each edge is, how far each trace strays."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evalkit.flow.named import DEFAULT_MIN_SUPPORT, AnyFlowGraph, NamedEdge, edge_support, modal_edges

if TYPE_CHECKING:
    import polars as pl


@dataclass(frozen=True)
class EdgeShare:
    """One named edge and the share of traces that have it."""

    edge: NamedEdge
    traces: int
    share: float


@dataclass(frozen=True)
class TraceDeviation:
    """How one trace's named edges differ from the modal flow."""

    trace_id: str
    missing: list[NamedEdge]
    """Modal edges this trace lacks."""
    extra: list[NamedEdge]
    """Edges of this trace that are not modal."""
    distance: float
    """Jaccard distance to the modal flow: 0 when the trace has exactly the modal edges, 1 when it
    shares none of them."""


@dataclass(frozen=True)
class FlowVariance:
    """Per named edge, the share of traces that have it; per trace, its distance from the modal flow."""

    traces: int
    min_support: float
    modal: list[NamedEdge]
    edges: list[EdgeShare]
    """Most common first, then by name."""
    per_trace: list[TraceDeviation]
    """In the order the graphs were given."""

    def edge_frame(self) -> pl.DataFrame:
        """One row per named edge: from, to, slot, traces, share, modal."""
        import polars as pl

        modal = set(self.modal)
        return pl.DataFrame(
            [{"from": s.edge.from_name, "to": s.edge.to_name, "slot": s.edge.slot, "traces": s.traces,
              "share": s.share, "modal": s.edge in modal} for s in self.edges],
            schema={"from": pl.String, "to": pl.String, "slot": pl.String, "traces": pl.Int64,
                    "share": pl.Float64, "modal": pl.Boolean})

    def trace_frame(self) -> pl.DataFrame:
        """One row per trace: trace_id, missing and extra edge counts, distance."""
        import polars as pl

        return pl.DataFrame(
            [{"trace_id": d.trace_id, "missing": len(d.missing), "extra": len(d.extra),
              "distance": d.distance} for d in self.per_trace],
            schema={"trace_id": pl.String, "missing": pl.Int64, "extra": pl.Int64, "distance": pl.Float64})


def _jaccard_distance(a: set[NamedEdge], b: set[NamedEdge]) -> float:
    union = len(a | b)
    return 0.0 if union == 0 else 1.0 - len(a & b) / union


def flow_variance(graphs: Iterable[AnyFlowGraph], min_support: float = DEFAULT_MIN_SUPPORT) -> FlowVariance:
    """How much the flow of many traces of one agent varies.

    Args:
        graphs: one flow graph per trace.
        min_support: the share of traces an edge must occur in to be part of the modal flow (as
            in :func:`~evalkit.flow.expected.infer_expected_flow`).

    Returns:
        The share of traces having each named edge, the modal flow, and each trace's missing and
        extra edges and Jaccard distance from the modal flow.
    """
    graphs = list(graphs)
    per_graph, support = edge_support(graphs)
    modal = modal_edges(support, len(graphs), min_support)
    modal_set = set(modal)
    shares = sorted((EdgeShare(edge, count, count / len(graphs)) for edge, count in support.items()),
                    key=lambda s: (-s.traces, s.edge))
    per_trace = [TraceDeviation(graph.trace_id, sorted(modal_set - edges), sorted(edges - modal_set),
                                _jaccard_distance(edges, modal_set))
                 for graph, edges in zip(graphs, per_graph, strict=True)]
    return FlowVariance(len(graphs), min_support, modal, shares, per_trace)
