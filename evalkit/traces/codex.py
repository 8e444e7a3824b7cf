"""OpenAI Codex CLI rollouts: ``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``, one trace per file.

Each line is ``{timestamp, type, payload}``: ``session_meta`` (the session id, working folder, CLI
version and base instructions), ``turn_context`` (the model and settings of the turn that follows),
``response_item`` (the Responses API items sent to and produced by the model: messages,
``reasoning``, ``function_call`` / ``custom_tool_call`` / ``local_shell_call`` / ``web_search_call``
and their ``*_output``), ``event_msg`` (what the CLI showed: token counts, task start and end, and
copies of the messages) and ``compacted`` (a summary that replaces the history).

The items the model produced between two inputs are one GENERATION: its input is every item before
them (the history, as the Responses API was sent it; a compaction replaces it), its output those items,
its usage the ``last_token_usage`` of the ``token_count`` event that follows (the CLI writes each count
twice; a count repeating the previous total is folded). Each call is a TOOL child of its GENERATION,
its output the matching ``*_output``; an exit code other than 0 makes it an ERROR. Reasoning is kept,
its ``encrypted_content`` left out (:mod:`evalkit.traces.reasoning`). Task starts and ends, aborted
turns, errors and compactions are EVENTs; event copies of messages are counted and left out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit.contracts.trace import Observation, Trace
from evalkit.traces.observation_edits import updated
from evalkit.traces.otel_attributes import maybe_json
from evalkit.traces.reasoning import without_signature
from evalkit.traces.report import ImportContext, ImportReport
from evalkit.traces.source import SourceValue

__all__ = ["looks_like_codex", "read_codex"]

_LINE_TYPES = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted"})
_CALLS = {"function_call": "function_call_output", "custom_tool_call": "custom_tool_call_output",
          "local_shell_call": "local_shell_call_output"}
_RESULTS = frozenset(_CALLS.values())
_MODEL_ITEMS = frozenset({"reasoning", "web_search_call", *_CALLS})
_EVENTS = {"task_started": None, "task_complete": None, "turn_aborted": "WARNING", "error": "ERROR",
           "stream_error": "WARNING", "context_compacted": None}
# What the CLI showed while tools ran; the call items and their outputs hold the substance.
_TOOL_EVENTS = frozenset({"exec_command_begin", "exec_command_end", "patch_apply_begin", "patch_apply_end",
                          "mcp_tool_call_begin", "mcp_tool_call_end", "web_search_begin", "web_search_end",
                          "plan_update", "turn_diff", "entered_review_mode", "exited_review_mode"})
_COPIES = frozenset({"user_message", "agent_message", "agent_reasoning", "agent_reasoning_raw_content"})
_USAGE = {"input_tokens": "input", "cached_input_tokens": "cache_read_input", "output_tokens": "output",
          "reasoning_output_tokens": "reasoning", "total_tokens": "total"}
_EXIT = re.compile(r"(?:Exit code|Process exited with code):? (-?\d+)")


def looks_like_codex(value: Any) -> bool:
    """A rollout line: ``{timestamp, type, payload}`` of one of Codex's line types."""
    return (isinstance(value, dict) and value.get("type") in _LINE_TYPES and isinstance(value.get("payload"), dict)
            and "timestamp" in value)


