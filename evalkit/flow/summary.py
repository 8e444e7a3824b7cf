"""What the flow graphs of many traces say, in the tables and counts a report shows.

Which traces miss an expected edge that applies to them, and why: the producer's value existed
and was not passed on (a dropped context), or the producer gave no value to pass (it failed, so the
break is upstream). Which outputs went nowhere, counted by producer name and slot. The aggregate
graph's edges as a table, a few traces worth drawing in full, and, when traces carry their own
ground truth, how the flagged traces compare with it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalkit.contracts.flow import ExpectedEdge, ExpectedFlow
from evalkit.flow.expected import FlowDiff, diff_expected_flow
from evalkit.flow.named import AnyFlowGraph

if TYPE_CHECKING:
    import networkx as nx
    import polars as pl

    from evalkit.contracts.trace import Trace

DROPPED = "value not passed on"
"""A producer of the expected edge's name output the slot, and its value never reached the consumer."""
NO_VALUE = "producer gave no value"
"""Every producer of that name ran but output nothing by that slot (for instance it failed)."""


def edge_text(edge: ExpectedEdge) -> str:
    """``from → to [slot]``, the slot left out when the edge names none."""
    return f"{edge.from_tool} → {edge.to_tool}" + (f" [{edge.slot}]" if edge.slot else "")


@dataclass(frozen=True)
class MissingEdge:
    """An applicable expected edge a trace does not show, and whether the value to pass existed."""

    edge: ExpectedEdge
    produced: bool
    """True when a node named ``fromTool`` produced the slot (any slot, when the edge names none)."""

    @property
    def cause(self) -> str:
        return DROPPED if self.produced else NO_VALUE


@dataclass(frozen=True)
class TraceGap:
    """One trace's missing applicable expected edges, in the expected flow's order."""

    trace_id: str
    missing: list[MissingEdge]

    @property
    def dropped(self) -> bool:
        """Some missing edge's value existed: the trace dropped context, not just met a failure."""
        return any(m.produced for m in self.missing)


def _produced(graph: AnyFlowGraph, edge: ExpectedEdge) -> bool:
    return any(node.name == edge.from_tool and (edge.slot in node.produces if edge.slot else node.produces)
               for node in graph.nodes)


@dataclass(frozen=True)
class FlowGaps:
    """Every trace's diff against the expected flow, and the traces with missing applicable edges."""

    expected: ExpectedFlow
    diffs: list[FlowDiff]
    """One per graph, in the order the graphs were given."""
    gaps: list[TraceGap]
    """Only the traces that miss an applicable expected edge, in the same order."""

    def flagged(self, *, dropped_only: bool = False) -> list[str]:
        """The ids of the traces with a gap (with ``dropped_only``, of those whose value existed)."""
        return [g.trace_id for g in self.gaps if g.dropped or not dropped_only]

    def gap_frame(self) -> pl.DataFrame:
        """One row per trace with a gap: trace_id, missing (the edges as text), dropped and no_value
        (how many of them had a value to pass, how many did not), cause."""
        import polars as pl

        rows = []
        for gap in self.gaps:
            dropped = sum(m.produced for m in gap.missing)
            causes = sorted({m.cause for m in gap.missing}, key=[DROPPED, NO_VALUE].index)
            rows.append({"trace_id": gap.trace_id, "missing": "; ".join(edge_text(m.edge) for m in gap.missing),
                         "dropped": dropped, "no_value": len(gap.missing) - dropped,
                         "cause": " and ".join(causes)})
        return pl.DataFrame(rows, schema={"trace_id": pl.String, "missing": pl.String, "dropped": pl.Int64,
                                          "no_value": pl.Int64, "cause": pl.String})

    def coverage_frame(self) -> pl.DataFrame:
        """Per expected edge (in the expected flow's order) and outcome, how many traces:
        edge, outcome ("shown", DROPPED, NO_VALUE, "not applicable"), traces."""
        import polars as pl

        counts: Counter[tuple[str, str]] = Counter()
        for diff in self.diffs:
            counts.update((edge_text(e), "shown") for e in diff.satisfied)
            counts.update((edge_text(e), "not applicable") for e in diff.not_applicable)
        for gap in self.gaps:
            counts.update((edge_text(m.edge), m.cause) for m in gap.missing)
        rows = [{"edge": edge_text(e), "outcome": outcome, "traces": counts[edge_text(e), outcome]}
                for e in self.expected.edges for outcome in OUTCOMES]
        return pl.DataFrame(rows, schema={"edge": pl.String, "outcome": pl.String, "traces": pl.Int64})


OUTCOMES = ("shown", DROPPED, NO_VALUE, "not applicable")
"""The outcomes of one expected edge in one trace, in the order a chart stacks them."""


def flow_gaps(graphs: Iterable[AnyFlowGraph], expected: ExpectedFlow) -> FlowGaps:
    """Diff every graph against the expected flow and explain each missing applicable edge.

    An expected edge is missing when both its ends ran and no edge joins them (see
    :func:`~evalkit.flow.expected.diff_expected_flow`). It is a dropped context when a producer of
    that name did output the slot: the value existed and never reached the consumer. When no
    producer of that name output it, the producer failed or returned nothing; the break is upstream.

    Args:
        graphs: one flow graph per trace.
        expected: the expected flow (given, or inferred with
            :func:`~evalkit.flow.expected.infer_expected_flow`).
    """
    diffs, gaps = [], []
    for graph in graphs:
        diff = diff_expected_flow(graph, expected)
        diffs.append(diff)
        if diff.missing:
            gaps.append(TraceGap(graph.trace_id, [MissingEdge(e, _produced(graph, e)) for e in diff.missing]))
    return FlowGaps(expected, diffs, gaps)


