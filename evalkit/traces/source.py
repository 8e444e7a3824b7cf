"""Reading the JSON values of a trace file, each with the line it starts on.

Importers receive ``SourceValue``s, not files: a ``.jsonl`` file gives one value per line, a
``.json`` document gives itself, or, when it is a top-level array, each element with its index; a
``.csv`` file gives each row as an object of its cells' text (header names as keys); a zipped Inspect AI
log (``.eval``) gives its ``header.json`` and then each ``samples/*.json``, in sample order, each named
``LOG.eval!samples/ID_epoch_N.json`` in messages.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit.errors import InputError
from evalkit.io.csv_rows import CSVRows
from evalkit.io.regular import check_regular, open_regular
from evalkit.io.strict_json import loads_strict


@dataclass(frozen=True)
class SourceValue:
    """One JSON value from a trace file and where it came from (for error messages)."""

    value: Any
    file: str
    line: int | None = None
    index: int | None = None

    @property
    def where(self) -> str:
        """``FILE:LINE`` or ``FILE[INDEX]``: where this value sits, for messages that are not errors."""
        if self.line is not None:
            return f"{self.file}:{self.line}"
        return self.file if self.index is None else f"{self.file}[{self.index}]"

    def error(self, message: str, path: str | None = None) -> InputError:
        """An InputError located at this value (``FILE:LINE: [index].path: message``)."""
        if self.index is not None:
            path = f"[{self.index}]" + (("" if path.startswith("[") else ".") + path if path else "")
        return InputError(message, file=self.file, line=self.line, path=path)


def is_jsonl(path: str | Path) -> bool:
    """True for files read line by line (``.jsonl``, ``.ndjson``)."""
    return Path(path).suffix.lower() in (".jsonl", ".ndjson")


def is_csv(path: str | Path) -> bool:
    """True for CSV files (``.csv``): each row one record."""
    return Path(path).suffix.lower() == ".csv"


def _csv_values(path: str | Path) -> Iterator[SourceValue]:
    with CSVRows(path) as rows:
        if rows.repeated:
            raise InputError(f"column {sorted(rows.repeated)[0]!r} appears more than once in the header, so "
                             "each record would lose one of its cells; rename one", file=rows.file, line=1)
        for row in rows:
            yield SourceValue(row.cells, rows.file, row.line)


def is_zipped_log(path: str | Path) -> bool:
    """True for zipped Inspect AI logs (``.eval``): a header and one JSON document per sample."""
    return Path(path).suffix.lower() == ".eval"


def _sample_order(name: str) -> tuple[Any, ...]:
    """``samples/10_epoch_2.json`` after ``samples/9_epoch_1.json``: numbers compared as numbers."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name))


def _zipped_log_values(path: str | Path) -> Iterator[SourceValue]:
    file = str(path)
    check_regular(path)
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise InputError(f"not a zipped Inspect AI log ({exc}); an .eval file is a zip archive", file=file) from None
    with archive:
        names = archive.namelist()
        if "header.json" not in names:
            raise InputError("no header.json in this .eval archive: not an Inspect AI log", file=file)
        samples = sorted((n for n in names if n.startswith("samples/") and n.endswith(".json")), key=_sample_order)
        for name in ["header.json", *samples]:
            where = f"{file}!{name}"
            yield SourceValue(loads_strict(archive.read(name), file=where), where)


def iter_source_values(path: str | Path) -> Iterator[SourceValue]:
    """Yield the JSON values of a trace file (see the module docstring).

    Values are read as strictly as every other file evalkit reads (:func:`evalkit.io.loads_strict`):
    a duplicate key, a number beyond a double or nesting past the limit is an error, and integers of
    any size stay exact.

    Raises:
        InputError: unreadable or non-regular file, BOM, or a line / document that is not strict JSON.
    """
    file = str(path)
    if is_zipped_log(path):
        yield from _zipped_log_values(path)
        return
    if is_csv(path):
        yield from _csv_values(path)
        return
    with open_regular(path) as fh:
        head = fh.read(3)
        if head == b"\xef\xbb\xbf":
            raise InputError("byte-order mark at start of file; save as UTF-8 without BOM", file=file, line=1)
        fh.seek(0)
        if is_jsonl(path):
            for lineno, raw in enumerate(fh, start=1):
                if raw.isspace():  # a blank line; isspace stops at the first character of a record
                    continue
                yield SourceValue(loads_strict(raw, file=file, line=lineno), file, lineno)
            return
        data = fh.read()
    doc = loads_strict(data, file=file)
    if isinstance(doc, list):
        for i, item in enumerate(doc):
            yield SourceValue(item, file, None, i)
    else:
        yield SourceValue(doc, file)
