"""Reading the tables people already have: CSV, JSONL, a JSON list of records, or a list of 0/1 values.

Each row keeps the line it starts on, so an error about a value can name the file, the line and the
column. Nothing is coerced here: cells stay as the file wrote them, and :func:`cell_text` is the one
way a cell is turned into the text a value map is matched against.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit.errors import InputError
from evalkit.io.csv_rows import CSVRows
from evalkit.io.documents import document_format, read_records

BARE_LIST = "."
"""``--values .``: the file itself is the list of values."""


@dataclass(frozen=True)
class Row:
    """One record of a table.

    Attributes:
        cells: column -> value, as read (strings for CSV, JSON values otherwise).
        line: the line the record starts on (for a JSON document: the document's line, or None).
        position: 1-based record number, the trace id when the table has no id column.
    """

    cells: dict[str, Any]
    line: int | None
    position: int


@dataclass(frozen=True)
class Table:
    """The rows of one file and the columns seen in it."""

    file: str
    columns: tuple[str, ...]
    rows: tuple[Row, ...]
    repeated: frozenset[str] = frozenset()
    """Header names that appear more than once (CSV): harmless unless a command asks for one."""

    def require(self, column: str, option: str) -> None:
        """Raise unless ``column`` is one column of this table; the error lists the columns there are."""
        if column not in self.columns:
            raise InputError(f"no column {column!r} (given by {option}); columns: {', '.join(self.columns)}",
                             file=self.file)
        if column in self.repeated:
            raise InputError(f"column {column!r} (given by {option}) appears more than once in the header, "
                             "so which one is meant is unclear; rename one", file=self.file, line=1)


def cell_text(value: Any) -> str | None:
    """A cell as the text a ``--map`` key is compared with: ``1`` and ``"1"`` both read ``1``."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    return None


def _read_csv(path: Path) -> Table:
    with CSVRows(path) as table:
        rows = tuple(Row(row.cells, row.line, i) for i, row in enumerate(table, start=1))
        return Table(table.file, table.columns, rows, table.repeated)


def _read_records(path: Path) -> Table:
    file = str(path)
    records = read_records(path)
    items: list[tuple[Any, int | None, str]] = []
    for record in records:
        many = isinstance(record.value, list)
        for i, value in enumerate(record.value if many else [record.value]):
            items.append((value, record.line, f"[{i}]" if many else ""))
    rows: list[Row] = []
    columns: dict[str, None] = {}
    for value, line, where in items:
        if not isinstance(value, dict):
            raise InputError(f"expected an object with one field per column, got {type(value).__name__}",
                             file=file, line=line, path=where or None)
        columns.update(dict.fromkeys(value))
        rows.append(Row(value, line, len(rows) + 1))
    return Table(file, tuple(columns), tuple(rows))


def _read_values(path: Path, key: str) -> Table:
    file = str(path)
    records = read_records(path, "json" if document_format(path) == "jsonl" else None)
    doc = records[0].value if len(records) == 1 else None
    values = doc if key == BARE_LIST else (doc.get(key) if isinstance(doc, dict) else None)
    if not isinstance(values, list):
        keys = ", ".join(k for k, v in doc.items() if isinstance(v, list)) if isinstance(doc, dict) else ""
        raise InputError(f"no list of values under {key!r}" + (f"; lists: {keys}" if keys else ""),
                         file=file, path=None if key == BARE_LIST else key)
    rows = tuple(Row({key: v}, records[0].line, i + 1) for i, v in enumerate(values))
    return Table(file, (key,), rows)


def read_table(path: str | Path, *, values_key: str | None = None) -> Table:
    """The rows of a CSV, JSONL, JSON or YAML file.

    Args:
        path: a ``.csv`` file (header row first), a JSONL file of objects, or a JSON/YAML list of objects.
        values_key: read a list of plain values instead (e.g. judgy's ``test_labels``), one row per
            value under a column of that name; ``"."`` when the file is the list itself.

    Raises:
        InputError: the file cannot be read, or is not a table; the error names file and line.
    """
    p = Path(path)
    if values_key is not None:
        return _read_values(p, values_key)
    if p.suffix.lower() == ".csv":
        return _read_csv(p)
    return _read_records(p)
