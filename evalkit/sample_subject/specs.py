"""The subject's specifications: eval matrix, dataset, expected flow and behavior tree.

These describe how the support agent should behave; the traces show how it did.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

from evalkit.contracts.behavior_tree import BehaviorTree
from evalkit.contracts.dataset import Dataset
from evalkit.contracts.flow import ExpectedFlow
from evalkit.contracts.matrix import EvalMatrix
from evalkit.sample_subject.catalog import (
    BASE_TIME,
    CHANNELS,
    DISPUTE_ESCALATION_THRESHOLD,
    FAILURE_RATES,
    INTENTS,
    POLICIES,
    PRODUCTS,
    REASON_PHRASES,
    REFUND_LIMIT,
    SUBJECT,
    TIERS,
    USER_TEMPLATES,
)
from evalkit.sample_subject.requests import EMAIL_SUBJECTS, iso_utc, new_order_id
from evalkit.suite import case_id

GENERATED_AT = iso_utc(BASE_TIME)


def _case_query(rng: random.Random, intent: str, tier: str, channel: str, k: int) -> str:
    name, price = PRODUCTS[k % len(PRODUCTS)]
    templates = USER_TEMPLATES[intent]
    fields = {"item": name, "reason": list(REASON_PHRASES.values())[k % len(REASON_PHRASES)],
              "order_id": new_order_id(rng), "amount": f"{price:.2f}",
              "question": POLICIES[k % len(POLICIES)].question}
    fields["order_ref"] = f"(order {fields['order_id']}) "
    body = templates[k % len(templates)].format(**fields)
    if tier == "premium":
        body += " I am a premium member."
    return body if channel == "chat" else f"Subject: {EMAIL_SUBJECTS[intent]}\n\n{body}\n\nThanks."


def build_dataset(seed: int) -> Dataset:
    """One case per (intent, customer_tier, channel) tuple: 20 cases."""
    rng = random.Random(f"evalkit-sample:{seed}:dataset")
    cases = []
    for k, (intent, tier, channel) in enumerate(itertools.product(INTENTS, TIERS, CHANNELS)):
        case_tuple = {"channel": channel, "customer_tier": tier, "intent": intent}
        query = _case_query(rng, intent, tier, channel, k)
        case = {"id": case_id(case_tuple, query), "tuple": case_tuple, "query": query}
        if tier == "standard" and channel == "chat":
            case["source"] = "seed"
        else:
            case.update(source="synthetic", selected_by="stratified",
                        rationale=f"Covers {intent} from {tier} customers writing by {channel}.")
        cases.append(case)
    return Dataset(subject=SUBJECT, version=1, cases=cases, dimensions=[
        {"name": "intent", "description": "What the customer wants from this conversation.", "values": list(INTENTS)},
        {"name": "customer_tier", "description": "The customer's membership tier.", "values": list(TIERS)},
        {"name": "channel", "description": "Where the customer wrote in.", "values": list(CHANNELS)},
    ])


def build_expected_flow() -> ExpectedFlow:
    """The threadings a correct trace shows (an edge applies when both of its tools ran)."""
    edges = [
        ("plan", "respond", "tool_calls"),
        ("kb_search", "respond", "articles"),
        ("order_lookup", "respond", "items"),
        ("order_lookup", "issue_refund", "order_id"),
        ("order_lookup", "dispatch_billing_agent", "order_id"),
        ("issue_refund", "respond", "refund_id"),
        ("dispatch_billing_agent", "respond", "resolution"),
        ("escalate_to_human", "respond", "ticket_id"),
    ]
    return ExpectedFlow(dispatch_tool_names=["dispatch_billing_agent"], expected_ui_slots=["answer"],
                        edges=[{"from_tool": a, "to_tool": b, "slot": s} for a, b, s in edges])


def _criterion(criterion_id: str, failure: str | None, origin: str, **fields: Any) -> dict[str, Any]:
    fields["criterion_id"] = criterion_id
    if failure is None:
        fields["evidence_source"] = f"criterion {criterion_id}. {origin}"
    else:
        fields["evidence_source"] = (f"criterion {criterion_id}. {origin} Injected failure mode {failure} "
                                     f"(target {FAILURE_RATES[failure]:.0%} of applicable traces).")
    return fields


ORDER_ID_CHECK = {"primitive": "string-equality", "params": {
    "actual": {"obs": "order_lookup", "path": "input.order_id"},
    "expected": {"obs": "$trace", "path": "input", "pattern": r"ORD-\d{4}-\d{6}"},
    "when": {"obs": "order_lookup", "path": "name", "value": "order_lookup"}}}
"""The order looked up is the one the customer named (passes when no order was looked up)."""
BILLING_HANDOFF_CHECK = {"primitive": "schema-conformance", "params": {
    "obs": "dispatch_billing_agent", "path": "input",
    "schema": {"type": "object", "required": ["context"],
               "properties": {"context": {"type": "object", "required": ["order_id", "disputed_amount"]}}},
    "when": {"obs": "dispatch_billing_agent", "path": "name", "value": "dispatch_billing_agent"}}}
"""A billing hand-off carries the order id and the disputed amount (passes when nothing was dispatched)."""


def build_eval_matrix() -> EvalMatrix:
    """Components of the support agent and one criterion per failure mode (plus the hand-off check)."""
    c = _criterion
    components = [
        {"component_id": "C1", "component_name": "support-agent", "component_type": "agent", "criteria": [
            c("grounded-policy", "hallucinated_policy", "Intended behavior: state policies only from kb_search.",
              dimension="data-correctness", check_method="llm-judge", severity="HIGH", existing_coverage="none",
              statement="Every policy the reply states is supported by a kb_search snippet of the same trace.",
              pass_condition="Each 'Per our policy, ...' claim in respond.output.answer occurs in a kb_search "
                             "output.articles[].snippet; a reply that states no policy passes."),
            c("escalation-correct", "missed_escalation",
              "Intended behavior: hand premium complaints, refunds over the limit and large disputes to a human.",
              dimension="operation-correctness", check_method="llm-judge", severity="CRIT", existing_coverage="none",
              statement="The agent escalates to a human exactly when an escalation trigger applies.",
              pass_condition=f"escalate_to_human is called when the customer is premium and complains, a refund "
                             f"exceeds {REFUND_LIMIT:.2f} USD, or a dispute exceeds "
                             f"{DISPUTE_ESCALATION_THRESHOLD:.2f} USD; otherwise passing is automatic."),
        ]},
        {"component_id": "C2", "component_name": "kb_search", "component_type": "script", "criteria": [
            c("kb-result-threaded", "dropped_tool_result", "Intended behavior: the answer sees every tool result.",
              dimension="operational-deviation", check_method="trace-cross-ref", severity="MED",
              existing_coverage="none", statement="The kb_search result reaches the respond generation.",
              pass_condition="kb_search.output.articles appears in the input messages of respond."),
        ]},
        {"component_id": "C3", "component_name": "order_lookup", "component_type": "script", "criteria": [
            c("order-id-matches", "wrong_tool_args", "Intended behavior: look up the order the customer named.",
              dimension="data-correctness", check_method="deterministic-script", severity="HIGH",
              existing_coverage="none", statement="order_lookup is called with the order id from the customer.",
              pass_condition="order_lookup.input.order_id equals the ORD-YYYY-NNNNNN id in the trace input.",
              check=ORDER_ID_CHECK),
            c("order-result-threaded", "dropped_tool_result",
              "Intended behavior: the answer sees every tool result.",
              dimension="operational-deviation", check_method="trace-cross-ref", severity="MED",
              existing_coverage="none", statement="The order_lookup result reaches the respond generation.",
              pass_condition="order_lookup.output.items appears in the input messages of respond."),
        ]},
        {"component_id": "C4", "component_name": "dispatch_billing_agent", "component_type": "agent", "criteria": [
            c("billing-handoff-complete", None,
              "Intended behavior: billing owns charges, so a dispute is handed over with what billing needs.",
              dimension="operation-correctness", check_method="deterministic-script", severity="MED",
              existing_coverage="none",
              statement="A billing dispute is dispatched once, with the order id and the disputed amount.",
              pass_condition="Exactly one dispatch_billing_agent call whose input.context has order_id and "
                             "disputed_amount.",
              check=BILLING_HANDOFF_CHECK),
        ]},
    ]
    return EvalMatrix(subject=SUBJECT, version="v1", generated_at=GENERATED_AT, components=components,
                      design_principles=[
                          "One criterion checks one observable behavior of one component.",
                          "Each criterion names the failure mode it catches and its id in evidenceSource.",
                          "Code checks what code can decide; the judge sees only what needs reading.",
                      ])


PLAN_CALLS = {"obs": "plan", "path": "output.tool_calls"}
"""Where a trace shows the tools the agent chose: its plan's tool calls."""


