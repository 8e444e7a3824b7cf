"""Saturation: when reading more traces stops revealing new failure modes, error analysis can stop."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from evalkit.analysis.defaults import SATURATION_WINDOW
from evalkit.analysis.store import labels_of
from evalkit.contracts.annotation import Annotation
from evalkit.io.json_case import camel_json


@dataclass(frozen=True)
class SaturationPoint:
    """After ``reviewed`` traces, ``distinct`` modes had been seen; ``new`` appeared at this trace."""

    reviewed: int
    trace_id: str
    distinct: int
    new: list[str]


@dataclass(frozen=True)
class Saturation:
    """The curve of distinct modes against traces reviewed, and whether it has flattened."""

    annotator: str | None
    window: int
    points: list[SaturationPoint]
    last_new_at: int
    """The review count at which the last new mode appeared (0: none yet)."""
    saturated: bool

    @property
    def since_last_new(self) -> int:
        """Traces reviewed since the last new mode."""
        return len(self.points) - self.last_new_at

    def to_json_obj(self) -> dict[str, Any]:
        """A JSON-ready dict (camelCase keys, as ``evalkit analysis saturation --json`` prints it)."""
        return camel_json(self) | {"sinceLastNew": self.since_last_new}


def saturation_curve(annotations: Sequence[Annotation], annotator: str | None = None,
                     window: int = SATURATION_WINDOW) -> Saturation:
    """Distinct failure modes seen against traces reviewed, in review order.

    Review order is the order traces were first labelled in the store; a relabel counts at the trace's
    first position with its latest modes. Every labelled trace counts as reviewed, ``defer`` included
    (it was read). Saturated once at least ``window`` traces have been reviewed since the last new mode.

    Args:
        annotations: store records in file order.
        annotator: whose labels; by default the annotator who labelled the most traces.
        window: how many traces without a new mode count as saturation.
    """
    if window < 1:
        raise ValueError("window: must be at least 1")
    who, labels = labels_of(annotations, annotator)
    seen: set[str] = set()
    points: list[SaturationPoint] = []
    last_new = 0
    for i, label in enumerate(labels, start=1):
        new = [m for m in label.modes if m not in seen]
        seen.update(new)
        if new:
            last_new = i
        points.append(SaturationPoint(i, label.trace_id, len(seen), new))
    return Saturation(who, window, points, last_new, len(points) - last_new >= window)
