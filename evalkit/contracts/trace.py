"""The native trace: one run of an agent as a flat, ordered list of observations forming a tree.

On disk one trace is one JSON line (``*.jsonl``). ``input`` and ``output`` may be absent, meaning the
source omitted the payload, which is not the same as an explicit ``null``; the difference survives a
round trip because only fields that were set are written.

A model call is sent the whole conversation so far, so stored as it is a trace grows with the square of
its length. On disk an observation's list ``input`` may therefore start with ``inputRepeats``: the
first ``items`` items of an earlier observation's input, which it repeats, followed by its own ``input``
items. Reading resolves it (the input in memory is the whole list, and ``inputRepeats`` is gone);
writing makes it again (:func:`evalkit.traces.write_jsonl`), so a file round-trips byte for byte.
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


class InputRepeats(CamelContract):
    """The start of an observation's input that repeats an earlier observation's: resolved on read."""

    observation: str
    """The id of the earlier observation (earlier in the trace's list) whose input is repeated."""
    items: int
    """How many of that input's first items this input starts with (at least 1)."""


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
    input_repeats: InputRepeats | None = None
    """On disk only (see the module docstring): resolved into ``input`` when the trace is read."""

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

    @model_validator(mode="after")
    def _resolve_repeated_inputs(self) -> Trace:
        """Each ``inputRepeats`` replaced by the items it names (see the module docstring)."""
        earlier: dict[str, Observation] = {}
        for i, obs in enumerate(self.observations):
            repeats = obs.input_repeats
            if repeats is not None:
                where = f"observations[{i}].inputRepeats"
                ref = earlier.get(repeats.observation)
                if ref is None:
                    raise ValueError(f"{where}.observation: no observation {repeats.observation!r} before this one")
                if not isinstance(ref.input, list) or not 1 <= repeats.items <= len(ref.input):
                    held = f"{len(ref.input)} items" if isinstance(ref.input, list) else "no list"
                    raise ValueError(f"{where}.items: {repeats.items} items repeated from observation "
                                     f"{repeats.observation!r}, whose input holds {held}")
                if not isinstance(obs.input, list):
                    raise ValueError(f"observations[{i}].input: must be a list, continuing the repeated items")
                obs.input = ref.input[:repeats.items] + obs.input
                obs.input_repeats = None
                obs.model_fields_set.discard("input_repeats")
            earlier[obs.id] = obs
        return self
