"""Building the flow graph of a trace: which produced value reached which later observation.

Every observation is a node ``n<i>``. A node's output slots are the values it produces; an edge
goes from a producer's slot to every later node whose input, as text, contains that value. By default
the text is what the consumer received (:mod:`evalkit.flow.received`); ``semantics="mutagent"`` keeps
the reference method's JSON text. A value that reaches no later node is an unthreaded output, unless
it is terminal: nothing after it took any input, or it went to the user as the trace's output. See
docs/flow.md for the exact rules.

A trace with a long conversation has hundreds of thousands of edges, and a pydantic model per edge
(even a tuple per edge) costs more than finding them. So :func:`build_flow_graph` records, per produced
value, the list of nodes it reached (:class:`SlotReach`); edges are spelled out only when asked
for, and the contract model is validated once, at the boundary, by :meth:`Flow.to_graph`.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, NamedTuple

from evalkit.contracts.flow import FlowEdgeKind, FlowGraph, FlowNode, UnthreadedOutput
from evalkit.contracts.trace import Observation, Trace
from evalkit.errors import InputError
from evalkit.flow.matching import ValueFinder
from evalkit.flow.received import SEMANTICS, ReceivedText, Semantics
from evalkit.flow.slots import (
    DEFAULT_MIN_THREAD_LEN,
    SMALL_FLOAT_MARKERS,
    TEXT_SLOT,
    draft_consumer_text,
    output_slots,
    plain_json,
    slot_names,
    value_string,
)
from evalkit.io.bulk import paused_gc

Edge = tuple[str, str, str, FlowEdgeKind]
"""The light form of :class:`~evalkit.contracts.flow.FlowEdge`: ``(from, to, slot, kind)``."""


class SlotReach(NamedTuple):
    """One produced value, long enough to follow, and the later nodes whose input it reached."""

    producer: int
    slot: str
    consumers: list[int]
    """Node indexes, ascending; empty when the value is an unthreaded (or terminal) output."""
    terminal: bool = False
    """The value is an end product: no later node took any input, or it is in the trace's output
    (always False under ``semantics="mutagent"``)."""


@dataclass(frozen=True)
class Flow:
    """The flow graph of one trace as built. It has :class:`FlowGraph`'s attributes (``edges`` as
    ``(from, to, slot, kind)`` tuples, in the same order) and converts to it with :meth:`to_graph`."""

    trace_id: str
    nodes: list[FlowNode]
    reaches: list[SlotReach]
    """Per followed slot, by producer then slot: where its value went."""
    semantics: Semantics = "mutagent"

    def _kind(self, producer: int) -> FlowEdgeKind:
        return "handoff" if self.nodes[producer].is_handoff else "threaded"

    @cached_property
    def edges(self) -> list[Edge]:
        """Every edge, ordered by producer, then slot, then consumer."""
        ids = [node.id for node in self.nodes]
        edges: list[Edge] = []
        with paused_gc():  # hundreds of thousands of tuples and no reference cycles
            for r in self.reaches:  # per-reach constants hoisted
                producer, slot, kind = ids[r.producer], r.slot, self._kind(r.producer)
                edges += [(producer, ids[j], slot, kind) for j in r.consumers]
        return edges

    @cached_property
    def unthreaded_outputs(self) -> list[UnthreadedOutput]:
        """The followed slots whose value reached no later node, by producer then slot."""
        return self._outputs(terminal=False)

    @cached_property
    def terminal_outputs(self) -> list[UnthreadedOutput]:
        """The followed slots that reached no later node because they are end products (a final
        answer, a result after the last input): not dropped. Empty under ``semantics="mutagent"``."""
        return self._outputs(terminal=True)

    def _outputs(self, *, terminal: bool) -> list[UnthreadedOutput]:
        return [UnthreadedOutput(node=self.nodes[r.producer].id, name=self.nodes[r.producer].name,
                                 slot=r.slot) for r in self.reaches if not r.consumers and r.terminal is terminal]

    @property
    def edge_count(self) -> int:
        return sum(len(r.consumers) for r in self.reaches)

    def to_json_obj(self) -> dict[str, Any]:
        """The on-disk form of the flow graph (the shape of :class:`FlowGraph`)."""
        ids = [node.id for node in self.nodes]
        edges = []
        for r in self.reaches:
            producer, slot, kind = ids[r.producer], r.slot, self._kind(r.producer)
            edges += [{"from": producer, "to": ids[j], "slot": slot, "kind": kind} for j in r.consumers]
        obj = {
            "traceId": self.trace_id,
            "nodes": [node.to_json_obj() for node in self.nodes],
            "edges": edges,
            "unthreadedOutputs": [u.to_json_obj() for u in self.unthreaded_outputs],
        }
        if self.semantics != "mutagent":  # the reference method's graphs keep its exact shape
            obj["terminalOutputs"] = [u.to_json_obj() for u in self.terminal_outputs]
        return obj

    def to_graph(self) -> FlowGraph:
        """The validated contract model (a pydantic model per edge: slow on very large graphs)."""
        obj = self.to_json_obj()
        with paused_gc():  # hundreds of thousands of small models and no reference cycles
            return FlowGraph.model_validate(obj)


def _reached_by(observations: list[Observation], value_ids: dict[str, int]) -> list[list[int]]:
    """For each value id, the indexes (ascending) of the observations whose input contains it."""
    ids = dict(value_ids)
    for marker in SMALL_FLOAT_MARKERS:  # looked for in the same scan, see draft_consumer_text
        ids.setdefault(marker, len(ids))
    markers = {ids[marker] for marker in SMALL_FLOAT_MARKERS}
    finder = ValueFinder(list(ids))  # ids are 0, 1, ... in insertion order
    reached_by: list[list[int]] = [[] for _ in ids]
    for j, obs in enumerate(observations):
        text, final = draft_consumer_text(obs)
        found = finder.find(text)
        if not final and not markers.isdisjoint(found.id_set):
            found = finder.find(plain_json(obs.input))
        for vid in found.ids:
            reached_by[vid].append(j)
    return reached_by


def _received_by(observations: list[Observation], finder: ValueFinder, n_values: int,
                 received: ReceivedText) -> list[list[int]]:
    """:func:`_reached_by` on the text each observation received; an absent input received nothing."""
    reached_by: list[list[int]] = [[] for _ in range(n_values)]
    for j, obs in enumerate(observations):
        if obs.input is not None:
            for vid in finder.find(received(obs.input)).ids:
                reached_by[vid].append(j)
    return reached_by


def build_flow_graph(trace: Trace, *, dispatch_tool_names: Iterable[str] = (),
                     min_thread_len: int = DEFAULT_MIN_THREAD_LEN, semantics: Semantics = "received") -> Flow:
    """The flow graph of a trace: which produced value reached which later observation's input.

    Args:
        trace: the trace; its observations become nodes ``n0, n1, ...`` in their recorded order.
        dispatch_tool_names: names of the tools that dispatch a sub-agent; edges from their
            outputs are ``handoff`` edges.
        min_thread_len: values shorter than this (after trimming) are ignored; at least 1.
        semantics: ``"received"`` matches on the text each consumer received (strings unescaped,
            JSON text decoded) and sets terminal outputs apart from unthreaded ones;
            ``"mutagent"`` is the reference method exactly (JSON text, every unreached value unthreaded).

    Returns:
        The graph with light edges: it has :class:`FlowGraph`'s fields (``edges`` as
        ``(from, to, slot, kind)`` tuples) and its on-disk form (``to_json_obj``), and every evalkit
        function that takes a flow graph takes it. ``.to_graph()`` gives the validated contract
        model; files of graphs are validated when read. A pydantic model per edge would cost more
        than the whole build on long-context traces (hundreds of thousands of edges).
    """
    if min_thread_len < 1:
        raise InputError(f"min_thread_len must be at least 1, got {min_thread_len}; it is the shortest output "
                         f"worth following (default {DEFAULT_MIN_THREAD_LEN})")
    if semantics not in SEMANTICS:
        raise InputError(f"semantics must be one of {', '.join(SEMANTICS)}, got {semantics!r}; use 'received' "
                         "unless the traces come from the mutagent reference method")
    with paused_gc():  # a list per followed value, a node model per observation: no reference cycles
        return _build(trace, frozenset(dispatch_tool_names), min_thread_len, semantics)


def _build(trace: Trace, dispatch: frozenset[str], min_thread_len: int, semantics: Semantics) -> Flow:
    received = ReceivedText() if semantics == "received" else None
    nodes: list[FlowNode] = []
    value_ids: dict[str, int] = {}
    # (producer, slot, value ids), by producer then slot; "received" may follow a value by two texts
    followed: list[tuple[int, str, list[int]]] = []
    for i, obs in enumerate(trace.observations):
        name = obs.name or ""
        slots = output_slots(obs)
        for slot, value in slots:
            texts = [value_string(value)] if received is None else received.needles(value)
            if len(texts[0]) >= min_thread_len:
                followed.append((i, slot, [value_ids.setdefault(text, len(value_ids)) for text in texts
                                           if len(text) >= min_thread_len]))
        nodes.append(FlowNode(id=f"n{i}", index=i, type=obs.type, name=name,
                              produces=[slot for slot, _ in slots],
                              consumes=slot_names(obs.input, TEXT_SLOT), is_handoff=name in dispatch))
    if received is None:
        reached_by = _reached_by(trace.observations, value_ids) if value_ids else []
        return Flow(trace.id, nodes, [SlotReach(producer, slot, _after(reached_by[vids[0]], producer))
                                      for producer, slot, vids in followed])
    finder = ValueFinder(list(value_ids))  # one automaton for the inputs and the trace's output
    reached_by = _received_by(trace.observations, finder, len(value_ids), received) if value_ids else []
    # Nothing after the last observation that took any input could have passed a value on.
    last_input = max((i for i, obs in enumerate(trace.observations) if obs.input is not None), default=-1)
    answered = set(finder.find(received(trace.output)).id_set) if value_ids and trace.output is not None else set()
    reaches = []
    for producer, slot, vids in followed:
        found = reached_by[vids[0]] if len(vids) == 1 else sorted(set().union(*(reached_by[v] for v in vids)))
        consumers = _after(found, producer)
        ends = producer >= last_input or not answered.isdisjoint(vids)
        reaches.append(SlotReach(producer, slot, consumers, terminal=not consumers and ends))
    return Flow(trace.id, nodes, reaches, semantics)


def _after(consumers: list[int], producer: int) -> list[int]:
    return consumers[bisect_right(consumers, producer):]
