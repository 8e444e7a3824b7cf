"""Bringing labels made on a review page into the annotation store."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from evalkit.analysis.store import latest, read_store
from evalkit.analysis.taxonomy import check_modes
from evalkit.contract_files import validate_value
from evalkit.contracts.annotation import Annotation, ReviewExport, Taxonomy
from evalkit.errors import InputError
from evalkit.io.append_only import append_batch, store_lock
from evalkit.io.documents import read_records


@dataclass(frozen=True)
class ImportResult:
    """What an import did: records appended, records already in the store as they are, and the final
    line cut off by an interrupted write that was seen (``torn_lines``) and dropped by this append."""

    appended: int
    unchanged: int
    torn_lines: list[int]
    torn_dropped: bool = False


def read_review_export(path: str | Path) -> tuple[ReviewExport | None, list[InputError]]:
    """Read and validate a review export; the export, or None and every problem, located.

    Raises:
        InputError: the file cannot be read or is not JSON.
    """
    records = read_records(path, "json")
    return validate_value(ReviewExport, records[0].value, file=str(path))


def import_review_export(export: ReviewExport, store: str | Path, taxonomy: Taxonomy | None = None,
                         *, source: str | None = None) -> ImportResult:
    """Append an export's annotations to the store, skipping those equal to the latest stored record.

    Importing the same export twice therefore appends nothing the second time. The batch is
    appended whole or not at all (:func:`evalkit.io.append_only.append_batch`), so an import killed
    part-way can simply be run again.

    Args:
        export: a validated export.
        store: the annotation store (created when missing).
        taxonomy: when given, every failure mode must be one of its modes.
        source: the export's file name, for error messages.

    Raises:
        InputError: a mode the taxonomy lacks, or a store that cannot be read or written.
    """
    if taxonomy is not None:
        check_modes(export.annotations, taxonomy, file=source)
    with store_lock(store):  # read, leave out what is there, append: one turn, so a concurrent import waits
        contents = read_store(store)
        # Compare full dumps, so an absent ``modes`` and an explicit empty list count as the same record.
        current = {(a.trace_id, a.annotator): a.model_dump(mode="json") for a in latest(contents.annotations)}
        new = []
        for annotation in export.annotations:
            obj = annotation.model_dump(mode="json")
            if current.get((annotation.trace_id, annotation.annotator)) != obj:
                new.append(annotation)
                current[(annotation.trace_id, annotation.annotator)] = obj
        done = append_batch(store, new)
    return ImportResult(done.appended, len(export.annotations) - done.appended, contents.torn_lines,
                        done.dropped is not None)


def notes_from_table(path: str | Path, *, note_col: str, id_col: str, annotator: str, at: str,
                     values_key: str | None = None) -> tuple[list[Annotation], int]:
    """Open-coding notes kept in a table (CSV, JSONL, JSON list) as fail annotations, one per row with a note.

    A note written while reading a trace records something that went wrong, so each becomes a ``fail`` by
    ``annotator`` at ``at`` (injected), with no failure mode yet (axial coding comes later: draft-modes).

    Returns:
        ``(annotations, rows without a note)``.

    Raises:
        InputError: a missing column, a row without a trace id, or a trace id twice.
    """
    from evalkit.calibration import read_table

    table = read_table(path, values_key=values_key)
    table.require(note_col, "--notes-col")
    table.require(id_col, "--id-col")
    out, empty, seen = [], 0, {}
    for row in table.rows:
        trace_id, text = row.cells.get(id_col), row.cells.get(note_col)
        if trace_id in (None, ""):
            raise InputError(f"row {row.position}: no trace id", file=table.file, line=row.line, path=id_col)
        if str(trace_id) in seen:
            raise InputError(f"row {row.position}: trace {trace_id!r} again (first in row {seen[str(trace_id)]})",
                             file=table.file, line=row.line, path=id_col)
        seen[str(trace_id)] = row.position
        if not isinstance(text, str) or not text.strip():
            empty += 1
            continue
        out.append(Annotation(trace_id=str(trace_id), annotator=annotator, at=at, label="fail", note=text.strip()))
    return out, empty
