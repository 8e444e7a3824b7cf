"""Importing OpenTelemetry trace exports: one native ``Trace`` per trace id.

Accepted shapes, per JSON value of the file:

* an OTLP JSON document (``resourceSpans`` / ``scopeSpans``), or Grafana Tempo's variant (``batches`` /
  ``instrumentationLibrarySpans``);
* a Jaeger UI export (``{"data": [{"traceID", "spans", "processes"}]}``);
* a flat span dict (OTLP-style camelCase, snake_case ``trace_id`` / ``span_id``, or the OTel SDK's
  ``context.trace_id``), alone, in a list, or under ``{"spans": [...]}`` (any-agent).

Spans of one trace may be spread over the whole input; traces come out sorted by trace id. The
GenAI semantic conventions (current and legacy) and OpenInference attributes decide each
observation's type, name, input, output, model and usage; see ``evalkit.traces.otel_attributes``.

Memory: a JSONL file sorted by trace id (every span's trace id no smaller than the one before it,
as when each line holds the spans of one trace and the lines are in trace id order) is read one
trace at a time: a trace is complete, and handed on, once a span of the next trace id starts, so
memory holds one trace whatever the file's size. A first light pass over the file (ids only) tells
whether it is sorted (see ``evalkit.traces.otel_sorted``). When it is not, as a collector's file
exporter writes them, spans of a trace may come at any point, and the import report warns: a file of
``otel_spill.SPILL_BYTES`` or more is sorted by trace id on disk and read back one trace at a time (see
``evalkit.traces.otel_spill``); a smaller one is held in memory until the end of the file. Vercel AI SDK
spans without a parent id (see ``evalkit.traces.vercel_ai``) may join a trace written anywhere in the
file, so from the first such span on the rest of the file is held in memory, with a warning counting
those traces. A JSON document (not JSONL) is in memory whole anyway, and is grouped the same way
without a warning.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterable, Iterator
from typing import Any

from evalkit.contracts.trace import Observation, Trace
from evalkit.io.bulk import paused_gc
from evalkit.traces.otel_ids import LossyNumber
from evalkit.traces.otel_observation import TOOL_BY, PlainSpan, built, observation_of
from evalkit.traces.otel_sorted import unsorted_reason
from evalkit.traces.otel_spans import IDLESS, Span, is_span, join_path, spans_of
from evalkit.traces.otel_spill import SpanSpill, spills
from evalkit.traces.report import ImportContext, ImportReport
from evalkit.traces.source import SourceValue
from evalkit.traces.tree import order_observations, start_key
from evalkit.traces.vercel_ai import apply_joins, vercel_type

__all__ = ["looks_like_otel", "read_otel"]

_START_KEY = operator.attrgetter("start_key")
_OBSERVATION = operator.attrgetter("observation")
"""A ``PlainSpan``'s built observation; a general ``Span`` has none (its observation is built here)."""


# --- recognising the input ----------------------------------------------------------------------

def looks_like_otel(value: Any) -> bool:
    """True for an OTLP JSON document, a Tempo batch export, a Jaeger export or flat span dicts."""
    if isinstance(value, list):
        return bool(value) and is_span(value[0])
    if not isinstance(value, dict):
        return False
    if isinstance(value.get("resourceSpans"), list):
        return True
    batches = value.get("batches")
    if isinstance(batches, list) and batches and isinstance(batches[0], dict):
        return "instrumentationLibrarySpans" in batches[0] or "scopeSpans" in batches[0]
    data = value.get("data")
    if isinstance(data, list) and data and isinstance(data[0], dict):
        return "traceID" in data[0] and isinstance(data[0].get("spans"), list)
    spans = value.get("spans")
    if isinstance(spans, list):
        return "traceID" in value or (bool(spans) and is_span(spans[0]))
    return is_span(value)


# --- mapping to observations --------------------------------------------------------------------

def _observation(span: Span) -> Observation:
    """The span's Observation (absent fields left unset)."""
    return observation_of(span.span_id, span.parent_id, span.name, span.kind, span.start, span.end,
                          span.attributes, span.events, span.error, span.status_message, span.resource,
                          span.scope, span.joined_from)


