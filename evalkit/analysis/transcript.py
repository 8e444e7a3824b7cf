"""A trace's conversation as a chat transcript: each message once, in the order it happened.

Every model call of a chat agent repeats the whole history in its input. Reading those inputs one by
one shows the first user message eight times in an eight-call trace; the transcript shows it once. It
is built from the trace's GENERATION inputs and outputs and its TOOL observations, in recorded order:

* a generation's input messages not already in the transcript are appended (the new user turn, the
  tool results fed back); those seen before are the repeated history and are skipped;
* its output (the assistant's reply, with any tool calls and their arguments) is appended;
* a TOOL observation is appended as a tool result, arguments included when no earlier tool call of
  the transcript already shows them; an EVENT holding a chat message (``metadata.role``) as that message.

Messages may be OpenAI chat shaped (``{role, content, tool_calls}``), OpenAI Responses items
(``message``, ``function_call``, ``function_call_output``, ``reasoning``, custom tool calls), Anthropic
content blocks (``text``, ``tool_use``, ``tool_result``, ``thinking``), Gemini ``{role, parts}``
(``functionCall``, ``functionResponse``, ``thought`` parts), OpenTelemetry GenAI ``parts``, plain
strings, or any of these kept as JSON text. A model's reasoning (thinking blocks, reasoning items,
thought parts, ``reasoning_content``) goes to the message's ``thinking``, which the page shows folded. A trace whose
generations hold none of these (a plain span tree) has no transcript: :func:`transcript` returns None
and the page says so.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from typing import Any

from evalkit.contracts.trace import Observation, Trace
from evalkit.io.canonical import compact_sorted_json

__all__ = ["transcript"]

_TEXT_BLOCKS = ("text", "input_text", "output_text")
_CALL_BLOCKS = ("tool_use", "tool_call", "function_call")
_RESULT_BLOCKS = ("tool_result", "tool_call_response", "function_call_output")
_THINKING_BLOCKS = ("thinking", "redacted_thinking", "reasoning")
# OpenAI Responses items (Codex rollouts write them as they are): each a message, a call, a result or reasoning.
_CALL_ITEMS = ("function_call", "custom_tool_call", "local_shell_call", "web_search_call")
_RESULT_ITEMS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")


def transcript(trace: Trace) -> list[dict[str, Any]] | None:
    """The trace's conversation, each message once, in order; None when no generation holds chat messages.

    Each message is a dict with ``role`` (``system``, ``user``, ``assistant``, ``tool`` or as recorded),
    ``obs`` (the observation it first appears in) and, as present: ``content`` (text, or the value
    itself when not text), ``toolCalls`` (``[{id, name, arguments}]``), ``name``, ``toolCallId``,
    ``arguments`` (of a tool result whose call the transcript does not show), ``level`` and
    ``statusMessage`` (of a failed tool).
    """
    out: list[dict[str, Any]] = []
    shown: Counter[str] = Counter()
    open_calls: list[dict[str, Any]] = []
    # Tool results wait for the next model call: its input says where they fell among the new turns
    # (a user message recorded only in the later input may have come before the tool ran).
    waiting: list[tuple[str, dict[str, Any], str]] = []
    chat = False
    for obs in trace.observations:
        if obs.type == "GENERATION":
            inputs, outputs = _messages(obs.input, "user"), _messages(obs.output, "assistant")
            if inputs is None and outputs is None:
                continue
            chat = True
            repeated: Counter[str] = Counter()
            for message in inputs or []:
                key = _fingerprint(message)
                repeated[key] += 1
                if repeated[key] <= shown[key]:
                    continue  # history this call repeats
                match = next((i for i, (k, _, _) in enumerate(waiting) if k == key), None)
                if match is None:
                    _append(out, shown, open_calls, message, obs.id)
                else:
                    _, result, tool_id = waiting.pop(match)
                    _append(out, shown, open_calls, result, tool_id)
            for _, result, tool_id in waiting:
                _append(out, shown, open_calls, result, tool_id)
            waiting.clear()
            for message in outputs or []:
                _append(out, shown, open_calls, message, obs.id)
        elif obs.type == "TOOL":
            result = _tool_result(obs, open_calls)
            waiting.append((_fingerprint(result), result, obs.id))
        elif obs.type == "EVENT" and isinstance((obs.metadata or {}).get("role"), str) and obs.output is not None:
            # A chat message an importer kept as an event (a user's last words, after the last model call).
            said = {"role": obs.metadata["role"], "content": obs.output}  # type: ignore[index]
            waiting.append((_fingerprint(said), said, obs.id))
    for _, result, tool_id in waiting:
        _append(out, shown, open_calls, result, tool_id)
    if not chat:
        return None
    final = _final_output(trace)
    if final is not None and not any(m["role"] == "assistant" and _parsed(m.get("content")) == _parsed(final)
                                      for m in out):
        out.append({"role": "assistant", "content": final, "final": True, "obs": None})
    return out


def _final_output(trace: Trace) -> Any:
    """The trace's answer, unwrapped from ``{"answer": ...}`` or a chat message; None when it has none."""
    output = trace.output
    if isinstance(output, dict) and list(output) == ["answer"] and isinstance(output["answer"], str):
        return output["answer"]
    if output in (None, "", {}, []):
        return None
    said = _messages(_parsed(output), "assistant") if isinstance(_parsed(output), (dict, list)) else None
    if said and said[-1].get("content") is not None:
        return said[-1]["content"]
    return output


