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
twice in a trace) names the same place. The temporary file takes about twice the file's size, in the
system's temporary folder (``TMPDIR``), and is removed at the end, on error too.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from evalkit.contracts.trace import Observation
from evalkit.io.sorted_spill import SortedSpill
from evalkit.traces.otel_observation import PlainSpan, built, new_plain_span
from evalkit.traces.otel_spans import Span
from evalkit.traces.source import SourceValue

__all__ = ["SPILL_BYTES", "SpanSpill", "spills"]

SPILL_BYTES = 64 * 2**20
"""An unsorted OpenTelemetry JSONL file at least this large is grouped on disk; a smaller one in memory."""

_SPAN_FIELDS = tuple(f for f in Span.__slots__ if f != "sv")  # type: ignore[attr-defined]


def spills(path: str, unsorted: str | None) -> bool:
    """True when an OpenTelemetry JSONL file is grouped on disk: not sorted, and large."""
    if unsorted is None:
        return False
    try:
        return os.path.getsize(path) >= SPILL_BYTES
    except OSError:
        return False


class SpanSpill:
    """Spans set aside on disk, given back trace by trace (see the module docstring)."""

    def __init__(self, file: str, **sort_options: int) -> None:
        self.file = file
        self._sort = SortedSpill(2, **sort_options)

    @property
    def count(self) -> int:
        """How many spans were set aside."""
        return self._sort.count

    def add(self, span: PlainSpan | Span) -> None:
        """Set one span aside: a row of plain values (marshalled in C), keyed by trace id and read order."""
        sv, seq = span.sv, self._sort.count
        if span.__class__ is PlainSpan:
            obs = span.observation
            self._sort.add((span.trace_id, seq, sv.line, sv.index, True, obs.__dict__, obs.model_fields_set,
                            *span[2:]))
        else:
            self._sort.add((span.trace_id, seq, sv.line, sv.index, False,
                            *(getattr(span, f) for f in _SPAN_FIELDS)))

    def _span(self, row: tuple[Any, ...]) -> PlainSpan | Span:
        _, _, line, index, plain, *rest = row
        sv = SourceValue(None, self.file, line, index)  # where it was read; the line's value is not kept
        if plain:
            values, fields_set, *fields = rest
            return new_plain_span((built(Observation, values, fields_set), sv, *fields))
        return Span(sv, *rest)

    def traces(self) -> Iterator[tuple[str, list[PlainSpan | Span]]]:
        """(trace id, its spans in file order) for each trace, in trace id order."""
        trace_id, spans = None, []
        for row in self._sort.sorted():
            if row[0] != trace_id:
                if spans:
                    yield trace_id, spans  # type: ignore[misc]
                trace_id, spans = row[0], []
            spans.append(self._span(row))
        if spans:
            yield trace_id, spans  # type: ignore[misc]

    def in_file_order(self) -> list[PlainSpan | Span]:
        """Every span set aside, in the order they were read (to go on in memory)."""
        rows = sorted(self._sort.sorted(), key=lambda row: row[1])
        return [self._span(row) for row in rows]

    def close(self) -> None:
        """Delete the temporary file."""
        self._sort.close()
