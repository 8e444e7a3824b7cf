"""A long trace's flow, drawn as a summary a person can read: steps grouped, a lane per tool, edges between lanes.

Drawn in full, a 198-observation coding session is a grey smear of 13,000 arcs over lanes labelled in 7
px type. The summary keeps what the flow is about and groups the rest:

* model calls, tool calls and agents stay; the other spans (framework plumbing, events) are left out,
  unless they hand a value off or leave one unthreaded;
* each tool has its own lane (the :data:`MAX_LANES` busiest; the others share an "other tools" lane),
  all model calls one lane per model, agents one lane;
* time is cut into at most :data:`MAX_STEPS` equal steps; the observations of one lane in one step are
  one node, sized by how many it holds;
* an edge is drawn between different lanes only (a model call's history reaching the next is in every
  chat trace and says nothing), to a value's first reader in a lane (later readers get it with the
  history), one per pair of nodes, as wide as the values it carries; handoffs always.

``draw_flow(..., full=True)`` draws every observation and edge instead.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import networkx as nx

SUMMARY_FROM_NODES = 60
"""A trace graph with more observations than this is drawn as a summary (fewer read fine in full)."""
SUMMARY_FROM_EDGES = 400
"""Or with more connected pairs than this."""
MAX_STEPS = 40
"""At most this many steps across: beyond, a column of a drawing is thinner than a label."""
MAX_LANES = 12
"""Tool lanes drawn apart; the rest share one lane."""
_KEPT_TYPES = frozenset({"GENERATION", "TOOL", "AGENT", "RETRIEVER", "EMBEDDING"})


def needs_summary(g: nx.Graph) -> bool:
    """True for a trace graph too long to read drawn in full."""
    if g.graph.get("kind") == "aggregate":
        return False
    pairs = {(s, t) for s, t in g.edges()}
    return g.number_of_nodes() > SUMMARY_FROM_NODES or len(pairs) > SUMMARY_FROM_EDGES


def _lane(data: dict) -> str:
    kind = data.get("type")
    if kind == "GENERATION":
        return "model calls"
    if kind == "AGENT":
        return "agents"
    return str(data.get("name") or kind or "step")


def summarize_trace_graph(g: nx.Graph) -> nx.MultiDiGraph:
    """The summary graph of a long trace (see the module docstring), drawn by :func:`evalkit.flow.draw_flow`.

    Nodes carry ``index`` (the step), ``name`` (the lane), ``type``, ``count``, ``is_handoff`` and
    ``unthreaded``; edges ``kind`` and ``values`` (how many values they stand for). The graph's
    ``summary`` attribute says what was grouped and left out.
    """
    import networkx as nx

    kept = [n for n, d in g.nodes(data=True)
            if d.get("type") in _KEPT_TYPES or d.get("is_handoff") or d.get("unthreaded")]
    left_out = g.number_of_nodes() - len(kept)
    tools = Counter(_lane(g.nodes[n]) for n in kept if g.nodes[n].get("type") == "TOOL")
    named_tools = {name for name, _ in tools.most_common(MAX_LANES)}
    last = max((g.nodes[n]["index"] for n in kept), default=0)
    steps = min(MAX_STEPS, last + 1)

    def group(node: str) -> tuple[int, str]:
        data = g.nodes[node]
        lane = _lane(data)
        if data.get("type") == "TOOL" and lane not in named_tools:
            lane = "other tools"
        return int(data["index"] * steps / (last + 1)), lane

    s = nx.MultiDiGraph(kind="trace", trace_id=g.graph.get("trace_id"))
    members: dict[str, list[str]] = {}
    for node in sorted(kept, key=lambda n: g.nodes[n]["index"]):
        step, lane = group(node)
        key = f"{step}:{lane}"
        members.setdefault(key, []).append(node)
        if key not in s:
            s.add_node(key, index=step, name=lane, type=g.nodes[node].get("type"), count=0, is_handoff=False,
                       unthreaded=[])
        data = s.nodes[key]
        data["count"] += 1
        data["is_handoff"] = data["is_handoff"] or bool(g.nodes[node].get("is_handoff"))
        data["unthreaded"] = data["unthreaded"] + list(g.nodes[node].get("unthreaded") or [])
    where = {node: key for key, nodes in members.items() for node in nodes}
    # A value reaches its first reader in a lane; every later reader there gets it with the history.
    first: dict[tuple[str, str, str], tuple[int, str]] = {}
    for source, target, data in g.edges(data=True):
        a, b = where.get(source), where.get(target)
        if a is None or b is None or a == b:
            continue
        handoff = data.get("kind") == "handoff"
        if not handoff and s.nodes[a]["name"] == s.nodes[b]["name"]:
            continue  # within one lane: the history every model call passes on
        kind = "handoff" if handoff else "threaded"
        reader = (g.nodes[target]["index"], b)
        key = (source, s.nodes[b]["name"], kind)
        if key not in first or reader < first[key]:
            first[key] = reader
    links: Counter[tuple[str, str, str]] = Counter()
    for (source, _, kind), (_, b) in first.items():
        links[where[source], b, kind] += 1
    for (a, b, kind), weight in sorted(links.items()):
        s.add_edge(a, b, key=kind, kind=kind, values=weight)
    s.graph["summary"] = (f"{len(kept)} of {g.number_of_nodes()} observations in {steps} steps"
                          + (f" ({left_out} other spans left out)" if left_out else "")
                          + f", {g.number_of_edges()} edges as {s.number_of_edges()} links between lanes")
    return s
