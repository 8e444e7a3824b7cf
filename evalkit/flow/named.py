"""Edges by name: what traces of one agent have in common, whatever their node ids.

Node ids (``n0``, ``n1`` ...) differ from trace to trace; the names of the observations do not. An
edge seen by name is ``(producer name, consumer name, slot)``, and the modal flow of many traces is
the set of named edges that at least a given share of them have.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import NamedTuple

from evalkit.contracts.flow import FlowGraph
from evalkit.errors import InputError
from evalkit.flow.build import Flow

AnyFlowGraph = Flow | FlowGraph
"""A flow graph as built (:class:`Flow`) or as read from a file (:class:`FlowGraph`)."""

DEFAULT_MIN_SUPPORT = 0.5
"""An edge is part of the modal flow when at least half the traces have it: the majority flow."""


class NamedEdge(NamedTuple):
    """An edge seen by the names of its nodes: the value of ``slot`` of ``from_name`` reached ``to_name``."""

    from_name: str
    to_name: str
    slot: str


def named_edges(graph: AnyFlowGraph) -> set[NamedEdge]:
    """The distinct named edges of one graph.

    Raises:
        ValueError: an edge of a :class:`FlowGraph` names a node that is not in its nodes.
    """
    if isinstance(graph, Flow):
        names = [node.name for node in graph.nodes]
        return {NamedEdge(names[r.producer], to_name, r.slot) for r in graph.reaches
                for to_name in {names[j] for j in r.consumers}}
    by_id = {node.id: node.name for node in graph.nodes}
    named = set()
    for k, edge in enumerate(graph.edges):
        for end in (edge.from_, edge.to):
            if end not in by_id:
                raise InputError(f"edges[{k}]: node {end!r} is not one of the graph's nodes; the flow graph is "
                                 "inconsistent: rebuild it with `evalkit flow build`")
        named.add(NamedEdge(by_id[edge.from_], by_id[edge.to], edge.slot))
    return named


def edge_support(graphs: Iterable[AnyFlowGraph]) -> tuple[list[set[NamedEdge]], Counter[NamedEdge]]:
    """Each graph's named edges, and in how many graphs each named edge occurs."""
    per_graph = [named_edges(graph) for graph in graphs]
    support: Counter[NamedEdge] = Counter()
    for edges in per_graph:
        support.update(edges)
    return per_graph, support


def check_min_support(min_support: float) -> None:
    if not 0 < min_support <= 1:
        raise InputError(f"min_support must be in (0, 1], got {min_support}; it is the share of traces an "
                         f"edge must appear in (default {DEFAULT_MIN_SUPPORT})")


def modal_edges(support: Counter[NamedEdge], traces: int, min_support: float) -> list[NamedEdge]:
    """The named edges that at least ``min_support`` of ``traces`` have, sorted."""
    check_min_support(min_support)
    # A share of exactly min_support is in, whatever the rounding (0.1 * 30 is 3.0000000000000004).
    return sorted(edge for edge, count in support.items() if count >= min_support * traces - 1e-9)
