"""Cases distilled from past traces: what a real user asked, tagged with how the agent did on it.

A derived case has the tuple ``{outcome: ...}`` and the trace's input prompt as its query, so a
failure seen in production becomes a test the agent is run on again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from evalkit.contracts.dataset import Case
from evalkit.contracts.labels import HumanLabel
from evalkit.contracts.trace import Trace
from evalkit.suite.merge import new_case

OUTCOME_DIMENSION = "outcome"


def input_prompt(value: Any) -> str | None:
    """The prompt a trace's input carries: the text itself, ``prompt``/``query``/``input``, or the last user message.

    Returns None when the input holds no text prompt.
    """
    if isinstance(value, str):
        return value if value.strip() else None
    if isinstance(value, Mapping):
        for key in ("prompt", "query", "input", "message", "messages"):
            if key in value:
                return input_prompt(value[key])
        return None
    if isinstance(value, list):
        for message in reversed(value):
            if isinstance(message, Mapping) and message.get("role") == "user":
                return input_prompt(message.get("content"))
        texts = [part.get("text") for part in value if isinstance(part, Mapping) and part.get("type") == "text"]
        joined = "\n".join(t for t in texts if isinstance(t, str))
        return joined or None
    return None


def outcomes_from_labels(labels: Iterable[HumanLabel]) -> dict[str, str]:
    """Per trace: ``fail`` when any label fails it, else ``pass`` when one passes it; deferrals decide nothing."""
    out: dict[str, str] = {}
    for label in labels:
        if label.label == "fail":
            out[label.trace_id] = "fail"
        elif label.label == "pass":
            out.setdefault(label.trace_id, "pass")
    return out


@dataclass(frozen=True)
class Derived:
    """The derived cases, and the traces left out with the reason (counted, never silently)."""

    cases: list[Case]
    skipped: dict[str, str] = field(default_factory=dict)
    """trace id -> why no case was derived from it."""


def derive_cases(traces: Iterable[Trace], outcomes: Mapping[str, str], *,
                 only: Iterable[str] | None = None) -> Derived:
    """One derived case per trace that has an outcome and a text prompt, in trace order.

    Args:
        traces: the past traces.
        outcomes: trace id -> outcome (``pass``/``fail``, or any name the designer uses).
        only: when given, keep only traces with one of these outcomes (e.g. ``["fail"]``).
    """
    wanted = None if only is None else set(only)
    cases: list[Case] = []
    skipped: dict[str, str] = {}
    for trace in traces:
        outcome = outcomes.get(trace.id)
        if outcome is None:
            skipped[trace.id] = "no outcome (no label or verdict for this trace)"
            continue
        if wanted is not None and outcome not in wanted:
            skipped[trace.id] = f"outcome {outcome!r} not selected"
            continue
        prompt = input_prompt(trace.input)
        if prompt is None:
            skipped[trace.id] = "its input holds no text prompt"
            continue
        cases.append(new_case({OUTCOME_DIMENSION: outcome}, prompt, "derived", origin_trace_id=trace.id,
                              selected_by=f"{OUTCOME_DIMENSION}={outcome}"))
    return Derived(cases, skipped)
