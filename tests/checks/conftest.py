"""Small support-agent-shaped traces built in the tests (no real data needed)."""

from __future__ import annotations

from typing import Any

import pytest

from evalkit.contracts.trace import Trace


def make_trace(trace_id: str = "t1", *, order_asked: str = "ORD-2026-000001", order_looked: str | None = None,
               answer: str | None = None, tool_error: bool = False, retried: bool = False,
               placed_at: str = "2026-03-02T09:00:00Z", case_id: str | None = None,
               intent: str = "refund_request", plan_tools: tuple[str, ...] = ("kb_search", "order_lookup")) -> Trace:
    """A trace: agent root, a plan, an order_lookup (maybe failing, maybe retried), a respond."""
    looked = order_looked or order_asked
    obs: list[dict[str, Any]] = [
        {"id": f"{trace_id}-o1", "type": "AGENT", "name": "support-agent", "input": f"Refund {order_asked} please"},
        {"id": f"{trace_id}-o2", "type": "GENERATION", "name": "plan", "parentId": f"{trace_id}-o1",
         "output": {"tool_calls": list(plan_tools)}},
    ]
    if tool_error:
        obs.append({"id": f"{trace_id}-o3", "type": "TOOL", "name": "order_lookup", "parentId": f"{trace_id}-o1",
                    "input": {"order_id": looked}, "output": {"error": "timeout after 30 s"}, "level": "ERROR",
                    "statusMessage": "timeout"})
    if not tool_error or retried:
        obs.append({"id": f"{trace_id}-o4", "type": "TOOL", "name": "order_lookup", "parentId": f"{trace_id}-o1",
                    "input": {"order_id": looked},
                    "output": {"order_id": looked, "total": 79.0, "placed_at": placed_at}})
    obs.append({"id": f"{trace_id}-o5", "type": "GENERATION", "name": "respond", "parentId": f"{trace_id}-o1",
                "output": {"answer": answer if answer is not None else f"Refund issued for {looked}."}})
    meta: dict[str, Any] = {"intent": intent}
    if case_id:
        meta["caseId"] = case_id
    return Trace.model_validate({"id": trace_id, "input": f"Refund {order_asked} please", "metadata": meta,
                                 "observations": obs})


@pytest.fixture
def trace() -> Trace:
    return make_trace()
