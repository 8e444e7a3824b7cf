"""The sample subject's world: its knowledge base, products, customer messages and stated rates.

Every number a reader of the sample's README might check against (failure rates, judge accuracy,
label plan) is named here once; the generator modules only read these constants.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

SUBJECT = "support-agent"
DEFAULT_SEED = 7
DEFAULT_TRACE_COUNT = 300
BASE_TIME = datetime(2026, 3, 2, 9, 0, 0, tzinfo=UTC)
"""Fixed clock start: every timestamp in the sample is this plus a simulated offset."""
TRACE_SPACING_S = 360
LABEL_BASE_TIME = datetime(2026, 3, 9, 9, 0, 0, tzinfo=UTC)

MODEL = "sim-gpt-4o-2026-01"
JUDGE_MODEL = "sim-judge-2026-01"
WRITER_MODEL = "sim-writer-2026-01"
"""The simulated model whose replies write the sample's synthetic cases (writer-cassette.jsonl)."""

INTENTS = ("refund_request", "order_status", "policy_question", "billing_dispute", "complaint")
TIERS = ("standard", "premium")
TIER_WEIGHTS = (0.6, 0.4)
CHANNELS = ("chat", "email")
CHANNEL_WEIGHTS = (0.65, 0.35)

REFUND_LIMIT = 200.00
"""Refunds above this go to a human instead of being issued (same limit as the contract examples)."""
DISPUTE_ESCALATION_THRESHOLD = 100.00
"""Billing disputes over this amount need a human billing specialist."""

FAILURE_MODES = ("hallucinated_policy", "dropped_tool_result", "wrong_tool_args", "missed_escalation")
FAILURE_RATES: dict[str, float] = {
    "hallucinated_policy": 0.15,
    "dropped_tool_result": 0.12,
    "wrong_tool_args": 0.08,
    "missed_escalation": 0.10,
}
"""Target injection rate of each failure mode, among the traces where it can apply."""
FAILURE_APPLIES_TO: dict[str, str] = {
    "hallucinated_policy": "traces whose kb_search call returned articles (the reply states a policy)",
    "dropped_tool_result": "traces with a successful order_lookup or kb_search call",
    "wrong_tool_args": "traces that call order_lookup",
    "missed_escalation": (
        f"traces that need escalation: premium complaints, refunds over {REFUND_LIMIT:.2f}, "
        f"billing disputes over {DISPUTE_ESCALATION_THRESHOLD:.2f}"
    ),
}
ORDER_LOOKUP_TIMEOUT_RATE = 0.04
KB_SEARCH_ERROR_RATE = 0.03

CRITERIA: dict[str, str] = {"grounded-policy": "hallucinated_policy", "escalation-correct": "missed_escalation"}
"""Judged criterion id -> the failure mode that makes it fail (every other trace passes)."""
JUDGE_TARGETS: dict[str, tuple[float, float]] = {
    "grounded-policy": (0.92, 0.85),
    "escalation-correct": (0.95, 0.80),
}
"""Criterion -> (TPR, TNR) of the simulated judge; positive = pass, TPR = P(judge pass | truly pass)."""
JUDGE_UNCERTAIN_RATE = 0.03
JUDGE_ITERATIONS: tuple[tuple[str, dict[str, tuple[float, float]]], ...] = (
    ("v1", {"grounded-policy": (0.84, 0.55), "escalation-correct": (0.90, 0.45)}),
    ("v2", {"grounded-policy": (0.90, 0.72), "escalation-correct": (0.93, 0.65)}),
)
"""Earlier judge-prompt iterations (oldest first) with their (TPR, TNR); the current prompt is JUDGE_TARGETS."""

LABEL_FRACTION = 0.5
"""Share of traces that get a human label per criterion (150 of the default 300)."""
LABEL_FAIL_SHARE = 0.75
"""Each truly failing trace is labelled with this probability; passing traces fill the rest of the quota.

Failures are rare, so a uniform sample would hold too few to estimate TNR. TPR and TNR are conditional
on the true class, so enriching the labelled set for failures does not bias them.
"""
LABEL_DEFER_RATE = 0.03
SPLIT_SHARES = (("train", 0.15), ("dev", 0.40), ("test", 0.45))
"""Label splits, from the validate-evaluator recipe (train 10-20%, dev and test 40-45% each)."""
ANNOTATORS = ("support-qa-1", "support-qa-2")

ANNOTATION_BASE_TIME = datetime(2026, 3, 6, 9, 0, 0, tzinfo=UTC)
"""Error analysis starts here; each review label is stamped this plus simulated reading time."""
REVIEWERS = ("ana", "ben")
"""The error-analysis reviewers: the first reviews the sample, the second a subset, for agreement."""
REVIEWED_TRACES = 120
"""Traces the first reviewer reads, drawn by ``sample_traces(..., "random", seed)``."""
SECOND_REVIEWER_TRACES = 40
"""Of those, how many the second reviewer labels too, so Cohen's kappa can be computed."""
REVIEW_MISS_RATE = 0.05
"""Each injected failure mode in a reviewed trace is overlooked with this probability, per reviewer."""

