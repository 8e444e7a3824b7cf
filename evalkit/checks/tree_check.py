"""``evalkit tree check TREE TRACES``: the behavior tree's expected decisions against the observed ones, per
node, in words (and as JSON): what code could compare, what it could not, and which forks are dead or rare.

Nodes the tree maps to an observation (``observe``) are compared by code. A node without a mapping is a
judge-track node: this command runs no judge, so such a node is listed as **not checked** on every trace,
never counted as a match.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from evalkit.checks.tree import DecisionCheck, ForkCount, compare_tree
from evalkit.contracts.behavior_tree import BehaviorTree
from evalkit.contracts.trace import Trace

MISMATCHES_SHOWN = 10
"""Mismatching traces listed per node (the rest are counted)."""


@dataclass(frozen=True)
class NodeCheck:
    """One node over the traces: its statuses per scenario, and the traces whose decision differed."""

    node_id: str
    label: str
    decision_type: str
    checked_by: str
    """``code`` (the tree maps the node to an observation) or ``none`` (a judge-track node, not checked)."""
    by_scenario: dict[str, dict[str, int]]
    mismatches: list[DecisionCheck]

    def counts(self) -> Counter[str]:
        total: Counter[str] = Counter()
        for cell in self.by_scenario.values():
            total.update(cell)
        return total


@dataclass(frozen=True)
class TreeCheck:
    """The whole tree against the traces."""

    tree: BehaviorTree
    traces: int
    nodes: list[NodeCheck]
    forks: list[ForkCount]

    @property
    def not_checked(self) -> list[NodeCheck]:
        return [n for n in self.nodes if n.checked_by == "none"]

    def to_json_obj(self) -> dict[str, Any]:
        return {
            "subject": self.tree.subject, "version": self.tree.version, "traces": self.traces,
            "nodes": [{"nodeId": n.node_id, "label": n.label, "decisionType": n.decision_type,
                       "checkedBy": n.checked_by, "scenarios": n.by_scenario,
                       "mismatches": [{"traceId": m.trace_id, "scenarioId": m.scenario_id, "note": m.note,
                                       "expected": m.expected, "observed": m.observed} for m in n.mismatches]}
                      for n in self.nodes],
            "forks": [{"nodeId": f.node_id, "edgeId": f.edge_id, "to": f.to, "taken": f.taken,
                       "reached": f.reached, "dead": f.dead, "rare": f.rare,
                       "declaredDeadOrRare": f.declared_dead_or_rare} for f in self.forks],
        }


def check_tree(tree: BehaviorTree, traces: Iterable[Trace]) -> TreeCheck:
    """Compare every node's expected decision with the observed one on every trace (code only)."""
    seen = list(traces)
    decisions, forks = compare_tree(tree, seen)
    by_node: dict[str, list[DecisionCheck]] = {}
    for d in decisions:
        by_node.setdefault(d.node_id, []).append(d)
    nodes = []
    for node in tree.nodes:
        mine = by_node.get(node.node_id, [])
        cells: dict[str, dict[str, int]] = {}
        for d in mine:
            cell = cells.setdefault(d.scenario_id or "(none)", {})
            cell[d.status] = cell.get(d.status, 0) + 1
        nodes.append(NodeCheck(node.node_id, node.label, node.decision_type,
                               "code" if node.observe is not None else "none", cells,
                               [d for d in mine if d.status == "mismatch"]))
    return TreeCheck(tree, len(seen), nodes, forks)


def render_tree_check(check: TreeCheck) -> str:
    """The check as text: one block per node, then the forks."""
    coded = len(check.nodes) - len(check.not_checked)
    lines = [f"behavior tree {check.tree.subject} {check.tree.version}: {check.traces} traces, "
             f"{len(check.nodes)} nodes ({coded} compared by code, {len(check.not_checked)} not checked)"]
    for n in check.nodes:
        lines.append(f"node {n.node_id} {n.label!r} ({n.decision_type})")
        if n.checked_by == "none":
            lines.append(f"  not checked on {check.traces} trace(s): the tree maps no observation to this node "
                         "(a judge-track node; tree check runs no judge)")
            continue
        for scenario, cell in sorted(n.by_scenario.items()):
            lines.append(f"  {scenario}: " + ", ".join(f"{k} {v}" for k, v in sorted(cell.items())))
        for m in n.mismatches[:MISMATCHES_SHOWN]:
            lines.append(f"  mismatch {m.trace_id} ({m.scenario_id}): {m.note}")
        if len(n.mismatches) > MISMATCHES_SHOWN:
            lines.append(f"  ... and {len(n.mismatches) - MISMATCHES_SHOWN} more mismatching trace(s)")
    for f in check.forks:
        if f.taken is None:
            state = "not counted (the edge has no takenWhen)"
        else:
            state = f"taken {f.taken} of {f.reached}" + (" (dead)" if f.dead else " (rare)" if f.rare else "")
        lines.append(f"fork {f.node_id} -> {f.to} ({f.edge_id}): {state}")
    return "\n".join(lines)
