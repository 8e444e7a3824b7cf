"""The OTel importer's per-kind plans and short paths give what the general code gives.

Observations are built from a plan remembered per attribute keys (``otel_observation``); the first
pass reads trace ids a whole list of spans at a time (``otel_sorted``); attribute values have a short
branch for token counts (``otel_values``); ``tree.order_observations`` walks without a seen-set when
ids are unique. Each is compared here with the general reading, on cases that take the short path and
on cases that must fall back.
"""

import itertools
import random

import pytest

from evalkit.contracts.trace import Observation
from evalkit.traces.otel_attributes import (
    MISSING,
    first_text,
    observation_type,
    payload_plan,
    payloads,
    planned_payloads,
    planned_usage,
    usage,
    usage_plan,
)
from evalkit.traces.otel_observation import _PLANS, MODEL_KEYS, observation_of, plan_of
from evalkit.traces.otel_sorted import _flat_trace_id, _span_trace_ids, _Unsure
from evalkit.traces.otel_values import any_value, decode_attributes
from evalkit.traces.tool_spans import tool_convention
from evalkit.traces.tree import order_observations, start_key

KEYS = ["gen_ai.operation.name", "openinference.span.kind", "ai.operationId", "gen_ai.tool.name", "tool.name",
        "ai.toolCall.name", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result", "input.value", "output.value",
        "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.request.model", "gen_ai.response.model",
        "llm.model_name", "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "llm.token_count.total",
        "ai.usage.promptTokens", "gen_ai.system", "ai.response.toolCalls", "ai.prompt.messages", "ai.response.text",
        "gen_ai.prompt.0.content", "llm.output_messages.0.message.content", "gen_ai.output", "other"]
VALUES = {
    "gen_ai.operation.name": ["chat", "execute_tool", "invoke_agent", "CHAT", "embeddings", "weird", "", 5],
    "openinference.span.kind": ["LLM", "tool", "AGENT", "nope", None],
    "ai.operationId": ["ai.generateText", "ai.generateText.doGenerate", "ai.toolCall", "ai.embed.doEmbed", "x"],
}
OTHER_VALUES = ['{"a": 1}', "[1, 2]", "text", "", None, 12, "7", "1.5", "Infinity", True, '{"a": 1, "a": 2}',
                '[{"toolName": "t"}]', "gpt-x"]


def _general_observation(span_id, parent_id, span_name, kind, start, end, attrs, events, error, message,
                         resource, scope, joined_from):
    """The observation as the importer built it before plans: every decision made again for each span."""
    obs_type = observation_type(attrs)
    tool_by = None
    if obs_type == "SPAN" and span_name is not None and span_name.startswith(("tool.", "execute_tool ")):
        tool_by, obs_type = "a tool.* span name", "TOOL"
    elif obs_type == "TOOL" and not any(attrs.get(k) for k in ("gen_ai.operation.name", "openinference.span.kind",
                                                                  "ai.operationId")):
        tool_by = tool_convention(span_name, attrs)
    name = span_name
    if obs_type == "TOOL":
        name = first_text(attrs, "gen_ai.tool.name", "tool.name", "ai.toolCall.name") or (
            name.removeprefix("execute_tool ") if name else None)
    model = first_text(attrs, *MODEL_KEYS)
    tokens = usage(attrs)
    metadata = {"attributes": attrs}
    if resource:
        metadata["resource"] = resource
    if scope:
        metadata["scope"] = scope
    if kind is not None:
        metadata["spanKind"] = kind
    if span_name is not None and span_name != name:
        metadata["spanName"] = span_name
    if events:
        metadata["events"] = events
    if joined_from is not None:
        metadata["sourceTraceId"] = joined_from
    if tool_by is not None:
        metadata["toolBy"] = tool_by
    inp, out = payloads(obs_type, attrs, events)
    fields = {"id": span_id, "type": obs_type, "name": name, "parent_id": parent_id, "start_time": start,
              "end_time": end, "model": model, "usage": tokens, "metadata": metadata}
    if error:
        fields["level"] = "ERROR"
        fields["status_message"] = message
    fields = {k: v for k, v in fields.items() if v is not None}
    if inp is not MISSING:
        fields["input"] = inp
    if out is not MISSING:
        fields["output"] = out
    return Observation.model_validate(fields)