def _append(out: list[dict[str, Any]], shown: Counter[str], open_calls: list[dict[str, Any]],
            message: dict[str, Any], obs_id: str) -> None:
    shown[_fingerprint(message)] += 1
    open_calls.extend(message.get("toolCalls", []))
    if message["role"] == "tool":
        _close_call(open_calls, message.get("toolCallId"), message.get("name"))
    out.append({**message, "obs": obs_id})


def _close_call(open_calls: list[dict[str, Any]], call_id: Any, name: Any) -> dict[str, Any] | None:
    """The earliest unanswered call this result answers (by id, else by name), taken off the list."""
    for i, call in enumerate(open_calls):
        if (call_id is not None and call.get("id") == call_id) or (call_id is None and call.get("name") == name):
            return open_calls.pop(i)
    return None


def _tool_result(obs: Observation, open_calls: list[dict[str, Any]]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "tool"}
    if obs.name:
        message["name"] = obs.name
    call_id = (obs.metadata or {}).get("toolCallId")
    if call_id is not None:
        message["toolCallId"] = call_id
    answered = [c for c in open_calls if (c.get("id") == call_id if call_id is not None else c.get("name") == obs.name)]
    if obs.input is not None and not answered:
        message["arguments"] = obs.input  # no tool call in the transcript shows them
    if obs.output is not None:
        message["content"] = _tool_text(obs.output)
    if obs.level in ("ERROR", "WARNING"):
        message["level"] = obs.level
    if obs.status_message:
        message["statusMessage"] = obs.status_message
    return message


def _tool_text(value: Any) -> Any:
    """A tool result as the model read it: an MCP-style ``{"content": [text blocks]}`` as its text."""
    parsed = _parsed(value)
    if isinstance(parsed, dict) and set(parsed) <= {"content", "isError", "is_error"}:
        blocks = parsed.get("content")
        if isinstance(blocks, list) and blocks and all(isinstance(b, dict) and b.get("type") == "text" for b in blocks):
            return "\n\n".join(str(b.get("text", "")) for b in blocks)
    return value


def _fingerprint(message: dict[str, Any]) -> str:
    """What makes two messages the same one: role, content and tool calls (tool results: content only,
    since the TOOL observation and the message fed back to the model name the call differently)."""
    content = _parsed(message.get("content"))
    if message["role"] == "tool":
        key: Any = ["tool", content]
    else:
        key = [message["role"], content, [[c.get("name"), _parsed(c.get("arguments"))]
                                          for c in message.get("toolCalls", [])]]
        if message.get("thinking"):
            key.append(message["thinking"])
    # A digest, not the text: a history holding a 5 MB tool result is fingerprinted once per call.
    return hashlib.sha256(compact_sorted_json(key).encode("utf-8")).hexdigest()


