"""``trace_stats`` as ``evalkit traces stats --json`` prints it: field names in camelCase, data keys as they are.

The Python dict keeps snake_case (what notebooks and the table printer read); the command line speaks the
contracts' camelCase like every other ``--json``. Keys that are data (an observation type, a tool or
observation name, a level) are never renamed.
"""

from __future__ import annotations

from typing import Any

from pydantic.alias_generators import to_camel

DATA_MAPS = frozenset({"by_name", "by_type", "tools", "levels", "models", "latency_ms_by_type"})
"""Fields whose keys are data: their children's keys are kept, their values' fields renamed."""


def _fields(value: Any) -> Any:
    if isinstance(value, dict):
        return {to_camel(k): (_data(v) if k in DATA_MAPS else _fields(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_fields(v) for v in value]
    return value


def _data(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _fields(v) for k, v in value.items()}
    return _fields(value)


def stats_json(stats: dict[str, Any]) -> dict[str, Any]:
    """The stats with camelCase field names (``traces_with_errors`` -> ``tracesWithErrors``), data keys kept."""
    return _fields(stats)
