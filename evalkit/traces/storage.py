"""A trace as evalkit stores it: each repeated conversation prefix written once (``inputRepeats``).

Every model call of a chat agent is sent the whole conversation so far, so a 200-call session written
as it is holds its first messages 200 times (a 485 KB Claude Code session became 29 MB). Stored, an
observation whose list input starts with items of an earlier observation's input says so
(``inputRepeats: {observation, items}``) and keeps only its own new items; reading resolves it (see
:mod:`evalkit.contracts.trace`), so the trace in memory is unchanged and a file round-trips byte for byte.

Items are the same when their canonical JSON is the same (``1`` and ``1.0`` differ), so resolving gives
exactly the items that were written. Importers share one object per message across the inputs that
repeat it, which makes the comparison an identity check; items read from an older file are compared
by their JSON once each.
"""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter

from evalkit.contracts.trace import Observation, Trace
from evalkit.io.canonical import compact_sorted_json

__all__ = ["MIN_REPEATED_ITEMS", "stored_form"]

MIN_REPEATED_ITEMS = 2
"""Fewer repeated items are written out: a one-item reference saves nothing worth the indirection."""

_JSON = TypeAdapter(Any)


class _Same:
    """Item equality by canonical JSON, each object's text computed once."""

    def __init__(self) -> None:
        self.texts: dict[int, str] = {}
        self.keep: list[Any] = []  # keeps each object alive while its id() is a key

    def text(self, item: Any) -> str:
        key = id(item)
        text = self.texts.get(key)
        if text is None:
            text = self.texts[key] = compact_sorted_json(_JSON.dump_python(item, mode="json"))
            self.keep.append(item)
        return text

    def prefix(self, earlier: list[Any], later: list[Any]) -> int:
        n = 0
        for a, b in zip(earlier, later, strict=False):
            if a is not b and self.text(a) != self.text(b):
                break
            n += 1
        return n


def _repeats(observations: list[Observation]) -> dict[int, tuple[str, int]]:
    """For each observation whose input repeats an earlier one's start: (that observation's id, items).

    The earlier observation repeating the most items wins (the nearest on a tie). Only earlier
    observations whose first item is this input's first item are compared.
    """
    same = _Same()
    by_first: dict[str, list[int]] = {}
    found: dict[int, tuple[str, int]] = {}
    for i, obs in enumerate(observations):
        items = obs.input
        if not isinstance(items, list) or not items:
            continue
        first = same.text(items[0])
        best: tuple[str, int] | None = None
        for j in reversed(by_first.get(first, [])):
            n = same.prefix(observations[j].input, items)
            if n >= MIN_REPEATED_ITEMS and (best is None or n > best[1]):
                best = (observations[j].id, n)
                if n == len(items):
                    break
        if best is not None:
            found[i] = best
        by_first.setdefault(first, []).append(i)
    return found


def stored_form(trace: Trace) -> dict[str, Any]:
    """The JSON object evalkit writes for ``trace``: ``to_json_obj`` with repeated input prefixes referenced."""
    found = _repeats(trace.observations)
    if not found:
        return trace.to_json_obj()
    obj = trace.model_dump(mode="json", by_alias=True, exclude_unset=True, exclude={"observations"})
    written = []
    for i, obs in enumerate(trace.observations):
        if i not in found:
            written.append(obs.to_json_obj())
            continue
        ref, n = found[i]
        item = obs.model_dump(mode="json", by_alias=True, exclude_unset=True, exclude={"input"})
        item["input"] = _JSON.dump_python(obs.input[n:], mode="json")
        item["inputRepeats"] = {"observation": ref, "items": n}
        written.append(item)
    obj["observations"] = written
    return obj
