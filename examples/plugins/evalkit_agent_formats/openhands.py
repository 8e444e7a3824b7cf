"""OpenHands event streams: a list of actions and observations, one trace per file (see README.md)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from evalkit.traces import (
    ImportContext,
    ImportReport,
    Observation,
    SourceValue,
    Trace,
    TraceFormat,
    maybe_json,
)

_SOURCES = frozenset({"agent", "user", "environment"})
_USAGE = {
    "prompt_tokens": "input",
    "completion_tokens": "output",
    "total_tokens": "total",
    "cache_read_input_tokens": "cache_read_input",
    "cache_creation_input_tokens": "cache_creation_input",
}


def looks_like_openhands(value: Any) -> bool:
    """One OpenHands event: an integer id, a source, and an action or an observation."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("id"), int)
        and value.get("source") in _SOURCES
        and ("action" in value or "observation" in value)
        and "timestamp" in value
    )


def _usage(raw: Any) -> dict[str, int | float] | None:
    if not isinstance(raw, dict):
        return None
    out = {
        name: raw[key]
        for key, name in _USAGE.items()
        if isinstance(raw.get(key), int | float) and not isinstance(raw.get(key), bool)
    }
    return out or None


def _failed(observation: dict[str, Any]) -> bool:
    extras = observation.get("extras")
    exit_code = extras.get("metadata", {}).get("exit_code") if isinstance(extras, dict) else None
    return observation.get("success") is False or (isinstance(exit_code, int) and exit_code != 0)


def _generation(response: dict[str, Any]) -> Observation:
    choices = response.get("choices")
    message = (
        choices[0].get("message")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict)
        else None
    )
    fields: dict[str, Any] = {
        "id": str(response["id"]),
        "type": "GENERATION",
        "name": "llm",
        "output": message,
        "metadata": {k: v for k, v in response.items() if k not in ("choices", "usage")},
    }
    if isinstance(response.get("model"), str):
        fields["model"] = response["model"]
    if (usage := _usage(response.get("usage"))) is not None:
        fields["usage"] = usage
    return Observation(**fields)


def _trace(events: list[SourceValue], report: ImportReport) -> Trace:
    by_cause: dict[int, dict[str, Any]] = {}
    for sv in events:
        if "observation" in sv.value and isinstance(sv.value.get("cause"), int):
            by_cause[sv.value["cause"]] = sv.value
    observations: list[Observation] = []
    generations: set[str] = set()
    answered: set[int] = set()
    first_user: Any = None
    last_agent: Any = None
    for sv in events:
        event = sv.value
        common = {"start_time": event.get("timestamp"), "metadata": {"source": event.get("source")}}
        if "action" in event:
            args = event.get("args") if isinstance(event.get("args"), dict) else {}
            meta = event.get("tool_call_metadata")
            if event["action"] == "message":
                text = args.get("content", event.get("message"))
                if event.get("source") == "user" and first_user is None:
                    first_user = text
                if event.get("source") == "agent":
                    last_agent = text
                observations.append(
                    Observation(
                        id=f"event-{event['id']}",
                        type="EVENT",
                        name=f"{event.get('source')} message",
                        input=text,
                        **common,
                    )
                )
                continue
            if event["action"] == "change_agent_state":
                observations.append(
                    Observation(
                        id=f"event-{event['id']}",
                        type="EVENT",
                        name="change_agent_state",
                        input=args,
                        level="DEBUG",
                        **common,
                    )
                )
                continue
            parent = None
            if (
                isinstance(meta, dict)
                and isinstance(meta.get("model_response"), dict)
                and meta["model_response"].get("id")
            ):
                response = meta["model_response"]
                parent = str(response["id"])
                if parent not in generations:
                    generations.add(parent)
                    observations.append(_generation(response))
            name = meta.get("function_name") if isinstance(meta, dict) else None
            fields: dict[str, Any] = {
                "id": f"event-{event['id']}",
                "type": "TOOL",
                "name": name or event["action"],
                "input": args,
                "parent_id": parent,
                **common,
            }
            fields["metadata"] = {
                **common["metadata"],
                "action": event["action"],
                "toolCallId": meta.get("tool_call_id") if isinstance(meta, dict) else None,
            }
            result = by_cause.get(event["id"])
            if result is not None:
                answered.add(result["id"])
                fields["output"] = maybe_json(result.get("content"))
                fields["end_time"] = result.get("timestamp")
                fields["metadata"]["observation"] = {
                    k: result.get(k) for k in ("observation", "message", "extras")
                }
                if _failed(result):
                    fields["level"] = "ERROR"
                    fields["status_message"] = result.get("message")
            observations.append(Observation(**fields))
        elif event.get("observation") == "null":
            report.skipped("OpenHands null observations ('No observation' placeholders)")
        elif event["id"] not in answered:
            level = "DEBUG" if event.get("observation") == "agent_state_changed" else None
            observations.append(
                Observation(
                    id=f"event-{event['id']}",
                    type="EVENT",
                    name=event.get("observation"),
                    output=event.get("content"),
                    level=level,
                    **{**common, "metadata": {**common["metadata"], "extras": event.get("extras")}},
                )
            )
    file = events[0].file
    fields = {
        "id": Path(file).name.removesuffix(".json").removesuffix(".jsonl"),
        "observations": observations,
        "metadata": {"source": "openhands", "events": len(events)},
    }
    if first_user is not None:
        fields["input"] = first_user
    if last_agent is not None:
        fields["output"] = last_agent
    return Trace(**fields)


def read_openhands(values: Iterable[SourceValue], context: ImportContext | None = None) -> Iterator[Trace]:
    """One trace from all the events of the input, in event-id order."""
    report = context.report if context is not None else ImportReport()
    events: list[SourceValue] = []
    for sv in values:
        if not looks_like_openhands(sv.value):
            raise sv.error("expected an OpenHands event {id, timestamp, source, action|observation}")
        events.append(sv)
    if events:
        events.sort(key=lambda sv: sv.value["id"])
        yield _trace(events, report)


FORMAT = TraceFormat("openhands", looks_like_openhands, read_openhands, per_record=False, takes_context=True)