def unthreaded_frame(graphs: Iterable[AnyFlowGraph]) -> pl.DataFrame:
    """Unthreaded outputs counted by (producer name, slot), most first.

    Columns: name, slot, outputs (every unthreaded output), traces (the traces with at least one),
    produced (the traces where a node of that name produced the slot at all) and share (traces /
    produced). A share of 1 is an end product, never passed on (such as the final answer); a small
    share is a value usually passed on that some traces dropped: candidate dropped context.
    """
    import polars as pl

    outputs: Counter[tuple[str, str]] = Counter()
    traces: Counter[tuple[str, str]] = Counter()
    produced: Counter[tuple[str, str]] = Counter()
    for graph in graphs:
        keys = [(u.name, u.slot) for u in graph.unthreaded_outputs]
        outputs.update(keys)
        traces.update(set(keys))
        produced.update({(node.name, slot) for node in graph.nodes for slot in node.produces})
    rows = [{"name": name, "slot": slot, "outputs": n, "traces": traces[name, slot],
             "produced": produced[name, slot], "share": traces[name, slot] / max(1, produced[name, slot])}
            for (name, slot), n in sorted(outputs.items(), key=lambda kv: (-kv[1], kv[0]))]
    return pl.DataFrame(rows, schema={"name": pl.String, "slot": pl.String, "outputs": pl.Int64,
                                      "traces": pl.Int64, "produced": pl.Int64, "share": pl.Float64})


def name_order(g: nx.DiGraph) -> list[str]:
    """An aggregate graph's names in the order they first occur in a trace, on average."""
    return sorted(g.nodes, key=lambda n: (g.nodes[n]["position"], n))


def aggregate_edge_frame(g: nx.DiGraph) -> pl.DataFrame:
    """The edges of :func:`~evalkit.flow.graph.aggregate_graph`: from, to, traces, share, kind and
    slots (``slot (traces), ...``), producers in time order."""
    import polars as pl

    rank = {name: i for i, name in enumerate(name_order(g))}
    rows = [{"from": s, "to": t, "traces": d["weight"], "share": d["share"], "kind": d["kind"],
             "slots": ", ".join(f"{slot} ({n})" for slot, n in d["slots"].items())}
            for s, t, d in sorted(g.edges(data=True), key=lambda e: (rank[e[0]], rank[e[1]]))]
    return pl.DataFrame(rows, schema={"from": pl.String, "to": pl.String, "traces": pl.Int64,
                                      "share": pl.Float64, "kind": pl.String, "slots": pl.String})


def example_traces(graphs: Iterable[AnyFlowGraph], gaps: FlowGaps) -> dict[str, str]:
    """A few traces worth drawing in full, by what they show: trace id per label.

    ``clean``: shows every expected edge that applies to it and the most of them (the first such
    trace on ties); ``dropped``: the first trace that did not pass on a value it had;
    ``no value``: the first trace whose producer gave no value to pass. A label with no such trace
    is left out.
    """
    ids = [graph.trace_id for graph in graphs]
    by_id = {d.trace_id: d for d in gaps.diffs}
    examples: dict[str, str] = {}
    clean = [i for i in ids if i in by_id and not by_id[i].missing]
    if clean:
        examples["clean"] = max(clean, key=lambda i: (len(by_id[i].satisfied), -ids.index(i)))
    for label, wanted in (("dropped", True), ("no value", False)):
        hit = next((g.trace_id for g in gaps.gaps if any(m.produced is wanted for m in g.missing)), None)
        if hit is not None:
            examples[label] = hit
    return examples


@dataclass(frozen=True)
class TruthCheck:
    """Flagged traces against the traces known to carry a failure."""

    truth: int
    flagged: int
    true_positives: int
    false_positives: int
    missed: list[str]
    """Ids of the traces that carry the failure and were not flagged, sorted."""

    @property
    def recall(self) -> float | None:
        return self.true_positives / self.truth if self.truth else None

    @property
    def precision(self) -> float | None:
        return self.true_positives / self.flagged if self.flagged else None


def _labels(metadata: Mapping[str, Any] | None, key: str) -> list[Any] | None:
    value = (metadata or {}).get(key)
    return value if isinstance(value, list) else None


def check_against_truth(flagged: Iterable[str], traces: Iterable[Trace], *, key: str,
                        label: str) -> TruthCheck | None:
    """Compare flagged trace ids with the traces whose ``metadata[key]`` lists ``label``.

    For subjects whose traces carry their own ground truth (such as the generated sample, where
    ``metadata.injected_failures`` lists the failures injected into each trace).

    Returns:
        None when no trace's metadata holds a list under ``key``: there is nothing to check against.
    """
    flagged_ids = set(flagged)
    truth: set[str] = set()
    known = False
    for trace in traces:
        labels = _labels(trace.metadata, key)
        if labels is not None:
            known = True
            if label in labels:
                truth.add(trace.id)
    if not known:
        return None
    hits = truth & flagged_ids
    return TruthCheck(truth=len(truth), flagged=len(flagged_ids), true_positives=len(hits),
                      false_positives=len(flagged_ids - truth), missed=sorted(truth - flagged_ids))
