"""The sample's case writer: a cassette of replies from a simulated writer model, one per tuple of the suite.

``evalkit dataset generate data/sample/subject.yaml --missing --provider replay --cassette
data/sample/writer-cassette.jsonl`` replays it: for the exact prompt ``generate`` builds for each of the
sample's 20 tuples (``--n 3``, expected behaviour asked, the sample's seed cases as examples), the cassette
holds three customer messages written from the sample's catalog (products, policies, order ids) in the
voice of its channel and tier, each with the behaviour the sample's policies require (escalation included)
and the failure modes of its taxonomy that the message lets the agent show. The sample's suite realises every
tuple, so a copy with cases removed shows the generation fill them (``tests/suite/test_generate.py``).
"""

from __future__ import annotations

import itertools
import random
from typing import Any

from evalkit.contracts.annotation import Taxonomy
from evalkit.contracts.dataset import Dataset
from evalkit.contracts.matrix import EvalMatrix
from evalkit.io import canonical_line
from evalkit.io.canonical import compact_sorted_json
from evalkit.judge import request_key
from evalkit.sample_subject.catalog import (
    DISPUTE_ESCALATION_THRESHOLD,
    OVERCHARGE_AMOUNTS,
    POLICIES,
    PRODUCTS,
    REASON_PHRASES,
    REFUND_LIMIT,
    WRITER_MODEL,
)
from evalkit.sample_subject.requests import EMAIL_SUBJECTS, escalation_trigger, new_order_id
from evalkit.suite import writer_brief, writer_prompt

WRITER_CASES = 3
"""Cases per tuple the cassette answers (``dataset generate --n 3``, the default)."""

OPENERS = ("", "Hello, ", "Hi there. ", "Good morning. ")
REFUND_ASKS = ("I would like a refund of {amount} USD for the {item} (order {order_id}); it {reason}.",
               "Order {order_id}: my {item} {reason}, so please send back the {amount} USD I paid.",
               "The {item} I bought for {amount} USD {reason}. Order number {order_id}. Refund please?")
STATUS_ASKS = ("Any news on order {order_id}? The tracking page has not changed in days.",
               "I placed order {order_id} last week and still have no delivery date. What is going on?",
               "Could you check where order {order_id} is right now?")
DISPUTE_ASKS = ("My statement has {amount} USD for order {order_id} twice. Please remove the duplicate.",
                "You billed me {amount} USD more than the checkout total for order {order_id}.",
                "Why is there a {amount} USD charge on order {order_id}? I did not approve it.")
COMPLAINT_ASKS = ("The parcel {order_ref}arrived a week late and nobody told me why. Not good enough.",
                  "I waited all day for a delivery {order_ref}that never came. Very disappointing service.",
                  "Your support line hung up on me twice {order_ref}today. I am losing patience.")
POLICY_ASKS = ("{question}", "Before I buy: {question}", "One thing I could not find on the site: {question}")