_KEY_SETS = [random.Random(k).sample(KEYS, k % 7) for k in range(80)]
"""Spans of one instrumentation repeat their keys: attributes are drawn with one of these key sets."""


def _random_attrs(rng):
    return {key: rng.choice(VALUES.get(key, OTHER_VALUES)) for key in rng.choice(_KEY_SETS)}


def _same(built, expected):
    assert built == expected
    assert built.model_fields_set == expected.model_fields_set
    assert built.to_json_obj() == expected.to_json_obj()


def test_observations_from_remembered_plans_equal_the_general_decision():
    rng = random.Random(7)
    _PLANS.clear()
    events = [{"name": "gen_ai.user.message", "time": None, "attributes": {"content": "hi"}}]
    hits = 0
    for i in range(3000):
        attrs = _random_attrs(rng)
        plan_known = (tuple(attrs), attrs.get("gen_ai.operation.name"), attrs.get("openinference.span.kind"),
                      attrs.get("ai.operationId")) in _PLANS
        hits += plan_known
        args = ("1" * 16, None if i % 3 else "2" * 16, rng.choice(["execute_tool t", "op", "tool.search.web", None]),
                rng.choice([1, None]), "2026-01-01T00:00:00.000000Z", None, attrs,
                events if i % 5 == 0 else [], i % 7 == 0, rng.choice(["boom", None]), {"service.name": "s"},
                rng.choice(["scope", None]), None)
        _same(observation_of(*args), _general_observation(*args))
    assert hits > 1000  # most spans were built from a plan made for an earlier span


def test_spans_with_the_same_keys_but_other_deciding_values_do_not_share_a_plan():
    _PLANS.clear()
    for op, kind in [("chat", "GENERATION"), ("execute_tool", "TOOL"), ("invoke_agent", "AGENT"), ("x", "SPAN")]:
        attrs = {"gen_ai.operation.name": op, "input.value": '{"q": 1}', "gen_ai.tool.name": "t"}
        obs = observation_of("1" * 16, None, "s", None, None, None, attrs, [], False, None, {}, None, None)
        assert obs.type == kind
    # a list where the type is decided cannot key a plan: decided again, and the same as the general way
    attrs = {"gen_ai.operation.name": ["chat"], "gen_ai.request.model": "m"}
    args = ("1" * 16, None, "s", None, None, None, attrs, [], False, None, {}, None, None)
    _same(observation_of(*args), _general_observation(*args))
    assert plan_of(attrs)[0] == "SPAN"


def test_payload_and_usage_plans_read_what_the_general_functions_read():
    rng = random.Random(3)
    for _ in range(2000):
        attrs = _random_attrs(rng)
        for obs_type in ("TOOL", "GENERATION", "AGENT", "SPAN", "CHAIN"):
            plan = payload_plan(obs_type, attrs)
            if plan is not None:  # flattened messages: only the general path reads them
                # same keys and deciding values (as a remembered plan's), other values elsewhere
                other = {key: value if key in VALUES else rng.choice(OTHER_VALUES) for key, value in attrs.items()}
                for values in (attrs, other):
                    assert planned_payloads(plan, values, []) == payloads(obs_type, values, [])
        assert planned_usage(usage_plan(attrs), attrs) == usage(attrs)
    assert usage_plan({"other": 1}) == ()
    assert usage_plan({"gen_ai.usage.output_tokens": None, "llm.token_count.total": 3}) == (
        ("output", ("gen_ai.usage.output_tokens",)), ("total", ("llm.token_count.total",)))