def _is(path: str, value: str, obs: str = "$trace") -> dict[str, str]:
    return {"obs": obs, "path": path, "value": value}


def _node(node_id: str, label: str, kind: str, scenarios: list[tuple], edges: list[tuple],
          observe: dict | None = None, observed: dict | None = None, taken: dict | None = None) -> dict:
    """A tree node; ``observed`` maps a scenario id to ``(observedWhen, expectedObserved, unexpectedObserved)``
    and ``taken`` an edge id to its ``takenWhen``: where code can see the decision (docs/checks.md)."""
    observed, taken = observed or {}, taken or {}
    node: dict = {
        "node_id": node_id, "label": label, "decision_type": kind,
        "scenarios": [{"scenario_id": s, "when": w, "expected_decision": d, "expected_fork": f} for s, w, d, f in scenarios],
        "edges": [{"edge_id": e, "to": t, "condition": c} for e, t, c in edges],
    }
    if observe is not None:
        node["observe"] = observe
    for scenario in node["scenarios"]:
        if scenario["scenario_id"] in observed:
            when, expected, unexpected = observed[scenario["scenario_id"]]
            scenario["observed_when"] = when
            if expected:
                scenario["expected_observed"] = expected
            if unexpected:
                scenario["unexpected_observed"] = unexpected
    for edge in node["edges"]:
        if edge["edge_id"] in taken:
            edge["taken_when"] = taken[edge["edge_id"]]
    return node


