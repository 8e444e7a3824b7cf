"""Grouping the spans of a large unsorted OpenTelemetry JSONL file on disk, one trace at a time.

A collector's file exporter writes each batch of spans as it leaves the collector, so the spans of
one trace are spread over many lines among other traces' spans: such a file is not sorted by trace
id, and a trace is complete only at the end of the file. Held in memory, every span of the file
would be held at once. Instead each span, read and with its observation built as usual, goes to an
external sort (:class:`~evalkit.io.sorted_spill.SortedSpill`: sorted runs in a temporary file, merged
at the end) keyed by its trace id and the order it was read in. The merged spans come back trace by
trace, in trace id order, each trace's spans in file order: the order the in-memory grouping sees
them in, so the traces are the same either way, while memory holds one trace and a block of each run.

Each span keeps where it was read (file, line, path), so an error found while grouping (a span id used
twice in a trace) names the same place. Memory is bounded in bytes: a sorted run of ``RUN_BYTES`` of
packed spans, and while merging a block of ``BLOCK_BYTES`` of each of at most ``FAN_IN`` runs, however
long the prompts the spans hold. The temporary file takes about twice the file's size, in the
system's temporary folder (``TMPDIR``), and is removed at the end, on error too.
"""

from __future__ import annotations

import marshal
import os
from collections.abc import Iterator

from evalkit.contracts.trace import Observation
from evalkit.io.bulk import paused_gc
from evalkit.io.sorted_spill import SortedSpill
from evalkit.traces.otel_observation import PlainSpan, built, new_plain_span
from evalkit.traces.otel_spans import Span
from evalkit.traces.source import SourceValue

__all__ = ["SPILL_BYTES", "SpanSpill", "spills"]

SPILL_BYTES = 16 * 2**20
"""An unsorted OpenTelemetry JSONL file at least this large is grouped on disk; a smaller one in memory."""

RUN_BYTES = 8 * 2**20
"""Bytes of packed spans held before a sorted run is written (rows are bounded in bytes, not in count)."""
BLOCK_BYTES = 256 * 2**10
"""Bytes of packed spans per block: what the merge holds of each run (at most ``FAN_IN`` runs at once)."""
RUN_ROWS, BLOCK_ROWS, FAN_IN = 1 << 20, 1 << 14, 64
"""Row counts that only bind when spans are tiny; the bytes above bound memory."""

_SPAN_FIELDS = tuple(f for f in Span.__slots__ if f != "sv")  # type: ignore[attr-defined]


def spills(path: str, unsorted: str | None) -> bool:
    """True when an OpenTelemetry JSONL file is grouped on disk: not sorted, and large."""
    if unsorted is None:
        return False
    try:
        return os.path.getsize(path) >= SPILL_BYTES
    except OSError:
        return False


def _row_size(row: tuple[str, int, bytes]) -> int:
    return len(row[0]) + len(row[2]) + 64


class SpanSpill:
    """Spans set aside on disk, given back trace by trace (see the module docstring)."""

    def __init__(self, file: str) -> None:
        self.file = file
        self._sort = SortedSpill(2, run_rows=RUN_ROWS, block_rows=BLOCK_ROWS, fan_in=FAN_IN, row_size=_row_size,
                                 run_bytes=RUN_BYTES, block_bytes=BLOCK_BYTES)

    @property
    def count(self) -> int:
        """How many spans were set aside."""
        return self._sort.count

    def add(self, span: PlainSpan | Span) -> None:
        """Set one span aside: its plain values packed by marshal (in C), keyed by trace id and read order."""
        sv = span.sv
        if span.__class__ is PlainSpan:
            obs = span.observation
            packed = (sv.line, sv.index, True, obs.__dict__, obs.model_fields_set, *span[2:])
        else:
            packed = (sv.line, sv.index, False, *(getattr(span, f) for f in _SPAN_FIELDS))
        self._sort.add((span.trace_id, self._sort.count, marshal.dumps(packed)))

    def _span(self, row: tuple[str, int, bytes]) -> PlainSpan | Span:
        line, index, plain, *rest = marshal.loads(row[2])
        sv = SourceValue(None, self.file, line, index)  # where it was read; the line's value is not kept
        if plain:
            values, fields_set, *fields = rest
            return new_plain_span((built(Observation, values, fields_set), sv, *fields))
        return Span(sv, *rest)

    def traces(self) -> Iterator[tuple[str, list[PlainSpan | Span]]]:
        """(trace id, its spans in file order) for each trace, in trace id order."""
        trace_id, rows = None, []
        for row in self._sort.sorted():
            if row[0] != trace_id:
                if rows:
                    yield trace_id, self._spans(rows)  # type: ignore[misc]
                trace_id, rows = row[0], []
            rows.append(row)
        if rows:
            yield trace_id, self._spans(rows)  # type: ignore[misc]

    def _spans(self, rows: list[tuple[str, int, bytes]]) -> list[PlainSpan | Span]:
        with paused_gc():  # unpacked spans hold no cycles
            return [self._span(row) for row in rows]

    def in_file_order(self) -> list[PlainSpan | Span]:
        """Every span set aside, in the order they were read (to go on in memory)."""
        return self._spans(sorted(self._sort.sorted(), key=lambda row: row[1]))

    def close(self) -> None:
        """Delete the temporary file."""
        self._sort.close()
