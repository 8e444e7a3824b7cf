"""Chat logs in OpenAI's message format: each record with a ``messages`` list is one trace.

Each assistant turn becomes a GENERATION whose input is the conversation up to that turn and whose
output is the assistant message. Each tool call becomes a TOOL observation (child of the turn that
made it) with the call's arguments as input and the matching ``tool`` message as output. A tool
message that no call announced (some loggers drop ``tool_calls``) is still a TOOL observation, named
by its ``name`` field or ``tool``, with no input. Other record fields go to the trace's metadata.

Nothing is dropped: a message whose role the importer does not know (``agent``, a misspelt
``asssistant``) becomes an EVENT named by its role, with ``metadata.role`` holding it, and is counted
in the import report with the ``--role-map`` that would translate it. A user or system message after
the last assistant turn (a question never answered, tau-bench's ``###STOP###``) is in no turn's input,
so it becomes an EVENT too. A :class:`~evalkit.traces.chat_mapping.ChatMapping` says where other
record shapes keep their messages and id, which fields to keep, and how to rename roles; a renamed
message keeps its original role in ``metadata.role``.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from evalkit.contracts.trace import Observation, Trace
from evalkit.errors import StrictJSONError
from evalkit.io.strict_json import loads_strict
from evalkit.traces.chat_mapping import ChatMapping
from evalkit.traces.chat_records import numbered_trace_id, record_metadata, record_trace_id
from evalkit.traces.report import ImportContext, ImportReport
from evalkit.traces.source import SourceValue

_CONTEXT_ROLES = ("system", "developer", "user")  # read by the next turn, as its input
_TOOL_ROLES = ("tool", "function")
KNOWN_ROLES = ("assistant", *_CONTEXT_ROLES, *_TOOL_ROLES)

# Role names other chat loggers use for the same speakers; only used to suggest a --role-map.
_ROLE_SYNONYMS = {"agent": "assistant", "ai": "assistant", "bot": "assistant", "model": "assistant",
                  "human": "user", "customer": "user"}


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
            return loads_strict(text)
        except StrictJSONError:
            return text
    return text


def _text(content: Any) -> Any:
    """Content as plain text when it is a list of text parts, else unchanged."""
    if isinstance(content, list) and all(isinstance(p, dict) and p.get("type") == "text" for p in content):
        return "".join(str(p.get("text", "")) for p in content)
    return content


def suggested_role(role: str) -> str | None:
    """The known role an unknown one most likely means (for the hint in the report), or None."""
    lowered = role.strip().lower()
    if lowered in KNOWN_ROLES:
        return lowered
    if lowered in _ROLE_SYNONYMS:
        return _ROLE_SYNONYMS[lowered]
    close = difflib.get_close_matches(lowered, KNOWN_ROLES, n=1, cutoff=0.8)
    return close[0] if close else None


def _roles(sv: SourceValue, messages: list[Any], mapping: ChatMapping, report: ImportReport) -> list[str]:
    """Each message's role after the role map, counting what was mapped."""
    roles = []
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict) or not isinstance(msg.get("role"), str):
            raise sv.error("each message must be an object with a role", f"{mapping.messages_key}[{i}]")
        raw = msg["role"]
        role = mapping.role_map.get(raw, raw)
        if role != raw:
            report.mapped(f"messages with role {raw!r}", role)
        roles.append(role)
    return roles


def _unknown_role_hint(role: str) -> str:
    target = suggested_role(role)
    return f"map them with --role-map {role}={target or 'ROLE'}" + (
        "" if target else f" (ROLE one of: {', '.join(KNOWN_ROLES)})")