@pytest.mark.parametrize("raw", [
    [{"key": "n", "value": {"intValue": "12"}}, {"key": "s", "value": {"stringValue": "x"}}],
    [{"key": "n", "value": {"intValue": 12}}, {"key": "m", "value": {"intValue": "-3"}}],
    [{"key": "n", "value": {"intValue": "x"}}, {"key": "m", "value": {"intValue": "9" * 5000}}],
    [{"key": "n", "value": {"intValue": " 7 "}}, {"key": "m", "value": {"intValue": None}}],
    [{"key": "n", "value": {"intValue": "1", "stringValue": "s"}}, {"key": "d", "value": {"doubleValue": "2.5"}}],
])
def test_token_counts_decode_as_any_value_reads_them(raw):
    assert decode_attributes(raw, "attributes") == {item["key"]: any_value(item["value"]) for item in raw}


def _reference_trace_ids(spans):
    ids = []
    try:
        ids += map(_flat_trace_id, spans)
    except _Unsure:
        return ids, "unsure"
    return ids, None


def _listed_trace_ids(spans):
    ids = []
    try:
        _span_trace_ids(spans, ids)
    except _Unsure:
        return ids, "unsure"
    return ids, None


@pytest.mark.parametrize("spans", [
    [{"traceId": "a" * 32}, {"traceId": "a" * 32}, {"traceId": "b" * 32}],  # the short way
    [{"traceId": "a" * 32}, {"trace_id": "b" * 32}],  # another spelling: span by span
    [{"traceId": "a" * 32}, {"traceId": "b" * 32, "spanID": "1" * 16}],  # Jaeger-style: unsure
    [{"traceId": "a" * 32}, {"traceId": "zz"}],  # not hex: normalized span by span
    [{"traceId": "a" * 32}, {"traceId": ["a"]}],  # an id that is a list
    [{"traceId": "a" * 32}, 5, "x"],  # not spans
    [{"traceId": 12}, {"context": {"trace_id": "c" * 32}}],
    [],
])
def test_the_first_pass_reads_a_list_of_spans_as_span_by_span(spans):
    assert _listed_trace_ids(spans) == _reference_trace_ids(spans)


def _reference_order(observations, keys):
    """``order_observations`` as it was before the walk without a seen-set (kept here to compare)."""
    ids = [o.id for o in observations]
    present = set(ids)
    children = {}
    for i, o in enumerate(observations):
        parent = o.parent_id
        if parent not in present or parent == ids[i]:
            parent = None
        children.setdefault(parent, []).append(i)
    for kids in children.values():
        kids.sort(key=keys.__getitem__)
    out, seen = [], set()
    stack = list(reversed(children.get(None, [])))
    while stack:
        i = stack.pop()
        if i in seen:
            continue
        seen.add(i)
        out.append(i)
        stack.extend(reversed(children.get(ids[i], [])))
    out.extend(i for i in range(len(observations)) if i not in seen)
    return [observations[i] for i in out]


class _Node:
    def __init__(self, id, parent_id, start_time):
        self.id, self.parent_id, self.start_time = id, parent_id, start_time


def test_the_tree_order_is_the_same_with_unique_repeated_and_missing_ids():
    rng = random.Random(11)
    times = [None, "2026-01-01T00:00:01Z", "2026-01-01T00:00:02Z", "2026-01-01T00:00:01Z", "bad"]
    for n, _ in itertools.product(range(1, 14), range(60)):
        names = [f"o{i}" for i in range(n)]
        if rng.random() < 0.3:  # repeated ids (the walk with a seen-set)
            names = [rng.choice(names) for _ in names]
        if rng.random() < 0.05:
            names[rng.randrange(n)] = None
        nodes = [_Node(names[i], rng.choice([None, "missing", *names]), rng.choice(times)) for i in range(n)]
        keys = [start_key(o.start_time) for o in nodes]
        expected = _reference_order(nodes, keys)
        assert order_observations(nodes, keys) == expected
        assert order_observations(nodes) == expected
