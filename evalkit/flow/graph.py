"""Flow graphs as networkx graphs: one trace's, the aggregate of many, and a layout in time order."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from evalkit.errors import InputError
from evalkit.flow.build import Edge, Flow
from evalkit.flow.named import AnyFlowGraph, named_edges

if TYPE_CHECKING:
    import networkx as nx


def _edges(graph: AnyFlowGraph) -> Iterator[Edge]:
    if isinstance(graph, Flow):
        yield from graph.edges
    else:
        for edge in graph.edges:
            yield edge.from_, edge.to, edge.slot, edge.kind


def to_networkx(graph: AnyFlowGraph) -> nx.MultiDiGraph:
    """One trace's flow graph as a networkx multigraph.

    Nodes are the node ids, with attributes ``index, type, name, produces, consumes, is_handoff``,
    ``unthreaded`` (the slots whose value reached no later node) and ``terminal`` (those that are end
    products, see :meth:`~evalkit.flow.build.Flow.terminal_outputs`). Edges are keyed by slot and
    carry ``slot`` and ``kind``. The graph's ``trace_id`` and ``kind`` ("trace") are graph attributes.

    Raises:
        ValueError: an edge or unthreaded output names a node that is not in the graph's nodes.
    """
    import networkx as nx

    g = nx.MultiDiGraph(trace_id=graph.trace_id, kind="trace")
    unthreaded: dict[str, list[str]] = defaultdict(list)
    terminal: dict[str, list[str]] = defaultdict(list)
    for output in graph.unthreaded_outputs:
        unthreaded[output.node].append(output.slot)
    for output in graph.terminal_outputs:
        terminal[output.node].append(output.slot)
    for node in graph.nodes:
        g.add_node(node.id, index=node.index, type=node.type, name=node.name, produces=list(node.produces),
                   consumes=list(node.consumes), is_handoff=node.is_handoff,
                   unthreaded=unthreaded.pop(node.id, []), terminal=terminal.pop(node.id, []))
    if unthreaded:
        raise InputError(f"unthreaded output of node {next(iter(unthreaded))!r}, which is not in the graph; "
                         "the flow graph is inconsistent: rebuild it with `evalkit flow build`")
    for k, (source, target, slot, kind) in enumerate(_edges(graph)):
        for end in (source, target):
            if end not in g:
                raise InputError(f"edges[{k}]: node {end!r} is not in the graph; the flow graph is inconsistent: "
                                 "rebuild it with `evalkit flow build`")
        g.add_edge(source, target, key=slot, slot=slot, kind=kind)
    return g


DEFAULT_MAX_NAMES = 15
"""An aggregate drawn with more names than this is a hairball with unreadable lanes: the names in
the most traces are kept and the rest grouped into one node."""


def other_names(count: int) -> str:
    """The name of the node that groups ``count`` less common names."""
    return f"(other: {count} names)"


def _kept_names(graphs: list[AnyFlowGraph], max_names: int | None) -> set[str] | None:
    if max_names is None:
        return None
    if max_names < 1:
        raise InputError(f"max_names must be at least 1, got {max_names}; pass None to keep every name")
    traces: Counter[str] = Counter()
    observations: Counter[str] = Counter()
    flowing: Counter[str] = Counter()
    for graph in graphs:
        traces.update({node.name for node in graph.nodes})
        observations.update(node.name for node in graph.nodes)
        flowing.update({name for e in named_edges(graph) for name in (e.from_name, e.to_name)})
    if len(traces) <= max_names:
        return None
    # The names that pass values on come first (a trace's many plumbing spans carry none), then the
    # commonest. One slot goes to the group itself, so the drawing has at most max_names nodes.
    ranked = sorted(traces, key=lambda n: (-flowing[n], -traces[n], -observations[n], n))
    return set(ranked[:max(1, max_names - 1)])


def aggregate_graph(graphs: Iterable[AnyFlowGraph], *, max_names: int | None = None) -> nx.DiGraph:
    """The flow of many traces in one graph: nodes are observation names, edges how often they thread.

    Node attributes: ``traces`` (how many traces have an observation of that name), ``observations``
    (how many there are in all), ``position`` (where in a trace the name first occurs, 0 = start,
    1 = end, averaged over traces), ``is_handoff`` (any of them is a dispatch), ``unthreaded``
    (how many unthreaded outputs they left) and ``names`` (1, or how many names a group holds). Edge
    attributes: ``weight`` (how many traces have an edge between the two names), ``share`` (weight
    / traces), ``slots`` (per slot, how many traces) and ``kind`` (``handoff`` when the producer is
    a dispatch tool). Graph attributes: ``traces``, ``kind`` ("aggregate"), ``grouped`` (how many
    names were grouped, 0 when none were).

    Args:
        graphs: one flow graph per trace.
        max_names: at most this many nodes: past it, ``max_names - 1`` names are kept (those in the
            most traces' edges first, then those in the most traces) and the others become one node, :func:`other_names`, whose counts are
            those of its names together (a trace counts once). None keeps every name.
    """
    import networkx as nx

    graphs = list(graphs)
    kept = _kept_names(graphs, max_names)
    grouped = 0 if kept is None else len({n.name for g in graphs for n in g.nodes} - kept)
    other = other_names(grouped)

    def label(name: str) -> str:
        return name if kept is None or name in kept else other

    traces: Counter[str] = Counter()
    observations: Counter[str] = Counter()
    position: dict[str, float] = defaultdict(float)
    handoff: set[str] = set()
    unthreaded: Counter[str] = Counter()
    pair_traces: Counter[tuple[str, str]] = Counter()
    slot_traces: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for graph in graphs:
        last = max(1, len(graph.nodes) - 1)
        first_index: dict[str, int] = {}
        for node in graph.nodes:
            name = label(node.name)
            first_index.setdefault(name, node.index)
            observations[name] += 1
            if node.is_handoff:
                handoff.add(name)
        for name, index in first_index.items():
            traces[name] += 1
            position[name] += index / last
        unthreaded.update(label(output.name) for output in graph.unthreaded_outputs)
        named = {(label(e.from_name), label(e.to_name), e.slot) for e in named_edges(graph)}
        pair_traces.update({(source, target) for source, target, _ in named})
        for source, target, slot in named:
            slot_traces[source, target][slot] += 1
    g = nx.DiGraph(traces=len(graphs), kind="aggregate", grouped=grouped)
    for name in sorted(traces):
        g.add_node(name, traces=traces[name], observations=observations[name],
                   position=position[name] / traces[name], is_handoff=name in handoff,
                   unthreaded=unthreaded[name], names=grouped if grouped and name == other else 1)
    for (source, target), count in sorted(pair_traces.items()):
        g.add_edge(source, target, weight=count, share=count / len(graphs),
                   slots=dict(sorted(slot_traces[source, target].items())),
                   kind="handoff" if source in handoff else "threaded")
    return g


def time_layout(g: nx.Graph) -> dict[str, tuple[float, float]]:
    """Positions that read left to right in time, one horizontal lane per observation name.

    For a trace graph (:func:`to_networkx`) x is the observation's index and lanes are ordered top
    to bottom by when their name first occurs. For an aggregate graph (:func:`aggregate_graph`)
    names are ranked by their average position in a trace; the rank is both x and the lane, so the
    names run diagonally from the first (top left) to the last (bottom right).
    """
    if g.graph.get("kind") == "aggregate":
        order = sorted(g.nodes, key=lambda n: (g.nodes[n]["position"], n))
        return {n: (float(rank), -float(rank)) for rank, n in enumerate(order)}
    lanes: dict[str, int] = {}
    for n in sorted(g.nodes, key=lambda n: g.nodes[n]["index"]):
        lanes.setdefault(g.nodes[n]["name"], len(lanes))
    return {n: (float(g.nodes[n]["index"]), -float(lanes[g.nodes[n]["name"]])) for n in g.nodes}