def _parsed(value: Any) -> Any:
    """JSON text as its value, so a tool result logged as an object matches the same result sent as text."""
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in ("{", "[", '"'):
            try:
                value = json.loads(text)
            except ValueError:
                return text
            return _parsed(value) if isinstance(value, str) else value  # JSON text of JSON text: one more layer
        return text
    return value


def _messages(value: Any, default_role: str) -> list[dict[str, Any]] | None:
    """A generation's input or output as chat messages; None when it is not chat shaped."""
    if isinstance(value, str):
        parsed = _parsed(value)  # some exporters keep the messages as JSON text
        inner = _messages(parsed, default_role) if isinstance(parsed, (dict, list)) else None
        if inner is not None:
            return inner
        return [{"role": default_role, "content": value}] if value.strip() else []
    if isinstance(value, dict):
        if isinstance(value.get("output"), list) and value["output"] and all(_is_item(i) for i in value["output"]):
            return [n for i in value["output"] for n in _item(i, default_role)]  # an OpenAI Responses reply
        if isinstance(value.get("choices"), list) and value["choices"]:  # an OpenAI response
            first = value["choices"][0]
            value = first.get("message", first) if isinstance(first, dict) else first
            return _messages(value, default_role)
        if isinstance(value.get("messages"), list):  # a request body; Anthropic keeps the system apart
            system = _messages(value["system"], "system") if value.get("system") else []
            rest = _messages(value["messages"], default_role)
            return None if rest is None else (system or []) + rest
        if _is_message(value):
            return _message(value, default_role)
        return None
    if isinstance(value, list) and value:
        if all(_is_message(m) or _is_item(m) for m in value):
            return [n for m in value for n in _item(m, default_role)]
        if all(isinstance(b, dict) and "type" in b for b in value):  # a bare list of content blocks
            return _message({"role": default_role, "content": value}, default_role)
    return None


def _is_message(value: Any) -> bool:
    return isinstance(value, dict) and (
        "role" in value or ("content" in value and len(value.keys() - {"content", "type", "name"}) == 0)
        or "tool_calls" in value or "parts" in value)


def _is_item(value: Any) -> bool:
    """An OpenAI Responses item: a message, a call, a call's output, or reasoning."""
    return isinstance(value, dict) and value.get("type") in ("message", "reasoning", *_CALL_ITEMS, *_RESULT_ITEMS)


def _item(raw: dict[str, Any], default_role: str) -> list[dict[str, Any]]:
    kind = raw.get("type")
    if kind in _CALL_ITEMS:
        call = _call(raw) if kind == "function_call" else {
            "name": str(raw.get("name") or kind.removesuffix("_call")), "arguments": _parsed(
                raw.get("input", raw.get("action"))), **({"id": raw["call_id"]} if "call_id" in raw else {})}
        return [{"role": "assistant", "toolCalls": [call]}]
    if kind in _RESULT_ITEMS:
        return [_block_result(raw)]
    if kind == "reasoning":
        thinking = _thinking_text(raw)
        return [{"role": "assistant", "thinking": thinking}] if thinking else []
    return _message(raw, default_role)


def _thinking_text(block: Any) -> str:
    """The readable text of a reasoning block, item or thought part (its signature is never shown)."""
    if not isinstance(block, dict):
        return ""
    for key in ("thinking", "text", "reasoning_content"):
        if isinstance(block.get(key), str) and block[key]:
            return block[key]
    summary = block.get("summary")
    if isinstance(summary, list):
        return "\n\n".join(str(s.get("text", "")) for s in summary if isinstance(s, dict) and s.get("text"))
    if block.get("type") == "redacted_thinking":
        return "(redacted thinking)"
    return ""


