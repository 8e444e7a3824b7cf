"""SWE-agent 0.x trajectories (``.traj``): one trace per document (see README.md)."""

from __future__ import annotations

import ast
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


def looks_like_swe_agent(value: Any) -> bool:
    """A ``.traj`` document: a ``trajectory`` list of steps with actions and a chat ``history``."""
    if not isinstance(value, dict):
        return False
    steps, history = value.get("trajectory"), value.get("history")
    return (
        isinstance(steps, list)
        and isinstance(history, list)
        and all(isinstance(s, dict) and "action" in s for s in steps[:5])
    )


def _literal(text: Any) -> Any:
    """SWE-agent writes some fields as Python reprs (``model_stats``) or JSON text (``state``)."""
    if not isinstance(text, str):
        return text
    parsed = maybe_json(text.strip())
    if parsed is not text.strip() and not isinstance(parsed, str):
        return parsed
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _trace_id(sv: SourceValue) -> str:
    name = Path(sv.file).name
    for suffix in (".json", ".jsonl", ".traj"):
        name = name.removesuffix(suffix)
    where = sv.line if sv.line is not None else sv.index
    return name if where is None else f"{name}-{where}"


def _trace(sv: SourceValue, report: ImportReport) -> Trace:
    doc = sv.value
    history = doc["history"]
    turns = [i for i, m in enumerate(history) if isinstance(m, dict) and m.get("role") == "assistant"]
    if len(turns) != len(doc["trajectory"]):
        report.warn(
            f"{sv.file}: {len(doc['trajectory'])} trajectory steps but {len(turns)} assistant "
            "messages in history; generations without a history turn have no input"
        )
    observations: list[Observation] = []
    for k, step in enumerate(doc["trajectory"]):
        if not isinstance(step, dict):
            raise sv.error("trajectory step must be an object", f"trajectory[{k}]")
        gen: dict[str, Any] = {
            "id": f"step{k}",
            "type": "GENERATION",
            "name": "agent turn",
            "output": step.get("response"),
            "metadata": {"thought": step.get("thought"), "state": _literal(step.get("state"))},
        }
        if k < len(turns):
            gen["input"] = history[: turns[k]]
        observations.append(Observation(**gen))
        action = step.get("action")
        command = (
            action.strip().split(maxsplit=1)[0] if isinstance(action, str) and action.strip() else "action"
        )
        observations.append(
            Observation(
                id=f"step{k}.action",
                type="TOOL",
                name=command,
                input=action,
                output=step.get("observation"),
                parent_id=f"step{k}",
            )
        )
    info = doc.get("info") if isinstance(doc.get("info"), dict) else {}
    metadata = {
        "source": "swe-agent",
        "environment": doc.get("environment"),
        **{k: _literal(v) for k, v in info.items() if k != "submission"},
    }
    first_task = next(
        (
            m.get("content")
            for m in history
            if isinstance(m, dict) and m.get("role") == "user" and not m.get("is_demo")
        ),
        None,
    )
    fields: dict[str, Any] = {"id": _trace_id(sv), "observations": observations, "metadata": metadata}
    if first_task is not None:
        fields["input"] = first_task
    if "submission" in info:
        fields["output"] = info["submission"]
    return Trace(**fields)


def read_swe_agent(values: Iterable[SourceValue], context: ImportContext | None = None) -> Iterator[Trace]:
    """One trace per ``.traj`` document."""
    report = context.report if context is not None else ImportReport()
    for sv in values:
        if not looks_like_swe_agent(sv.value):
            raise sv.error("expected a SWE-agent trajectory {trajectory: [...], history: [...], info}")
        yield _trace(sv, report)


FORMAT = TraceFormat("swe-agent", looks_like_swe_agent, read_swe_agent, takes_context=True)
