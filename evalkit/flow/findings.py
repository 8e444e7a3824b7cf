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
from evalkit.flow.build import Flow
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
NOT_FOLLOWED = "value not comparable"
"""The slot was output, but no value of it could have reached the consumer as followed: too short to
follow, an end product, or produced only after every observation of the consumer's name."""


def edge_text(edge: ExpectedEdge) -> str:
    """``from → to [slot]``, the slot left out when the edge names none."""
    return f"{edge.from_tool} → {edge.to_tool}" + (f" [{edge.slot}]" if edge.slot else "")


@dataclass(frozen=True)
class MissingEdge:
    """An applicable expected edge a trace does not show, and why: the value to pass existed
    (:data:`DROPPED`), the producer gave none (:data:`NO_VALUE`), or there was a value that could
    not have reached the consumer as followed (:data:`NOT_FOLLOWED`)."""

    edge: ExpectedEdge
    cause: str

    @property
    def produced(self) -> bool:
        """True when a followed value of the slot existed before a consumer and did not reach it."""
        return self.cause == DROPPED


@dataclass(frozen=True)
class TraceGap:
    """One trace's missing applicable expected edges, in the expected flow's order."""

    trace_id: str
    missing: list[MissingEdge]

    @property
    def dropped(self) -> bool:
        """Some missing edge's value existed: the trace dropped context, not just met a failure."""
        return any(m.produced for m in self.missing)


def _passable(graph: AnyFlowGraph) -> set[tuple[str, str]]:
    """(node id, slot) of every followed value that was not an end product: the sources of edges
    and the unthreaded outputs."""
    sources = {(e[0], e[2]) for e in graph.edges} if isinstance(graph, Flow) else \
        {(e.from_, e.slot) for e in graph.edges}
    return sources | {(u.node, u.slot) for u in graph.unthreaded_outputs}


def _cause(graph: AnyFlowGraph, edge: ExpectedEdge, passable: set[tuple[str, str]]) -> str:
    producers = [node for node in graph.nodes if node.name == edge.from_tool
                 and (edge.slot in node.produces if edge.slot else node.produces)]
    if not producers:
        return NO_VALUE
    last_consumer = max(node.index for node in graph.nodes if node.name == edge.to_tool)
    for node in producers:
        slots = [edge.slot] if edge.slot else node.produces
        if node.index < last_consumer and any((node.id, slot) in passable for slot in slots):
            return DROPPED
    return NOT_FOLLOWED


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
        """One row per trace with a gap: trace_id, missing (the edges as text), dropped, no_value and
        not_comparable (how many of them had a value to pass, had none, had one that could not be
        followed to the consumer), cause."""
        import polars as pl

        rows = []
        for gap in self.gaps:
            dropped = sum(m.cause == DROPPED for m in gap.missing)
            no_value = sum(m.cause == NO_VALUE for m in gap.missing)
            causes = sorted({m.cause for m in gap.missing}, key=[DROPPED, NO_VALUE, NOT_FOLLOWED].index)
            rows.append({"trace_id": gap.trace_id, "missing": "; ".join(edge_text(m.edge) for m in gap.missing),
                         "dropped": dropped, "no_value": no_value, "not_comparable": len(gap.missing) - dropped - no_value,
                         "cause": " and ".join(causes)})
        return pl.DataFrame(rows, schema={"trace_id": pl.String, "missing": pl.String, "dropped": pl.Int64,
                                          "no_value": pl.Int64, "not_comparable": pl.Int64, "cause": pl.String})

    def coverage_frame(self) -> pl.DataFrame:
        """Per expected edge (in the expected flow's order) and outcome, how many traces:
        edge, outcome (one of :data:`OUTCOMES`), traces."""
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


OUTCOMES = ("shown", DROPPED, NO_VALUE, NOT_FOLLOWED, "not applicable")
"""The outcomes of one expected edge in one trace, in the order a chart stacks them."""


