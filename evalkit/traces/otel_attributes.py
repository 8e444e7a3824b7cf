"""Decoding OTel span fields: attribute values, ids, times, and the GenAI / OpenInference payloads.

Helpers here raise ``BadField`` (a message plus the field path below the span); the importer in
``evalkit.traces.otel`` turns it into a located ``InputError``.
"""

from __future__ import annotations

import math
import operator
import re
from typing import Any

from evalkit.errors import StrictJSONError
from evalkit.io.strict_json import loads_strict
from evalkit.traces.otel_ids import BadField
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
_USAGE_ANY = frozenset(key for keys in _USAGE_KEYS.values() for key in keys)

# Non-standard fallbacks: any-agent (gen_ai.tool.args, gen_ai.output) and Google ADK (gcp.vertex.agent.*).
_TOOL_IN = ("gen_ai.tool.args", "gcp.vertex.agent.tool_call_args")
_TOOL_OUT = ("gen_ai.output", "gcp.vertex.agent.tool_response")
_LLM_IN = ("gcp.vertex.agent.llm_request",)
_LLM_OUT = ("gen_ai.output", "gcp.vertex.agent.llm_response")
_INDEXED = ("gen_ai.prompt.", "gen_ai.completion.", "llm.input_messages.", "llm.output_messages.")
"""Prefixes of messages flattened into ``prefix.{i}.field`` attributes (see :func:`indexed`)."""


# --- attribute values ---------------------------------------------------------------------------

def any_value(value: Any) -> Any:
    """The plain value of an OTLP ``AnyValue`` (``{"stringValue": ...}`` and friends)."""
    if not isinstance(value, dict):
        return value
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        return _to_number(value["intValue"], int)
    if "doubleValue" in value:
        return _to_number(value["doubleValue"], float)
    if "boolValue" in value:
        return value["boolValue"]
    if "arrayValue" in value:
        return [any_value(v) for v in _values(value["arrayValue"], "arrayValue")]
    if "kvlistValue" in value:
        out = {}
        for i, kv in enumerate(_values(value["kvlistValue"], "kvlistValue")):
            if not isinstance(kv, dict) or not isinstance(kv.get("key"), str):
                raise BadField("kvlistValue entry must be an object with a string key",
                               f"kvlistValue.values[{i}]")
            out[kv["key"]] = any_value(kv.get("value"))
        return out
    if "bytesValue" in value:
        return value["bytesValue"]
    return value or None


def _values(container: Any, name: str) -> list[Any]:
    """The ``values`` list of an OTLP ``arrayValue`` / ``kvlistValue``."""
    if container is None:
        return []
    values = container.get("values") if isinstance(container, dict) else MISSING
    if values is None:
        return []
    if not isinstance(values, list):
        raise BadField(f"{name} must be an object with a list of values", name)
    return values


def _to_number(value: Any, kind: type) -> Any:
    """The number a string holds; the string itself when it holds none, or none a double can
    hold exactly enough to write back ("NaN", "Infinity", "1e400"): kept as written, never changed."""
    if isinstance(value, str):
        try:
            number = kind(value)
        except ValueError:
            return value
        return number if kind is not float or math.isfinite(number) else value
    return value


def _jaeger_value(tag: dict[str, Any]) -> Any:
    kind, value = tag.get("type"), tag.get("value")
    if kind == "int64":
        return _to_number(value, int)
    if kind == "float64":
        return _to_number(value, float)
    if kind == "bool" and isinstance(value, str):
        return value.lower() == "true"
    return value


def decode_attributes(raw: Any, path: str) -> dict[str, Any]:
    """A plain dict from a plain map, an OTLP ``[{key, value}]`` list or Jaeger ``[{key, type, value}]`` tags."""
    if raw is None:
        return {}
    if isinstance(raw, dict):
        return dict(raw)
    if not isinstance(raw, list):
        raise BadField("attributes must be an object or a list of {key, value}", path)
    out: dict[str, Any] = {}
    for i, item in enumerate(raw):
        key = item.get("key") if item.__class__ is dict or isinstance(item, dict) else None
        if key.__class__ is not str and not isinstance(key, str):
            raise BadField("attribute must be an object with a string key", f"{path}[{i}]")
        value = item.get("value")
        if value.__class__ is dict and "stringValue" in value:  # the usual case, as any_value reads it
            out[key] = value["stringValue"]
        elif isinstance(value, dict):
            try:
                out[key] = any_value(value)
            except BadField as exc:
                raise BadField(exc.message, f"{path}[{i}].value.{exc.path}") from None
        elif "type" in item:
            out[item["key"]] = _jaeger_value(item)
        else:
            out[item["key"]] = value
    return out


# --- span fields ---------------------------------------------------------------------------------

_ERROR_CODES = ("2", "ERROR", "STATUS_CODE_ERROR", "STATUSCODE.ERROR")
STATUS_KEYS = frozenset({"status_code", "statusCode", "status_message", "statusMessage"})
"""Status keys a span may have outside ``status``."""


