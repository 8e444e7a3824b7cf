"""An external sort: rows added in any order come back sorted by their first columns, in bounded memory.

A judge run finishes items in whatever order the calls land and must write them sorted; a run of any
size must not hold them all. The OpenTelemetry importer groups the spans of an unsorted file by trace
the same way (``evalkit.traces.otel_spill``). Rows (tuples of values marshal writes: str, int, bytes,
None...) are kept in memory up to ``run_rows`` (or ``run_bytes``, given ``row_size``), then sorted and
spilled to an anonymous temporary file as a *run* of marshalled blocks; at the end the runs
are merged (``heapq.merge``), reading one block of each at a time. Past ``fan_in`` runs, the runs so
far are merged into one first, so the open blocks stay bounded however many rows there are. Rows that
arrive in order (a rerun replaying its prompts from the cache) make one run, read back without merging.

This replaced a temporary SQLite table with a primary key: its B-tree inserts cost about as much as the
rest of a cached verdict's replay together, and a Python sort of mostly ordered rows costs almost nothing.
"""

from __future__ import annotations

import heapq
import marshal
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from operator import itemgetter
from typing import Any

from evalkit.errors import InputError
from evalkit.io.bulk import paused_gc

Row = tuple[Any, ...]
_Run = list[tuple[int, int]]
"""A spilled run: the (offset, length) of each of its marshalled blocks, in order."""


class SortedSpill:
    """Collects rows; :meth:`sorted` yields them ordered by the first ``key_columns`` columns.

    Args:
        key_columns: how many leading columns make the sort key.
        run_rows: rows held in memory before a sorted run is spilled.
        block_rows: rows per marshalled block (what the merge holds per run).
        fan_in: runs merged at once; more runs are first merged into one.
        row_size: the size of a row in bytes, for rows whose size varies widely (a span with a long
            prompt): a run then ends at ``run_bytes`` too, and a block at ``block_bytes``, so memory
            stays bounded in bytes (a run, and a block of each run while merging), not only in rows.
    """

    def __init__(self, key_columns: int, *, run_rows: int = 4096, block_rows: int = 64, fan_in: int = 64,
                 row_size: Callable[[Row], int] | None = None, run_bytes: int = 32 * 2**20,
                 block_bytes: int = 2**20) -> None:
        self.key: Callable[[Row], Any] = itemgetter(*range(key_columns))
        self.run_rows, self.block_rows, self.fan_in = run_rows, block_rows, fan_in
        self.row_size, self.run_bytes, self.block_bytes = row_size, run_bytes, block_bytes
        self._bytes = 0  # of the rows held, when row_size is given
        self._rows: list[Row] = []
        self._runs: list[_Run] = []
        self._file: Any = None
        self._end = 0
        self._in_order = True  # every run so far continues the last one (a replay in the prompts' order)
        self._last: Any = None
        self.count = 0

    def add(self, row: Row) -> None:
        """Add one row."""
        self._rows.append(row)
        self.count += 1
        if self.row_size is not None:
            self._bytes += self.row_size(row)
            if self._bytes >= self.run_bytes:
                self._spill()
                return
        if len(self._rows) >= self.run_rows:
            self._spill()

    def _spill(self) -> None:
        self._rows.sort(key=self.key)
        rows, self._rows, self._bytes = self._rows, [], 0
        if self._runs and self._in_order and self.key(rows[0]) >= self._last:
            self._runs[-1].extend(self._write(rows))  # rows that arrive in order extend one run: no merge
        else:
            self._in_order = not self._runs
            self._runs.append(self._write(rows))
        self._last = self.key(rows[-1])
        if len(self._runs) >= self.fan_in:
            runs, self._runs = self._runs, []
            self._runs.append(self._write(heapq.merge(*map(self._read, runs), key=self.key)))

    def _write(self, rows: Iterable[Row]) -> _Run:
        if self._file is None:
            self._file = tempfile.TemporaryFile(prefix="evalkit-spill-")  # noqa: SIM115 - closed by close()
        run: _Run = []
        block: list[Row] = []
        size, block_size = self.row_size, 0
        for row in rows:
            block.append(row)
            if size is not None:
                block_size += size(row)
            if len(block) >= self.block_rows or block_size >= self.block_bytes:
                run.append(self._put(block))
                block, block_size = [], 0
        if block:
            run.append(self._put(block))
        return run

    def _put(self, block: list[Row]) -> tuple[int, int]:
        with paused_gc():
            data = marshal.dumps(block)
        try:
            os.pwrite(self._file.fileno(), data, self._end)
        except OSError as exc:  # a full disk, mostly: say where, and what to do
            raise InputError(f"cannot write the temporary sort file in {tempfile.gettempdir()} "
                             f"({exc.strerror or exc}): free space there, or set TMPDIR to a folder with room") from None
        extent = (self._end, len(data))
        self._end += len(data)
        return extent

    def _read(self, run: _Run) -> Iterator[Row]:
        fd = self._file.fileno()
        for offset, length in run:
            with paused_gc():  # a block of rows holds no cycles: the collector's passes over it are waste
                rows = marshal.loads(os.pread(fd, length, offset))
            yield from rows

    def sorted(self) -> Iterator[Row]:
        """Every row added, ordered by key (rows with equal keys in no set order)."""
        self._rows.sort(key=self.key)
        if not self._runs:
            yield from self._rows
            return
        if self._in_order and len(self._runs) == 1 and (not self._rows or self.key(self._rows[0]) >= self._last):
            yield from self._read(self._runs[0])  # in order all along: read straight through
            yield from self._rows
            return
        yield from heapq.merge(*map(self._read, self._runs), iter(self._rows), key=self.key)

    def close(self) -> None:
        """Delete the temporary file."""
        self._rows = []
        self._runs = []
        self._bytes = 0
        if self._file is not None:
            self._file.close()
            self._file = None


__all__ = ["SortedSpill"]
