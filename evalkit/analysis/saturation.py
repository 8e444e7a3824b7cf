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


SATURATION_BATCH = 10
"""Traces per batch in the batch view of saturation: a review session's worth."""

FLAT_BATCHES = 2
"""Full batches in a row that added no new mode before the curve counts as flat."""


@dataclass(frozen=True)
class Batch:
    """One batch of reviewed traces: how many new modes it added, and how many were known after it."""

    batch: int
    reviewed: int
    new: list[str]
    distinct: int


@dataclass(frozen=True)
class BatchSaturation:
    """New modes per batch of reviewed traces, and whether more review is still worth suggesting."""

    annotator: str | None
    coded_by: str | None
    batch_size: int
    batches: list[Batch]
    flat: bool
    """The last :data:`FLAT_BATCHES` full batches added no new mode."""

    @property
    def suggest_more_review(self) -> bool:
        """Review more traces only while the curve still rises."""
        return not self.flat

    def to_json_obj(self) -> dict[str, Any]:
        """A JSON-ready dict (camelCase keys)."""
        return camel_json(self) | {"suggestMoreReview": self.suggest_more_review}


def saturation_by_batch(annotations: Sequence[Annotation], *, batch_size: int = SATURATION_BATCH,
                        annotator: str | None = None, coded_by: str | None = None) -> BatchSaturation:
    """New failure modes per batch of reviewed traces, in review order.

    Args:
        annotations: store records in file order.
        batch_size: traces per batch.
        annotator: whose review order (default: the annotator with the most labels).
        coded_by: whose modes count (default: the annotator's own). With ratified modes, the reviewer who
            ratified the draft coded the noted traces with them (``analysis ratify --into``): the curve is then
            fed by ratified modes, in the order the traces were reviewed.
    """
    if batch_size < 1:
        raise ValueError("batch_size: must be at least 1")
    who, labels = labels_of(annotations, annotator)
    coded = {a.trace_id: a.modes for a in labels_of(annotations, coded_by)[1]} if coded_by else None
    seen: set[str] = set()
    batches: list[Batch] = []
    for start in range(0, len(labels), batch_size):
        part = labels[start:start + batch_size]
        new: list[str] = []
        for label in part:
            modes = coded.get(label.trace_id, []) if coded is not None else label.modes
            for mode in modes:
                if mode not in seen:
                    seen.add(mode)
                    new.append(mode)
        batches.append(Batch(len(batches) + 1, start + len(part), new, len(seen)))
    full = [b for b in batches if b.reviewed == b.batch * batch_size]  # a last, partial batch does not count yet
    flat = len(full) > FLAT_BATCHES and all(not b.new for b in full[-FLAT_BATCHES:])
    return BatchSaturation(who, coded_by, batch_size, batches, flat)
