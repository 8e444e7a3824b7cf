"""Claude Code sessions: ``~/.claude/projects/PROJECT/SESSION.jsonl``, one event per line, one trace per file.

Each line is a ``user`` or ``assistant`` message (with ``uuid``, ``parentUuid``, ``sessionId`` and a
timestamp), a ``system`` note, a ``summary``, or bookkeeping (``progress``, ``file-history-snapshot``).
Claude Code writes one API reply as several lines, one per content block, each repeating the reply's
``message.id`` and usage: they become one GENERATION, its usage counted once. Its input is what the
model was sent: the messages on the ``parentUuid`` chain before it (a compaction starts a new chain;
the system prompt is not in the file). Its output is the reply's content blocks; ``thinking`` blocks
are kept, their signatures left out (:mod:`evalkit.traces.reasoning`).

Each ``tool_use`` is a TOOL (child of its GENERATION) whose output is the matching ``tool_result``
(``is_error`` makes it an ERROR); the short fields of ``toolUseResult`` (exit codes, agent ids,
durations) go to its metadata. A subagent started by a ``Task`` call nests under that TOOL as an AGENT
holding the subagent's own generations and tools: read from ``SESSION/subagents/agent-ID.jsonl``
beside the session file (current Claude Code) or from the sidechain lines of the file itself (older
versions). System notes, summaries and queued prompts are EVENTs; user prompts no reply follows are
EVENTs holding the message. Progress lines (streamed partial output the tool result repeats) and
file-history snapshots are left out and counted.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit.contracts.trace import Observation, Trace
from evalkit.traces.anthropic import anthropic_usage
from evalkit.traces.observation_edits import is_short, updated
from evalkit.traces.reasoning import REASONING_BLOCKS, without_signature
from evalkit.traces.report import ImportContext, ImportReport
from evalkit.traces.source import SourceValue, iter_source_values

__all__ = ["looks_like_claude_code", "read_claude_code"]

_MESSAGE_TYPES = frozenset({"user", "assistant"})
_EVENT_TYPES = frozenset({"system", "summary", "queue-operation"})
_SKIPPED = {
    "progress": "progress lines (streamed partial output and hook runs; the tool results repeat what matters)",
    "file-history-snapshot": "file-history snapshots (Claude Code's undo copies of edited files)",
    "file-history-delta": "file-history snapshots (Claude Code's undo copies of edited files)",
}
_SUBAGENT_TOOLS = frozenset({"Task", "Agent"})


def looks_like_claude_code(value: Any) -> bool:
    """A line of a Claude Code session: a message or note with ``sessionId`` and ``uuid``, or a header line."""
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        return False
    kind = value["type"]
    if kind in _MESSAGE_TYPES or kind in ("system", "progress"):
        return "sessionId" in value and "uuid" in value and "parentUuid" in value
    if kind == "summary":
        return "leafUuid" in value and "summary" in value
    if kind in ("file-history-snapshot", "file-history-delta"):
        return "messageId" in value
    if kind == "queue-operation":
        return "operation" in value and "sessionId" in value
    return False


@dataclass
class _Reply:
    """One API reply: the lines sharing a ``message.id``."""

    gen_id: str
    message: dict[str, Any]  # {role: assistant, content: [...]}, shared by every later input
    first: dict[str, Any]
    last: dict[str, Any]


@dataclass
class _Session:
    """The observations of one conversation (the main session, or a subagent's)."""

    report: ImportReport
    records: list[SourceValue]
    observations: list[Observation] = field(default_factory=list)
    by_uuid: dict[str, dict[str, Any]] = field(default_factory=dict)
    said: dict[str, dict[str, Any]] = field(default_factory=dict)  # uuid -> the chat message it holds
    replies: dict[str, _Reply] = field(default_factory=dict)
    tools: dict[str, int] = field(default_factory=dict)  # tool_use id -> index of its TOOL
    subagent_of_tool: dict[str, str] = field(default_factory=dict)  # tool_use id -> agentId
    prompts: dict[str, dict[str, Any]] = field(default_factory=dict)  # uuid -> line of a user prompt
    inputs_seen: set[int] = field(default_factory=set)  # id() of user messages some generation was sent
    taken: set[str] = field(default_factory=set)  # observation ids of the whole trace (subagents included)

    def build(self) -> list[Observation]:
        for sv in self.records:
            record = sv.value
            if not isinstance(record, dict):
                raise sv.error("a Claude Code session line must be an object")
            if isinstance(record.get("uuid"), str):
                self.by_uuid[record["uuid"]] = record
            kind = record.get("type")
            if kind == "assistant":
                self._assistant(sv, record)
            elif kind == "user":
                self._user(sv, record)
            elif kind in _EVENT_TYPES:
                self._event(record)
            elif kind in _SKIPPED:
                if kind == "progress":
                    self._progress(record)
                self.report.skipped(_SKIPPED[kind])
            else:
                self.report.kept_unknown(f"Claude Code lines of type {kind!r}", "EVENT")
                self._add(Observation(id=self._unique(record.get("uuid") or f"line-{sv.line}"), type="EVENT",
                                      name=str(kind), output=record, start_time=_time(record)))
        self._unanswered_prompts()
        return self.observations

    # --- lines ---------------------------------------------------------------------------------

    def _assistant(self, sv: SourceValue, record: dict[str, Any]) -> None:
        message = record.get("message")
        if not isinstance(message, dict):
            raise sv.error("an assistant line needs a message object", "message")
        key = message.get("id") if isinstance(message.get("id"), str) else record.get("uuid")
        blocks = [without_signature(b, self.report) if isinstance(b, dict) and b.get("type") in REASONING_BLOCKS
                  else b for b in _blocks(message.get("content"))]
        reply = self.replies.get(key)
        if reply is None:
            said = {"role": "assistant", "content": blocks}
            reply = self.replies[key] = _Reply(self._unique(str(key)), said, record, record)
            fields: dict[str, Any] = {"id": reply.gen_id, "type": "GENERATION", "name": "claude-code",
                                      "input": self._history(record.get("parentUuid")), "output": blocks,
                                      "start_time": _time(self.by_uuid.get(record.get("parentUuid")) or record),
                                      "end_time": _time(record)}
            if isinstance(message.get("model"), str):
                fields["model"] = message["model"]
            self._add(Observation(**{k: v for k, v in fields.items() if v is not None or k == "input"}))
        else:
            reply.message["content"].extend(blocks)
            self.report.kept("assistant lines of one API reply (same message id) joined into one GENERATION",
                             "part of the GENERATION")
            reply.last = record
            self._update(reply.gen_id, end_time=_time(record))
        self._set_usage(reply, message.get("usage"))
        if isinstance(record.get("uuid"), str):
            self.said[record["uuid"]] = reply.message
        for block in blocks:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                self._tool_call(reply.gen_id, block, record)

    def _set_usage(self, reply: _Reply, raw: Any) -> None:
        usage = anthropic_usage(raw if isinstance(raw, dict) else None)
        if usage is not None:  # every line of a reply repeats its usage; the last one has the final count
            self._update(reply.gen_id, usage=usage)

    def _tool_call(self, gen_id: str, block: dict[str, Any], record: dict[str, Any]) -> None:
        call_id = block.get("id") if isinstance(block.get("id"), str) else None
        name = block.get("name") if isinstance(block.get("name"), str) else "tool"
        obs = Observation(id=self._unique(call_id or f"{gen_id}.tool"), type="TOOL", name=name,
                          input=block.get("input"), parent_id=gen_id, start_time=_time(record),
                          metadata={"toolCallId": call_id})
        if call_id:
            self.tools[call_id] = len(self.observations)
        self._add(obs)

    def _user(self, sv: SourceValue, record: dict[str, Any]) -> None:
        message = record.get("message")
        if not isinstance(message, dict):
            raise sv.error("a user line needs a message object", "message")
        said = {"role": "user", "content": message.get("content")}
        if isinstance(record.get("uuid"), str):
            self.said[record["uuid"]] = said
        results = [b for b in _blocks(message.get("content")) if isinstance(b, dict) and b.get("type") == "tool_result"]
        for block in results:
            self._tool_result(block, record)
        if not results and isinstance(record.get("uuid"), str):
            self.prompts[record["uuid"]] = record  # an EVENT later if no generation was sent it

    def _tool_result(self, block: dict[str, Any], record: dict[str, Any]) -> None:
        idx = self.tools.pop(block.get("tool_use_id"), None)
        output = _text(block.get("content"))
        update: dict[str, Any] = {"output": output, "end_time": _time(record)}
        if block.get("is_error") is True:
            update["level"] = "ERROR"
            update["status_message"] = output if isinstance(output, str) else "tool_result is_error"
        detail = record.get("toolUseResult")
        if idx is None:
            self.report.kept_unknown("tool results whose tool_use is not in the file", "TOOL with no input")
            self._add(Observation(id=self._unique(f"{block.get('tool_use_id')}.result"), type="TOOL",
                                  name="tool", metadata={"toolCallId": block.get("tool_use_id")}, **update))
            return
        obs = self.observations[idx]
        metadata = dict(obs.metadata or {})
        if isinstance(detail, dict):
            short = {k: v for k, v in detail.items() if is_short(v)}
            if short:
                metadata["toolUseResult"] = short
            if len(short) < len(detail):
                self.report.skipped("long fields of toolUseResult (copies of the tool result the model read)")
            if isinstance(detail.get("agentId"), str):
                self.subagent_of_tool[obs.id] = detail["agentId"]
        self._update(obs.id, metadata=metadata, **update)

    def _progress(self, record: dict[str, Any]) -> None:
        data = record.get("data")
        if isinstance(data, dict) and data.get("type") == "agent_progress" and isinstance(data.get("agentId"), str):
            tool_id = record.get("parentToolUseID")
            if isinstance(tool_id, str):
                self.subagent_of_tool.setdefault(tool_id, data["agentId"])

    def _event(self, record: dict[str, Any]) -> None:
        kind = record["type"]
        name = record.get("subtype") if kind == "system" and isinstance(record.get("subtype"), str) else kind
        output = record.get({"summary": "summary"}.get(kind, "content"))
        level = {"error": "ERROR", "warning": "WARNING"}.get(str(record.get("level")).lower())
        kept = {k: v for k, v in record.items() if k not in ("type", "content", "summary", "uuid", "parentUuid",
                                                            "timestamp", "sessionId", "cwd", "version",
                                                            "gitBranch", "userType", "slug", "isSidechain")}
        fields: dict[str, Any] = {"id": self._unique(record.get("uuid") or record.get("leafUuid") or kind),
                                  "type": "EVENT", "name": name, "output": output, "start_time": _time(record)}
        if level:
            fields["level"] = level
        if kept:
            fields["metadata"] = kept
        self._add(Observation(**fields))

    def _unanswered_prompts(self) -> None:
        """User prompts no generation was sent (the last words of a session) become EVENTs."""
        for uuid, record in self.prompts.items():
            said = self.said[uuid]
            if id(said) in self.inputs_seen:
                continue
            self.report.kept("user messages no assistant reply follows", "EVENT")
            self._add(Observation(id=self._unique(uuid), type="EVENT", name="user", output=said["content"],
                                  start_time=_time(record), metadata={"role": "user"}))

    # --- helpers -------------------------------------------------------------------------------

    def _history(self, parent: Any) -> list[dict[str, Any]]:
        """The messages on the ``parentUuid`` chain ending at ``parent``, oldest first (replies once each)."""
        chain: list[dict[str, Any]] = []
        seen: set[int] = set()
        while isinstance(parent, str) and parent in self.by_uuid:
            said = self.said.get(parent)
            if said is not None and id(said) not in seen:
                seen.add(id(said))
                chain.append(said)
                self.inputs_seen.add(id(said))
            parent = self.by_uuid[parent].get("parentUuid")
        chain.reverse()
        return chain

    def _unique(self, candidate: str) -> str:
        obs_id, n = candidate, 1
        while obs_id in self.taken:
            n += 1
            obs_id = f"{candidate}#{n}"
        self.taken.add(obs_id)
        return obs_id

    def _add(self, obs: Observation) -> None:
        self.observations.append(obs)

    def _update(self, obs_id: str, **update: Any) -> None:
        for i in range(len(self.observations) - 1, -1, -1):
            if self.observations[i].id == obs_id:
                self.observations[i] = updated(self.observations[i], **update)
                return


def read_claude_code(values: Iterable[SourceValue], context: ImportContext | None = None) -> Iterator[Trace]:
    """One trace per Claude Code session file (see the module docstring).

    Raises:
        evalkit.errors.InputError: a line that is not an object, or a message line without a message.
    """
    report = context.report if context is not None else ImportReport()
    records = list(values)
    if not records:
        return
    first = next((sv.value for sv in records if isinstance(sv.value, dict) and "sessionId" in sv.value), {})
    agent_id = first.get("agentId") if isinstance(first.get("agentId"), str) else None
    session_id = str(first.get("sessionId") or Path(records[0].file).stem)
    main = [sv for sv in records if agent_id is not None or not _inline_sidechain(sv.value)]
    session = _Session(report, main)
    observations = session.build()
    file = Path(records[0].file)
    if agent_id is None:
        _nest_sidechains([sv for sv in records if _inline_sidechain(sv.value)], session, report)
        _nest_subagent_files(file.parent / session_id / "subagents", session, report)
    metadata = {k: first[k] for k in ("sessionId", "agentId", "cwd", "gitBranch", "version", "slug")
                if isinstance(first.get(k), str)}
    fields: dict[str, Any] = {
        "id": f"{session_id}/agent-{agent_id}" if agent_id else session_id,
        "observations": observations, "metadata": {**metadata, "source": "claude-code"}}
    prompt = next((session.said[u]["content"] for u in session.prompts), None)
    if prompt is not None:
        fields["input"] = _text(prompt)
    answer = next((r.message for r in reversed(session.replies.values())
                   if any(isinstance(b, dict) and b.get("type") == "text" for b in r.message["content"])), None)
    if answer is not None:
        fields["output"] = "\n\n".join(str(b.get("text", "")) for b in answer["content"]
                                        if isinstance(b, dict) and b.get("type") == "text")
    yield Trace(**fields)


def _inline_sidechain(record: Any) -> bool:
    """A subagent's line written into the session file itself (Claude Code before subagent files)."""
    return isinstance(record, dict) and record.get("isSidechain") is True and "agentId" not in record


def _nest(sub: _Session, agent_key: str, tool_id: str | None, session: _Session, name: str) -> None:
    """Put a subagent's observations under an AGENT observation, itself under the TOOL call that started it."""
    observations = sub.build()
    if not observations:
        return
    times = [t for o in observations for t in (o.start_time, o.end_time) if t]
    agent_id = session._unique(f"agent-{agent_key}")
    tool = next((o for o in session.observations if o.id == tool_id), None) if tool_id else None
    fields: dict[str, Any] = {"id": agent_id, "type": "AGENT", "name": name, "parent_id": tool_id,
                              "metadata": {"agentId": agent_key}}
    if tool is not None:
        fields["input"] = tool.input
        if tool.has_output:
            fields["output"] = tool.output
    if times:
        fields["start_time"], fields["end_time"] = min(times), max(times)
    session.observations.append(Observation(**fields))
    for obs in observations:
        if obs.parent_id is None:
            obs = updated(obs, parent_id=agent_id)
        session.observations.append(obs)


def _subagent_name(session: _Session, tool_id: str | None) -> str:
    tool = next((o for o in session.observations if o.id == tool_id), None) if tool_id else None
    kind = tool.input.get("subagent_type") if tool is not None and isinstance(tool.input, dict) else None
    return str(kind) if kind else "subagent"


def _nest_subagent_files(folder: Path, session: _Session, report: ImportReport) -> None:
    """Subagent sessions from ``SESSION/subagents/agent-ID.jsonl``, each under the call that started it."""
    if not folder.is_dir():
        if session.subagent_of_tool:
            report.warn(f"{folder}: not found, so the {len(session.subagent_of_tool)} subagent session(s) the "
                        "Task calls started are not in the trace (keep the session's folder beside its file)")
        return
    tool_of_agent = {agent: tool for tool, agent in session.subagent_of_tool.items()}
    for path in sorted(folder.glob("agent-*.jsonl")):
        agent_key = path.stem.removeprefix("agent-")
        tool_id = tool_of_agent.pop(agent_key, None)
        sub = _Session(report, list(iter_source_values(path)), taken=session.taken)
        if tool_id is None:
            report.kept("subagent sessions no tool call started (context compaction)", "AGENT at the root")
        else:
            report.kept("subagent sessions, each under the Task call that started it", "AGENT")
        _nest(sub, agent_key, tool_id, session, _subagent_name(session, tool_id) if tool_id else "compaction"
              if agent_key.startswith("acompact") else "subagent")
    for agent_key in tool_of_agent:
        report.warn(f"{folder}: no agent-{agent_key}.jsonl, so that subagent's steps are not in the trace")


def _nest_sidechains(lines: list[SourceValue], session: _Session, report: ImportReport) -> None:
    """Sidechain lines of one file, one subagent per chain, each under the Task call whose prompt starts it."""
    if not lines:
        return
    parent_of = {sv.value.get("uuid"): sv.value.get("parentUuid") for sv in lines}
    chains: dict[str, list[SourceValue]] = {}
    for sv in lines:
        root = sv.value.get("uuid")
        while parent_of.get(root) in parent_of:
            root = parent_of[root]
        chains.setdefault(str(root), []).append(sv)
    open_tasks = {o.id: o for o in session.observations
                  if o.type == "TOOL" and o.name in _SUBAGENT_TOOLS and isinstance(o.input, dict)}
    for n, chain in enumerate(chains.values()):
        start = chain[0].value.get("message", {})
        prompt = _text(start.get("content")) if isinstance(start, dict) else None
        tool_id = next((i for i, o in open_tasks.items() if o.input.get("prompt") == prompt), None)
        open_tasks.pop(tool_id, None)
        report.kept("sidechain lines (a subagent's conversation)" + ("" if tool_id else " no Task call matches"),
                    "AGENT" if tool_id else "AGENT at the root")
        _nest(_Session(report, chain, taken=session.taken), f"sidechain-{n + 1}", tool_id, session,
              _subagent_name(session, tool_id))


def _blocks(content: Any) -> list[Any]:
    if isinstance(content, list):
        return content
    return [] if content is None else [{"type": "text", "text": content}] if isinstance(content, str) else [content]


def _text(content: Any) -> Any:
    if isinstance(content, list) and content and all(isinstance(b, dict) and b.get("type") == "text" for b in content):
        return "\n\n".join(str(b.get("text", "")) for b in content)
    return content


def _time(record: dict[str, Any] | None) -> str | None:
    stamp = record.get("timestamp") if isinstance(record, dict) else None
    return stamp if isinstance(stamp, str) else None
