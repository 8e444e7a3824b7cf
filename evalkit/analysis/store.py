"""The annotation store: an append-only JSONL file of :class:`Annotation` records.

Nothing in it is ever rewritten. Relabelling a trace appends a new record, and readers take the latest
record per (trace, annotator) in file order. Reading and appending follow the one policy of
:mod:`evalkit.io.append_only`: a batch lands whole or not at all, a final line cut off by an
interrupted write is left out and reported (and dropped by the next append), and any other line that
is not a valid annotation (a byte-order mark, a corrupted record, garbage) is an error naming the line.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from evalkit.contracts.annotation import Annotation
from evalkit.errors import InputError
from evalkit.io.append_only import append_batch, read_store_records


@dataclass(frozen=True)
class StoreContents:
    """Every record of a store in file order, and the final line left unfinished by an interrupted write."""

    annotations: list[Annotation]
    torn_lines: list[int] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    """The store line of each annotation, in the same order (empty when not read from a file)."""

    @property
    def torn(self) -> int:
        """How many cut-off lines were left out (0 or 1: only the final line can be one)."""
        return len(self.torn_lines)

    def line_of(self, annotation: Annotation) -> int | None:
        """The store line an annotation read from this store is on (None for any other record)."""
        for record, line in zip(self.annotations, self.lines, strict=False):
            if record is annotation:
                return line
        return None


def append_annotations(store: str | Path, annotations: Iterable[Annotation]) -> int:
    """Append records to the store (created with its folder when missing), all or none; returns how many.

    A final line cut off by an earlier interrupted write is dropped first.

    Raises:
        InputError: the file cannot be written, or its last line is garbage rather than a cut-off record.
    """
    return append_batch(store, list(annotations)).appended


def read_store(store: str | Path) -> StoreContents:
    """Every record of the store, in file order; a missing store is empty.

    Raises:
        InputError: a line that is not a valid annotation (not JSON, a byte-order mark, duplicate
            keys, a bad field), as ``FILE:LINE: field.path: message``. Only a final line cut off by
            an interrupted write is left out instead, and counted in ``torn_lines``.
    """
    read = read_store_records(store, Annotation)
    return StoreContents(read.records, [read.cut_off.line] if read.cut_off else [], read.lines)


def latest(source: str | Path | Iterable[Annotation], annotator: str | None = None) -> list[Annotation]:
    """The latest record per (trace, annotator): the last one in file order wins.

    Args:
        source: a store file, or annotations in file order.
        annotator: keep only this annotator's records.

    Returns:
        One record per (trace, annotator), ordered by when that pair was first labelled (review order).
    """
    records = read_store(source).annotations if isinstance(source, str | Path) else list(source)
    winner: dict[tuple[str, str], Annotation] = {}
    for record in records:
        if annotator is None or record.annotator == annotator:
            winner[(record.trace_id, record.annotator)] = record
    return list(winner.values())


def annotators(annotations: Iterable[Annotation]) -> list[str]:
    """The annotators, most traces labelled first (ties by name)."""
    traces: dict[str, set[str]] = {}
    for a in annotations:
        traces.setdefault(a.annotator, set()).add(a.trace_id)
    return sorted(traces, key=lambda name: (-len(traces[name]), name))


def labels_of(annotations: Sequence[Annotation], annotator: str | None = None) -> tuple[str | None, list[Annotation]]:
    """One annotator's latest label per trace, in review order.

    Args:
        annotations: records in file order.
        annotator: whose labels; by default the annotator who labelled the most traces.

    Returns:
        ``(annotator, labels)``; ``(None, [])`` when there are no annotations.

    Raises:
        InputError: ``annotator`` labelled nothing here.
    """
    names = annotators(annotations)
    if annotator is None:
        if not names:
            return None, []
        annotator = names[0]
    elif annotator not in names:
        raise InputError(f"no annotations by {annotator!r} (annotators: {', '.join(names) or 'none'})",
                         path="annotator")
    return annotator, latest(annotations, annotator)
