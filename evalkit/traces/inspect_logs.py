"""Inspect AI eval logs: ``.json`` logs and zipped ``.eval`` logs, one trace per sample and epoch.

A log holds the run (``eval``: task, model, ids; ``results``; ``stats``) and its ``samples``; a zipped
log keeps them in ``header.json`` and ``samples/ID_epoch_N.json`` (:mod:`evalkit.traces.source` reads
both into values). A sample's ``events`` are its trace: spans (``span_begin``/``span_end``, or the
older ``step`` events) are SPANs (a ``solver`` span a CHAIN, an ``agent`` span an AGENT); each
``model`` event a GENERATION (input = the messages sent, output = the first choice's message, usage,
an ``error`` makes it an ERROR); each ``tool`` event a TOOL under the generation whose tool call it
answers (output = its result, an ``error`` an ERROR); sandbox, info, logger, error, input, approval and
limit events are EVENTs. ``attachment://`` references are resolved from the sample's ``attachments``.
A sample without events (older logs) gets a GENERATION per assistant message.

The sample's outcome goes to trace metadata, not to the observations: ``scores`` (each scorer's
value, answer and explanation), ``target``, ``error``, and the sample's own ``metadata``. State and
store diffs, scorer spans and score events (the grading, with the grader's model calls: an outcome a
judge must not see in the trace; the scores are in metadata), each model call's raw request and tool
definitions (the input repeats the messages) are counted and left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime, timedelta
from typing import Any

from evalkit.contracts.trace import Observation, Trace
from evalkit.traces.observation_edits import updated
from evalkit.traces.report import ImportContext, ImportReport
from evalkit.traces.source import SourceValue

__all__ = ["looks_like_inspect", "read_inspect"]

_SPAN_TYPES = {"agent": "AGENT", "solver": "CHAIN", "handoff": "AGENT"}
_GRADING = "scorer spans (how the sample was graded, the grader's model calls included; its scores are in trace metadata)"
_EVENT_LEVELS = {"error": "ERROR", "sample_limit": "WARNING"}
_LEFT_OUT = {
    "state": "state and store diffs (the messages and tool events show what changed)",
    "store": "state and store diffs (the messages and tool events show what changed)",
    "score": "score events (the sample's scores are in trace metadata)",
    "sample_init": "sample_init events (the sample's input is the trace input)",
}
_USAGE = {"input_tokens": "input", "output_tokens": "output", "input_tokens_cache_read": "cache_read_input",
          "input_tokens_cache_write": "cache_creation_input", "reasoning_tokens": "reasoning",
          "total_tokens": "total"}
_ATTACHMENT = "attachment://"


def looks_like_inspect(value: Any) -> bool:
    """An Inspect AI log (or a zipped log's header): an ``eval`` naming its task, with a version and status."""
    return (isinstance(value, dict) and isinstance(value.get("eval"), dict) and "task" in value["eval"]
            and "version" in value and "status" in value)


def _resolve(value: Any, attachments: dict[str, Any]) -> Any:
    """``value`` with every ``attachment://HASH`` string replaced by the attachment it names."""
    if isinstance(value, str):
        if value.startswith(_ATTACHMENT) and value[len(_ATTACHMENT):] in attachments:
            return attachments[value[len(_ATTACHMENT):]]
        return value
    if isinstance(value, list):
        return [_resolve(v, attachments) for v in value]
    if isinstance(value, dict):
        return {k: _resolve(v, attachments) for k, v in value.items()}
    return value


def _end(event: dict[str, Any], seconds: Any) -> str | None:
    if isinstance(event.get("completed"), str):
        return event["completed"]
    start = event.get("timestamp")
    if isinstance(start, str) and isinstance(seconds, int | float):
        try:
            return (datetime.fromisoformat(start) + timedelta(seconds=seconds)).isoformat()
        except ValueError:
            return None
    return start if isinstance(start, str) else None


class _Sample:
    """The observations of one sample's events."""

    def __init__(self, sample: dict[str, Any], report: ImportReport) -> None:
        self.sample = sample
        self.report = report
        self.attachments = sample.get("attachments") if isinstance(sample.get("attachments"), dict) else {}
        self.observations: list[Observation] = []
        self.index: dict[str, int] = {}
        self.caller: dict[str, str] = {}  # tool call id -> the GENERATION that made it
        self.steps: list[str] = []  # open ``step`` spans (older logs)
        self.grading: set[str] = set()  # ids of scorer spans and the spans inside them

    def build(self) -> list[Observation]:
        events = self.sample.get("events")
        if isinstance(events, list) and events:
            for event in events:
                if isinstance(event, dict):
                    self._event(event)
        else:
            self._from_messages()
        return self.observations

    def _add(self, **fields: Any) -> None:
        obs_id, n = str(fields["id"]), 1
        while f"{fields['id']}" in self.index:
            n += 1
            fields["id"] = f"{obs_id}#{n}"
        self.index[fields["id"]] = len(self.observations)
        self.observations.append(Observation(**{k: v for k, v in fields.items() if v is not None or k in (
            "input", "output")}))

    def _set(self, obs_id: str, **update: Any) -> None:
        i = self.index.get(obs_id)
        if i is None:
            return
        self.observations[i] = updated(self.observations[i], **update)

    def _parent(self, event: dict[str, Any]) -> str | None:
        span = event.get("span_id")
        if isinstance(span, str) and span in self.index:
            return span
        return self.steps[-1] if self.steps else None

    def _event(self, event: dict[str, Any]) -> None:
        kind = event.get("event")
        at = event.get("timestamp")
        if event.get("span_id") in self.grading or (kind == "span_begin" and (
                event.get("type") == "scorer" or event.get("parent_id") in self.grading)):
            if kind == "span_begin":
                if event.get("type") == "scorer":
                    self.report.skipped(_GRADING)
                self.grading.add(str(event.get("id")))
            return
        if kind == "span_begin":
            span_id = str(event.get("id"))
            parent = event.get("parent_id") if event.get("parent_id") in self.index else self._parent(event)
            self._add(id=span_id, type=_SPAN_TYPES.get(str(event.get("type")), "SPAN"), name=event.get("name"),
                      parent_id=parent, start_time=at, metadata={"spanType": event.get("type")})
        elif kind == "span_end":
            self._set(str(event.get("id")), end_time=at)
        elif kind == "step":
            self._step(event, at)
        elif self.steps and self.steps[-1] == _GRADING:
            return  # inside an older log's scorer step
        elif kind == "model":
            self._model(event, at)
        elif kind == "tool":
            self._tool(event, at)
        elif kind in _LEFT_OUT:
            self.report.skipped(_LEFT_OUT[kind])
        else:
            self._other(event, str(kind), at)

    def _step(self, event: dict[str, Any], at: Any) -> None:
        if event.get("type") == "scorer" or (self.steps and self.steps[-1] == _GRADING):
            if event.get("action") == "begin":
                if event.get("type") == "scorer":
                    self.report.skipped(_GRADING)
                self.steps.append(_GRADING)
            elif self.steps:
                self.steps.pop()
            return
        if self.steps and self.steps[-1] == _GRADING:
            return
        if event.get("action") == "begin":
            step_id = f"step-{len(self.observations) + 1}"
            self._add(id=step_id, type=_SPAN_TYPES.get(str(event.get("type")), "SPAN"), name=event.get("name"),
                      parent_id=self.steps[-1] if self.steps else None, start_time=at,
                      metadata={"spanType": event.get("type")})
            self.steps.append(self.observations[-1].id)
        elif self.steps:
            self._set(self.steps.pop(), end_time=at)

    def _model(self, event: dict[str, Any], at: Any) -> None:
        output = event.get("output") if isinstance(event.get("output"), dict) else {}
        choices = output.get("choices") if isinstance(output.get("choices"), list) else []
        message = _resolve(choices[0].get("message"), self.attachments) if choices and isinstance(
            choices[0], dict) else None
        gen_id = str(event.get("uuid") or f"model-{len(self.observations) + 1}")
        usage_raw = output.get("usage") if isinstance(output.get("usage"), dict) else {}
        usage = {name: usage_raw[key] for key, name in _USAGE.items()
                 if isinstance(usage_raw.get(key), int | float) and not isinstance(usage_raw.get(key), bool)}
        fields: dict[str, Any] = {"id": gen_id, "type": "GENERATION", "name": event.get("model"),
                                  "model": output.get("model") or event.get("model"),
                                  "input": _resolve(event.get("input"), self.attachments), "output": message,
                                  "parent_id": self._parent(event), "start_time": at,
                                  "end_time": _end(event, output.get("time")), "usage": usage or None}
        if event.get("error"):
            fields["level"], fields["status_message"] = "ERROR", str(event["error"])
        if "call" in event or "tools" in event:
            self.report.skipped("each model call's raw request and tool definitions (its input repeats the "
                                "messages)")
        config = {k: v for k, v in (event.get("config") or {}).items() if v is not None}
        if config:
            fields["metadata"] = {"config": config}
        self._add(**fields)
        for call in (message or {}).get("tool_calls") or []:
            if isinstance(call, dict) and isinstance(call.get("id"), str):
                self.caller[call["id"]] = self.observations[-1].id

    def _tool(self, event: dict[str, Any], at: Any) -> None:
        call_id = event.get("id") if isinstance(event.get("id"), str) else None
        fields: dict[str, Any] = {"id": call_id or f"tool-{len(self.observations) + 1}", "type": "TOOL",
                                  "name": event.get("function") or "tool",
                                  "input": _resolve(event.get("arguments"), self.attachments),
                                  "output": _resolve(event.get("result"), self.attachments),
                                  "parent_id": self.caller.get(call_id or "") or self._parent(event),
                                  "start_time": at, "end_time": _end(event, event.get("working_time")),
                                  "metadata": {"toolCallId": call_id}}
        error = event.get("error")
        if isinstance(error, dict) or error:
            fields["level"] = "ERROR"
            fields["status_message"] = error.get("message", str(error)) if isinstance(error, dict) else str(error)
        self._add(**fields)

    def _other(self, event: dict[str, Any], kind: str, at: Any) -> None:
        known = kind in ("sandbox", "info", "logger", "error", "input", "approval", "subtask", "sample_limit",
                         "compaction", "checkpoint")
        if not known:
            self.report.kept_unknown(f"Inspect events of type {kind!r}", "EVENT")
        body = {k: _resolve(v, self.attachments) for k, v in event.items()
                if k not in ("event", "timestamp", "span_id", "working_start", "uuid", "pending")}
        name = kind if kind != "sandbox" else f"sandbox.{event.get('action', 'call')}"
        self._add(id=str(event.get("uuid") or f"{kind}-{len(self.observations) + 1}"), type="EVENT", name=name,
                  parent_id=self._parent(event), start_time=at, output=body, level=_EVENT_LEVELS.get(kind))

    def _from_messages(self) -> None:
        messages = _resolve(self.sample.get("messages") or [], self.attachments)
        for i, message in enumerate(messages):
            if not isinstance(message, dict):
                continue
            if message.get("role") == "assistant":
                self.report.kept("assistant messages of samples without events", "GENERATION")
                self._add(id=str(message.get("id") or f"message-{i}"), type="GENERATION", name="assistant",
                          model=message.get("model"), input=messages[:i], output=message)
                for call in message.get("tool_calls") or []:
                    if isinstance(call, dict) and isinstance(call.get("id"), str):
                        self.caller[call["id"]] = self.observations[-1].id
            elif message.get("role") == "tool":
                self.report.kept("tool messages of samples without events", "TOOL")
                call_id = message.get("tool_call_id")
                fields: dict[str, Any] = {"id": str(message.get("id") or call_id or f"message-{i}"), "type": "TOOL",
                                          "name": message.get("function") or "tool", "output": message.get("content"),
                                          "parent_id": self.caller.get(call_id) if isinstance(call_id, str) else None,
                                          "metadata": {"toolCallId": call_id}}
                error = message.get("error")
                if error:
                    fields["level"] = "ERROR"
                    fields["status_message"] = error.get("message", str(error)) if isinstance(error, dict) else str(error)
                self._add(**fields)


def _outcome(sample: dict[str, Any]) -> dict[str, Any]:
    """What the sample's scorers and its dataset say of it: scores, target, error (trace metadata)."""
    out: dict[str, Any] = {}
    scores = sample.get("scores")
    if isinstance(scores, dict) and scores:
        out["scores"] = {name: {k: v for k, v in score.items() if k in ("value", "answer", "explanation")}
                         if isinstance(score, dict) else score for name, score in scores.items()}
    for key in ("target", "error", "limit"):
        if sample.get(key) not in (None, "", []):
            out[key] = sample[key]
    return out


def _sample_trace(sample: dict[str, Any], log: dict[str, Any], report: ImportReport) -> Trace:
    run = log.get("eval") if isinstance(log.get("eval"), dict) else {}
    sample_id, epoch = sample.get("id"), sample.get("epoch", 1)
    run_key = run.get("eval_id") or run.get("run_id") or run.get("task")
    reader = _Sample(sample, report)
    observations = reader.build()
    sample = _resolve({k: v for k, v in sample.items() if k not in ("events", "attachments", "messages")},
                      reader.attachments)
    user = sample.get("metadata") if isinstance(sample.get("metadata"), dict) else {}
    metadata = {**user, **_outcome(sample), "sampleId": sample_id, "epoch": epoch, "task": run.get("task"),
                "model": run.get("model"), "evalId": run.get("eval_id"), "runId": run.get("run_id"),
                "source": "inspect"}
    output = sample.get("output")
    completion = output.get("completion") if isinstance(output, dict) else None
    fields: dict[str, Any] = {"id": f"{run_key}/{sample_id}/{epoch}", "name": run.get("task"),
                              "input": sample.get("input"), "observations": observations,
                              "metadata": {k: v for k, v in metadata.items() if v is not None}}
    if completion:
        fields["output"] = completion
    return Trace(**fields)


def read_inspect(values: Iterable[SourceValue], context: ImportContext | None = None) -> Iterator[Trace]:
    """One trace per sample and epoch of an Inspect AI log (see the module docstring).

    Raises:
        evalkit.errors.InputError: a value that is neither a log nor one of its samples, or a sample
            before its log's header.
    """
    report = context.report if context is not None else ImportReport()
    log: dict[str, Any] | None = None
    file, n = None, 0
    for sv in values:
        value, file = sv.value, sv.file
        if looks_like_inspect(value):
            log = value
            samples = value.get("samples")
            for i, sample in enumerate(samples if isinstance(samples, list) else []):
                if not isinstance(sample, dict):
                    raise sv.error("a sample must be an object", f"samples[{i}]")
                n += 1
                yield _sample_trace(sample, value, report)
        elif isinstance(value, dict) and "epoch" in value and "id" in value:
            if log is None:
                raise sv.error("an Inspect sample before its log's header")
            n += 1
            yield _sample_trace(value, log, report)
        else:
            raise sv.error("not an Inspect AI log or sample")
    if log is not None and n == 0:
        where = str(file).partition("!")[0]
        report.empty_files.append(where)
        report.warn(f"{where}: an Inspect log without samples (status {log.get('status')!r}; written with "
                    "log_samples off?)")
