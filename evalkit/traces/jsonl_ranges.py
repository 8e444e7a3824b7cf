"""Native JSONL files cut into runs of lines that separate processes read on their own.

A worker given a :class:`LineRange` reads those bytes of the file and validates its traces itself,
so the process that hands out the work never parses a trace. The traces, their order and every
error message (``FILE:LINE: field: message``) are those of :func:`~evalkit.traces.iter_traces`
reading the whole file.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from dataclasses import dataclass

from evalkit.contracts.trace import Trace
from evalkit.errors import InputError
from evalkit.io.regular import open_regular
from evalkit.io.strict_json import loads_strict
from evalkit.traces.formats import detect_format
from evalkit.traces.native import trace_from_value
from evalkit.traces.source import SourceValue, is_jsonl

_CHUNK = 1 << 20


@dataclass(frozen=True)
class LineRange:
    """Lines ``first_line`` onwards of ``path``: bytes ``start`` to ``end`` (``lines`` lines)."""

    path: str
    start: int
    end: int
    first_line: int
    lines: int

    def __len__(self) -> int:
        return self.lines


def is_native_jsonl(path: str | os.PathLike[str], format: str = "auto") -> bool:
    """True when ``path`` is a JSONL file of evalkit's own format (given, or sniffed from its first line)."""
    if not is_jsonl(path) or format not in ("auto", "evalkit"):
        return False
    try:
        return detect_format(path) == "evalkit"
    except InputError:  # empty, unreadable or unknown: the ordinary reader says so
        return False


def line_ranges(path: str | os.PathLike[str], lines_per_range: int,
                max_bytes: int | None = None) -> Iterator[LineRange]:
    """Cut a JSONL file into runs of ``lines_per_range`` lines (blank lines count), reading only bytes.

    With ``max_bytes``, a run also ends at the first line break at or past that many bytes from its
    start (so long lines make short runs; a run holds one line at least).

    Raises:
        InputError: unreadable file, or a byte-order mark (as :func:`~evalkit.traces.iter_traces`).
    """
    file = str(path)
    with open_regular(path) as fh:
        if fh.read(3) == b"\xef\xbb\xbf":
            raise InputError("byte-order mark at start of file; save as UTF-8 without BOM", file=file, line=1)
        fh.seek(0)
        start = offset = 0
        first, count = 1, 0
        tail = b""
        while chunk := fh.read(_CHUNK):
            pos = 0
            while (newline := chunk.find(b"\n", pos)) != -1:
                count += 1
                pos = newline + 1
                if count == lines_per_range or (max_bytes is not None and offset + pos - start >= max_bytes):
                    end = offset + pos
                    yield LineRange(file, start, end, first, count)
                    start, first, count = end, first + count, 0
            tail = chunk[pos:]
            offset += len(chunk)
        if offset > start:  # a last line without a line break, or lines short of a full range
            yield LineRange(file, start, offset, first, count + (1 if tail else 0))


def read_line_range(line_range: LineRange) -> list[Trace]:
    """The traces of a range, validated as :func:`~evalkit.traces.iter_traces` validates native JSONL.

    Raises:
        InputError: a line that is not strict JSON or not a trace (``FILE:LINE: field: message``).
    """
    file = line_range.path
    with open_regular(file) as fh:
        fh.seek(line_range.start)
        data = fh.read(line_range.end - line_range.start)
    traces = []
    # Lines as a binary file yields them (split at b"\n" only), so each is parsed exactly as there.
    for lineno, raw in enumerate(io.BytesIO(data), start=line_range.first_line):
        if raw.isspace():  # a blank line, skipped as the whole-file reader skips it
            continue
        traces.append(trace_from_value(SourceValue(loads_strict(raw, file=file, line=lineno), file, lineno)))
    return traces
