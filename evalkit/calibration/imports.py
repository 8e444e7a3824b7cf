"""Human labels and judge verdicts from the tables people have, with every value mapped explicitly.

A cell becomes a label or a verdict only if it is the contract's own word (``pass``, ``fail``,
``defer`` / ``uncertain``) or a value the user mapped (``--map PASS=pass --map UNKNOWN=defer``).
Anything else is an error naming the file, the line, the row and the column: an unmapped ``UNKNOWN``
is never read as a fail, and ``1`` is never read as a pass unless the user said so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from evalkit.calibration.tables import Row, Table, cell_text
from evalkit.contracts.labels import HumanLabel
from evalkit.contracts.verdict import BlockedBy, CriterionVerdict
from evalkit.errors import InputError
from evalkit.io.append_only import append_batch, read_store_records, store_lock

LABEL_VALUES = ("pass", "fail", "defer")
VERDICT_VALUES = ("pass", "fail", "uncertain")
SPLITS = ("train", "dev", "test")


def parse_value_map(items: Sequence[str] | None, allowed: Sequence[str], option: str = "--map") -> dict[str, str]:
    """``["PASS=pass", "UNKNOWN=defer"]`` as ``{"PASS": "pass", "UNKNOWN": "defer"}``.

    Raises:
        InputError: an item without ``=``, a target that is not one of ``allowed``, or one source value
            mapped to two targets.
    """
    out: dict[str, str] = {}
    for item in items or ():
        source, eq, target = item.rpartition("=")
        if not eq:
            raise InputError(f"{item!r} is not SOURCE=TARGET (e.g. PASS=pass)", path=option)
        if target not in allowed:
            raise InputError(f"{item!r} maps to {target!r}; the target must be one of: {', '.join(allowed)}",
                             path=option)
        if out.get(source, target) != target:
            raise InputError(f"{source!r} is mapped twice ({out[source]!r} and {target!r})", path=option)
        out[source] = target
    return out


def _where(table: Table, row: Row, column: str, message: str) -> InputError:
    return InputError(f"row {row.position}: {message}", file=table.file, line=row.line, path=column)


def _mapped(table: Table, row: Row, column: str, value_map: dict[str, str], allowed: Sequence[str]) -> str:
    text = cell_text(row.cells.get(column))
    if text in allowed:
        return text
    if text is not None and text in value_map:
        return value_map[text]
    shown = "an empty cell" if text in (None, "") else repr(text)
    known = ", ".join(f"{k}={v}" for k, v in sorted(value_map.items())) or "none"
    raise _where(table, row, column, f"{shown} is not {'/'.join(allowed)} and not mapped (maps: {known}); "
                                     f"say what it means with --map {text or ''}=<{'|'.join(allowed)}>")


def _trace_ids(table: Table, id_col: str | None) -> list[str]:
    """The trace id of every row: the id column's text, or the row's position when there is none."""
    if id_col is not None:
        table.require(id_col, "--id-col")
    seen: dict[str, int] = {}
    ids = []
    for row in table.rows:
        trace_id = str(row.position) if id_col is None else cell_text(row.cells.get(id_col))
        if not trace_id:
            raise _where(table, row, id_col or "", "no trace id")
        if trace_id in seen:
            raise _where(table, row, id_col or "", f"trace {trace_id!r} again (first in row {seen[trace_id]}); "
                                                   "keep one record per trace")
        seen[trace_id] = row.position
        ids.append(trace_id)
    return ids


@dataclass(frozen=True)
class LabelColumns:
    """Where a table keeps each field of a human label."""

    label: str
    id: str | None = None
    split: str | None = None
    notes: str | None = None


def labels_from_table(table: Table, columns: LabelColumns, *, criterion_id: str, value_map: dict[str, str],
                      split: str | None = None, annotator: str | None = None) -> list[HumanLabel]:
    """One HumanLabel per row of ``table``.

    Args:
        table: the rows (see :func:`evalkit.calibration.tables.read_table`).
        columns: the label, trace-id, split and notes columns; without an id column the trace id
            is the row's position (1, 2, ...), so parallel lists of labels and predictions pair up.
        criterion_id: the criterion every label is for.
        value_map: source value -> ``pass``/``fail``/``defer`` (from :func:`parse_value_map`).
        split: the split of every row, when the file is one split (``--split dev``).
        annotator: who labelled, when known.

    Raises:
        InputError: a missing column, an unmapped value, a split other than train/dev/test, a
            duplicate trace id; each names file, line, row and column.
    """
    if split is not None and columns.split is not None:
        raise InputError("give the split per file (--split) or per row (--split-col), not both", path="--split")
    if split is not None and split not in SPLITS:
        raise InputError(f"{split!r} is not a split (one of: {', '.join(SPLITS)})", path="--split")
    for column, option in ((columns.label, "--label-col"), (columns.split, "--split-col"),
                           (columns.notes, "--notes-col")):
        if column is not None:
            table.require(column, option)
    out = []
    for row, trace_id in zip(table.rows, _trace_ids(table, columns.id), strict=True):
        label = _mapped(table, row, columns.label, value_map, LABEL_VALUES)
        row_split = split
        if columns.split is not None:
            row_split = cell_text(row.cells.get(columns.split))
            if row_split not in SPLITS:
                raise _where(table, row, columns.split, f"split {row_split!r} is not one of: {', '.join(SPLITS)}")
        notes = cell_text(row.cells.get(columns.notes)) if columns.notes else None
        out.append(HumanLabel(trace_id=trace_id, label=label, criterion_id=criterion_id, split=row_split,
                              notes=notes or None, annotator=annotator))
    return out


@dataclass(frozen=True)
class VerdictColumns:
    """Where a table keeps each field of a judge verdict."""

    result: str
    id: str | None = None
    critique: str | None = None
    confidence: str | None = None


def _confidence(table: Table, row: Row, column: str) -> float:
    value = row.cells.get(column)
    try:
        number = float(value) if isinstance(value, str | int | float) and not isinstance(value, bool) else None
    except ValueError:
        number = None
    if number is None or not 0 <= number <= 1:
        raise _where(table, row, column, f"confidence {value!r} is not a number in [0, 1]; leave --confidence-col "
                                         "out to record it as not given")
    return number


def verdicts_from_table(table: Table, columns: VerdictColumns, *, criterion_id: str,
                        value_map: dict[str, str]) -> list[CriterionVerdict]:
    """One CriterionVerdict per row of ``table``.

    A source that records no critique or confidence gets ``null`` for them (not recorded), never an
    invented value. A value mapped to ``uncertain`` becomes an abstention whose ``blockedBy`` says
    the source recorded that value without a reason.

    Args:
        table: the rows.
        columns: the result, trace-id, critique and confidence columns.
        criterion_id: the criterion every verdict is for.
        value_map: source value -> ``pass``/``fail``/``uncertain``.

    Raises:
        InputError: a missing column, an unmapped value, a confidence outside [0, 1], a duplicate id.
    """
    for column, option in ((columns.result, "--result-col"), (columns.critique, "--critique-col"),
                           (columns.confidence, "--confidence-col")):
        if column is not None:
            table.require(column, option)
    out = []
    for row, trace_id in zip(table.rows, _trace_ids(table, columns.id), strict=True):
        result = _mapped(table, row, columns.result, value_map, VERDICT_VALUES)
        extra: dict[str, Any] = {}
        if result == "uncertain":
            raw = cell_text(row.cells.get(columns.result))
            # The contract's abstention needs a reason; the honest one is that the source gave none.
            extra["blocked_by"] = BlockedBy(kind="scope", text=f"the source recorded {raw!r} with no reason "
                                                   f"({Path(table.file).name}, row {row.position})")
        out.append(CriterionVerdict(
            criterion_id=criterion_id, trace_id=trace_id, result=result,
            confidence=_confidence(table, row, columns.confidence) if columns.confidence else None,
            critique=cell_text(row.cells.get(columns.critique)) if columns.critique else None, **extra))
    return out


@dataclass(frozen=True)
class Appended:
    """What an import did to its file: records appended, records already there unchanged, and the line
    number of a final line cut off by an interrupted write (None if none), dropped when anything was
    appended and left out otherwise."""

    appended: int
    unchanged: int
    cut_off_line: int | None = None


def _key(record: Any) -> tuple[str, str | None]:
    return record.trace_id, record.criterion_id


def append_records(path: str | Path, records: Sequence[BaseModel], model: type[BaseModel]) -> Appended:
    """Append records to a JSONL file of ``model``, never rewriting what is there.

    A record equal to the stored one for its trace and criterion is skipped (so an import can be run
    again); one that differs is an error and nothing is appended: a label is changed on purpose, by
    hand, not by importing a second file over it. The new records are appended all or none
    (:func:`evalkit.io.append_only.append_batch`), so an import killed part-way can be run again.

    Raises:
        InputError: a stored record that the file contradicts, or a line of the store that is not a
            valid record (a final line cut off by an interrupted write is dropped instead).
    """
    p = Path(path)
    with store_lock(p):  # read, leave out what is there, append: one turn, so a concurrent import waits
        read = read_store_records(p, model)
        stored = {_key(r): r for r in read.records}
        new = []
        for record in records:
            old = stored.get(_key(record))
            if old is None:
                new.append(record)
            else:
                was, now = old.to_json_obj(), record.to_json_obj()  # type: ignore[attr-defined]
                differ = sorted(k for k in was.keys() | now.keys() if was.get(k) != now.get(k))
                if differ:
                    show = "; ".join(f"{k} {was.get(k)!r} stored, {now.get(k)!r} imported" for k in differ)
                    key = f"trace {now['traceId']!r} (criterion {now.get('criterionId')!r})"
                    raise InputError(f"{key} is already stored differently ({show}); nothing was appended. "
                                     "Change a stored record by hand, on purpose", file=str(p))
        if new:
            append_batch(p, new)
    return Appended(len(new), len(records) - len(new), read.cut_off.line if read.cut_off else None)