@dataclass
class _Rollout:
    report: ImportReport
    observations: list[Observation] = field(default_factory=list)
    history: list[Any] = field(default_factory=list)
    model: str | None = None
    open_gen: int | None = None  # index of the GENERATION taking the model's items
    unpriced: list[int] = field(default_factory=list)  # GENERATIONs waiting for their token count
    last_total: Any = None
    calls: dict[str, int] = field(default_factory=dict)  # call_id -> index of its TOOL
    prompt: Any = None
    answer: Any = None

    def line(self, sv: SourceValue) -> None:
        record = sv.value
        if not looks_like_codex(record):
            raise sv.error("not a Codex rollout line ({timestamp, type, payload})")
        kind, payload, at = record["type"], record["payload"], record.get("timestamp")
        if kind == "response_item":
            self._item(payload, at)
        elif kind == "event_msg":
            self._event(payload, at)
        elif kind == "turn_context":
            if isinstance(payload.get("model"), str):
                self.model = payload["model"]
            self.report.kept("turn_context lines (model and sandbox settings of a turn)",
                             "the model of the turn's generations")
        elif kind == "compacted":
            self._close()
            replacement = payload.get("replacement_history")
            self.history = list(replacement) if isinstance(replacement, list) else []
            self._add(Observation(id=f"event-{len(self.observations) + 1}", type="EVENT", name="compacted",
                                  output=payload.get("message"), start_time=at))

    def _item(self, item: dict[str, Any], at: Any) -> None:
        kind = item.get("type")
        produced = kind in _MODEL_ITEMS or (kind == "message" and item.get("role") == "assistant")
        if kind == "reasoning":
            item = without_signature(item, self.report)
        if not produced:
            self._close()
            self.history.append(item)
            if kind in _RESULTS:
                self._result(item, at)
            return
        if self.open_gen is None:
            fields: dict[str, Any] = {"id": f"generation-{sum(o.type == 'GENERATION' for o in self.observations) + 1}",
                                      "type": "GENERATION", "name": "codex", "input": list(self.history),
                                      "output": [], "start_time": at, "end_time": at}
            if self.model:
                fields["model"] = self.model
            self.open_gen = len(self.observations)
            self.unpriced.append(self.open_gen)
            self._add(Observation(**fields))
        gen = self.observations[self.open_gen]
        gen.output.append(item)
        self._set(self.open_gen, end_time=at)
        self.history.append(item)
        if kind == "message" and isinstance(item.get("content"), list):
            text = "".join(str(b.get("text", "")) for b in item["content"] if isinstance(b, dict))
            self.answer = text or self.answer
        if kind in _CALLS or kind == "web_search_call":
            self._call(item, gen.id, at)

    def _call(self, item: dict[str, Any], gen_id: str, at: Any) -> None:
        call_id = item.get("call_id") if isinstance(item.get("call_id"), str) else None
        kind = item["type"]
        if kind == "function_call":
            name, args = item.get("name"), maybe_json(item.get("arguments"))
        elif kind == "custom_tool_call":
            name, args = item.get("name"), item.get("input")
        elif kind == "local_shell_call":
            name, args = "local_shell", item.get("action")
        else:
            name, args = "web_search", item.get("action")
        fields: dict[str, Any] = {"id": call_id or f"{gen_id}.call{len(self.observations)}", "type": "TOOL",
                                  "name": str(name or kind), "input": args, "parent_id": gen_id, "start_time": at,
                                  "metadata": {"toolCallId": call_id, "itemType": kind}}
        if kind == "web_search_call":  # the search runs on OpenAI's side; its status is all the file says
            fields["output"] = {"status": item.get("status")}
        if call_id is not None:
            self.calls[call_id] = len(self.observations)
        self._add(Observation(**fields))

    def _result(self, item: dict[str, Any], at: Any) -> None:
        idx = self.calls.pop(item.get("call_id"), None)
        output = maybe_json(item.get("output"))
        update: dict[str, Any] = {"output": output, "end_time": at}
        code = _exit_code(output)
        if code not in (None, 0):
            update["level"] = "ERROR"
            update["status_message"] = f"exit code {code}"
        if idx is None:
            self.report.kept_unknown("call outputs whose call is not in the file", "TOOL with no input")
            self._add(Observation(id=f"result-{len(self.observations) + 1}", type="TOOL", name="tool",
                                  metadata={"toolCallId": item.get("call_id")}, **update))
            return
        self._set(idx, **update)

    def _event(self, payload: dict[str, Any], at: Any) -> None:
        kind = payload.get("type")
        if kind == "token_count":
            self._tokens(payload.get("info"))
        elif kind in _COPIES:
            if kind == "user_message" and self.prompt is None:
                self.prompt = payload.get("message")
            self.report.skipped("event_msg copies of messages the response items hold")
        elif kind in _EVENTS or kind in _TOOL_EVENTS:
            if kind == "task_complete" and payload.get("last_agent_message"):
                self.answer = payload["last_agent_message"]
            fields: dict[str, Any] = {"id": f"event-{len(self.observations) + 1}", "type": "EVENT", "name": kind,
                                      "start_time": at, "metadata": {k: v for k, v in payload.items() if k != "type"}}
            if _EVENTS.get(kind):
                fields["level"] = _EVENTS[kind]
            self._add(Observation(**fields))
        else:
            self.report.kept_unknown(f"event_msg lines of type {kind!r}", "EVENT")
            self._add(Observation(id=f"event-{len(self.observations) + 1}", type="EVENT", name=str(kind),
                                  start_time=at, metadata={k: v for k, v in payload.items() if k != "type"}))

    def _tokens(self, info: Any) -> None:
        if not isinstance(info, dict) or not isinstance(info.get("last_token_usage"), dict):
            return
        if info.get("total_token_usage") == self.last_total:
            self.report.skipped("token counts repeating the previous total (the CLI writes each count twice; "
                                "counted once)")
            return
        self.last_total = info.get("total_token_usage")
        usage = {name: info["last_token_usage"][key] for key, name in _USAGE.items()
                 if isinstance(info["last_token_usage"].get(key), int | float)}
        if self.unpriced and usage:
            self._set(self.unpriced.pop(0), usage=usage)
        elif usage:
            self.report.skipped("token counts no generation is waiting for")

    def _close(self) -> None:
        self.open_gen = None

    def _add(self, obs: Observation) -> None:
        self.observations.append(obs)

    def _set(self, idx: int, **update: Any) -> None:
        self.observations[idx] = updated(self.observations[idx], **update)


