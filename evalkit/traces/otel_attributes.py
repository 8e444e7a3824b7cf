"""What OTel span attributes say: the GenAI / OpenInference (and Vercel AI SDK) type, payloads and usage.

The attributes come decoded (``evalkit.traces.otel_values``); nothing here raises.
"""

from __future__ import annotations

import math
import operator
import re
from typing import Any

from evalkit.errors import StrictJSONError
from evalkit.io.strict_json import loads_strict
from evalkit.traces.tool_spans import tool_convention
from evalkit.traces.vercel_ai import VERCEL_USAGE, vercel_payload_keys, vercel_type, with_tool_calls


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
"""No source gave this payload (as opposed to a payload that is ``null``)."""

_EVENT_ROLE = re.compile(r"gen_ai\.(\w+)\.message")

OP_TYPES = {
    "chat": "GENERATION", "generate_content": "GENERATION", "text_completion": "GENERATION",
    "call_llm": "GENERATION", "embeddings": "EMBEDDING", "retrieval": "RETRIEVER", "execute_tool": "TOOL",
    "invoke_agent": "AGENT", "create_agent": "AGENT", "invoke_workflow": "CHAIN",
}
"""``gen_ai.operation.name`` -> observation type."""

OPENINFERENCE_TYPES = {
    "LLM": "GENERATION", "EMBEDDING": "EMBEDDING", "CHAIN": "CHAIN", "RETRIEVER": "RETRIEVER",
    "RERANKER": "RETRIEVER", "TOOL": "TOOL", "AGENT": "AGENT", "GUARDRAIL": "GUARDRAIL",
    "EVALUATOR": "EVALUATOR", "PROMPT": "SPAN",
}
"""``openinference.span.kind`` -> observation type."""

_USAGE_KEYS = {
    "input": ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt"),
    "output": ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens", "llm.token_count.completion"),
    "total": ("gen_ai.usage.total_tokens", "llm.usage.total_tokens", "llm.token_count.total"),
}
# The Vercel AI SDK's own keys come last: a span with GenAI usage too gives the same numbers.
_USAGE_KEYS = {field: keys + VERCEL_USAGE[field] for field, keys in _USAGE_KEYS.items()}
USAGE_KEYS = frozenset(key for keys in _USAGE_KEYS.values() for key in keys)
"""Every attribute :func:`usage` reads."""

# Non-standard fallbacks: any-agent (gen_ai.tool.args, gen_ai.output) and Google ADK (gcp.vertex.agent.*).
_TOOL_IN = ("gen_ai.tool.args", "gcp.vertex.agent.tool_call_args")
_TOOL_OUT = ("gen_ai.output", "gcp.vertex.agent.tool_response")
_LLM_IN = ("gcp.vertex.agent.llm_request",)
_LLM_OUT = ("gen_ai.output", "gcp.vertex.agent.llm_response")
_INDEXED = ("gen_ai.prompt.", "gen_ai.completion.", "llm.input_messages.", "llm.output_messages.")
"""Prefixes of messages flattened into ``prefix.{i}.field`` attributes (see :func:`indexed`)."""


# --- payloads -----------------------------------------------------------------------------------

def maybe_json(value: Any) -> Any:
    """A JSON string that holds an object or array, parsed; anything else unchanged."""
    if value.__class__ is not str and not isinstance(value, str):
        return value
    head = value[:1]
    if head != "{" and head != "[" and value.lstrip()[:1] not in _OPENERS:
        return value
    try:
        return loads_strict(value)  # an object or an array, as the text starts with one
    except StrictJSONError:
        return value


_OPENERS = ("{", "[")


