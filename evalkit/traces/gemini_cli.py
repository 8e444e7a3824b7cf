"""Gemini CLI sessions: ``~/.gemini/tmp/PROJECT_HASH/chats/session-*.json`` (or ``.jsonl``), one trace per file.

A session is ``{sessionId, projectHash, startTime, lastUpdated, messages: [...]}``; newer versions write
it as JSONL: that header on the first line, then each message as it is recorded, ``{"$set": {...}}``
lines updating the header, and a message written again (same ``id``) when its tool calls finish, the
later copy replacing the earlier one.

Each ``gemini`` message is one model call, a GENERATION: its input is the conversation before it in
the shape the CLI sends it (``{role, parts}``: user text, the model's earlier replies, the
``functionResponse`` parts of tool results), its output the reply (its ``thoughts`` as ``thought``
parts, shown collapsed; its text; a ``functionCall`` per tool call), its usage the message's
``tokens`` (``cached`` as cache reads, ``thoughts`` as reasoning). Each entry of ``toolCalls`` is a
TOOL child of it: input the ``args``, output the ``functionResponse`` response, status ``error`` an
ERROR and ``cancelled`` a WARNING. ``info``, ``warning`` and ``error`` messages are EVENTs; a user
message no reply follows is an EVENT holding it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit.contracts.trace import Observation, Trace
from evalkit.traces.observation_edits import is_short
from evalkit.traces.report import ImportContext, ImportReport
from evalkit.traces.source import SourceValue

__all__ = ["looks_like_gemini_cli", "read_gemini_cli"]

_USAGE = {"input": "input", "output": "output", "cached": "cache_read_input", "thoughts": "reasoning",
          "tool": "tool", "total": "total"}
_LEVELS = {"error": "ERROR", "warning": "WARNING", "info": None}
_TOOL_LEVELS = {"error": "ERROR", "cancelled": "WARNING"}


def looks_like_gemini_cli(value: Any) -> bool:
    """A Gemini CLI session document, or the header line of one written as JSONL."""
    return isinstance(value, dict) and "sessionId" in value and "projectHash" in value


def _messages(values: list[SourceValue], report: ImportReport) -> tuple[dict[str, Any], list[tuple[SourceValue, dict]]]:
    """The session header and its messages, each once (a message written again replaces its first copy)."""
    header: dict[str, Any] = {}
    found: dict[str, tuple[SourceValue, dict[str, Any]]] = {}
    order: list[str] = []
    for sv in values:
        value = sv.value
        if not isinstance(value, dict):
            raise sv.error("a Gemini CLI session line must be an object")
        if looks_like_gemini_cli(value):
            header.update({k: v for k, v in value.items() if k != "messages"})
            listed = value.get("messages", [])
            if not isinstance(listed, list):
                raise sv.error("messages must be a list", "messages")
            pairs = [(sv, m) for m in listed]
        elif "$set" in value:
            if isinstance(value["$set"], dict):
                header.update(value["$set"])
            continue
        else:
            pairs = [(sv, value)]
        for i, (where, message) in enumerate(pairs):
            if not isinstance(message, dict) or not isinstance(message.get("type"), str):
                raise where.error("a message needs a type", f"messages[{i}].type" if where is sv and
                                  "messages" in value else "type")
            key = str(message.get("id", f"{where.line}:{i}"))
            if key in found:
                report.kept("messages written again as their tool calls finished", "the later copy")
            else:
                order.append(key)
            found[key] = (where, message)
    return header, [found[k] for k in order]


@dataclass
class _Session:
    report: ImportReport
    observations: list[Observation] = field(default_factory=list)
    history: list[dict[str, Any]] = field(default_factory=list)
    waiting: list[tuple[str, dict[str, Any], Any]] = field(default_factory=list)  # user messages not yet sent

    def message(self, sv: SourceValue, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind == "user":
            said = {"role": "user", "parts": _parts(message.get("content"))}
            self.history.append(said)
            self.waiting.append((str(message.get("id")), said, message.get("timestamp")))
        elif kind == "gemini":
            self._reply(message)
        elif kind in _LEVELS:
            fields: dict[str, Any] = {"id": str(message.get("id", f"event-{len(self.observations)}")),
                                      "type": "EVENT", "name": kind, "output": message.get("content"),
                                      "start_time": message.get("timestamp")}
            if _LEVELS[kind]:
                fields["level"] = _LEVELS[kind]
            self.observations.append(Observation(**fields))
        else:
            self.report.kept_unknown(f"Gemini CLI messages of type {kind!r}", "EVENT")
            self.observations.append(Observation(id=str(message.get("id", len(self.observations))), type="EVENT",
                                                 name=kind, output=message, start_time=message.get("timestamp")))

    def _reply(self, message: dict[str, Any]) -> None:
        gen_id = str(message.get("id") or f"generation-{len(self.observations) + 1}")
        calls = message.get("toolCalls") if isinstance(message.get("toolCalls"), list) else []
        parts: list[dict[str, Any]] = [
            {"thought": True, "text": ": ".join(p for p in (str(t.get("subject") or ""), str(t.get("description") or ""))
                                                 if p)}
            for t in message.get("thoughts") or [] if isinstance(t, dict)]
        parts += _parts(message.get("content"))
        parts += [{"functionCall": {"id": c.get("id"), "name": c.get("name"), "args": c.get("args")}}
                  for c in calls if isinstance(c, dict)]
        said = {"role": "model", "parts": parts}
        start = self.waiting[-1][2] if self.waiting else (self.observations[-1].end_time if self.observations else None)
        fields: dict[str, Any] = {"id": gen_id, "type": "GENERATION", "name": "gemini-cli",
                                  "input": list(self.history), "output": said, "start_time": start or message.get("timestamp"),
                                  "end_time": message.get("timestamp")}
        self.waiting.clear()
        if isinstance(message.get("model"), str):
            fields["model"] = message["model"]
        tokens = message.get("tokens")
        if isinstance(tokens, dict):
            usage = {name: tokens[key] for key, name in _USAGE.items()
                     if isinstance(tokens.get(key), int | float) and not isinstance(tokens.get(key), bool)}
            if usage:
                fields["usage"] = usage
        self.observations.append(Observation(**fields))
        self.history.append(said)
        responses = [self._tool(c, gen_id) for c in calls if isinstance(c, dict)]
        if responses:  # fed back to the model as the next call's user turn
            self.history.append({"role": "user", "parts": responses})

    def _tool(self, call: dict[str, Any], gen_id: str) -> dict[str, Any]:
        response = next((r["functionResponse"] for r in call.get("result") or []
                         if isinstance(r, dict) and isinstance(r.get("functionResponse"), dict)), None)
        fields: dict[str, Any] = {"id": str(call.get("id") or f"{gen_id}.tool{len(self.observations)}"),
                                  "type": "TOOL", "name": str(call.get("name") or "tool"), "input": call.get("args"),
                                  "parent_id": gen_id, "start_time": call.get("timestamp"),
                                  "end_time": call.get("timestamp")}
        if response is not None:
            body = response.get("response")
            one = isinstance(body, dict) and len(body) == 1 and next(iter(body)) in ("output", "error")
            fields["output"] = next(iter(body.values())) if one else body
        level = _TOOL_LEVELS.get(str(call.get("status")))
        if level:
            fields["level"] = level
            error = response.get("response", {}).get("error") if isinstance(response, dict) and isinstance(
                response.get("response"), dict) else None
            fields["status_message"] = str(error or call.get("resultDisplay") or call.get("status"))
        metadata = {k: call[k] for k in ("status", "displayName", "description", "resultDisplay")
                    if k in call and is_short(call[k])}
        if "resultDisplay" in call and not is_short(call["resultDisplay"]):
            self.report.skipped("long resultDisplay of tool calls (what the terminal showed; the response holds "
                                "the result)")
        fields["metadata"] = {"toolCallId": call.get("id"), **metadata}
        self.observations.append(Observation(**fields))
        return {"functionResponse": response} if response is not None else {
            "functionResponse": {"id": call.get("id"), "name": call.get("name"), "response": None}}

    def unanswered(self) -> None:
        for msg_id, said, at in self.waiting:
            self.report.kept("user messages no reply follows", "EVENT")
            self.observations.append(Observation(id=msg_id, type="EVENT", name="user", output=_text(said["parts"]),
                                                 start_time=at, metadata={"role": "user"}))


def _parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"text": content}] if content else []
    if isinstance(content, list):
        return [p if isinstance(p, dict) else {"text": str(p)} for p in content]
    return [] if content is None else [{"text": str(content)}]


def _text(parts: list[dict[str, Any]]) -> Any:
    texts = [p["text"] for p in parts if isinstance(p.get("text"), str) and not p.get("thought")]
    return "\n\n".join(texts) if len(texts) == len(parts) else parts


def read_gemini_cli(values: Iterable[SourceValue], context: ImportContext | None = None) -> Iterator[Trace]:
    """One trace per Gemini CLI session file (see the module docstring).

    Raises:
        evalkit.errors.InputError: a line that is not an object, or a message without a type.
    """
    report = context.report if context is not None else ImportReport()
    values = list(values)
    if not values:
        return
    header, messages = _messages(values, report)
    session = _Session(report)
    for sv, message in messages:
        session.message(sv, message)
    session.unanswered()
    metadata = {k: v for k, v in header.items() if k in ("projectHash", "startTime", "lastUpdated", "kind", "summary")}
    fields: dict[str, Any] = {"id": str(header.get("sessionId") or Path(values[0].file).stem),
                              "observations": session.observations,
                              "metadata": {**metadata, "sessionId": header.get("sessionId"), "source": "gemini-cli"}}
    first = next((m for _, m in messages if m["type"] == "user"), None)
    if first is not None:
        fields["input"] = _text(_parts(first.get("content")))
    last = next((m for _, m in reversed(messages) if m["type"] == "gemini" and m.get("content")), None)
    if last is not None:
        fields["output"] = _text(_parts(last.get("content")))
    yield Trace(**fields)
