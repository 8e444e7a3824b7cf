"""The native trace: one run of an agent as a flat, ordered list of observations forming a tree.

On disk one trace is one JSON line (``*.jsonl``). ``input`` and ``output`` may be absent, meaning the
source omitted the payload, which is not the same as an explicit ``null``; the difference survives a
round trip because only fields that were set are written.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import field_validator, model_validator

from evalkit.contracts.base import CamelContract, SchemaNamed

ObservationType = Literal[
    "SPAN", "GENERATION", "EVENT", "AGENT", "TOOL", "CHAIN", "RETRIEVER", "EVALUATOR", "EMBEDDING",
    "GUARDRAIL",
]
"""Observation types, as Langfuse names them; OTel and OpenInference kinds are mapped onto these."""

OBSERVATION_TYPES: tuple[str, ...] = ObservationType.__args__  # type: ignore[attr-defined]

Level = Literal["DEBUG", "DEFAULT", "WARNING", "ERROR"]


def _check_timestamp(value: str | None) -> str | None:
    if value is None:
        return None
    try:
        datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"not an ISO 8601 timestamp: {value!r}") from None
    return value


class Observation(CamelContract):
    """One step of a trace: a model call, a tool call, an agent, a span or an event."""

    id: str
    type: ObservationType
    name: str | None = None
    input: Any = None
    output: Any = None
    parent_id: str | None = None
    start_time: str | None = None
    end_time: str | None = None
    model: str | None = None
    usage: dict[str, int | float] | None = None
    level: Level | None = None
    status_message: str | None = None
    metadata: dict[str, Any] | None = None

    _check_times = field_validator("start_time", "end_time")(_check_timestamp)

    @property
    def has_input(self) -> bool:
        """False when the source omitted the input (absent), True when it gave one (even null)."""
        return "input" in self.model_fields_set

    @property
    def has_output(self) -> bool:
        """False when the source omitted the output (absent), True when it gave one (even null)."""
        return "output" in self.model_fields_set


class Trace(CamelContract, SchemaNamed):
    """One agent run: its observations in order, parents before or after children as recorded."""

    id: str
    name: str | None = None
    input: Any = None
    output: Any = None
    metadata: dict[str, Any] | None = None
    observations: list[Observation]

    @model_validator(mode="after")
    def _unique_observation_ids(self) -> Trace:
        ids = [obs.id for obs in self.observations]
        if len(set(ids)) != len(ids):
            seen: set[str] = set()
            for i, obs_id in enumerate(ids):
                if obs_id in seen:
                    raise ValueError(f"observations[{i}].id: duplicate observation id {obs_id!r}")
                seen.add(obs_id)
        return self
