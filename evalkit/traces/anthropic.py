"""Anthropic Messages API logs: message lists, request/response pairs and VCR cassettes of them.

Accepted values (one per JSONL line, array element or document):

* a message list ``{messages: [{role, content: [blocks]}], system?, model?}``: one trace per record,
  one GENERATION per assistant message (input = the messages before it);
* a request/response pair ``{request: BODY, response: BODY}`` (a body may sit under ``parsed_body`` or
  ``body``, as a JSON string or an object): one GENERATION per pair;
* a VCR cassette ``{interactions: [{request, response}, ...]}`` (pydantic-ai, vcrpy): every
  interaction is a pair.

Each request repeats the conversation so far, and nothing else says which calls belong together, so
pairs are grouped into conversations by shared message prefix: a request continues the conversation
whose latest request is a proper prefix of its messages (the longest such prefix; on a tie, the
conversation extended last). One trace per conversation.

``tool_use`` blocks become TOOL observations (children of the GENERATION that made them, input = the
block's ``input``); the ``tool_result`` with the same ``tool_use_id`` fills the output, and
``is_error: true`` makes the TOOL's level ERROR. A result whose call is not in the file is still a
TOOL observation, with no input. Content blocks of other types stay in the payloads as given.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from evalkit.contracts.trace import Observation, Trace
from evalkit.errors import StrictJSONError
from evalkit.io.strict_json import loads_strict
from evalkit.traces.observation_edits import updated
from evalkit.traces.otel_attributes import maybe_json
from evalkit.traces.report import ImportContext, ImportReport
from evalkit.traces.source import SourceValue

__all__ = ["looks_like_anthropic", "read_anthropic"]

# Content block types only the Anthropic Messages API uses (text and image blocks exist elsewhere too).
_ANTHROPIC_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use",
                               "web_search_tool_result", "document"})
# Block types this importer understands; others are kept in the payloads and counted in the report.
_KNOWN_BLOCKS = _ANTHROPIC_BLOCKS | {"text", "image"}
_ID_KEYS = ("trace_id", "conversation_id", "session_id", "id")
_USAGE_NAMES = {"input_tokens": "input", "output_tokens": "output",
                "cache_read_input_tokens": "cache_read_input",
                "cache_creation_input_tokens": "cache_creation_input"}


def _body(part: Any) -> Any:
    """The JSON body of a request or response: itself, or under ``parsed_body`` / ``body`` (maybe as text)."""
    if not isinstance(part, dict):
        return None
    for key in ("parsed_body", "body"):
        if key in part:
            inner = part[key]
            if isinstance(inner, dict) and "string" in inner and len(inner) == 1:  # vcrpy: {body: {string}}
                inner = inner["string"]
            if isinstance(inner, str | bytes):
                try:
                    inner = loads_strict(inner)
                except StrictJSONError:
                    return None
            return inner if isinstance(inner, dict) else None
    return part


def _has_anthropic_blocks(messages: Any) -> bool:
    return isinstance(messages, list) and any(
        isinstance(m, dict) and isinstance(m.get("content"), list)
        and any(isinstance(b, dict) and isinstance(b.get("type"), str) and b["type"] in _ANTHROPIC_BLOCKS
                for b in m["content"])
        for m in messages)


def _is_pair(value: Any) -> bool:
    if not isinstance(value, dict) or "request" not in value or "response" not in value:
        return False
    request, response = _body(value["request"]), _body(value["response"])
    return (isinstance(request, dict) and isinstance(request.get("messages"), list)
            and isinstance(response, dict) and (response.get("type") == "message" or "content" in response))


def looks_like_anthropic(value: Any) -> bool:
    """A cassette of Messages API calls, a request/response pair, or a message list with Anthropic blocks."""
    if not isinstance(value, dict):
        return False
    interactions = value.get("interactions")
    if isinstance(interactions, list):
        return bool(interactions) and _is_pair(interactions[0])
    if _is_pair(value):
        return True
    messages = value.get("messages")
    if not (isinstance(messages, list) and messages and all(isinstance(m, dict) and "role" in m
                                                             for m in messages[:10])):
        return False
    # A top-level system prompt is Anthropic's shape; OpenAI puts it in a system message.
    return _has_anthropic_blocks(messages) or (
        isinstance(value.get("system"), str | list) and not any(m.get("role") == "system" for m in messages))


# --- one API call, from either shape ---------------------------------------------------------------

@dataclass
class _Call:
    """One model call: the messages sent and the reply."""

    sv: SourceValue
    path: str
    messages: list[Any]
    content: Any
    model: str | None = None
    response_id: str | None = None
    usage: dict[str, Any] | None = None
    system: Any = None
    request_extra: dict[str, Any] = field(default_factory=dict)
    response_extra: dict[str, Any] = field(default_factory=dict)
    http: dict[str, Any] = field(default_factory=dict)
    had_headers: bool = False


def _call_from_pair(sv: SourceValue, pair: Any, path: str) -> _Call:
    join = (lambda key: f"{path}.{key}") if path else (lambda key: key)
    if not isinstance(pair, dict):
        raise sv.error("must be an object with request and response", path or None)
    request, response = _body(pair.get("request")), _body(pair.get("response"))
    if request is None or not isinstance(request.get("messages"), list):
        raise sv.error("request has no messages list (looked in parsed_body, body and the request itself)",
                       join("request"))
    if response is None or "content" not in response:
        status = pair.get("response", {}).get("status") if isinstance(pair.get("response"), dict) else None
        raise sv.error(f"response has no content (status {status})" if status else "response has no content",
                       join("response"))
    model = response.get("model") or request.get("model")
    usage = response.get("usage")
    return _Call(
        sv=sv, path=path, messages=request["messages"], content=response["content"],
        model=model if isinstance(model, str) else None,
        response_id=response["id"] if isinstance(response.get("id"), str) else None,
        usage=usage if isinstance(usage, dict) else None, system=request.get("system"),
        request_extra={k: v for k, v in request.items() if k not in ("messages", "system")},
        response_extra={k: v for k, v in response.items() if k not in ("content", "usage", "id", "model")},
        http=_http(pair),
        had_headers=any(isinstance(pair.get(k), dict) and bool(pair[k].get("headers"))
                        for k in ("request", "response")),
    )


def _http(pair: dict[str, Any]) -> dict[str, Any]:
    """Method, URI and status of a recorded call; headers are left out (transport detail, maybe secrets)."""
    request, response = pair.get("request"), pair.get("response")
    out = {k: request[k] for k in ("method", "uri") if isinstance(request, dict) and k in request}
    if isinstance(response, dict) and "status" in response:
        out["status"] = response["status"]
    return out


def anthropic_usage(raw: dict[str, Any] | None) -> dict[str, int | float] | None:
    """Messages API usage in evalkit's names (``input``, ``output``, ``cache_read_input``, ...) plus ``total``."""
    if not raw:
        return None
    out: dict[str, int | float] = {}
    for key, name in _USAGE_NAMES.items():
        value = raw.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            out[name] = value
    if "input" in out and "output" in out:
        out["total"] = out["input"] + out["output"]
    return out or None


