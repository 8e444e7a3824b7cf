"""Flow graphs as partition work: the one function both ``evalkit flow build`` paths run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from evalkit.contracts.trace import Trace
from evalkit.distributed.partitions import PartitionResult, partition_traces
from evalkit.io import paused_gc

if TYPE_CHECKING:
    from evalkit.contracts.flow import ExpectedFlow
    from evalkit.flow import FlowDiff
    from evalkit.traces import LineRange


@dataclass(frozen=True)
class FlowOptions:
    """How every graph is built (the options of ``evalkit flow build``)."""

    dispatch: frozenset[str] = frozenset()
    min_thread_len: int | None = None
    semantics: str = "received"
    expected: ExpectedFlow | None = None


@dataclass
class FlowPartition:
    """The counts of a partition's graphs and their diffs against the expected flow (if any)."""

    graphs: int = 0
    edges: int = 0
    unthreaded: int = 0
    terminal: int = 0
    diffs: list[FlowDiff] = field(default_factory=list)

    def add(self, other: FlowPartition) -> None:
        """Fold another partition's summary into this one (partitions in order)."""
        self.graphs += other.graphs
        self.edges += other.edges
        self.unthreaded += other.unthreaded
        self.terminal += other.terminal
        self.diffs += other.diffs


def build_flow_partition(traces: list[Trace], options: FlowOptions) -> PartitionResult:
    """The flow-graph lines of a partition's traces, in order, and their counts.

    Args:
        traces: consecutive traces of the input.
        options: dispatch tools, minimum thread length, semantics, expected flow.

    Returns:
        The JSONL text (one canonical line per graph) and a :class:`FlowPartition`.
    """
    from evalkit.flow import DEFAULT_MIN_THREAD_LEN, build_flow_graph, diff_expected_flow, flow_graph_line

    summary = FlowPartition()
    lines = []
    min_len = options.min_thread_len if options.min_thread_len is not None else DEFAULT_MIN_THREAD_LEN
    # The graph build already pauses the collector; writing the lines (JSON values, tens of thousands a
    # trace) did not, and its passes found no cycles to collect but cost a sixth of the partition's time
    # (measured: 1.1 s of 6.8 s for 600 long traces), more in a Dask worker, whose heap holds Dask too.
    with paused_gc():
        for trace in traces:
            flow = build_flow_graph(trace, dispatch_tool_names=set(options.dispatch), min_thread_len=min_len,
                                    semantics=options.semantics)
            lines.append(flow_graph_line(flow))
            summary.graphs += 1
            summary.edges += flow.edge_count
            summary.unthreaded += len(flow.unthreaded_outputs)
            summary.terminal += len(flow.terminal_outputs)
            if options.expected is not None:
                summary.diffs.append(diff_expected_flow(flow, options.expected))
    return PartitionResult("".join(lines), summary)


def build_flow_work(work: list[Trace] | LineRange, options: FlowOptions) -> PartitionResult:
    """:func:`build_flow_partition` of traces sent by the client, or of lines the worker reads itself."""
    return build_flow_partition(partition_traces(work), options)
