"""A behavior tree: the golden spec of which decision an agent should take at each decision point.

Nodes are decision points with the expected decision per scenario; edges are the forks between them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from evalkit.contracts.base import CamelContract, SchemaNamed

DecisionType = Literal[
    "signal-tier", "confidence-basis", "focus", "scope-pick", "gate", "dispatch-count", "approval",
    "stage-selection", "content-decision", "output-shape", "tool-choice",
]
"""The kind of decision a node stands for (diagnostics-shaped first, then generation-shaped)."""

TERMINAL = "TERMINAL"
"""The edge target that ends the tree instead of naming a node."""


class ValueMatch(CamelContract):
    """A place in a trace and a value it must hold, resolved as a ref is: ``obs`` is an observation name
    or id (or ``$trace``), ``path`` dot segments and ``[n]``, ``value`` contained case- and
    whitespace-insensitively in what is there."""

    obs: str = Field(min_length=1)
    path: str
    value: str = Field(min_length=1)


class DecisionObservation(CamelContract):
    """Where a trace shows the decision taken at a node: an observation (name or id, or ``$trace``)
    and the field path in it. A node with one is compared by code; a node without one goes to the judge."""

    obs: str = Field(min_length=1)
    path: str


class Scenario(CamelContract):
    """One situation the agent could be in at a node, and the decision expected there."""

    scenario_id: str
    when: str
    expected_decision: str
    expected_fork: str | None = None
    rationale: str | None = None
    observed_when: list[ValueMatch] | None = None
    """All hold in a trace that is in this scenario (code picks the scenario; without them, the judge)."""
    expected_observed: list[str] | None = None
    """Values the node's observed decision must contain, each one."""
    unexpected_observed: list[str] | None = None
    """Values the node's observed decision must not contain."""


class BehaviorEdge(CamelContract):
    """One fork out of a node, to another node or to ``TERMINAL``."""

    edge_id: str
    to: str
    condition: str
    dead_or_rare: bool | None = Field(default=None, strict=True)
    taken_when: list[ValueMatch] | None = None
    """All hold in a trace that took this fork (how fork frequencies are counted)."""


class BehaviorNode(CamelContract):
    """One decision point."""

    node_id: str
    label: str
    decision_type: DecisionType
    scenarios: list[Scenario]
    edges: list[BehaviorEdge]
    observe: DecisionObservation | None = None


class BehaviorTree(CamelContract, SchemaNamed):
    """A subject's behavior tree, entered at ``root``."""

    subject: str
    version: str
    generated_at: str
    root: str
    nodes: list[BehaviorNode]

    @model_validator(mode="after")
    def _check_references(self) -> BehaviorTree:
        seen: set[str] = set()
        for i, node in enumerate(self.nodes):
            if node.node_id in seen:
                raise ValueError(f"nodes[{i}].nodeId: duplicate node id {node.node_id!r}")
            seen.add(node.node_id)
        if self.root not in seen:
            raise ValueError(f"root: {self.root!r} is not the nodeId of any node")
        for i, node in enumerate(self.nodes):
            for j, edge in enumerate(node.edges):
                if edge.to != TERMINAL and edge.to not in seen:
                    raise ValueError(
                        f"nodes[{i}].edges[{j}].to: {edge.to!r} is neither a nodeId nor {TERMINAL!r}"
                    )
        return self
