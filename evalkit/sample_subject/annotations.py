"""The sample's error analysis: a failure-mode taxonomy and two simulated reviewers' annotations.

The first reviewer reads a random sample of traces (drawn with ``evalkit.analysis.sample_traces``) in
order, fails each trace with the modes injected into it, and passes the rest. Each injected mode is
overlooked at a small stated rate, so the annotated rates sit slightly under the injected ones, as
they would with a real reviewer. A second reviewer labels a subset of the same traces the same way,
with an independent miss stream, so annotator agreement can be measured.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from evalkit.analysis import sample_traces
from evalkit.contracts.annotation import Annotation, FailureMode, NoteRule, Taxonomy
from evalkit.contracts.trace import Trace
from evalkit.sample_subject.catalog import (
    ANNOTATION_BASE_TIME,
    FAILURE_MODES,
    REVIEW_MISS_RATE,
    REVIEWED_TRACES,
    REVIEWERS,
    SECOND_REVIEWER_TRACES,
    SUBJECT,
)
from evalkit.sample_subject.replies import policy_sentence
from evalkit.sample_subject.requests import iso_utc

REVIEW_SPACING_S = 150
"""Simulated reading time per trace; a random part of up to half of it is added on top."""

_MODES: dict[str, tuple[str, str, list[str]]] = {
    "hallucinated_policy": (
        "Hallucinated policy",
        "The answer states a store policy (a time limit, fee or scope) that differs from what the kb_search "
        "snippet in the same trace says, or that no snippet supports.",
        ["Answer promises refunds within 90 days; KB-101 says 30 days.",
         "Answer says return shipping is free for everyone; KB-104 limits that to premium members."],
    ),
    "dropped_tool_result": (
        "Dropped tool result",
        "A tool call succeeded, but its result never reaches the answering step, so the reply ignores or "
        "contradicts what the tool returned.",
        ["order_lookup returned the items, but the respond step never saw them and the answer lists none.",
         "kb_search found the relevant article, but the answer is written without it."],
    ),
    "wrong_tool_args": (
        "Wrong tool arguments",
        "A tool was called with arguments that do not match the customer's request, such as a mistyped "
        "order id, so the agent acts on the wrong record.",
        ["Customer asked about ORD-2026-260730; order_lookup was called with ORD-2026-260780."],
    ),
    "missed_escalation": (
        "Missed escalation",
        "The case meets an escalation trigger (premium complaint, refund over the limit, large billing "
        "dispute) but the agent never calls escalate_to_human.",
        ["A 329.00 USD refund was requested; the limit is 200.00 and no escalation was made.",
         "A premium customer complained about a courier and got no hand-off to a person."],
    ),
}

_NOTE_RULES: dict[str, str] = {
    "hallucinated_policy": r"polic(y|ies) .*(does not|doesn't|not) match",
    "dropped_tool_result": r"ignores the \w+ result",
    "wrong_tool_args": r"looked up .* but the customer asked",
    "missed_escalation": r"never escalated",
}

_PASS_NOTES = ("Answer matches the tool results.", "Correct and complete.", "Handled as the policy says.",
               "Nothing wrong here.")

# Where each mode first shows: the step that made the mistake.
_CULPRIT_STEP = {"hallucinated_policy": "respond", "dropped_tool_result": "respond", "wrong_tool_args": "plan",
                 "missed_escalation": "plan"}


def mode_id(name: str) -> str:
    """The taxonomy id of an injected failure mode: ``hallucinated_policy`` -> ``hallucinated-policy``."""
    return name.replace("_", "-")


def build_taxonomy() -> Taxonomy:
    """The four injected failure modes as a taxonomy, with rules mapping the reviewers' notes onto them."""
    return Taxonomy(
        subject=SUBJECT, version=1,
        modes=[FailureMode(id=mode_id(m), name=_MODES[m][0], definition=_MODES[m][1], examples=_MODES[m][2])
               for m in FAILURE_MODES],
        note_rules=[NoteRule(pattern=_NOTE_RULES[m], mode=mode_id(m)) for m in FAILURE_MODES],
    )


def _first(trace: Trace, name: str):
    return next((o for o in trace.observations if o.name == name), None)


def _note(trace: Trace, mode: str) -> str:
    metadata = trace.metadata or {}
    if mode == "hallucinated_policy":
        return f"Policy in the answer does not match the KB snippet: {policy_sentence(str(trace.output))!r}."
    if mode == "dropped_tool_result":
        return f"Answer ignores the {metadata.get('dropped_tool')} result."
    if mode == "wrong_tool_args":
        lookup = _first(trace, "order_lookup")
        looked = lookup.input["order_id"] if lookup is not None else "another order"
        return f"Looked up {looked} but the customer asked about a different order."
    return "Needed a human (escalation trigger) but the agent never escalated."


def _annotate(rng: random.Random, trace: Trace, reviewer: str, at: str) -> Annotation:
    injected = [m for m in FAILURE_MODES if m in (trace.metadata or {}).get("injected_failures", [])]
    seen = [m for m in injected if rng.random() >= REVIEW_MISS_RATE]
    if not seen:
        return Annotation(trace_id=trace.id, annotator=reviewer, at=at, label="pass", note=rng.choice(_PASS_NOTES),
                          modes=[])
    steps = [_first(trace, _CULPRIT_STEP[m]) for m in seen]
    first = min((o for o in steps if o is not None), key=trace.observations.index)
    return Annotation(trace_id=trace.id, annotator=reviewer, at=at, label="fail",
                      note=" ".join(_note(trace, m) for m in seen), modes=[mode_id(m) for m in seen],
                      first_failing_obs=first.id)


def _review(rng: random.Random, reviewer: str, traces: list[Trace], start: datetime) -> list[Annotation]:
    out = []
    for k, trace in enumerate(traces):
        moment = start + timedelta(seconds=k * REVIEW_SPACING_S + rng.randint(0, REVIEW_SPACING_S // 2))
        out.append(_annotate(rng, trace, reviewer, iso_utc(moment)))
    return out


def simulate_annotations(traces: list[Trace], seed: int) -> list[Annotation]:
    """The annotation store in file order: the first reviewer's labels, then the second reviewer's."""
    first, second = REVIEWERS
    reviewed = sample_traces(sorted(traces, key=lambda t: t.id), REVIEWED_TRACES, "random", seed)
    first_rng = random.Random(f"evalkit-sample:{seed}:annotations:{first}")
    second_rng = random.Random(f"evalkit-sample:{seed}:annotations:{second}")
    subset = second_rng.sample(reviewed, min(SECOND_REVIEWER_TRACES, len(reviewed)))
    return (_review(first_rng, first, reviewed, ANNOTATION_BASE_TIME)
            + _review(second_rng, second, subset, ANNOTATION_BASE_TIME + timedelta(days=1)))
