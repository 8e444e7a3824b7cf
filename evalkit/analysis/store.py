"""The annotation store: an append-only JSONL file of :class:`Annotation` records.

Nothing in it is ever rewritten. Relabelling a trace appends a new record, and readers take the latest
record per (trace, annotator) in file order. Each batch is written as whole canonical lines with one
``write``, then flushed and fsynced, so a crash can at worst leave the batch's last line cut short. A
cut line is not JSON; reading counts and reports it and keeps every record before and after it, and
the next append starts on a fresh line so the cut line never swallows a new record.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from evalkit.contracts.annotation import Annotation
from evalkit.io.canonical import canonical_line
from evalkit.io.errors import InputError
from evalkit.io.strict_json import StrictJSONError, loads_strict
from evalkit.validation import validate_value


@dataclass(frozen=True)
class StoreContents:
    """Every record of a store in file order, and the lines left unfinished by an interrupted write."""

    annotations: list[Annotation]
    torn_lines: list[int] = field(default_factory=list)

    @property
    def torn(self) -> int:
        """How many cut-short lines were skipped."""
        return len(self.torn_lines)


def append_annotations(store: str | Path, annotations: Iterable[Annotation]) -> int:
    """Append records to the store (created with its folder when missing); returns how many.

    Raises:
        InputError: the file cannot be written.
    """
    lines = [canonical_line(a.to_json_obj()) for a in annotations]
    if not lines:
        return 0
    text = "".join(lines)
    path = Path(store)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a+b") as fh:
            if fh.tell() > 0:
                fh.seek(-1, os.SEEK_END)
                if fh.read(1) != b"\n":
                    text = "\n" + text  # a crash cut the last line: start the batch on a fresh line
            fh.write(text.encode("utf-8"))
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as exc:
        raise InputError(f"cannot append to the annotation store: {exc.strerror or exc}", file=str(path)) from None
    return len(lines)


def _cut_short(raw: bytes) -> bool:
    """True when a line is not JSON at all, as a write interrupted mid-line leaves it."""
    try:
        json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return True
    return False


def read_store(store: str | Path) -> StoreContents:
    """Every record of the store, in file order; a missing store is empty.

    Raises:
        InputError: a line that is JSON but not a valid annotation (or has duplicate keys), as
            ``FILE:LINE: field.path: message``. Lines that are not JSON, as an interrupted write
            leaves them, are counted in ``torn_lines`` instead.
    """
    path = Path(store)
    if not path.exists():
        return StoreContents([])
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read the annotation store: {exc.strerror or exc}", file=str(path)) from None
    records: list[Annotation] = []
    torn: list[int] = []
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        raw = raw.rstrip(b"\r")
        if not raw.strip():
            continue
        try:
            value = loads_strict(raw, file=str(path), line=lineno)
        except StrictJSONError:
            if _cut_short(raw):
                torn.append(lineno)
                continue
            raise
        record, problems = validate_value(Annotation, value, file=str(path), line=lineno)
        if problems:
            raise problems[0]
        assert record is not None
        records.append(record)
    return StoreContents(records, torn)


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
