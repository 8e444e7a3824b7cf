"""Flow-graph files: JSONL, one canonical line (sorted keys, compact) per trace's graph."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from evalkit.contracts.flow import FlowGraph
from evalkit.flow.named import AnyFlowGraph
from evalkit.flow.slots import sorted_json
from evalkit.io.atomic import atomic_writer


def flow_graph_line(graph: AnyFlowGraph) -> str:
    """The graph's JSONL line: the bytes ``canonical_line`` writes, from orjson where it agrees."""
    return sorted_json(graph.to_json_obj()) + "\n"


def write_flow_graphs(graphs: Iterable[AnyFlowGraph], path: str | Path) -> int:
    """Write one line per graph, atomically; returns how many were written."""
    count = 0
    with atomic_writer(path, "w") as fh:
        for graph in graphs:
            fh.write(flow_graph_line(graph))
            count += 1
    return count


def read_flow_graphs(path: str | Path) -> Iterator[FlowGraph]:
    """The validated graphs of a flow-graph JSONL file, one at a time.

    Raises:
        InputError: a line that is not JSON or not a flow graph, as ``FILE:LINE: field.path: message``.
    """
    from evalkit.contract_files import iter_models

    yield from iter_models(path, FlowGraph, fmt="jsonl")
