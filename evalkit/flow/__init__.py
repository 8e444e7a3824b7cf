"""Flow graphs: where each value an observation produced went, and the flow expected of an agent.

Build one graph per trace (:func:`build_flow_graph`, light edges; ``.to_graph()`` validates), matching
on the text each consumer received (or, with ``semantics="mutagent"``, the reference method's JSON
text), diff it against an expected flow, find the traces that drop or lack a value they should pass on, infer the modal flow of many traces, measure how much traces
vary, and look at graphs as networkx graphs or drawings.

Every name loads on first use (:func:`evalkit.facade.load_on_first_use`): the command line reads
:mod:`evalkit.flow.defaults` for its options, and must not pay for networkx, polars and pydantic to do so.
``from evalkit.flow import build_flow_graph`` works as for any facade.
"""

from typing import TYPE_CHECKING

from evalkit.facade import load_on_first_use

if TYPE_CHECKING:
    from evalkit.flow.build import Edge, Flow, SlotReach, build_flow_graph
    from evalkit.flow.defaults import DEFAULT_MIN_THREAD_LEN, SEMANTICS, Semantics
    from evalkit.flow.draw import draw_flow
    from evalkit.flow.expected import FlowDiff, diff_expected_flow, infer_expected_flow
    from evalkit.flow.files import flow_graph_line, read_flow_graphs, write_flow_graphs
    from evalkit.flow.findings import (
        DROPPED,
        NO_VALUE,
        NOT_FOLLOWED,
        OUTCOMES,
        FlowGaps,
        MissingEdge,
        TraceGap,
        TruthCheck,
        aggregate_edge_frame,
        check_against_truth,
        dropped_candidates,
        dropped_candidates_finding,
        edge_text,
        example_traces,
        flow_gaps,
        name_order,
        unthreaded_frame,
    )
    from evalkit.flow.graph import DEFAULT_MAX_NAMES, aggregate_graph, other_names, time_layout, to_networkx
    from evalkit.flow.named import DEFAULT_MIN_SUPPORT, AnyFlowGraph, NamedEdge, named_edges
    from evalkit.flow.story import ANY_MISSING, FlowStory, dispatch_tools, flow_story
    from evalkit.flow.variance import EdgeShare, FlowVariance, TraceDeviation, flow_variance

__all__ = [
    "ANY_MISSING",
    "FlowStory",
    "dispatch_tools",
    "flow_story",
    "DEFAULT_MAX_NAMES",
    "DEFAULT_MIN_SUPPORT",
    "DEFAULT_MIN_THREAD_LEN",
    "DROPPED",
    "NOT_FOLLOWED",
    "NO_VALUE",
    "OUTCOMES",
    "SEMANTICS",
    "AnyFlowGraph",
    "Edge",
    "EdgeShare",
    "Flow",
    "FlowDiff",
    "FlowGaps",
    "FlowVariance",
    "MissingEdge",
    "NamedEdge",
    "Semantics",
    "SlotReach",
    "TraceDeviation",
    "TraceGap",
    "TruthCheck",
    "aggregate_edge_frame",
    "aggregate_graph",
    "build_flow_graph",
    "check_against_truth",
    "diff_expected_flow",
    "draw_flow",
    "dropped_candidates",
    "dropped_candidates_finding",
    "edge_text",
    "example_traces",
    "flow_gaps",
    "flow_graph_line",
    "flow_variance",
    "infer_expected_flow",
    "name_order",
    "named_edges",
    "other_names",
    "read_flow_graphs",
    "time_layout",
    "to_networkx",
    "unthreaded_frame",
    "write_flow_graphs",
]

__getattr__, __dir__ = load_on_first_use(__name__, __all__)
