"""The sample support agent as a command: reads one case, answers it, writes its trace.

``python -m evalkit.sample_subject.agent_command --spec agent-spec.yaml --case CASE.json --out TRACE.jsonl
[--repeat N]``. The agent spec's settings (failure rates, tool error rates, seed) decide which failure
modes the agent shows; the same spec, case and repeat always give the same trace bytes. The subject's
``agent:`` block runs it through ``evalkit eval run`` (see docs/suite.md).
"""

from __future__ import annotations

import random
import re
import sys
from collections.abc import Sequence

from evalkit.contract_files import read_model
from evalkit.contracts.dataset import Case
from evalkit.contracts.trace import Trace
from evalkit.io import InputError, atomic_write_text, canonical_line
from evalkit.sample_subject.agent import simulate_trace
from evalkit.sample_subject.agent_spec import AgentSpec
from evalkit.sample_subject.catalog import (
    POLICIES,
    POLICY_BY_TOPIC,
    PRODUCTS,
    REASON_PHRASES,
    REFUND_TOPICS,
)
from evalkit.sample_subject.requests import CustomerRequest, escalation_trigger, make_order, new_order_id

_ORDER_ID = re.compile(r"ORD-\d{4}-\d{6}")
_AMOUNT = re.compile(r"(\d+\.\d{2}) USD")
USAGE = "usage: python -m evalkit.sample_subject.agent_command --spec FILE --case FILE --out FILE [--repeat N]"


def _intent(case: Case, query: str) -> str:
    if "intent" in case.tuple:
        return case.tuple["intent"]
    lower = query.lower()  # a derived case carries only its outcome: read the intent off the message
    if "charge" in lower or "my card" in lower:
        return "billing_dispute"
    if ("refund" in lower or "money back" in lower) and _ORDER_ID.search(query):
        return "refund_request"
    if _ORDER_ID.search(query) and any(w in lower for w in ("where", "status", "shipped")):
        return "order_status"
    if any(p.question in query for p in POLICIES):
        return "policy_question"
    return "complaint"


def request_from_case(case: Case, rng: random.Random) -> CustomerRequest:
    """The customer request behind a case: its message is the query, the facts are read from it."""
    query = case.query
    intent = _intent(case, query)
    tier = case.tuple.get("customer_tier", "premium" if "premium member" in query else "standard")
    channel = case.tuple.get("channel", "email" if query.startswith("Subject:") else "chat")
    found = _ORDER_ID.search(query)
    order_id = found.group(0) if found else new_order_id(rng)
    amounts = _AMOUNT.findall(query)
    amount = float(amounts[0]) if amounts else None
    order = policy = reason = dispute_kind = None
    if intent == "refund_request":
        order = make_order(rng, order_id, "delivered")
        named = [(name, price) for name, price in PRODUCTS if name in query]
        if named:
            order["items"][0] = {**order["items"][0], "name": named[0][0], "price": named[0][1]}
            order["total"] = round(sum(item["price"] for item in order["items"]), 2)
        amount = amount if amount is not None else order["items"][0]["price"]
        reason = next((r for r, phrase in REASON_PHRASES.items() if phrase in query), "not as described")
        policy = POLICY_BY_TOPIC[rng.choice(REFUND_TOPICS)]
    elif intent == "order_status":
        order = make_order(rng, order_id, rng.choice(("processing", "shipped", "delivered", "delayed")))
    elif intent == "policy_question":
        policy = next((p for p in POLICIES if p.question in query), None) or rng.choice(POLICIES)
    elif intent == "billing_dispute":
        order = make_order(rng, order_id, rng.choice(("shipped", "delivered")))
        dispute_kind = "duplicate-charge" if "twice" in query.lower() else "overcharge"
        amount = amount if amount is not None else order["total"]
    else:
        order = make_order(rng, order_id, "delivered") if found else None
        policy = POLICY_BY_TOPIC["goodwill-credit"]
    return CustomerRequest(intent, tier, channel, query, order, policy, amount, reason, dispute_kind,
                           escalation_trigger(intent, tier, amount))


def answer_case(spec: AgentSpec, case: Case, repeat: int = 1) -> Trace:
    """The agent's trace for one case and repeat; seeded by the spec's seed, the case id and the repeat."""
    rng = random.Random(f"evalkit-sample-agent:{spec.seed}:{case.id}:{repeat}")
    request = request_from_case(case, rng)
    return simulate_trace(rng, 1, request=request, rates=spec.failure_rates,
                          order_timeout_rate=spec.order_lookup_timeout_rate, kb_error_rate=spec.kb_search_error_rate)


def _options(argv: Sequence[str]) -> dict[str, str]:
    """``--name value`` pairs; the agent takes no other form of argument."""
    if len(argv) % 2:
        raise ValueError(f"expected --name value pairs\n{USAGE}")
    opts = dict(zip(argv[::2], argv[1::2], strict=True))
    unknown = sorted(set(opts) - {"--spec", "--case", "--out", "--repeat"})
    missing = sorted({"--spec", "--case", "--out"} - set(opts))
    if unknown or missing:
        raise ValueError(f"{'unknown ' + unknown[0] if unknown else 'missing ' + missing[0]}\n{USAGE}")
    return opts


def main(argv: Sequence[str] | None = None) -> int:
    """Answer the case in ``--case`` under the spec in ``--spec`` and write the trace to ``--out``."""
    try:
        opts = _options(list(sys.argv[1:] if argv is None else argv))
        repeat = int(opts.get("--repeat", "1"))
        spec = read_model(opts["--spec"], AgentSpec)
        case = read_model(opts["--case"], Case)
    except (ValueError, InputError) as exc:
        print(f"agent_command: {exc}", file=sys.stderr)
        return 2
    atomic_write_text(opts["--out"], canonical_line(answer_case(spec, case, repeat).to_json_obj()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
