"""A trace's flow against the flow expected of it, and the expected flow inferred from many traces."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from evalkit.contracts.flow import ExpectedEdge, ExpectedFlow
from evalkit.flow.named import (
    DEFAULT_MIN_SUPPORT,
    AnyFlowGraph,
    NamedEdge,
    check_min_support,
    edge_support,
    modal_edges,
    named_edges,
)


@dataclass(frozen=True)
class FlowDiff:
    """Which expected edges one trace shows, which it lacks, and which of its edges nobody expected.

    An expected edge whose producer or consumer never ran in the trace is ``not_applicable``, not
    missing: a trace that never looked up an order cannot have dropped the order lookup's result.
    """

    trace_id: str
    satisfied: list[ExpectedEdge]
    missing: list[ExpectedEdge]
    unexpected: list[NamedEdge]
    """Named edges of the trace that no expected edge covers, sorted."""
    not_applicable: list[ExpectedEdge] = field(default_factory=list)

    def to_json_obj(self) -> dict[str, Any]:
        """JSON-ready form; unexpected edges are written like expected ones (fromTool, toTool, slot)."""
        return {
            "traceId": self.trace_id,
            "satisfied": [edge.to_json_obj() for edge in self.satisfied],
            "missing": [edge.to_json_obj() for edge in self.missing],
            "notApplicable": [edge.to_json_obj() for edge in self.not_applicable],
            "unexpected": [{"fromTool": e.from_name, "toTool": e.to_name, "slot": e.slot}
                           for e in self.unexpected],
        }


def _covers(expected: ExpectedEdge, edge: NamedEdge) -> bool:
    return (expected.from_tool == edge.from_name and expected.to_tool == edge.to_name
            and (expected.slot is None or expected.slot == edge.slot))


def diff_expected_flow(graph: AnyFlowGraph, expected: ExpectedFlow) -> FlowDiff:
    """Diff one trace's flow graph against the expected flow.

    An expected edge is satisfied when the graph has an edge from a node named ``fromTool`` to a
    node named ``toTool`` (through ``slot`` when the expected edge names one).

    Args:
        graph: the trace's flow graph, as built or as read from a file.
        expected: the expected flow.

    Returns:
        The satisfied, missing and not-applicable expected edges (in the expected flow's order) and
        the graph's unexpected named edges.
    """
    named = named_edges(graph)
    present = {node.name for node in graph.nodes}
    satisfied, missing, not_applicable = [], [], []
    for exp in expected.edges:
        if any(_covers(exp, edge) for edge in named):
            satisfied.append(exp)
        elif exp.from_tool in present and exp.to_tool in present:
            missing.append(exp)
        else:
            not_applicable.append(exp)
    unexpected = sorted(edge for edge in named if not any(_covers(exp, edge) for exp in expected.edges))
    return FlowDiff(graph.trace_id, satisfied, missing, unexpected, not_applicable)


def infer_expected_flow(graphs: Iterable[AnyFlowGraph],
                        min_support: float = DEFAULT_MIN_SUPPORT) -> ExpectedFlow:
    """The modal flow of many traces of one agent, as an expected flow to diff traces against.

    Not the union: an edge is kept only when at least ``min_support`` of the traces have it, so a
    threading that one odd trace shows does not become expected of all.

    Args:
        graphs: one flow graph per trace.
        min_support: the share of traces (0 to 1, inclusive of 1) an edge must occur in.

    Returns:
        An expected flow with one edge per kept ``(producer name, consumer name, slot)``, sorted;
        its dispatch tools are the names of the graphs' handoff nodes. Edges from or to an
        unnamed observation, or through a slot named "", cannot be written as expected edges and
        are left out.
    """
    check_min_support(min_support)
    graphs = list(graphs)
    _, support = edge_support(graphs)
    modal = modal_edges(support, len(graphs), min_support)
    dispatch = sorted({node.name for graph in graphs for node in graph.nodes
                       if node.is_handoff and node.name})
    edges = [ExpectedEdge(from_tool=e.from_name, to_tool=e.to_name, slot=e.slot)
             for e in modal if e.from_name and e.to_name and e.slot]
    return ExpectedFlow(dispatch_tool_names=dispatch, edges=edges, expected_ui_slots=[])
