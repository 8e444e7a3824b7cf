"""A behavior tree and traces that take some of its forks, shared by the tree and review tests."""

from __future__ import annotations

from typing import Any

from evalkit.contracts.trace import Trace

from .conftest import make_trace


def tree_obj() -> dict[str, Any]:
    intent = {"obs": "$trace", "path": "metadata.intent"}
    return {
        "subject": "s", "version": "v1", "generatedAt": "2026-01-01T00:00:00Z", "root": "n-route",
        "nodes": [
            {"nodeId": "n-route", "label": "Choose the tools", "decisionType": "tool-choice",
             "observe": {"obs": "plan", "path": "output.tool_calls"},
             "scenarios": [
                 {"scenarioId": "s-refund", "when": "refund asked", "expectedDecision": "kb_search and order_lookup",
                  "observedWhen": [{**intent, "value": "refund_request"}],
                  "expectedObserved": ["kb_search", "order_lookup"]},
                 {"scenarioId": "s-status", "when": "status asked", "expectedDecision": "order_lookup only",
                  "observedWhen": [{**intent, "value": "order_status"}],
                  "expectedObserved": ["order_lookup"], "unexpectedObserved": ["kb_search"]}],
             "edges": [
                 {"edgeId": "e-refund", "to": "n-escalate", "condition": "refund",
                  "takenWhen": [{"obs": "plan", "path": "output.tool_calls", "value": "order_lookup"}]},
                 {"edgeId": "e-escalate", "to": "TERMINAL", "condition": "complaint",
                  "takenWhen": [{"obs": "plan", "path": "output.tool_calls", "value": "escalate_to_human"}]},
                 {"edgeId": "e-unmapped", "to": "TERMINAL", "condition": "other"}]},
            {"nodeId": "n-escalate", "label": "Escalate?", "decisionType": "gate",
             "scenarios": [{"scenarioId": "s-big", "when": "over limit", "expectedDecision": "escalate"}],
             "edges": []},
        ]}


def traces_for_tree() -> list[Trace]:
    return [make_trace("t1"), make_trace("t2", intent="order_status", plan_tools=("order_lookup",)),
            make_trace("t3", intent="order_status"), make_trace("t4", intent="complaint")]
