"""The behavior tree against the traces: expected vs observed decision per node and scenario, and how
often each fork is taken (dead or rare forks, MR-1).

Code decides where the tree file says how: a node's ``observe`` place shows the decision, a scenario's
``observedWhen`` says which traces are in it, an edge's ``takenWhen`` says which traces took it. A node
without ``observe`` (or a trace no coded scenario applies to) goes to the judge, when one is given.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from evalkit.checks.reading import cite, holds, places, text_of
from evalkit.contracts.behavior_tree import BehaviorEdge, BehaviorNode, BehaviorTree, Scenario, ValueMatch
from evalkit.contracts.trace import Trace
from evalkit.contracts.verdict import Ref
from evalkit.trace_paths import contains

RARE_SHARE = 0.02
"""A fork taken by fewer than this share of the traces that reached its node is rare."""

DecisionStatus = Literal["match", "mismatch", "not-observed", "no-scenario", "judge-skipped"]
"""How one node's decision on one trace compares with the expected one."""


@dataclass(frozen=True)
class DecisionCheck:
    """The expected decision at a node for a trace's scenario, against the observed one."""

    node_id: str
    trace_id: str
    scenario_id: str | None
    status: DecisionStatus
    by: Literal["code", "judge", "none"]
    expected: str | None = None
    observed: str | None = None
    note: str | None = None
    ref: Ref | None = None


DecisionJudge = Callable[[BehaviorNode, Trace], DecisionCheck | None]
"""Decides a node the tree gives no observation mapping for; None when it cannot (counted as skipped)."""


@dataclass(frozen=True)
class ForkCount:
    """How often one fork was taken among the traces that reached its node."""

    node_id: str
    edge_id: str
    to: str
    taken: int | None
    """None when the edge has no ``takenWhen``: code cannot count it."""
    reached: int
    """Traces that show the node's ``observe`` place (every trace when the node has none)."""
    declared_dead_or_rare: bool | None

    @property
    def share(self) -> float | None:
        return None if self.taken is None or not self.reached else self.taken / self.reached

    @property
    def dead(self) -> bool:
        return self.taken == 0 and self.reached > 0

    @property
    def rare(self) -> bool:
        share = self.share
        return share is not None and 0 < share < RARE_SHARE


def _holds(trace: Trace, match: ValueMatch) -> bool:
    return holds(trace, match.obs, match.path, match.value)


def _scenario(node: BehaviorNode, trace: Trace) -> Scenario | None:
    for s in node.scenarios:
        if s.observed_when and all(_holds(trace, m) for m in s.observed_when):
            return s
    return None


def _reached(node: BehaviorNode, trace: Trace) -> bool:
    """Whether the trace shows the node's decision place; every trace, when the tree gives none."""
    if node.observe is None:
        return True
    return any(True for _ in places(trace, node.observe.obs, node.observe.path))


def check_node(node: BehaviorNode, trace: Trace, judge: DecisionJudge | None = None) -> DecisionCheck:
    """One node's decision on one trace, by code where the tree maps it, else by the judge."""
    if node.observe is None:
        verdict = judge(node, trace) if judge is not None else None
        if verdict is None:
            return DecisionCheck(node.node_id, trace.id, None, "judge-skipped", "none",
                                 note="no observation mapping in the tree" + ("" if judge else "; no judge given"))
        return verdict
    scenario = _scenario(node, trace)
    if scenario is None:
        coded = any(s.observed_when for s in node.scenarios)
        return DecisionCheck(node.node_id, trace.id, None, "no-scenario", "code",
                             note="no scenario's observedWhen holds" if coded else "no scenario has observedWhen")
    found = list(places(trace, node.observe.obs, node.observe.path))
    if not found:
        return DecisionCheck(node.node_id, trace.id, scenario.scenario_id, "not-observed", "code",
                             expected=scenario.expected_decision,
                             note=f"no {node.observe.obs}.{node.observe.path} in the trace")
    obs, value = found[0]
    observed = text_of(value)
    missing = [v for v in scenario.expected_observed or [] if not contains(value, v)]
    extra = [v for v in scenario.unexpected_observed or [] if contains(value, v)]
    notes = [f"lacks {v!r}" for v in missing] + [f"has {v!r}" for v in extra]
    return DecisionCheck(node.node_id, trace.id, scenario.scenario_id, "mismatch" if notes else "match", "code",
                         expected=scenario.expected_decision, observed=observed[:200],
                         note="; ".join(notes) or None, ref=cite(obs, node.observe.path, value))


def compare_tree(tree: BehaviorTree, traces: Iterable[Trace], judge: DecisionJudge | None = None
                 ) -> tuple[list[DecisionCheck], list[ForkCount]]:
    """Every node's decision on every trace, and every fork's frequency.

    Returns:
        The decision checks (node by node within each trace) and one count per edge.
    """
    checks: list[DecisionCheck] = []
    reached = {n.node_id: 0 for n in tree.nodes}
    taken: dict[tuple[str, str], int] = {}
    for trace in traces:
        for node in tree.nodes:
            checks.append(check_node(node, trace, judge))
            if not _reached(node, trace):
                continue
            reached[node.node_id] += 1
            for edge in node.edges:
                if edge.taken_when and all(_holds(trace, m) for m in edge.taken_when):
                    taken[(node.node_id, edge.edge_id)] = taken.get((node.node_id, edge.edge_id), 0) + 1
    forks = [ForkCount(node.node_id, edge.edge_id, edge.to, _taken(node, edge, taken), reached[node.node_id],
                       edge.dead_or_rare) for node in tree.nodes for edge in node.edges]
    return checks, forks


def _taken(node: BehaviorNode, edge: BehaviorEdge, taken: dict[tuple[str, str], int]) -> int | None:
    return taken.get((node.node_id, edge.edge_id), 0) if edge.taken_when else None


def decision_summary(checks: Sequence[DecisionCheck]) -> dict[tuple[str, str | None], dict[str, int]]:
    """Per (node, scenario) the count of each status: the table a report shows."""
    out: dict[tuple[str, str | None], dict[str, int]] = {}
    for c in checks:
        cell = out.setdefault((c.node_id, c.scenario_id), {})
        cell[c.status] = cell.get(c.status, 0) + 1
    return out
