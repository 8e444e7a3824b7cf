"""Flow graphs: where each value an observation produced went, and the flow expected of an agent.

Build one graph per trace (:func:`build_flow_graph`, light edges; ``.to_graph()`` validates), matching
on the text each consumer received (or, with ``semantics="mutagent"``, the reference method's JSON
text), diff it against an expected flow, infer the modal flow of many traces, measure how much traces
vary, and look at graphs as networkx graphs or drawings.
"""

from evalkit.flow.build import Edge, Flow, SlotReach, build_flow_graph
from evalkit.flow.draw import draw_flow
from evalkit.flow.expected import FlowDiff, diff_expected_flow, infer_expected_flow
from evalkit.flow.files import flow_graph_line, read_flow_graphs, write_flow_graphs
from evalkit.flow.graph import DEFAULT_MAX_NAMES, aggregate_graph, other_names, time_layout, to_networkx
from evalkit.flow.named import DEFAULT_MIN_SUPPORT, AnyFlowGraph, NamedEdge, named_edges
from evalkit.flow.received import SEMANTICS, Semantics
from evalkit.flow.slots import DEFAULT_MIN_THREAD_LEN
from evalkit.flow.variance import EdgeShare, FlowVariance, TraceDeviation, flow_variance

__all__ = [
    "DEFAULT_MAX_NAMES",
    "DEFAULT_MIN_SUPPORT",
    "DEFAULT_MIN_THREAD_LEN",
    "AnyFlowGraph",
    "Edge",
    "EdgeShare",
    "Flow",
    "FlowDiff",
    "FlowVariance",
    "NamedEdge",
    "SEMANTICS",
    "Semantics",
    "SlotReach",
    "TraceDeviation",
    "aggregate_graph",
    "build_flow_graph",
    "diff_expected_flow",
    "draw_flow",
    "flow_graph_line",
    "flow_variance",
    "infer_expected_flow",
    "named_edges",
    "other_names",
    "read_flow_graphs",
    "time_layout",
    "to_networkx",
    "write_flow_graphs",
]
