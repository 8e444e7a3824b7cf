"""Putting a trace's observations in order: the tree from parent ids, siblings by start time.

Every importer calls ``order_observations`` so all sources agree on what "later" means: a parent
comes before its children, siblings run in order of start time (ties keep the source's order), and
an observation whose parent is not in the trace is a root.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import TypeVar

from evalkit.contracts.trace import Observation

ObsT = TypeVar("ObsT", bound=Observation)

_UNIX_EPOCH = datetime(1970, 1, 1)
_UTC_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MISSING = 2**63  # sorts an observation without a start time after those with one
_ID = operator.attrgetter("id")
_PARENT = operator.attrgetter("parent_id")


def utc_micros(value: str | None) -> int | None:
    """Microseconds since the Unix epoch of an ISO 8601 timestamp (naive means UTC); None if absent
    or unreadable. The one place trace timestamps are parsed for ordering and latency."""
    if not value:
        return None
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    delta = dt - _UTC_EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def start_key(value: str | None) -> int:
    """The sort key ``order_observations`` gives a start time: its microseconds since the Unix epoch,
    after every time when absent or unreadable."""
    micros = utc_micros(value)
    return _MISSING if micros is None else micros


def order_observations(observations: Sequence[ObsT], start_keys: Sequence[int] | None = None) -> list[ObsT]:
    """Depth-first, parents before children, siblings by (start time, source position).

    Cycles in parent ids (a corrupt export) cannot hide observations: whatever the walk from the
    roots does not reach is appended in source order.

    Args:
        observations: the observations (anything with ``id``, ``parent_id`` and ``start_time``).
        start_keys: ``start_key(o.start_time)`` of each, when the caller has them already.
    """
    ids = list(map(_ID, observations))
    present = set(ids)
    children: dict[str | None, list[int]] = {}
    for i, (own, parent) in enumerate(zip(ids, map(_PARENT, observations), strict=True)):
        if parent not in present or parent == own:
            parent = None
        kids = children.get(parent)
        if kids is None:
            children[parent] = [i]
        else:
            kids.append(i)
    keys = [start_key(o.start_time) for o in observations] if start_keys is None else start_keys
    for kids in children.values():
        # Indices were appended in source order and the sort is stable: ties keep the source's order.
        if len(kids) > 1:
            kids.sort(key=keys.__getitem__)
    if len(present) < len(ids) or None in present:
        out = _walk_with_repeated_ids(ids, children)
    else:
        # Ids are unique (and none is None, the roots' key), so each observation is in one list of
        # children, pushed once at most: the walk needs no record of what it has seen.
        out = []
        stack = children.get(None, [])[::-1]
        while stack:
            i = stack.pop()
            out.append(i)
            kids = children.get(ids[i])
            if kids is not None:
                stack += kids[::-1]
    if len(out) < len(ids):
        reached = set(out)
        out.extend(i for i in range(len(ids)) if i not in reached)
    return list(map(observations.__getitem__, out))


def _walk_with_repeated_ids(ids: list[str], children: dict[str | None, list[int]]) -> list[int]:
    """The depth-first walk of :func:`order_observations` when an id is given twice (or is None): the
    children of that id are reached once from each, so what was seen is skipped."""
    out: list[int] = []
    seen: set[int] = set()
    stack = list(reversed(children.get(None, [])))
    while stack:
        i = stack.pop()
        if i in seen:
            continue
        seen.add(i)
        out.append(i)
        stack.extend(reversed(children.get(ids[i], [])))
    return out


def iso_from_unix_nanos(nanos: int | str | None) -> str | None:
    """An ISO 8601 UTC timestamp (microseconds, ``Z``) from Unix nanoseconds; None for 0 or absent."""
    if nanos in (None, "", 0, "0"):
        return None
    # Integer arithmetic from the epoch: exact for any nanosecond count (no float rounding).
    dt = _UNIX_EPOCH + timedelta(microseconds=int(nanos) // 1000)
    return dt.isoformat(timespec="microseconds") + "Z"