def _exit_code(output: Any) -> int | None:
    """The exit code a shell call's output states (``metadata.exit_code``, or an ``Exit code: N`` line)."""
    if isinstance(output, dict) and isinstance(output.get("metadata"), dict):
        code = output["metadata"].get("exit_code")
        return code if isinstance(code, int) and not isinstance(code, bool) else None
    if isinstance(output, str) and (match := _EXIT.match(output.lstrip())):
        return int(match.group(1))
    return None


def read_codex(values: Iterable[SourceValue], context: ImportContext | None = None) -> Iterator[Trace]:
    """One trace per rollout file (see the module docstring).

    Raises:
        evalkit.errors.InputError: a line that is not ``{timestamp, type, payload}``.
    """
    report = context.report if context is not None else ImportReport()
    rollout = _Rollout(report)
    meta: dict[str, Any] = {}
    file = None
    for sv in values:
        file = sv.file
        if isinstance(sv.value, dict) and sv.value.get("type") == "session_meta" and not meta:
            meta = dict(sv.value.get("payload") or {})
        rollout.line(sv)
    if file is None:
        return
    instructions = meta.pop("base_instructions", meta.pop("instructions", None))
    metadata = {k: v for k, v in meta.items() if k in ("id", "cwd", "cli_version", "originator", "source",
                                                        "model_provider", "git", "timestamp")}
    if isinstance(instructions, dict) and "text" in instructions:
        instructions = instructions["text"]
    if instructions:
        metadata["instructions"] = instructions
    fields: dict[str, Any] = {"id": str(meta.get("id") or Path(file).stem), "observations": rollout.observations,
                              "metadata": {**metadata, "source": "codex"}}
    if rollout.prompt is not None:
        fields["input"] = rollout.prompt
    if rollout.answer is not None:
        fields["output"] = rollout.answer
    yield Trace(**fields)