SYSTEM_PROMPT = (
    "You are the support agent of Northwind Goods. State policies only as the knowledge base gives them, "
    f"look an order up before acting on it, issue refunds up to {REFUND_LIMIT:.2f} USD, and hand premium "
    f"complaints, larger refunds and disputes over {DISPUTE_ESCALATION_THRESHOLD:.2f} USD to a human."
)
BILLING_SYSTEM_PROMPT = (
    "You are the billing agent. Check the disputed charge against the payment ledger and say what adjustment "
    "is due."
)


@dataclass(frozen=True)
class Policy:
    """One knowledge-base article and the claim a reply makes from it (or the claim a hallucination makes)."""

    topic: str
    article_id: str
    title: str
    snippet: str
    claim: str
    false_claim: str
    question: str


POLICIES: tuple[Policy, ...] = (
    Policy("refund-window", "KB-101", "Refund policy",
           "Refunds are available within 30 days of delivery for items in original condition.",
           "refunds are available within 30 days of delivery", "refunds are available within 90 days of delivery",
           "How long do I have to ask for a refund?"),
    Policy("damaged-items", "KB-102", "Damaged or defective items",
           "Damaged items must be reported within 7 days of delivery, with a photo of the damage.",
           "damaged items must be reported within 7 days of delivery",
           "damaged items can be reported within 60 days of delivery",
           "Until when can I report that something arrived damaged?"),
    Policy("refund-timing", "KB-103", "Refund processing time",
           "Approved refunds reach the original payment method within 5-7 business days.",
           "approved refunds reach the original payment method within 5-7 business days",
           "approved refunds reach the original payment method within 24 hours",
           "How fast will I see my money after a refund?"),
    Policy("return-shipping", "KB-104", "Return shipping",
           "Return shipping is free for premium members; standard customers pay a 6.95 USD label fee.",
           "return shipping is free for premium members; standard customers pay a 6.95 USD label fee",
           "return shipping is free for every customer",
           "Do I have to pay for return shipping?"),
    Policy("exchanges", "KB-105", "Exchanges",
           "Exchanges for another size or colour are accepted within 45 days of delivery.",
           "exchanges for another size or colour are accepted within 45 days of delivery",
           "exchanges for another size or colour are accepted within 120 days of delivery",
           "Can I still exchange a jacket for another size?"),
    Policy("price-match", "KB-106", "Price adjustments",
           "We refund the difference if the same item gets cheaper within 14 days of purchase.",
           "we refund the difference if the same item gets cheaper within 14 days of purchase",
           "we refund the difference if the same item gets cheaper within 60 days of purchase",
           "The thing I bought last week is on sale now. Do I get the difference?"),
    Policy("goodwill-credit", "KB-107", "Service complaints",
           "Service complaints may receive a goodwill credit of up to 10% of the order total.",
           "service complaints may receive a goodwill credit of up to 10% of the order total",
           "service complaints may receive a goodwill credit of up to 50% of the order total",
           "What do you offer when a delivery goes badly wrong?"),
    Policy("warranty", "KB-108", "Warranty",
           "Electronics carry a 1-year limited manufacturer warranty from the delivery date.",
           "electronics carry a 1-year limited manufacturer warranty",
           "electronics carry a 3-year full warranty",
           "What warranty comes with headphones?"),
)
POLICY_BY_TOPIC = {p.topic: p for p in POLICIES}
REFUND_TOPICS = ("refund-window", "damaged-items", "refund-timing")

PRODUCTS: tuple[tuple[str, float], ...] = (
    ("wireless earbuds", 79.00), ("espresso machine", 329.00), ("cast iron skillet", 45.50),
    ("standing desk", 489.00), ("running shoes", 129.95), ("blender", 89.00), ("winter jacket", 215.00),
    ("yoga mat", 29.99), ("smart watch", 249.00), ("desk lamp", 39.90), ("bluetooth speaker", 119.00),
    ("office chair", 275.00), ("coffee grinder", 64.00), ("hiking backpack", 74.50),
)
ORDER_STATUSES = ("processing", "shipped", "delivered", "delayed")
REFUND_REASONS = ("arrived damaged", "wrong size", "not as described", "stopped working")
OVERCHARGE_AMOUNTS = (9.95, 14.50, 24.00, 39.99)

USER_TEMPLATES: dict[str, tuple[str, ...]] = {
    "refund_request": (
        "Hi, the {item} from order {order_id} {reason}. Can I get a refund of {amount} USD?",
        "I want my money back for the {item} in order {order_id}, it {reason}. That was {amount} USD.",
        "Order {order_id}: the {item} {reason}. Please refund the {amount} USD.",
    ),
    "order_status": (
        "Where is my order {order_id}? It has been a while.",
        "Can you tell me the status of order {order_id}?",
        "Hi, has order {order_id} shipped yet?",
    ),
    "policy_question": ("{question}", "Quick question before I order: {question}"),
    "billing_dispute": (
        "I was charged {amount} USD twice for order {order_id}. Please fix it.",
        "My card shows an extra {amount} USD on order {order_id} that I never agreed to.",
        "There is a wrong charge of {amount} USD on order {order_id}, can you check?",
    ),
    "complaint": (
        "This is the third time my delivery {order_ref}was left in the rain. I am really unhappy.",
        "Your courier was rude and my parcel {order_ref}came late. I expect better.",
        "Nobody answered my last two emails {order_ref}and I am fed up.",
    ),
}
REASON_PHRASES = {
    "arrived damaged": "arrived damaged",
    "wrong size": "came in the wrong size",
    "not as described": "is not as described",
    "stopped working": "stopped working after a day",
}