def _text(content: Any) -> Any:
    """Content as plain text when it is text blocks only, else unchanged."""
    if isinstance(content, list) and content and all(
            isinstance(b, dict) and b.get("type") == "text" for b in content):
        return "".join(str(b.get("text", "")) for b in content)
    return content


# --- building a trace from the calls of one conversation -------------------------------------------

def _blocks(message: Any) -> list[Any]:
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, list) else []


def _count_blocks(report: ImportReport, messages: Iterable[Any]) -> None:
    for message in messages:
        for block in _blocks(message):
            kind = block.get("type") if isinstance(block, dict) else None
            if not isinstance(kind, str) or kind not in _KNOWN_BLOCKS:
                report.kept_unknown(f"content blocks of type {kind!r}", "part of the message payload")


def _trace(trace_id: str, calls: list[_Call], extra_results: list[Any], metadata: dict[str, Any],
           report: ImportReport) -> Trace:
    """One trace: a GENERATION per call, a TOOL per ``tool_use``, outputs from the ``tool_result`` blocks.

    ``extra_results`` are messages after the last call (a message list may end with tool results).
    """
    observations: list[Observation] = []
    tools: dict[str, int] = {}  # tool_use id -> index of its TOOL observation
    used_ids: set[str] = set()

    def unique(candidate: str) -> str:
        obs_id, n = candidate, 1
        while obs_id in used_ids:
            n += 1
            obs_id = f"{candidate}#{n}"
        used_ids.add(obs_id)
        return obs_id

    def fill_results(messages: Iterable[Any], where: str) -> None:
        for m, message in enumerate(messages):
            for b, block in enumerate(_blocks(message)):
                if not isinstance(block, dict) or block.get("type") != "tool_result":
                    continue
                output = maybe_json(_text(block.get("content")))
                update: dict[str, Any] = {"output": output}
                if block.get("is_error") is True:
                    update["level"] = "ERROR"
                    update["status_message"] = output if isinstance(output, str) else "tool_result is_error"
                idx = tools.pop(block.get("tool_use_id"), None)
                if idx is None:
                    report.kept_unknown("tool_result blocks whose tool_use is not in the file",
                                        "TOOL with no input")
                    observations.append(Observation(
                        id=unique(f"{where}.result{m}.{b}"), type="TOOL", name="tool",
                        metadata={"toolCallId": block.get("tool_use_id")}, **update))
                    continue
                observations[idx] = updated(observations[idx], **update)

    seen_messages = 0
    for k, call in enumerate(calls):
        fill_results(call.messages[seen_messages:], f"call{k}")
        _count_blocks(report, [*call.messages[seen_messages:], {"content": call.content}])
        seen_messages = len(call.messages) + 1  # the reply comes back as the next request's message
        gen_id = unique(call.response_id or f"call{k}")
        metadata_obs: dict[str, Any] = {}
        if call.system is not None:
            metadata_obs["system"] = call.system
        if call.request_extra:
            metadata_obs["request"] = call.request_extra
        if call.response_extra:
            metadata_obs["response"] = call.response_extra
        if call.usage:
            metadata_obs["usage"] = call.usage
        if call.http:
            metadata_obs["http"] = call.http
        fields: dict[str, Any] = {"id": gen_id, "type": "GENERATION", "name": "anthropic.messages",
                                  "input": call.messages, "output": call.content}
        if call.model:
            fields["model"] = call.model
        if (usage := anthropic_usage(call.usage)) is not None:
            fields["usage"] = usage
        if metadata_obs:
            fields["metadata"] = metadata_obs
        observations.append(Observation(**fields))
        for b, block in enumerate(call.content if isinstance(call.content, list) else []):
            if not isinstance(block, dict) or block.get("type") not in ("tool_use", "server_tool_use"):
                continue
            call_id = block.get("id") if isinstance(block.get("id"), str) else None
            tool_fields: dict[str, Any] = {
                "id": unique(call_id or f"{gen_id}.tool{b}"), "type": "TOOL",
                "name": block.get("name") if isinstance(block.get("name"), str) else "tool",
                "input": block.get("input"), "parent_id": gen_id}
            extra = {key: v for key, v in block.items() if key not in ("type", "id", "name", "input")}
            tool_fields["metadata"] = {"toolCallId": call_id, **extra}
            if call_id:
                tools[call_id] = len(observations)
            observations.append(Observation(**tool_fields))
    fill_results(extra_results, f"call{len(calls)}")
    _count_blocks(report, extra_results)
    first_user = next((m for m in calls[0].messages if isinstance(m, dict) and m.get("role") == "user"), None)
    fields = {"id": trace_id, "observations": observations, "metadata": {**metadata, "source": "anthropic"}}
    if first_user is not None:
        fields["input"] = _text(first_user.get("content"))
    fields["output"] = _text(calls[-1].content)
    return Trace(**fields)