def indexed(attrs: dict[str, Any], prefix: str) -> list[Any] | None:
    """Flattened ``prefix.{i}.a.b`` attributes as a list ordered by ``i`` (nested indices become lists)."""
    keys = [key for key in attrs if key.startswith(prefix)]
    if not keys:  # the usual case: one pass in C over the keys
        return None
    tree: dict[str, Any] = {}
    for key in keys:
        value = attrs[key]
        parts = key[len(prefix):].split(".")
        if not parts[0].isdigit():
            continue
        node = tree
        for part in parts[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {} if child is None else {"": child}
            node = child
        if isinstance(node.get(parts[-1]), dict):
            node[parts[-1]][""] = value
        else:
            node[parts[-1]] = value
    return _listify(tree) if tree else None


def _listify(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    out = {k: _listify(v) for k, v in node.items()}
    if out and all(k.isdigit() for k in out):
        return [out[k] for k in sorted(out, key=int)]
    return out


def _openinference_messages(attrs: dict[str, Any], prefix: str) -> Any:
    items = indexed(attrs, prefix)
    if items is None:
        return MISSING
    return [item.get("message", item) if isinstance(item, dict) else item for item in items]


def _event_messages(events: list[dict[str, Any]]) -> tuple[Any, Any]:
    """Legacy GenAI events: ``gen_ai.{role}.message`` are inputs, ``gen_ai.choice`` outputs."""
    inputs: list[Any] = []
    outputs: list[Any] = []
    for event in events:
        name, attrs = event.get("name") or "", event.get("attributes") or {}
        body = {k: maybe_json(v) for k, v in attrs.items() if k != "gen_ai.system"}
        if name == "gen_ai.choice":
            outputs.append(body)
        elif match := _EVENT_ROLE.fullmatch(name):
            inputs.append({"role": body.pop("role", match.group(1)), **body})
        elif name in ("gen_ai.content.prompt", "gen_ai.content.completion"):
            key = "gen_ai.prompt" if name.endswith("prompt") else "gen_ai.completion"
            if key in attrs:
                value = maybe_json(attrs[key])
                target = inputs if key == "gen_ai.prompt" else outputs
                target.extend(value if isinstance(value, list) else [value])
    return (inputs or MISSING), (outputs or MISSING)


def _key_lists(vercel_in: tuple[str, ...], vercel_out: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """Where each payload is looked for, in order (the Vercel AI SDK's keys last, on its spans only);
    ``llm_any``: every key a model call's input or output may come from but flattened messages
    (``ai.response.toolCalls`` is what ``vercel_ai.with_tool_calls`` reads)."""
    keys = {"tool_in": ("gen_ai.tool.call.arguments", "input.value", "tool.parameters", *_TOOL_IN, *vercel_in),
            "tool_out": ("gen_ai.tool.call.result", "output.value", *_TOOL_OUT, *vercel_out),
            "in": ("input.value", *vercel_in), "out": ("output.value", *vercel_out),
            "llm_in": ("input.value", *_LLM_IN, *vercel_in), "llm_out": ("output.value", *_LLM_OUT, *vercel_out)}
    keys["llm_any"] = (*keys["llm_in"], *keys["llm_out"], "gen_ai.input.messages", "gen_ai.output.messages",
                       "ai.response.toolCalls")
    return keys


_KEYS = _key_lists((), ())
_VERCEL_KEYS = _key_lists(*vercel_payload_keys({"ai.operationId": "ai.any"}))  # the keys of any ai.* span
_IS_INDEXED = operator.methodcaller("startswith", _INDEXED)
_TOOL_CALLS = "ai.response.toolCalls"
"""What ``vercel_ai.with_tool_calls`` reads: a span without it has no tool calls to join."""


def _first(attrs: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    """The first of ``keys`` present, None when none is."""
    for key in keys:
        if key in attrs:
            return key
    return None


def payload_plan(obs_type: str, attrs: dict[str, Any]) -> tuple[str | None, str | None, bool, bool] | None:
    """Where a span's (input, output) come from, as :func:`planned_payloads` reads them: (input key,
    output key, whether the tool calls a model call asked for may join the output, whether events fill
    a missing side); None when flattened messages (``gen_ai.prompt.0.content``) may give them.

    It depends only on the type, the attribute keys and whether the span is a Vercel AI SDK one, so
    spans with the same keys can share it (see ``evalkit.traces.otel_observation``)."""
    keys = _KEYS if "ai.operationId" not in attrs or vercel_type(attrs) is None else _VERCEL_KEYS
    if obs_type == "TOOL":
        return _first(attrs, keys["tool_in"]), _first(attrs, keys["tool_out"]), False, False
    if obs_type != "GENERATION" and obs_type != "AGENT":
        return _first(attrs, keys["in"]), _first(attrs, keys["out"]), _TOOL_CALLS in attrs, False
    if any(map(_IS_INDEXED, attrs)):  # flattened messages are rare: one pass over the keys
        return None
    inp = "gen_ai.input.messages" if "gen_ai.input.messages" in attrs else _first(attrs, keys["llm_in"])
    if "gen_ai.output.messages" in attrs:
        return inp, "gen_ai.output.messages", False, True
    return inp, _first(attrs, keys["llm_out"]), _TOOL_CALLS in attrs, True


def planned_payloads(plan: tuple[str | None, str | None, bool, bool], attrs: dict[str, Any],
                     events: list[dict[str, Any]]) -> tuple[Any, Any]:
    """The (input, output) a :func:`payload_plan` says where to find, each ``MISSING`` when none is given."""
    in_key, out_key, tool_calls, from_events = plan
    inp = MISSING if in_key is None else maybe_json(attrs[in_key])
    out = MISSING if out_key is None else maybe_json(attrs[out_key])
    if tool_calls:
        out = with_tool_calls(attrs, MISSING, out)
    if events and from_events and (inp is MISSING or out is MISSING):
        event_in, event_out = _event_messages(events)
        inp = event_in if inp is MISSING else inp
        out = event_out if out is MISSING else out
    return inp, out


def payloads(obs_type: str, attrs: dict[str, Any], events: list[dict[str, Any]]) -> tuple[Any, Any]:
    """The (input, output) of a span, each ``MISSING`` when no source gives it."""
    plan = payload_plan(obs_type, attrs)
    if plan is not None:
        return planned_payloads(plan, attrs, events)
    keys = _KEYS if "ai.operationId" not in attrs or vercel_type(attrs) is None else _VERCEL_KEYS
    inp = _llm_messages(attrs, "gen_ai.input.messages", "gen_ai.prompt.", "llm.input_messages.")
    if inp is MISSING:
        inp = _found(attrs, keys["llm_in"])
    out = _llm_messages(attrs, "gen_ai.output.messages", "gen_ai.completion.", "llm.output_messages.")
    if out is MISSING:
        out = with_tool_calls(attrs, MISSING, _found(attrs, keys["llm_out"]))
    if (inp is MISSING or out is MISSING) and events:
        event_in, event_out = _event_messages(events)
        inp = event_in if inp is MISSING else inp
        out = event_out if out is MISSING else out
    return inp, out


def _found(attrs: dict[str, Any], keys: tuple[str, ...]) -> Any:
    """The first of ``keys`` present, through :func:`maybe_json`; MISSING when none is."""
    key = _first(attrs, keys)
    return MISSING if key is None else maybe_json(attrs[key])


def _llm_messages(attrs: dict[str, Any], current: str, legacy: str, openinference: str) -> Any:
    """One side of a model call's messages, when some attribute is flattened: the current semantic
    conventions' JSON attribute, else the legacy ``gen_ai.prompt.N.*`` or OpenInference
    ``llm.*_messages.N.*`` flattening; ``MISSING`` when none holds it."""
    found = maybe_json(attrs[current]) if current in attrs else MISSING
    if found is MISSING:
        found = indexed(attrs, legacy) or MISSING
    if found is MISSING:
        found = _openinference_messages(attrs, openinference)
    return found

# --- type, model, usage -------------------------------------------------------------------------

def observation_type(attrs: dict[str, Any]) -> str:
    """GenAI operation, else OpenInference span kind, else Vercel ``ai.operationId``, else legacy GenAI
    markers, else a ``tool.name`` attribute (TOOL), else SPAN."""
    op = attrs.get("gen_ai.operation.name")
    if isinstance(op, str) and (op_type := OP_TYPES.get(op.lower())) is not None:
        return op_type
    kind = attrs.get("openinference.span.kind")
    if isinstance(kind, str) and kind.upper() in OPENINFERENCE_TYPES:
        return OPENINFERENCE_TYPES[kind.upper()]
    if (vercel := vercel_type(attrs)) is not None:
        return vercel
    if ("gen_ai.system" in attrs or "llm.request.type" in attrs
            or any(k.startswith("gen_ai.prompt.") for k in attrs)):
        return "GENERATION"
    if op is None and tool_convention(None, attrs) is not None:  # a tool.name attribute on a plain span
        return "TOOL"
    return "SPAN"


def first_text(attrs: dict[str, Any], *keys: str) -> str | None:
    """The first non-empty string among ``keys``."""
    for key in keys:
        value = attrs.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _number(value: Any) -> int | float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value
    if isinstance(value, str):
        for kind in (int, float):
            try:
                number = kind(value)
            except ValueError:
                continue
            # "Infinity" or "NaN" is no token count; the attribute itself keeps the text.
            return number if kind is int or math.isfinite(number) else None
    return None


UsagePlan = tuple[tuple[str, tuple[str, ...]], ...]


def usage_plan(attrs: dict[str, Any]) -> UsagePlan:
    """The usage keys present, per count (``input``, ``output``, ``total``), in the order they are tried;
    empty when there are none. It depends only on the keys, so spans with the same keys can share it."""
    if attrs.keys().isdisjoint(USAGE_KEYS):  # most spans are not model calls: one check in C
        return ()
    return tuple((field, present) for field, keys in _USAGE_KEYS.items()
                 if (present := tuple(key for key in keys if key in attrs)))


def planned_usage(plan: UsagePlan, attrs: dict[str, Any]) -> dict[str, int | float] | None:
    """The token usage :func:`usage` gives, reading only the keys of its :func:`usage_plan`."""
    out: dict[str, int | float] = {}
    for field, keys in plan:
        for key in keys:
            value = attrs[key]
            number = value if value.__class__ is int else None if value is None else _number(value)
            if number is not None:
                out[field] = number
                break
    if "total" not in out and "input" in out and "output" in out:
        out["total"] = out["input"] + out["output"]
    return out or None


def usage(attrs: dict[str, Any]) -> dict[str, int | float] | None:
    """Token usage ``{input, output, total}`` with only the keys present; None when there is none."""
    return planned_usage(usage_plan(attrs), attrs)