def _message(raw: dict[str, Any], default_role: str) -> list[dict[str, Any]]:
    """One recorded message as transcript messages: tool results held in blocks become their own."""
    role = str(raw.get("role") or default_role)
    role = "assistant" if role == "model" else role  # Gemini's name for the assistant
    blocks = raw.get("parts") if isinstance(raw.get("parts"), list) else raw.get("content")
    texts: list[str] = []
    other: list[Any] = []
    thinking = [raw["reasoning_content"]] if isinstance(raw.get("reasoning_content"), str) and raw[
        "reasoning_content"] else []
    calls = [_call(c) for c in raw.get("tool_calls") or [] if isinstance(c, dict)]
    results: list[dict[str, Any]] = []
    if isinstance(blocks, list):
        for block in blocks:
            kind = block.get("type") if isinstance(block, dict) else None
            if isinstance(block, str):
                texts.append(block)
            elif kind in _THINKING_BLOCKS or (kind is None and isinstance(block, dict) and block.get("thought") is True):
                if text := _thinking_text(block):
                    thinking.append(text)
            elif kind is None and isinstance(block, dict) and isinstance(block.get("functionCall"), dict):
                fc = block["functionCall"]
                calls.append({"name": str(fc.get("name") or "call"), "arguments": fc.get("args"),
                              **({"id": fc["id"]} if fc.get("id") is not None else {})})
            elif kind is None and isinstance(block, dict) and isinstance(block.get("functionResponse"), dict):
                fr = block["functionResponse"]
                response = fr.get("response")
                if isinstance(response, dict) and len(response) == 1 and next(iter(response)) in ("output", "error"):
                    response = next(iter(response.values()))
                results.append({"role": "tool", "content": response, "name": fr.get("name"),
                                **({"toolCallId": fr["id"]} if fr.get("id") is not None else {})})
            elif kind in _TEXT_BLOCKS or (kind is None and isinstance(block, dict) and "text" in block):
                texts.append(str(block.get("text", block.get("content", ""))))
            elif kind in _CALL_BLOCKS:
                calls.append(_call(block))
            elif kind in _RESULT_BLOCKS:
                results.append(_block_result(block))
            else:
                other.append(block)
    elif isinstance(blocks, str):
        texts.append(blocks)
    elif blocks is not None:
        other.append(blocks)
    out: list[dict[str, Any]] = list(results)  # Anthropic puts tool results first in the user turn
    if texts or other or calls or thinking or not results:
        message: dict[str, Any] = {"role": role}
        if thinking:
            message["thinking"] = "\n\n".join(thinking)
        if texts and not other:
            message["content"] = "\n\n".join(texts)
        elif texts or other:
            message["content"] = [*texts, *other] if len(texts) + len(other) > 1 else (texts or other)[0]
        if calls:
            message["toolCalls"] = calls
        if isinstance(raw.get("name"), str):
            message["name"] = raw["name"]
        if isinstance(raw.get("tool_call_id"), str):
            message["toolCallId"] = raw["tool_call_id"]
        out.append(message)
    return out


def _call(raw: dict[str, Any]) -> dict[str, Any]:
    function = raw.get("function") if isinstance(raw.get("function"), dict) else raw
    args = function.get("arguments", function.get("input", raw.get("input")))
    call: dict[str, Any] = {"name": str(function.get("name") or "call"), "arguments": _parsed(args)}
    call_id = raw.get("call_id", raw.get("id"))  # Responses items have their own id besides the call's
    if call_id is not None:
        call["id"] = call_id
    return call


def _block_result(block: dict[str, Any]) -> dict[str, Any]:
    content = next((block[k] for k in ("content", "result", "response", "output") if k in block), None)
    if isinstance(content, str):
        content = _parsed(content) if isinstance(_parsed(content), (dict, list)) else content
    if isinstance(content, list) and all(isinstance(b, dict) and b.get("type") == "text" for b in content):
        content = "\n\n".join(str(b.get("text", "")) for b in content)
    message: dict[str, Any] = {"role": "tool", "content": content}
    call_id = block.get("tool_use_id", block.get("call_id", block.get("id")))
    if call_id is not None:
        message["toolCallId"] = call_id
    if isinstance(block.get("name"), str):
        message["name"] = block["name"]
    if block.get("is_error"):
        message["level"] = "ERROR"
    return message
