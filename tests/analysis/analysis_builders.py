"""Builders for small, readable traces and annotations used across the analysis tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from evalkit.contracts.annotation import Annotation
from evalkit.contracts.trace import Observation, Trace

START = datetime(2026, 1, 5, 12, 0, 0, tzinfo=UTC)


def iso(seconds: float) -> str:
    return (START + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def make_trace(trace_id: str, *, tools: int = 1, failed_tools: int = 0, duration_s: float = 2.0,
               metadata: dict[str, Any] | None = None, answer: str = "Your order has shipped.",
               warning: bool = False) -> Trace:
    """A support-style trace: root agent, a plan generation, ``tools`` tool calls, a respond generation."""
    obs = [Observation(id=f"{trace_id}-root", type="AGENT", name="agent", start_time=iso(0),
                       end_time=iso(duration_s), input="Where is my order?", output={"answer": answer})]
    obs.append(Observation(id=f"{trace_id}-plan", type="GENERATION", name="plan", parent_id=f"{trace_id}-root",
                           start_time=iso(0.01), end_time=iso(0.2),
                           input=[{"role": "user", "content": "Where is my order?"}],
                           output={"content": "look it up", "tool_calls": []},
                           usage={"input": 20, "output": 5, "total": 25},
                           level="WARNING" if warning else None))
    for i in range(tools):
        failed = i < failed_tools
        extra: dict[str, Any] = ({"level": "ERROR", "status_message": "tool timed out"} if failed
                                 else {"output": {"status": "shipped"}})
        obs.append(Observation(id=f"{trace_id}-tool{i}", type="TOOL", name=f"tool_{i}",
                               parent_id=f"{trace_id}-root", start_time=iso(0.3), end_time=iso(0.4),
                               input={"order_id": "A1"}, **extra))
    obs.append(Observation(id=f"{trace_id}-respond", type="GENERATION", name="respond",
                           parent_id=f"{trace_id}-root", start_time=iso(0.5), end_time=iso(duration_s - 0.01),
                           input=[{"role": "user", "content": "Where is my order?"}], output={"answer": answer},
                           usage={"input": 30, "output": 10, "total": 40}))
    return Trace(id=trace_id, name="support-turn", input="Where is my order?", output=answer,
                 metadata=metadata if metadata is not None else {}, observations=obs)


def note(trace_id: str, label: str = "pass", modes: tuple[str, ...] = (), *, annotator: str = "ana",
         minute: int = 0, text: str | None = None, first: str | None = None) -> Annotation:
    """An annotation stamped ``minute`` minutes after a fixed time."""
    fields: dict[str, Any] = {"trace_id": trace_id, "annotator": annotator, "label": label,
                              "at": iso(60 * minute), "modes": list(modes)}
    if text is not None:
        fields["note"] = text
    if first is not None:
        fields["first_failing_obs"] = first
    return Annotation(**fields)