def _message(rng: random.Random, intent: str, tier: str, channel: str, i: int) -> tuple[str, str]:
    """A customer message for the tuple, and the behaviour a correct agent shows for it."""
    order_id = new_order_id(rng)
    if intent == "refund_request":
        item, price = rng.choice(PRODUCTS)
        body = REFUND_ASKS[i].format(amount=f"{price:.2f}", item=item, order_id=order_id,
                                     reason=rng.choice(list(REASON_PHRASES.values())))
        trigger = escalation_trigger(intent, tier, price)
        expected = (f"Looks up order {order_id}, checks the refund policy with kb_search and states only what its "
                    f"snippet says; " + (f"does not issue the refund but calls escalate_to_human ({trigger})."
                                         if trigger else f"issues the refund of {price:.2f} USD (at most "
                                         f"{REFUND_LIMIT:.2f} USD needs no human)."))
    elif intent == "order_status":
        body = STATUS_ASKS[i].format(order_id=order_id)
        expected = f"Looks up order {order_id} and tells its status and items as order_lookup returned them."
    elif intent == "policy_question":
        policy = POLICIES[(i * 3 + rng.randrange(len(POLICIES))) % len(POLICIES)]
        body = POLICY_ASKS[i].format(question=policy.question)
        expected = (f"Searches the knowledge base and answers with {policy.article_id} as its snippet states it "
                    f"({policy.claim}); no other policy is stated.")
    elif intent == "billing_dispute":
        amount = rng.choice(OVERCHARGE_AMOUNTS) if i else rng.choice(PRODUCTS)[1]
        body = DISPUTE_ASKS[i].format(amount=f"{amount:.2f}", order_id=order_id)
        trigger = escalation_trigger(intent, tier, amount)
        expected = (f"Looks up order {order_id} and hands the dispute to dispatch_billing_agent with the order id "
                    f"and the disputed {amount:.2f} USD" + (f"; calls escalate_to_human ({trigger})." if trigger else
                                                            f" (at most {DISPUTE_ESCALATION_THRESHOLD:.2f} USD: "
                                                            "no human needed)."))
    else:
        ref = f"(order {order_id}) " if i != 1 else ""
        body = COMPLAINT_ASKS[i].format(order_ref=ref)
        expected = ("Apologises and offers the goodwill credit exactly as the knowledge base states it" +
                    ("; calls escalate_to_human (a premium customer complains)." if tier == "premium" else
                     "; no escalation (the customer is not premium)."))
    body = OPENERS[rng.randrange(len(OPENERS))] + body
    if tier == "premium":
        body += rng.choice((" I am a premium member.", " (Premium member since 2021.)", " I am on the premium plan."))
    text = body if channel == "chat" else f"Subject: {EMAIL_SUBJECTS[intent]}\n\n{body}\n\nBest,\nA. Customer"
    return text, expected


def _modes(intent: str, expected: str) -> list[str]:
    """The taxonomy's failure modes the message gives the agent a chance to show."""
    modes = {"refund_request": ["hallucinated-policy", "dropped-tool-result", "wrong-tool-args"],
             "order_status": ["dropped-tool-result", "wrong-tool-args"],
             "policy_question": ["hallucinated-policy", "dropped-tool-result"],
             "billing_dispute": ["dropped-tool-result", "wrong-tool-args"],
             "complaint": ["hallucinated-policy"]}[intent]
    return modes + (["missed-escalation"] if "calls escalate_to_human" in expected else [])


def writer_reply(case_tuple: dict[str, str], n: int = WRITER_CASES) -> dict[str, Any]:
    """The simulated writer's reply for one tuple: ``n`` cases, the same for the same tuple."""
    rng = random.Random(f"evalkit-sample:writer:{case_tuple['intent']}:{case_tuple['customer_tier']}:"
                        f"{case_tuple['channel']}")
    cases = []
    for i in range(n):
        query, expected = _message(rng, case_tuple["intent"], case_tuple["customer_tier"], case_tuple["channel"], i)
        cases.append({"expected": expected, "failureModes": _modes(case_tuple["intent"], expected), "query": query})
    return {"cases": cases}


def writer_cassette(dataset: Dataset, taxonomy: Taxonomy, matrix: EvalMatrix) -> str:
    """``writer-cassette.jsonl``: per tuple of the suite, the key of the prompt ``dataset generate`` builds for it
    and the simulated writer's reply (compact form: key, model, reply)."""
    brief = writer_brief(dataset, WRITER_CASES, taxonomy=taxonomy, matrix=matrix)
    lines = []
    for values in itertools.product(*(d.values for d in dataset.dimensions)):
        case_tuple = dict(zip((d.name for d in dataset.dimensions), values, strict=True))
        prompt = writer_prompt(brief, case_tuple)
        text = compact_sorted_json(writer_reply(case_tuple))
        lines.append(canonical_line({
            "key": request_key(WRITER_MODEL, 0.0, list(prompt.messages), prompt.schema), "model": WRITER_MODEL,
            "reply": {"inputTokens": len(compact_sorted_json(list(prompt.messages))) // 4,
                      "outputTokens": len(text) // 4, "text": text}}))
    return "".join(lines)
