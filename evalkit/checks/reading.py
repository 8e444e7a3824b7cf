"""Reading a value out of a trace the way a ref names it, fast enough for the deterministic track.

A place is ``obs`` (the trace id or ``$trace`` for the trace root, else an observation name or id) and a
``path`` of dot segments and ``[n]`` indexes, read as :func:`evalkit.judge.grounding.resolve_ref` reads it:
the first segment is an on-disk field name, and a string holding JSON is read into when the path goes on.
Reading works on the models directly (no serialization per trace), and the refs built here are written
so that ``resolve_ref`` resolves them.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from evalkit.contracts.trace import Observation, Trace
from evalkit.contracts.verdict import Ref
from evalkit.io.canonical import compact_sorted_json
from evalkit.trace_paths import MISSING, contains, parse_path, step_into

TRACE_ROOT = "$trace"
"""The ``obs`` a check's parameters use for the trace itself (a ref then cites the trace id)."""

CITE_CHARS = 160
"""Longest cited value: a prefix of the serialization, which is still contained in it."""

_OBS_FIELDS = {"id": "id", "type": "type", "name": "name", "input": "input", "output": "output",
               "parentId": "parent_id", "startTime": "start_time", "endTime": "end_time", "model": "model",
               "usage": "usage", "level": "level", "statusMessage": "status_message", "metadata": "metadata"}
_TRACE_FIELDS = {"id": "id", "name": "name", "input": "input", "output": "output", "metadata": "metadata"}


@lru_cache(maxsize=4096)
def steps_of(path: str) -> tuple[str | int, ...]:
    """The parsed path (cached: checks read the same few paths on every trace)."""
    return tuple(parse_path(path))


def read(root: Trace | Observation, path: str) -> Any:
    """The value at ``path`` in a trace or observation, or :data:`MISSING`."""
    steps = steps_of(path)
    if not steps:
        return root.to_json_obj()
    first = steps[0]
    fields = _TRACE_FIELDS if isinstance(root, Trace) else _OBS_FIELDS
    if not isinstance(first, str) or first not in fields:
        return MISSING
    attr = fields[first]
    value = getattr(root, attr)
    if value is None and attr not in root.model_fields_set:
        return MISSING
    for step in steps[1:]:
        value = step_into(value, step)
        if value is MISSING:
            return MISSING
    return value


_index_of: list[Any] = [None, {}]  # [trace, {id or name: [observations]}]: the trace every criterion is reading


def _index(trace: Trace) -> dict[str, list[Observation]]:
    """Observations by id and by name, built once per trace (the router runs every criterion on one
    trace before the next, so a one-trace cache is enough and holds no memory across traces)."""
    if _index_of[0] is not trace:
        by: dict[str, list[Observation]] = {}
        for o in trace.observations:
            if o.name is not None:
                by.setdefault(o.name, []).append(o)
        for o in trace.observations:
            by[o.id] = [o]  # an id wins over a name, as resolve_ref reads it
        _index_of[0], _index_of[1] = trace, by
    return _index_of[1]


def observations(trace: Trace, obs: str) -> list[Observation]:
    """The observations ``obs`` names: by id if one has it, else every one of that name, in trace order."""
    return _index(trace).get(obs, [])


def places(trace: Trace, obs: str, path: str) -> Iterator[tuple[str, Any]]:
    """Every ``(ref obs, value)`` the place names; the trace root when ``obs`` is ``$trace`` or the trace id."""
    if obs in (TRACE_ROOT, trace.id):
        value = read(trace, path)
        if value is not MISSING:
            yield trace.id, value
        return
    for o in observations(trace, obs):
        value = read(o, path)
        if value is not MISSING:
            yield o.id, value


def text_of(value: Any) -> str:
    """The text a value is compared and cited as: strings as they are, anything else as compact JSON."""
    return value if isinstance(value, str) else compact_sorted_json(value)


def cite(obs: str, path: str, value: Any) -> Ref | None:
    """A ref to ``value`` at ``path`` of ``obs`` that ``resolve_ref`` resolves; None for an empty value."""
    # A prefix of the normalised text is contained in it; cutting before normalising saves work on long values.
    text = " ".join(text_of(value)[: CITE_CHARS * 4].split())[:CITE_CHARS].strip()
    return Ref(obs=obs, path=path, value=text) if text else None


def holds(trace: Trace, obs: str, path: str, value: str) -> bool:
    """Whether ``value`` is at ``obs``/``path`` of the trace, as a ref with that value would resolve."""
    return any(contains(found, value) for _, found in places(trace, obs, path))