def _trace(trace_id: str, spans: dict[str, PlainSpan | Span], joined: list[str] | None) -> Trace:
    """The trace of ``spans``: observations in tree order (``order_observations`` reads a span's
    ``id``, ``parent_id`` and start time as it would the observation's). Built without validation:
    the observation ids are unique, being the keys of ``spans``."""
    with paused_gc():
        ordered = list(spans.values())
        keys = list(map(_START_KEY, ordered))
        if None in keys:
            keys = [start_key(s.start) if k is None else k for s, k in zip(ordered, keys, strict=True)]
        ordered = order_observations(ordered, keys)
        try:  # the usual case, in C: every span read by the short path, its observation built
            observations = list(map(_OBSERVATION, ordered))
        except AttributeError:
            observations = [s.observation if s.__class__ is PlainSpan else _observation(s) for s in ordered]
        metadata: dict[str, Any] = {"source": "otel"}
        if joined:
            metadata["joinedTraceIds"] = sorted(joined)
        name = observations[0].name if observations else None
        fields_set = {"id", "metadata", "observations"}
        if name is not None:
            fields_set.add("name")
        values = {"schema_uri": None, "id": trace_id, "name": name, "input": None, "output": None,
                  "metadata": metadata, "observations": observations}
        return built(Trace, values, fields_set)


def _traces(n: int) -> str:
    return f"{n} trace{'' if n == 1 else 's'}"


def _orphan(span: Span) -> bool:
    """A Vercel AI SDK span without a parent id: it may join, or be joined by, another trace."""
    return span.parent_id is None and vercel_type(span.attributes) is not None


class _Grouping:
    """Spans grouped per trace id: one trace at a time for a sorted file, else all until the end."""

    def __init__(self, report: ImportReport, file: str, jsonl: bool, unsorted: str | None) -> None:
        self.report, self.file = report, file
        self.sorted_file = jsonl and unsorted is None
        self.unsorted = unsorted if jsonl else None
        self.streaming = self.sorted_file
        self.spill = SpanSpill(file) if jsonl and spills(file, unsorted) else None
        """A large unsorted file's spans, set aside on disk until its end (see ``otel_spill``)."""
        self.traces: dict[str, dict[str, Span]] = {}
        self.last: str | None = None
        self.held_from: SourceValue | None = None
        """Where a sorted file began to be held whole (its first Vercel span without a parent)."""
        self.unspilled_at: SourceValue | None = None
        """Where a file grouped on disk went on in memory (its first Vercel span without a parent)."""

    def add(self, span: Span) -> Trace | None:
        """Take one span; return the trace it completes (the previous one, when it starts a new trace)."""
        trace_id, done = span.trace_id, None
        if self.spill is not None:
            if not _orphan(span):
                self.spill.add(span)
                return None
            self._unspill(span)
        if self.sorted_file and trace_id != self.last:
            if self.last is not None and trace_id < self.last:
                raise span.sv.error(f"trace {trace_id!r} comes after trace {self.last!r}, yet a first read "
                                    "found the file sorted by trace id: did it change while being read?")
            if self.streaming and self.last is not None:
                done = _trace(self.last, self.traces.pop(self.last), None)
            self.last = trace_id
        _put(self.traces, span)
        if self.streaming and span.parent_id is None and _orphan(span):
            self.streaming, self.held_from = False, span.sv
        return done

    def _unspill(self, span: Span) -> None:
        """Go on in memory from a Vercel AI SDK span without a parent id on: it may join any trace."""
        assert self.spill is not None
        spill, self.spill = self.spill, None
        try:
            for earlier in spill.in_file_order():
                _put(self.traces, earlier)
        finally:
            spill.close()
        self.unspilled_at = span.sv

    def finish(self) -> Iterator[Trace]:
        """The traces still held, sorted by id, once Vercel spans without parents have been joined."""
        if self.spill is not None:
            yield from self._from_disk()
            return
        if self.streaming:
            if self.last is not None:
                yield _trace(self.last, self.traces.pop(self.last), None)
            return
        if self.unsorted is not None:
            why = ("(a file sorted by trace id is read one trace at a time)" if self.unspilled_at is None else
                   f"and not grouped on disk: a Vercel AI SDK span without a parent id ({self.unspilled_at.where}) "
                   "may join a trace anywhere in the file")
            self.report.warn(f"{self.file} {self.unsorted}: the spans of {_traces(len(self.traces))} were "
                             f"held in memory until the end of the file {why}")
        elif self.held_from is not None:
            self.report.warn(f"{self.held_from.where}: from this Vercel AI SDK span without a parent id on, "
                             f"{_traces(len(self.traces))} were held in memory until the end of the file, "
                             "as such spans may join a trace written further on")
        for spans in self.traces.values():
            nest_by_time(spans, self.report)
        joined = apply_joins(self.traces, self.report)
        for trace_id in sorted(self.traces):
            yield _trace(trace_id, self.traces[trace_id], joined.get(trace_id))

    def close(self) -> None:
        """Remove what was set aside on disk, if anything (at the end, on error, or when left unread)."""
        if self.spill is not None:
            self.spill.close()

    def _from_disk(self) -> Iterator[Trace]:
        """The traces of a file grouped on disk, one at a time, in trace id order."""
        assert self.spill is not None
        count = 0
        for trace_id, spans in self.spill.traces():
            grouped: dict[str, dict[str, Span]] = {}
            for span in spans:
                _put(grouped, span)
            count += 1
            yield _trace(trace_id, grouped[trace_id], None)
        self.report.warn(f"{self.file} {self.unsorted}: the spans of {_traces(count)} were sorted by trace id "
                         "in a temporary file and read back one trace at a time (a file sorted by trace id "
                         "needs no temporary file)")


