"""What each simulated customer asks for, and what is true about their order before the agent acts."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from evalkit.sample_subject.catalog import (
    BASE_TIME,
    CHANNEL_WEIGHTS,
    CHANNELS,
    DISPUTE_ESCALATION_THRESHOLD,
    INTENTS,
    OVERCHARGE_AMOUNTS,
    POLICIES,
    POLICY_BY_TOPIC,
    PRODUCTS,
    REASON_PHRASES,
    REFUND_LIMIT,
    REFUND_REASONS,
    REFUND_TOPICS,
    TIER_WEIGHTS,
    TIERS,
    USER_TEMPLATES,
    Policy,
)

EMAIL_SUBJECTS = {
    "refund_request": "Refund request",
    "order_status": "Order status",
    "policy_question": "Question about your policies",
    "billing_dispute": "Wrong charge on my card",
    "complaint": "Complaint",
}


@dataclass(frozen=True)
class CustomerRequest:
    """One customer's message and the facts behind it (the agent sees only the message)."""

    intent: str
    tier: str
    channel: str
    message: str
    order: dict[str, Any] | None
    policy: Policy | None
    amount: float | None
    reason: str | None
    dispute_kind: str | None
    escalation_trigger: str | None
    """Why this request needs a human, or None when the agent may finish it alone."""

    @property
    def order_id(self) -> str | None:
        return None if self.order is None else self.order["order_id"]


def iso_utc(moment: Any) -> str:
    """``2026-03-02T09:00:00.000Z``: millisecond UTC timestamps, the one format the sample writes."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def new_order_id(rng: random.Random) -> str:
    return f"ORD-2026-{rng.randint(100000, 999999)}"


def mistyped_order_id(rng: random.Random, order_id: str) -> str:
    """The same id with one of its last six digits changed: the agent's copying slip."""
    head, digits = order_id[:-6], list(order_id[-6:])
    pos = rng.randrange(6)
    digits[pos] = rng.choice([d for d in "0123456789" if d != digits[pos]])
    return head + "".join(digits)


def make_order(rng: random.Random, order_id: str, status: str) -> dict[str, Any]:
    """What order_lookup returns for ``order_id``."""
    products = rng.sample(PRODUCTS, rng.choice((1, 1, 2, 3)))
    items = [{"name": name, "price": price, "qty": 1, "sku": f"SKU-{rng.randint(10000, 99999)}"}
             for name, price in products]
    placed = BASE_TIME - timedelta(days=rng.randint(3, 40), minutes=rng.randint(0, 1439))
    return {
        "items": items,
        "order_id": order_id,
        "placed_at": placed.strftime("%Y-%m-%dT%H:%M:00Z"),
        "status": status,
        "total": round(sum(price for _, price in products), 2),
    }


def escalation_trigger(intent: str, tier: str, amount: float | None) -> str | None:
    """Why a request needs a human (premium complaint, refund over the limit, large dispute), or None."""
    if intent == "refund_request" and amount is not None and amount > REFUND_LIMIT:
        return f"refund of {amount:.2f} USD is above the {REFUND_LIMIT:.2f} USD limit"
    if intent == "billing_dispute" and amount is not None and amount > DISPUTE_ESCALATION_THRESHOLD:
        return f"disputed {amount:.2f} USD is above the {DISPUTE_ESCALATION_THRESHOLD:.2f} USD threshold"
    if intent == "complaint" and tier == "premium":
        return "complaint from a premium customer"
    return None


def draft_request(rng: random.Random) -> CustomerRequest:
    """A random customer request with its dimension values and ground-truth escalation need."""
    intent = rng.choice(INTENTS)
    tier = rng.choices(TIERS, TIER_WEIGHTS)[0]
    channel = rng.choices(CHANNELS, CHANNEL_WEIGHTS)[0]
    order: dict[str, Any] | None = None
    policy: Policy | None = None
    amount = reason = dispute_kind = None
    fields: dict[str, str] = {}
    if intent == "refund_request":
        order = make_order(rng, new_order_id(rng), "delivered")
        item = order["items"][0]
        amount, reason = item["price"], rng.choice(REFUND_REASONS)
        policy = POLICY_BY_TOPIC[rng.choice(REFUND_TOPICS)]
        fields = {"item": item["name"], "reason": REASON_PHRASES[reason]}
    elif intent == "order_status":
        order = make_order(rng, new_order_id(rng), rng.choice(("processing", "shipped", "delivered", "delayed")))
    elif intent == "policy_question":
        policy = rng.choice(POLICIES)
        fields = {"question": policy.question}
    elif intent == "billing_dispute":
        order = make_order(rng, new_order_id(rng), rng.choice(("shipped", "delivered")))
        dispute_kind = "duplicate-charge" if rng.random() < 0.6 else "overcharge"
        amount = order["total"] if dispute_kind == "duplicate-charge" else rng.choice(OVERCHARGE_AMOUNTS)
    else:  # complaint
        if rng.random() < 0.5:
            order = make_order(rng, new_order_id(rng), "delivered")
        policy = POLICY_BY_TOPIC["goodwill-credit"]
    if order is not None:
        fields["order_id"] = order["order_id"]
    fields["order_ref"] = f"(order {order['order_id']}) " if order is not None else ""
    if amount is not None:
        fields["amount"] = f"{amount:.2f}"
    body = rng.choice(USER_TEMPLATES[intent]).format(**fields)
    message = body if channel == "chat" else f"Subject: {EMAIL_SUBJECTS[intent]}\n\n{body}\n\nThanks."
    trigger = escalation_trigger(intent, tier, amount)
    return CustomerRequest(intent, tier, channel, message, order, policy, amount, reason, dispute_kind, trigger)