def _trace(sv: SourceValue, seen: Counter[str], mapping: ChatMapping, report: ImportReport) -> Trace:
    record = sv.value
    raw_messages: list[Any] = record[mapping.messages_key]
    roles = _roles(sv, raw_messages, mapping, report)
    # The conversation as later turns see it: mapped roles in place of the source's.
    messages = [m if m["role"] == r else {**m, "role": r} for m, r in zip(raw_messages, roles, strict=True)]
    trace_id = numbered_trace_id(record_trace_id(sv, record, mapping), seen)
    observations: list[Observation] = []
    calls: dict[str, int] = {}  # tool_call_id -> index of its TOOL observation
    model = record.get("model")
    last_turn = max((i for i, r in enumerate(roles) if r == "assistant"), default=-1)
    for i, msg in enumerate(messages):
        role, raw_role = roles[i], raw_messages[i]["role"]
        origin = {"role": raw_role} if role != raw_role else None
        if role == "assistant":
            gen_id = f"m{i}"
            fields: dict[str, Any] = {"id": gen_id, "type": "GENERATION", "name": msg.get("name") or "assistant",
                                      "input": messages[:i], "output": msg}
            if isinstance(model, str):
                fields["model"] = model
            if origin:
                fields["metadata"] = origin
            observations.append(Observation(**fields))
            for j, call in enumerate(msg.get("tool_calls") or []):
                if not isinstance(call, dict):
                    raise sv.error("tool call must be an object", f"{mapping.messages_key}[{i}].tool_calls[{j}]")
                fn = call.get("function") or {}
                if not isinstance(fn, dict):
                    raise sv.error("function must be an object",
                                   f"{mapping.messages_key}[{i}].tool_calls[{j}].function")
                call_id = call.get("id") or f"{gen_id}.call{j}"
                tool = Observation(id=f"{gen_id}.call{j}", type="TOOL", name=fn.get("name") or "tool",
                                   input=_maybe_json(fn.get("arguments")), parent_id=gen_id,
                                   metadata={"toolCallId": call_id})
                calls[call_id] = len(observations)
                observations.append(tool)
        elif role in _TOOL_ROLES:
            output = _maybe_json(_text(msg.get("content")))
            idx = calls.pop(msg.get("tool_call_id"), None) if msg.get("tool_call_id") else None
            if idx is not None:
                observations[idx] = observations[idx].model_copy(update={"output": output})
                observations[idx].model_fields_set.add("output")
            else:
                observations.append(Observation(id=f"m{i}", type="TOOL", name=msg.get("name") or "tool",
                                                output=output, metadata=origin))
        elif role in _CONTEXT_ROLES:
            if i > last_turn:  # no turn reads it, so it would be lost as mere input
                report.kept(f"{role} messages no assistant turn follows", "EVENT")
                observations.append(Observation(id=f"m{i}", type="EVENT", name=role, output=_text(msg.get("content")),
                                                metadata={"role": raw_role, "afterLastTurn": True}))
        else:
            report.kept_unknown(f"messages with role {role!r}", "EVENT", _unknown_role_hint(role))
            observations.append(Observation(id=f"m{i}", type="EVENT", name=role, output=_text(msg.get("content")),
                                            metadata={"role": raw_role, "unknownRole": True}))
    first_user = next((m for m in messages if m["role"] == "user"), None)
    last_assistant = messages[last_turn] if last_turn >= 0 else None
    fields = {"id": trace_id, "observations": observations, "metadata": record_metadata(
        sv, record, mapping, report, read=(mapping.messages_key,), source="openai-chat")}
    if isinstance(record.get("name"), str):
        fields["name"] = record["name"]
    if first_user is not None:
        fields["input"] = _text(first_user.get("content"))
    if last_assistant is not None:
        fields["output"] = _text(last_assistant.get("content"))
    return Trace(**fields)


def read_openai_chat(values: Iterable[SourceValue], context: ImportContext | None = None) -> Iterator[Trace]:
    """Traces from chat-log records (see the module docstring).

    Args:
        values: the records.
        context: the import report to count mapped and unknown roles into, and the chat mapping
            (messages key, id keys, kept fields, role map); default: plain OpenAI records.
    """
    mapping = context.mapping if context is not None else ChatMapping()
    report = context.report if context is not None else ImportReport()
    seen = context.ids_seen if context is not None else Counter()
    for sv in values:
        if not looks_like_openai_chat(mapping.sniff_view(sv.value)):
            raise sv.error("expected a record with a non-empty list of {role, content} messages",
                           mapping.messages_key)
        yield _trace(sv, seen, mapping, report)
