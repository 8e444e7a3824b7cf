"""The agent's final answer, composed from what its tools returned (and from what a failure changed)."""

from __future__ import annotations

import re
from typing import Any

from evalkit.sample_subject.requests import CustomerRequest

POLICY_LEAD = "Per our policy, "
"""Every policy the agent states starts with this, so a check can find the claim in the answer."""
_POLICY_SENTENCE = re.compile(re.escape(POLICY_LEAD) + r".*?\.(?=\s|$)")


def policy_sentence(answer: str) -> str | None:
    """The sentence of ``answer`` that states a policy, or None when it states none."""
    match = _POLICY_SENTENCE.search(answer)
    return match.group(0) if match else None


def _items(order: dict[str, Any]) -> str:
    return ", ".join(item["name"] for item in order["items"])


def _order_part(req: CustomerRequest, results: dict[str, Any], dropped: str | None, order_timeout: bool,
                looked_id: str | None) -> list[str]:
    if looked_id is None:
        return []
    if order_timeout:
        return ["I could not reach our order system just now, so I cannot confirm the order details yet."]
    if dropped == "order_lookup":
        return [f"I have looked into order {looked_id} for you."]
    order = results["order_lookup"]
    if req.intent == "order_status":
        return [f"Order {order['order_id']} is {order['status']}; it was placed on {order['placed_at'][:10]} "
                f"and holds: {_items(order)}."]
    return [f"I can see order {order['order_id']} ({_items(order)}, {order['total']:.2f} USD in total)."]


def compose_answer(req: CustomerRequest, results: dict[str, Any], failures: set[str], dropped: str | None, *,
                   kb_error: bool, order_timeout: bool, looked_id: str | None) -> str:
    """The reply text; a hallucinated policy swaps the knowledge-base claim for a false one."""
    parts: list[str] = []
    if req.intent == "complaint":
        parts.append("I am sorry about this experience.")
    parts += _order_part(req, results, dropped, order_timeout, looked_id)
    if req.policy is not None:
        if kb_error:
            parts.append("I could not open our policy pages just now, so I will not quote a policy from memory.")
        else:
            claim = req.policy.false_claim if "hallucinated_policy" in failures else req.policy.claim
            parts.append(POLICY_LEAD + claim + ".")
    if "issue_refund" in results:
        refund = results["issue_refund"]
        parts.append(f"I have issued a refund of {refund['amount']:.2f} USD (reference {refund['refund_id']}).")
    elif req.intent == "refund_request" and "missed_escalation" in failures:
        parts.append(f"Your refund request for {req.amount:.2f} USD is noted.")
    if "dispatch_billing_agent" in results:
        parts.append(f"Our billing team reviewed it: {results['dispatch_billing_agent']['resolution']}")
    if "escalate_to_human" in results:
        ticket = results["escalate_to_human"]
        parts.append(f"I have passed this to a specialist (ticket {ticket['ticket_id']}); a person will follow up "
                     f"within {ticket['eta_hours']} hours.")
    elif req.intent == "complaint":
        parts.append("Thank you for telling us; I have noted your feedback.")
    body = " ".join(parts)
    if req.channel == "email":
        return f"Hello,\n\n{body}\n\nBest regards,\nNorthwind Support"
    return f"Hi! {body} Anything else I can help with?"