def nest_by_time(spans: dict[str, Span], report: ImportReport) -> None:
    """Give spans recorded without ids the parent their timing shows: the innermost span enclosing them.

    Spans are taken by start time, longer first on a tie; a span's parent is the latest earlier span
    whose interval holds its own (an open stack of enclosing spans). A span without times stays a root.
    """
    idless = [s for s in spans.values() if s.id_key == IDLESS]
    if not idless:
        return
    timed = sorted((s for s in idless if s.start and s.end),
                   key=lambda s: (start_key(s.start), -start_key(s.end), s.span_id))
    stack: list[Span] = []
    for span in timed:
        begin, end = start_key(span.start), start_key(span.end)
        while stack and not (start_key(stack[-1].start) <= begin and start_key(stack[-1].end) >= end):
            stack.pop()
        if stack:
            span.parent_id = stack[-1].span_id
        stack.append(span)
    report.kept("spans recorded without trace or span ids (Vercel AI SDK / Mastra span lists): one trace per "
                "file, each span under the innermost span whose timing encloses it", "observations nested by timing",
                n=len(idless))


def _put(traces: dict[str, dict[str, Span]], span: Span) -> None:
    """Add a span to its trace; a span id seen before in the trace is refused unless the span is the same."""
    spans = traces.get(span.trace_id)
    if spans is None:
        spans = traces[span.trace_id] = {}
    span_id = span.id
    seen = spans.get(span_id)
    if seen is not None:
        if seen.raw == span.raw:
            return
        raise span.sv.error(f"span id {span_id!r} used twice in trace {span.trace_id!r}",
                            join_path(span.path, span.id_key))
    spans[span_id] = span


def _reported(trace: Trace, report: ImportReport) -> Trace:
    """``trace``, its plain spans that conventions made TOOLs counted in the report."""
    for obs in trace.observations:
        if obs.type == "TOOL" and obs.metadata and TOOL_BY in obs.metadata:
            report.mapped(f"spans marked as tool calls by {obs.metadata[TOOL_BY]}", "TOOL")
    return trace


def read_otel(values: Iterable[SourceValue], context: ImportContext | None = None) -> Iterator[Trace]:
    """Read every value, group spans by trace id, and yield one Trace per trace id, sorted by id.

    A JSONL file sorted by trace id is read one trace at a time; a large unsorted one is sorted on disk
    first, and any other input is held until its end (see the module docstring for when, and the
    warning the import report then gives).
    Vercel AI SDK spans that lost their parent ids are joined to their wrappers first (see
    ``evalkit.traces.vercel_ai``); each join is counted in ``context.report``.

    Raises:
        evalkit.errors.InputError: a value of an unknown shape, or a span without a trace or span id, with
            non-object attributes, a bad time, or a span id used twice in one trace.
    """
    values = iter(values)
    first = next(values, None)
    if first is None:
        return
    unsorted = unsorted_reason(first.file) if first.line is not None else None
    grouping = _Grouping(context.report if context is not None else ImportReport(), first.file,
                         first.line is not None, unsorted)
    try:
        for sv in itertools.chain([first], values):
            try:
                with paused_gc():
                    spans_of_value = list(spans_of(sv))
            except LossyNumber as exc:
                raise sv.error(exc.message, exc.path) from None
            for span in spans_of_value:
                done = grouping.add(span)
                if done is not None:
                    yield _reported(done, grouping.report)
        for trace in grouping.finish():
            yield _reported(trace, grouping.report)
    finally:
        grouping.close()