def flow_gaps(graphs: Iterable[AnyFlowGraph], expected: ExpectedFlow) -> FlowGaps:
    """Diff every graph against the expected flow and explain each missing applicable edge.

    An expected edge is missing when both its ends ran and no edge joins them (see
    :func:`~evalkit.flow.expected.diff_expected_flow`). It is a dropped context when a producer of
    that name output a followed value by the slot before an observation of the consumer's name ran,
    and the value never reached it. When no producer of that name output the slot, the producer
    failed or returned nothing; the break is upstream. When it did, but its value was too short to
    follow, an end product, or produced only after every consumer, the value is not comparable:
    nothing says it was dropped.

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
            passable = _passable(graph)
            gaps.append(TraceGap(graph.trace_id, [MissingEdge(e, _cause(graph, e, passable)) for e in diff.missing]))
    return FlowGaps(expected, diffs, gaps)


def unthreaded_frame(graphs: Iterable[AnyFlowGraph], *, terminal: bool = False) -> pl.DataFrame:
    """Unthreaded outputs (with ``terminal``, terminal outputs) counted by (producer name, slot), most first.

    Columns: name, slot, outputs (every such output), traces (the traces with at least one),
    produced (the traces where a node of that name produced the slot at all) and share (traces /
    produced). Terminal outputs are end products (a final answer, a result after the last input),
    set apart by the default build; graphs built with ``semantics="mutagent"`` count them as unthreaded.
    Among unthreaded outputs a share of 1 is a value nothing ever reads; a small share is a value
    usually passed on that some traces dropped (:func:`dropped_candidates`).
    """
    import polars as pl

    outputs: Counter[tuple[str, str]] = Counter()
    traces: Counter[tuple[str, str]] = Counter()
    produced: Counter[tuple[str, str]] = Counter()
    for graph in graphs:
        keys = [(u.name, u.slot) for u in (graph.terminal_outputs if terminal else graph.unthreaded_outputs)]
        outputs.update(keys)
        traces.update(set(keys))
        produced.update({(node.name, slot) for node in graph.nodes for slot in node.produces})
    rows = [{"name": name, "slot": slot, "outputs": n, "traces": traces[name, slot],
             "produced": produced[name, slot], "share": traces[name, slot] / max(1, produced[name, slot])}
            for (name, slot), n in sorted(outputs.items(), key=lambda kv: (-kv[1], kv[0]))]
    return pl.DataFrame(rows, schema={"name": pl.String, "slot": pl.String, "outputs": pl.Int64,
                                      "traces": pl.Int64, "produced": pl.Int64, "share": pl.Float64})


USUALLY_PASSED_ON = 0.5
"""A slot is usually passed on when fewer than half the traces producing it left it unthreaded."""


def dropped_candidates(unthreaded: pl.DataFrame, *, max_share: float = USUALLY_PASSED_ON) -> pl.DataFrame:
    """The rows of :func:`unthreaded_frame` for values usually passed on (dropped in under
    ``max_share`` of the traces producing them): candidate dropped context, most traces first."""
    import polars as pl

    return unthreaded.filter(pl.col("share") < max_share).sort("traces", descending=True, maintain_order=True)


def dropped_candidates_finding(unthreaded: pl.DataFrame, *,
                               max_share: float = USUALLY_PASSED_ON) -> str | None:
    """One sentence on the candidate dropped context, or None when there is none."""
    candidates = dropped_candidates(unthreaded, max_share=max_share)
    if not candidates.height:
        return None
    top = candidates.row(0, named=True)
    return (f"{candidates.height} output slot{'s' if candidates.height != 1 else ''} usually passed on "
            f"(in more than {1 - max_share:.0%} of the traces producing them) went nowhere in some traces; "
            f"the most often {top['name']} [{top['slot']}], dropped in {top['traces']} of {top['produced']} "
            "traces producing it.")


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
        hit = next((g.trace_id for g in gaps.gaps if any((m.cause == DROPPED if wanted else m.cause == NO_VALUE)
                                                          for m in g.missing)), None)
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