def lookup(span: dict[str, Any], keys: tuple[str, ...]) -> tuple[str | None, Any]:
    """(key, value) of the first of ``keys`` present; dotted keys look one level down."""
    for key in keys:
        if key in span and "." not in key:  # a plain key; a dotted key is looked for one level down
            return key, span[key]
        head, _, tail = key.partition(".")
        if tail:
            inner = span.get(head)
            if isinstance(inner, dict) and tail in inner:
                return key, inner[tail]
    return None, None


def span_status(span: dict[str, Any]) -> tuple[bool, str | None]:
    """(is the status ERROR, its message) from ``status`` {code|status_code, message|description}."""
    status = span.get("status")
    if not status and span.keys().isdisjoint(STATUS_KEYS):  # the usual case: no status, or {}
        return False, None
    code: Any = span.get("status_code", span.get("statusCode"))
    message: Any = span.get("status_message", span.get("statusMessage"))
    if isinstance(status, dict):
        code = status.get("code", status.get("status_code", status.get("statusCode", code)))
        message = status.get("message") or status.get("description") or message
    elif isinstance(status, str | int):
        code = status
    error = code is not None and str(code).upper() in _ERROR_CODES
    return error, (message if isinstance(message, str) and message else None)


# --- payloads -----------------------------------------------------------------------------------

def maybe_json(value: Any) -> Any:
    """A JSON string that holds an object or array, parsed; anything else unchanged."""
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        try:
            parsed = loads_strict(value)
        except StrictJSONError:
            return value
        if isinstance(parsed, dict | list):
            return parsed
    return value


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


def _found(attrs: dict[str, Any], keys: tuple[str, ...]) -> Any:
    """The first of ``keys`` present, through :func:`maybe_json`; MISSING when none is."""
    for key in keys:
        if key in attrs:
            return maybe_json(attrs[key])
    return MISSING


def payloads(obs_type: str, attrs: dict[str, Any], events: list[dict[str, Any]]) -> tuple[Any, Any]:
    """The (input, output) of a span, each ``MISSING`` when no source gives it."""
    keys = _KEYS if "ai.operationId" not in attrs or vercel_type(attrs) is None else _VERCEL_KEYS
    if obs_type == "TOOL":
        return _found(attrs, keys["tool_in"]), _found(attrs, keys["tool_out"])
    if obs_type != "GENERATION" and obs_type != "AGENT":
        return _found(attrs, keys["in"]), with_tool_calls(attrs, MISSING, _found(attrs, keys["out"]))
    # Flattened messages are rare: one pass over the keys spares the four scans for them.
    flat = any(map(_IS_INDEXED, attrs))
    if not flat and attrs.keys().isdisjoint(keys["llm_any"]):  # no payload at all: one check in C
        return _event_messages(events) if events else (MISSING, MISSING)
    inp = _llm_messages(attrs, flat, "gen_ai.input.messages", "gen_ai.prompt.", "llm.input_messages.")
    if inp is MISSING:
        inp = _found(attrs, keys["llm_in"])
    out = _llm_messages(attrs, flat, "gen_ai.output.messages", "gen_ai.completion.", "llm.output_messages.")
    if out is MISSING:
        out = with_tool_calls(attrs, MISSING, _found(attrs, keys["llm_out"]))
    if (inp is MISSING or out is MISSING) and events:
        event_in, event_out = _event_messages(events)
        inp = event_in if inp is MISSING else inp
        out = event_out if out is MISSING else out
    return inp, out


def _llm_messages(attrs: dict[str, Any], flat: bool, current: str, legacy: str, openinference: str) -> Any:
    """One side of a model call's messages: the current semantic conventions' JSON attribute, else (only
    when ``flat``: some attribute is indexed) the legacy ``gen_ai.prompt.N.*`` or OpenInference
    ``llm.*_messages.N.*`` flattening; ``MISSING`` when none holds it."""
    found = maybe_json(attrs[current]) if current in attrs else MISSING
    if found is MISSING and flat:
        found = indexed(attrs, legacy) or MISSING
    if found is MISSING and flat:
        found = _openinference_messages(attrs, openinference)
    return found

# --- type, model, usage -------------------------------------------------------------------------

def observation_type(attrs: dict[str, Any]) -> str:
    """GenAI operation, else OpenInference span kind, else Vercel ``ai.operationId``, else legacy GenAI
    markers, else SPAN."""
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


def usage(attrs: dict[str, Any]) -> dict[str, int | float] | None:
    """Token usage ``{input, output, total}`` with only the keys present; None when there is none."""
    if attrs.keys().isdisjoint(_USAGE_ANY):  # most spans are not model calls: one check in C
        return None
    out: dict[str, int | float] = {}
    for field, keys in _USAGE_KEYS.items():
        if attrs.keys().isdisjoint(keys):  # a count the span does not give: one check in C
            continue
        for key in keys:
            value = attrs.get(key)
            number = None if value is None else _number(value)
            if number is not None:
                out[field] = number
                break
    if "total" not in out and "input" in out and "output" in out:
        out["total"] = out["input"] + out["output"]
    return out or None
