"""Reading a CSV file row by row, each row with the line it starts on (the one CSV reader evalkit has).

Cells stay the text the file holds: nothing is coerced. A spreadsheet's byte-order mark is not part of
the first column's name. A row with more or fewer fields than the header is an error naming its line,
never padded or cut; blank lines are skipped. A column named twice in the header is left out of the rows
and listed in :attr:`CSVRows.repeated`, so a caller that needs it can say so.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from evalkit.errors import InputError
from evalkit.io.regular import check_regular

__all__ = ["CSVRow", "CSVRows"]


@dataclass(frozen=True)
class CSVRow:
    """One record: column -> cell text (columns named once in the header), and the line it starts on."""

    cells: dict[str, str]
    line: int


class CSVRows:
    """An open CSV file: its header read, its rows streamed by :meth:`__iter__` (use in a ``with``).

    Attributes:
        file: the path, as given.
        columns: the header's names, in order, each once.
        repeated: the names the header holds more than once (left out of the rows).

    Raises:
        InputError: unreadable file, no header row, invalid CSV or UTF-8 (with the line).
    """

    def __init__(self, path: str | Path) -> None:
        self.file = str(path)
        check_regular(path)  # a FIFO would hang the read
        try:
            self._handle = Path(path).open(newline="", encoding="utf-8-sig")  # noqa: SIM115 - closed by close()
        except OSError as exc:
            raise InputError(f"cannot read file: {exc.strerror or exc}", file=self.file) from None
        self._reader = csv.reader(self._handle)
        try:
            header = self._next()
            if not header:
                raise InputError("empty file: no header row", file=self.file, line=1)
        except BaseException:
            self._handle.close()
            raise
        self._header = header
        self.columns = tuple(dict.fromkeys(header))
        self.repeated = frozenset(c for c in header if header.count(c) > 1)

    def _next(self) -> list[str] | None:
        """The next row's fields (None at the end of the file)."""
        try:
            return next(self._reader, None)
        except csv.Error as exc:
            raise InputError(f"invalid CSV: {exc}", file=self.file, line=self._reader.line_num) from None
        except UnicodeDecodeError as exc:
            raise InputError(f"not valid UTF-8 at byte {exc.start}", file=self.file) from None

    def __iter__(self) -> Iterator[CSVRow]:
        header, repeated = self._header, self.repeated
        start = self._reader.line_num + 1
        while True:
            values = self._next()
            if values is None:
                return
            if values:
                if len(values) != len(header):
                    raise InputError(f"{len(values)} fields, the header has {len(header)}", file=self.file,
                                     line=start)
                yield CSVRow({c: v for c, v in zip(header, values, strict=True) if c not in repeated}, start)
            start = self._reader.line_num + 1

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> CSVRows:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
