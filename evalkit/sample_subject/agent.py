"""Simulating the support agent: one native Trace per customer message, failures injected at known rates.

The agent plans once (GENERATION ``plan``), runs the planned tool calls, and answers (GENERATION
``respond``) from messages that carry each tool result as a tool-role message, so a tool output
threads into the answer unless the ``dropped_tool_result`` failure removed it.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from evalkit.contracts.trace import Observation, Trace
from evalkit.io import canonical_line
from evalkit.sample_subject.catalog import (
    BASE_TIME,
    BILLING_SYSTEM_PROMPT,
    FAILURE_RATES,
    KB_SEARCH_ERROR_RATE,
    MODEL,
    ORDER_LOOKUP_TIMEOUT_RATE,
    POLICIES,
    SYSTEM_PROMPT,
    TRACE_SPACING_S,
)
from evalkit.sample_subject.replies import compose_answer
from evalkit.sample_subject.requests import (
    CustomerRequest,
    draft_request,
    iso_utc,
    make_order,
    mistyped_order_id,
)

ORDER_LOOKUP_TIMEOUT_MS = 5000
TOOL_LATENCY_MS = {
    "kb_search": (80, 320), "order_lookup": (45, 260), "issue_refund": (180, 650), "escalate_to_human": (90, 300),
}


def _usage(inp: Any, out: Any) -> dict[str, int | float]:
    tokens_in = len(canonical_line(inp)) // 4
    tokens_out = len(canonical_line(out)) // 4
    return {"input": tokens_in, "output": tokens_out, "total": tokens_in + tokens_out}


class _Recorder:
    """Collects observations of one trace on a simulated millisecond clock."""

    def __init__(self, trace_id: str, start: Any) -> None:
        self.trace_id = trace_id
        self.start = start
        self.rows: list[dict[str, Any]] = []

    def stamp(self, ms: int) -> str:
        return iso_utc(self.start + timedelta(milliseconds=ms))

    def add(self, kind: str, name: str, start_ms: int, end_ms: int, parent: str | None,
            **fields: Any) -> dict[str, Any]:
        row = {"id": f"{self.trace_id}-o{len(self.rows) + 1:02d}", "type": kind, "name": name,
               "start_time": self.stamp(start_ms), "end_time": self.stamp(end_ms), **fields}
        if parent is not None:
            row["parent_id"] = parent
        self.rows.append(row)
        return row


def _planned_calls(req: CustomerRequest, looked_id: str | None, missed: bool) -> list[dict[str, Any]]:
    calls: list[tuple[str, dict[str, Any]]] = []
    if req.policy is not None:
        query = req.policy.question if req.intent == "policy_question" else f"{req.policy.title.lower()} policy"
        calls.append(("kb_search", {"query": query}))
    if looked_id is not None:
        calls.append(("order_lookup", {"order_id": looked_id}))
    if req.intent == "refund_request" and req.escalation_trigger is None:
        calls.append(("issue_refund", {"amount": req.amount, "order_id": looked_id, "reason": req.reason}))
    if req.intent == "billing_dispute":
        calls.append(("dispatch_billing_agent", {
            "context": {"customer_tier": req.tier, "disputed_amount": req.amount,
                        "dispute_kind": req.dispute_kind, "order_id": looked_id},
            "task": f"Review the {req.dispute_kind.replace('-', ' ')} the customer reports on order {looked_id}.",
        }))
    if req.escalation_trigger is not None and not missed:
        calls.append(("escalate_to_human", {"priority": "high" if req.tier == "premium" else "normal",
                                            "reason": req.escalation_trigger}))
    return [{"arguments": args, "id": f"call-{i}", "name": name} for i, (name, args) in enumerate(calls, 1)]


def _plan_text(req: CustomerRequest, calls: list[dict[str, Any]]) -> str:
    names = ", ".join(c["name"] for c in calls) or "no tool"
    return f"The customer's intent is {req.intent.replace('_', ' ')}. I will call {names} and then answer."


def _run_billing_agent(rng: random.Random, rec: _Recorder, parent: dict[str, Any], args: dict[str, Any],
                       at: int) -> int:
    """Record the billing sub-agent under the dispatch call; returns when the dispatch ends."""
    ctx = args["context"]
    amount = ctx["disputed_amount"]
    if ctx["dispute_kind"] == "duplicate-charge":
        finding = f"Confirmed a duplicate capture of {amount:.2f} USD on {ctx['order_id']}; the second one is voided."
    else:
        finding = f"The {amount:.2f} USD charge on {ctx['order_id']} was applied in error and will be credited back."
    case_ref = f"BIL-2026-{rng.randint(10000, 99999)}"
    agent_start = at + rng.randint(2, 6)
    gen_start = agent_start + rng.randint(3, 10)
    gen_end = gen_start + rng.randint(900, 2200)
    agent_end = gen_end + rng.randint(2, 6)
    tool_end = agent_end + rng.randint(2, 6)
    result = {"adjustment_amount": amount, "case_ref": case_ref, "resolution": finding}
    agent = rec.add("AGENT", "billing-agent", agent_start, agent_end, parent["id"], input=args, output=result)
    messages = [{"content": BILLING_SYSTEM_PROMPT, "role": "system"},
                {"content": f"{args['task']} Disputed amount: {amount:.2f} USD.", "role": "user"}]
    review = {"adjustment_amount": amount, "finding": finding}
    rec.add("GENERATION", "billing-review", gen_start, gen_end, agent["id"], input=messages, output=review,
            model=MODEL, usage=_usage(messages, review))
    parent["output"] = result
    parent["end_time"] = rec.stamp(tool_end)
    return tool_end


def _tool_result(rng: random.Random, name: str, args: dict[str, Any], order: dict[str, Any] | None,
                 req: CustomerRequest) -> dict[str, Any]:
    if name == "kb_search":
        assert req.policy is not None
        other = rng.choice([p for p in POLICIES if p is not req.policy])
        return {"articles": [{"id": p.article_id, "snippet": p.snippet, "title": p.title}
                             for p in (req.policy, other)]}
    if name == "order_lookup":
        assert order is not None
        return order
    if name == "issue_refund":
        return {"amount": args["amount"], "order_id": args["order_id"],
                "refund_id": f"RF-2026-{rng.randint(100000, 999999)}", "status": "approved"}
    premium = req.tier == "premium"
    return {"eta_hours": 4 if premium else 24,
            "queue": "billing-specialists" if req.intent == "billing_dispute" else "tier2-support",
            "ticket_id": f"ESC-2026-{rng.randint(10000, 99999)}"}


def simulate_trace(rng: random.Random, number: int, *, request: CustomerRequest | None = None,
                   rates: Mapping[str, float] = FAILURE_RATES, order_timeout_rate: float = ORDER_LOOKUP_TIMEOUT_RATE,
                   kb_error_rate: float = KB_SEARCH_ERROR_RATE) -> Trace:
    """One support conversation as a native Trace, with ``metadata.injected_failures`` as ground truth.

    ``request`` answers a given customer message (the runnable agent, ``evalkit.sample_subject.agent_command``)
    instead of drafting a random one; ``rates`` and the tool error rates are the agent's settings.
    """
    trace_id = f"tr-{number:04d}"
    start = BASE_TIME + timedelta(seconds=(number - 1) * TRACE_SPACING_S + rng.randint(0, 240),
                                  milliseconds=rng.randint(0, 999))
    req = draft_request(rng) if request is None else request
    failures: set[str] = set()
    looked_id = req.order_id
    if looked_id is not None and rng.random() < rates["wrong_tool_args"]:
        failures.add("wrong_tool_args")
        looked_id = mistyped_order_id(rng, looked_id)
    order_timeout = looked_id is not None and rng.random() < order_timeout_rate
    kb_error = req.policy is not None and rng.random() < kb_error_rate
    if req.policy is not None and not kb_error and rng.random() < rates["hallucinated_policy"]:
        failures.add("hallucinated_policy")
    threadable = [name for name, used, broken in (("kb_search", req.policy is not None, kb_error),
                                                  ("order_lookup", looked_id is not None, order_timeout))
                  if used and not broken]
    dropped = None
    if threadable and rng.random() < rates["dropped_tool_result"]:
        dropped = rng.choice(threadable)
        failures.add("dropped_tool_result")
    missed = req.escalation_trigger is not None and rng.random() < rates["missed_escalation"]
    if missed:
        failures.add("missed_escalation")
    order = req.order
    if order is not None and looked_id != req.order_id:
        order = make_order(rng, looked_id, order["status"])

    rec = _Recorder(trace_id, start)
    root = rec.add("AGENT", "support-agent", 0, 0, None, input=req.message)
    calls = _planned_calls(req, looked_id, missed)
    if order_timeout:  # the executor never moves money on an order it could not confirm
        calls = [c for c in calls if c["name"] != "issue_refund"]
    messages: list[dict[str, Any]] = [{"content": SYSTEM_PROMPT, "role": "system"},
                                      {"content": req.message, "role": "user"}]
    plan_out = {"content": _plan_text(req, calls), "tool_calls": calls}
    at = rng.randint(3, 12)
    plan_end = at + rng.randint(600, 1800)
    rec.add("GENERATION", "plan", at, plan_end, root["id"], input=list(messages), output=plan_out, model=MODEL,
            usage=_usage(messages, plan_out))
    messages.append({"content": plan_out["content"], "role": "assistant", "tool_calls": calls})
    at = plan_end
    results: dict[str, dict[str, Any]] = {}
    for call in calls:
        name, args = call["name"], call["arguments"]
        at += rng.randint(3, 25)
        row = rec.add("TOOL", name, at, at, root["id"], input=args, metadata={"tool_call_id": call["id"]})
        failed = (name == "order_lookup" and order_timeout) or (name == "kb_search" and kb_error)
        if name == "dispatch_billing_agent":
            at = _run_billing_agent(rng, rec, row, args, at)
        elif failed:
            at += ORDER_LOOKUP_TIMEOUT_MS if name == "order_lookup" else rng.randint(120, 300)
            row.update(level="ERROR", end_time=rec.stamp(at), status_message=(
                f"order_lookup timed out after {ORDER_LOOKUP_TIMEOUT_MS} ms" if name == "order_lookup"
                else "kb_search failed: search index returned HTTP 503"))
        else:
            at += rng.randint(*TOOL_LATENCY_MS[name])
            row.update(end_time=rec.stamp(at), output=_tool_result(rng, name, args, order, req))
        content = {"error": row["status_message"]} if failed else row["output"]
        if not failed:
            results[name] = row["output"]
        if name != dropped:
            messages.append({"content": content, "name": name, "role": "tool", "tool_call_id": call["id"]})
    answer = compose_answer(req, results, failures, dropped, kb_error=kb_error, order_timeout=order_timeout,
                            looked_id=looked_id)
    at += rng.randint(3, 25)
    respond_end = at + rng.randint(800, 2600)
    respond_out = {"answer": answer}
    rec.add("GENERATION", "respond", at, respond_end, root["id"], input=messages, output=respond_out,
            model=MODEL, usage=_usage(messages, respond_out))
    root.update(end_time=rec.stamp(respond_end + rng.randint(2, 8)), output={"answer": answer})
    metadata = {
        "channel": req.channel, "customer_tier": req.tier, "dropped_tool": dropped,
        "injected_failures": sorted(failures), "intent": req.intent,
        "needs_escalation": req.escalation_trigger is not None,
    }
    return Trace(id=trace_id, name="support-turn", input=req.message, output=answer, metadata=metadata,
                 observations=[Observation(**row) for row in rec.rows])


def simulate_traces(seed: int, count: int) -> list[Trace]:
    """``count`` traces ``tr-0001`` ... from one seeded random stream."""
    rng = random.Random(f"evalkit-sample:{seed}:traces")
    return [simulate_trace(rng, n) for n in range(1, count + 1)]


def applicable_failures(trace: Trace) -> set[str]:
    """The failure modes that could have been injected into ``trace``, read from the trace itself."""
    tools = [o for o in trace.observations if o.type == "TOOL"]
    kb_ok = any(o.name == "kb_search" and o.level != "ERROR" for o in tools)
    lookup = [o for o in tools if o.name == "order_lookup"]
    out: set[str] = set()
    if kb_ok:
        out.add("hallucinated_policy")
    if kb_ok or any(o.level != "ERROR" for o in lookup):
        out.add("dropped_tool_result")
    if lookup:
        out.add("wrong_tool_args")
    if (trace.metadata or {}).get("needs_escalation"):
        out.add("missed_escalation")
    return out