def build_behavior_tree() -> BehaviorTree:
    """The decisions the support agent should take: route, approve, dispatch, escalate."""
    gate, end = "n-escalation-gate", "TERMINAL"
    limit, threshold = f"{REFUND_LIMIT:.2f}", f"{DISPUTE_ESCALATION_THRESHOLD:.2f}"
    nodes = [
        _node("n-intent-routing", "Choose the tools for the intent", "tool-choice", [
            ("s-refund", "The customer asks for a refund on an order.",
             "Call kb_search for the refund policy and order_lookup for the named order.", "n-refund-approval"),
            ("s-status", "The customer asks where an order is.", "Call order_lookup only.", end),
            ("s-policy", "The customer asks a policy question and names no order.", "Call kb_search only.", end),
            ("s-dispute", "The customer disputes a charge.", "Call order_lookup, then dispatch_billing_agent.",
             "n-billing-dispatch"),
            ("s-complaint", "The customer complains about the service.",
             "Call kb_search for the goodwill policy (and order_lookup when an order is named).", gate),
        ], [("e-route-refund", "n-refund-approval", "refund requested"),
            ("e-route-answer", end, "status or policy answered"),
            ("e-route-dispute", "n-billing-dispatch", "charge disputed"),
            ("e-route-complaint", gate, "complaint")],
              observe=PLAN_CALLS, observed={
                  "s-refund": ([_is("metadata.intent", "refund_request")], ["kb_search", "order_lookup"], None),
                  "s-status": ([_is("metadata.intent", "order_status")], ["order_lookup"],
                               ["kb_search", "dispatch_billing_agent"]),
                  "s-policy": ([_is("metadata.intent", "policy_question")], ["kb_search"],
                               ["order_lookup", "dispatch_billing_agent"]),
                  "s-dispute": ([_is("metadata.intent", "billing_dispute")],
                                ["order_lookup", "dispatch_billing_agent"], None),
                  "s-complaint": ([_is("metadata.intent", "complaint")], ["kb_search"], None)},
              taken={"e-route-refund": [_is("output.tool_calls", "issue_refund", "plan")],
                     "e-route-answer": [_is("metadata.intent", "policy_question")],
                     "e-route-dispute": [_is("output.tool_calls", "dispatch_billing_agent", "plan")],
                     "e-route-complaint": [_is("metadata.intent", "complaint")]}),
        _node("n-refund-approval", "Approve or escalate the refund", "approval", [
            ("s-within-limit", f"The refund is at most {limit} USD.", "Call issue_refund for the amount.", end),
            ("s-over-limit", f"The refund is above {limit} USD.", "Do not refund; go to the escalation gate.", gate),
        ], [("e-refund-issued", end, "refund issued"), ("e-refund-over-limit", gate, "over the limit")]),
        _node("n-billing-dispatch", "Hand the dispute to billing", "dispatch-count", [
            ("s-one-dispute", "The customer disputes one charge on one order.",
             "Dispatch exactly one billing-agent with the order id and the disputed amount.", gate),
        ], [("e-billing-replied", gate, "billing agent replied")]),
        _node(gate, "Escalate to a human?", "gate", [
            ("s-premium-complaint", "A premium customer complains.", "Call escalate_to_human (priority high).", end),
            ("s-large-refund", f"A refund above {limit} USD was requested.", "Call escalate_to_human.", end),
            ("s-large-dispute", f"The disputed amount is above {threshold} USD.", "Call escalate_to_human.", end),
            ("s-no-trigger", "None of the triggers applies.", "Answer without escalating.", end),
        ], [("e-escalated", end, "escalated to a human"), ("e-not-escalated", end, "answered without a human")],
              observe=PLAN_CALLS, observed={
                  "s-premium-complaint": ([_is("metadata.intent", "complaint"), _is("metadata.customer_tier", "premium")],
                                          ["escalate_to_human"], None),
                  "s-large-refund": ([_is("metadata.intent", "refund_request"), _is("metadata.needs_escalation", "true")],
                                     ["escalate_to_human"], None),
                  "s-large-dispute": ([_is("metadata.intent", "billing_dispute"),
                                       _is("metadata.needs_escalation", "true")], ["escalate_to_human"], None),
                  "s-no-trigger": ([_is("metadata.needs_escalation", "false")], None, ["escalate_to_human"])},
              taken={"e-escalated": [_is("output.tool_calls", "escalate_to_human", "plan")],
                     "e-not-escalated": [_is("metadata.needs_escalation", "false")]}),
    ]
    return BehaviorTree(subject=SUBJECT, version="v1", generated_at=GENERATED_AT, root="n-intent-routing",
                        nodes=nodes)
