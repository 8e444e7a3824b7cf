"""Small edits importers make to observations they built: a field filled in later, a short detail kept."""

from __future__ import annotations

from typing import Any

from evalkit.contracts.trace import Observation

SHORT_CHARS = 200
"""A detail of at most this many characters is kept beside a tool's result; a longer one repeats the result."""


def updated(obs: Observation, **fields: Any) -> Observation:
    """``obs`` with ``fields`` set, and counted as given (so they are written even when None).

    Importers fill an observation in as its source goes on: a tool's result and end time arrive after
    the call, a subagent's root gets the call that started it as parent.
    """
    copy = obs.model_copy(update=fields)
    copy.model_fields_set.update(fields)
    return copy


def is_short(value: Any) -> bool:
    """A scalar, or text of at most :data:`SHORT_CHARS` characters."""
    if isinstance(value, str):
        return len(value) <= SHORT_CHARS
    return value is None or isinstance(value, bool | int | float)