# --- grouping calls into conversations -------------------------------------------------------------

@dataclass
class _Conversation:
    calls: list[_Call]
    touched: int  # order of the last extension, to break ties towards the most recent


def _group(calls: list[_Call]) -> list[list[_Call]]:
    """Conversations in order of their first call (see the module docstring)."""
    conversations: list[_Conversation] = []
    for n, call in enumerate(calls):
        best: _Conversation | None = None
        for conv in conversations:
            last = conv.calls[-1].messages
            if len(last) < len(call.messages) and call.messages[:len(last)] == last and (
                    best is None or len(last) > len(best.calls[-1].messages)
                    or (len(last) == len(best.calls[-1].messages) and conv.touched > best.touched)):
                best = conv
        if best is None:
            conversations.append(_Conversation([call], n))
        else:
            best.calls.append(call)
            best.touched = n
    return [c.calls for c in conversations]


def _record_id(sv: SourceValue, record: dict[str, Any]) -> str:
    for key in _ID_KEYS:
        value = record.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
            return str(value)
    return f"record-{sv.line if sv.line is not None else sv.index}"


def _message_list_trace(sv: SourceValue, record: dict[str, Any], report: ImportReport) -> Trace:
    messages = record["messages"]
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or "role" not in message:
            raise sv.error("each message must be an object with a role", f"messages[{i}]")
    model = record.get("model") if isinstance(record.get("model"), str) else None
    calls = [_Call(sv=sv, path=f"messages[{i}]", messages=messages[:i], content=m.get("content"), model=model,
                   system=record.get("system"))
             for i, m in enumerate(messages) if m["role"] == "assistant"]
    last = max((i for i, m in enumerate(messages) if m["role"] == "assistant"), default=-1)
    metadata = {k: v for k, v in record.items() if k not in ("messages", "system")}
    if not calls:
        raise sv.error("no assistant message: nothing the model said to import", "messages")
    return _trace(_record_id(sv, record), calls, messages[last + 1:], metadata, report)


