"""Chat logs in OpenAI's message format: each record with a ``messages`` list is one trace.

Each assistant turn becomes a GENERATION whose input is the conversation up to that turn and whose
output is the assistant message. Each tool call becomes a TOOL observation (child of the turn that
made it) with the call's arguments as input and the matching ``tool`` message as output. A tool
message that no call announced (some loggers drop ``tool_calls``) is still a TOOL observation, named
by its ``name`` field or ``tool``, with no input. Other record fields go to the trace's metadata.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import orjson

from evalkit.contracts.trace import Observation, Trace
from evalkit.traces.source import SourceValue

# Record fields tried, in order, for the trace id; the first that is present wins. A plain ``id`` comes
# last because chat-log exports often reuse it for the conversation's root ("root" in every record).
_ID_KEYS = ("trace_id", "conversation_id", "session_id", "lsmith_id", "run_id", "id")


def looks_like_openai_chat(value: Any) -> bool:
    """A record whose ``messages`` is a list of ``{role, ...}`` objects."""
    if not isinstance(value, dict):
        return False
    messages = value.get("messages")
    return (isinstance(messages, list) and bool(messages)
            and all(isinstance(m, dict) and "role" in m for m in messages[:10]))


def _maybe_json(text: Any) -> Any:
    """Tool arguments and results are often JSON text: parse objects and arrays, keep the rest."""
    if isinstance(text, str) and text[:1] in ("{", "["):
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            return text
    return text


def _text(content: Any) -> Any:
    """Content as plain text when it is a list of text parts, else unchanged."""
    if isinstance(content, list) and all(isinstance(p, dict) and p.get("type") == "text" for p in content):
        return "".join(str(p.get("text", "")) for p in content)
    return content


def _trace_id(sv: SourceValue, record: dict[str, Any]) -> str:
    for key in _ID_KEYS:
        value = record.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
            return str(value)
    where = sv.line if sv.line is not None else sv.index
    return f"record-{where}"


def _trace(sv: SourceValue, seen: dict[str, int]) -> Trace:
    record = sv.value
    messages: list[dict[str, Any]] = record["messages"]
    trace_id = _trace_id(sv, record)
    if trace_id in seen:
        seen[trace_id] += 1
        trace_id = f"{trace_id}#{seen[trace_id]}"
    else:
        seen[trace_id] = 1
    observations: list[Observation] = []
    calls: dict[str, int] = {}  # tool_call_id -> index of its TOOL observation
    model = record.get("model")
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict) or "role" not in msg:
            raise sv.error("each message must be an object with a role", f"messages[{i}]")
        role = msg["role"]
        if role == "assistant":
            gen_id = f"m{i}"
            fields: dict[str, Any] = {"id": gen_id, "type": "GENERATION", "name": msg.get("name") or "assistant",
                                      "input": messages[:i], "output": msg}
            if isinstance(model, str):
                fields["model"] = model
            observations.append(Observation(**fields))
            for j, call in enumerate(msg.get("tool_calls") or []):
                if not isinstance(call, dict):
                    raise sv.error("tool call must be an object", f"messages[{i}].tool_calls[{j}]")
                fn = call.get("function") or {}
                call_id = call.get("id") or f"{gen_id}.call{j}"
                tool = Observation(id=f"{gen_id}.call{j}", type="TOOL", name=fn.get("name") or "tool",
                                   input=_maybe_json(fn.get("arguments")), parent_id=gen_id,
                                   metadata={"toolCallId": call_id})
                calls[call_id] = len(observations)
                observations.append(tool)
        elif role in ("tool", "function"):
            output = _maybe_json(_text(msg.get("content")))
            idx = calls.pop(msg.get("tool_call_id"), None) if msg.get("tool_call_id") else None
            if idx is not None:
                observations[idx] = observations[idx].model_copy(update={"output": output})
                observations[idx].model_fields_set.add("output")
            else:
                observations.append(Observation(id=f"m{i}", type="TOOL", name=msg.get("name") or "tool",
                                                output=output))
    first_user = next((m for m in messages if m.get("role") == "user"), None)
    last_assistant = next((m for m in reversed(messages) if m.get("role") == "assistant"), None)
    metadata = {k: v for k, v in record.items() if k not in ("messages",)}
    metadata["source"] = "openai-chat"
    fields = {"id": trace_id, "observations": observations, "metadata": metadata}
    if isinstance(record.get("name"), str):
        fields["name"] = record["name"]
    if first_user is not None:
        fields["input"] = _text(first_user.get("content"))
    if last_assistant is not None:
        fields["output"] = _text(last_assistant.get("content"))
    return Trace(**fields)


def read_openai_chat(values: Iterable[SourceValue]) -> Iterator[Trace]:
    """Traces from chat-log records (see the module docstring)."""
    seen: dict[str, int] = {}
    for sv in values:
        if not looks_like_openai_chat(sv.value):
            raise sv.error("expected a record with a non-empty messages list of {role, content} objects",
                           "messages")
        yield _trace(sv, seen)