def read_anthropic(values: Iterable[SourceValue], context: ImportContext | None = None) -> Iterator[Trace]:
    """Traces from Anthropic Messages API logs (see the module docstring).

    Message-list records come out as they are read; request/response pairs (alone or in cassettes) are
    grouped over the whole input and come out at the end, in order of each conversation's first call.

    Raises:
        evalkit.errors.InputError: a value of another shape, a pair without request messages or
            response content, or two conversations with the same first response id.
    """
    report = context.report if context is not None else ImportReport()
    calls: list[_Call] = []
    seen: set[str] = set()
    for sv in values:
        value = sv.value
        if isinstance(value, dict) and isinstance(value.get("interactions"), list):
            for i, pair in enumerate(value["interactions"]):
                calls.append(_call_from_pair(sv, pair, f"interactions[{i}]"))
        elif isinstance(value, dict) and "request" in value and "response" in value:
            calls.append(_call_from_pair(sv, value, ""))
        elif isinstance(value, dict) and isinstance(value.get("messages"), list) and value["messages"]:
            trace = _message_list_trace(sv, value, report)
            if trace.id in seen:
                raise sv.error(f"trace id {trace.id!r} used twice", "id")
            seen.add(trace.id)
            yield trace
        else:
            raise sv.error("expected an Anthropic message list {messages, system?}, a {request, response} "
                           "pair or a cassette {interactions: [...]}")
    with_headers = sum(1 for c in calls if c.had_headers)
    if with_headers:
        report.skipped("HTTP headers of recorded API calls (transport detail, may hold secrets)",
                       n=with_headers)
    for n, conversation in enumerate(_group(calls)):
        first = conversation[0]
        trace_id = first.response_id or f"conversation-{n}"
        if trace_id in seen:
            raise first.sv.error(f"trace id {trace_id!r} used twice", first.path or None)
        seen.add(trace_id)
        where = first.sv.line if first.sv.line is not None else first.sv.index
        metadata: dict[str, Any] = {"calls": len(conversation), "firstCall": first.path or None}
        if where is not None:
            metadata["firstRecord"] = where
        yield _trace(trace_id, conversation, [], {k: v for k, v in metadata.items() if v is not None}, report)
