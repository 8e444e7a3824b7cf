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
whether it is sorted (see ``evalkit.traces.otel_sorted``). When it is not, every trace is held in
memory until the end of the file, as spans of a trace may come at any point, and the import report
warns, counting the traces held. Vercel AI SDK spans without a parent id (see
``evalkit.traces.vercel_ai``) may join a trace written anywhere in the file, so from the first such
span on the rest of the file is held too, with a warning counting those traces. A JSON document
(not JSONL) is in memory whole anyway, and is grouped the same way without a warning.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

from pydantic import BaseModel

from evalkit.contracts.trace import Observation, Trace
from evalkit.io.bulk import paused_gc
from evalkit.traces.otel_attributes import MISSING, first_text, observation_type, payloads, usage
from evalkit.traces.otel_ids import LossyNumber
from evalkit.traces.otel_sorted import unsorted_reason
from evalkit.traces.otel_spans import Span, is_span, join_path, spans_of
from evalkit.traces.report import ImportContext, ImportReport
from evalkit.traces.source import SourceValue
from evalkit.traces.tree import order_observations, start_key
from evalkit.traces.vercel_ai import VERCEL_TOOL_NAME, apply_joins, vercel_type

__all__ = ["looks_like_otel", "read_otel"]

M = TypeVar("M", Observation, Trace)

_MODEL_KEYS = ("gen_ai.response.model", "ai.response.model", "gen_ai.request.model", "llm.model_name", "ai.model.id")
"""Where a span names its model, the first given wins."""


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

_set = object.__setattr__
_new = object.__new__
# pydantic's BaseModel keeps these in slots: their descriptors set them without object.__setattr__'s lookup.
_set_fields_set = BaseModel.__pydantic_fields_set__.__set__  # type: ignore[attr-defined]
_set_extra = BaseModel.__pydantic_extra__.__set__  # type: ignore[attr-defined]
_set_private = BaseModel.__pydantic_private__.__set__  # type: ignore[attr-defined]


def _built(model: type[M], values: dict[str, Any], fields_set: set[str]) -> M:
    """The ``model`` of ``values`` (every field, in the model's order), as ``model_construct`` builds it:
    the same ``__dict__`` and ``model_fields_set``, without its per-field alias lookups, which cost more
    than validating. Only for values of their fields' types by construction (see :func:`_observation`
    and :func:`_trace`); ``tests/traces/test_otel_built.py`` checks they equal the validated models."""
    built = _new(model)
    _set(built, "__dict__", values)
    _set_fields_set(built, fields_set)
    _set_extra(built, None)
    _set_private(built, None)
    return built


def _observation(span: Span) -> Observation:
    """The span's Observation (absent fields left unset).

    Built without validation, as each value is already of its field's type: ids and names are strings
    (``otel_spans`` checks them), times come from ``otel_ids`` as ISO text ``datetime.fromisoformat``
    reads (the check ``Observation`` makes), the type is one of the mapped ``ObservationType`` values,
    usage holds only ints and floats, and metadata is a fresh dict.
    """
    attrs = span.attributes
    obs_type = observation_type(attrs)
    name = span.name
    if obs_type == "TOOL":
        name = first_text(attrs, "gen_ai.tool.name", "tool.name", *VERCEL_TOOL_NAME) or (
            name.removeprefix("execute_tool ") if name else None)
    fields_set = {"id", "type", "metadata"}
    if name is not None:
        fields_set.add("name")
    if span.parent_id is not None:
        fields_set.add("parent_id")
    if span.start is not None:
        fields_set.add("start_time")
    if span.end is not None:
        fields_set.add("end_time")
    model = None if attrs.keys().isdisjoint(_MODEL_KEYS) else first_text(attrs, *_MODEL_KEYS)
    if model is not None:
        fields_set.add("model")
    tokens = usage(attrs)
    if tokens is not None:
        fields_set.add("usage")
    level = status_message = None
    if span.error:
        level = "ERROR"
        fields_set.add("level")
        if span.status_message is not None:
            status_message = span.status_message
            fields_set.add("status_message")
    metadata: dict[str, Any] = {"attributes": attrs}
    if span.resource:
        metadata["resource"] = span.resource
    if span.scope:
        metadata["scope"] = span.scope
    if span.kind is not None:
        metadata["spanKind"] = span.kind
    if span.name is not None and span.name != name:
        metadata["spanName"] = span.name
    if span.events:
        metadata["events"] = span.events
    if span.joined_from is not None:
        metadata["sourceTraceId"] = span.joined_from
    inp, out = payloads(obs_type, attrs, span.events)
    if inp is MISSING:
        inp = None
    else:
        fields_set.add("input")
    if out is MISSING:
        out = None
    else:
        fields_set.add("output")
    values = {"id": span.span_id, "type": obs_type, "name": name, "input": inp, "output": out,
              "parent_id": span.parent_id, "start_time": span.start, "end_time": span.end, "model": model,
              "usage": tokens, "level": level, "status_message": status_message, "metadata": metadata}
    return _built(Observation, values, fields_set)


def _trace(trace_id: str, spans: dict[str, Span], joined: list[str] | None) -> Trace:
    """The trace of ``spans``: observations in tree order (``order_observations`` reads a span's
    ``id``, ``parent_id`` and start time as it would the observation's). Built without validation:
    the observation ids are unique, being the keys of ``spans``."""
    with paused_gc():
        ordered = list(spans.values())
        keys = [start_key(s.start) if s.start_key is None else s.start_key for s in ordered]
        observations = [_observation(s) for s in order_observations(ordered, keys)]
        metadata: dict[str, Any] = {"source": "otel"}
        if joined:
            metadata["joinedTraceIds"] = sorted(joined)
        name = observations[0].name if observations else None
        fields_set = {"id", "metadata", "observations"}
        if name is not None:
            fields_set.add("name")
        values = {"id": trace_id, "name": name, "input": None, "output": None, "metadata": metadata,
                  "observations": observations}
        return _built(Trace, values, fields_set)


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
        self.traces: dict[str, dict[str, Span]] = {}
        self.last: str | None = None
        self.held_from: SourceValue | None = None
        """Where a sorted file began to be held whole (its first Vercel span without a parent)."""

    def add(self, span: Span) -> Trace | None:
        """Take one span; return the trace it completes (the previous one, when it starts a new trace)."""
        trace_id, done = span.trace_id, None
        if self.sorted_file and trace_id != self.last:
            if self.last is not None and trace_id < self.last:
                raise span.sv.error(f"trace {trace_id!r} comes after trace {self.last!r}, yet a first read "
                                    "found the file sorted by trace id: did it change while being read?")
            if self.streaming and self.last is not None:
                done = _trace(self.last, self.traces.pop(self.last), None)
            self.last = trace_id
        spans = self.traces.setdefault(trace_id, {})
        seen = spans.get(span.span_id)
        if seen is not None:
            if seen.raw == span.raw:
                return done
            raise span.sv.error(f"span id {span.span_id!r} used twice in trace {trace_id!r}",
                                join_path(span.path, span.id_key))
        spans[span.span_id] = span
        if self.streaming and _orphan(span):
            self.streaming, self.held_from = False, span.sv
        return done

    def finish(self) -> Iterator[Trace]:
        """The traces still held, sorted by id, once Vercel spans without parents have been joined."""
        if self.streaming:
            if self.last is not None:
                yield _trace(self.last, self.traces.pop(self.last), None)
            return
        if self.unsorted is not None:
            self.report.warn(f"{self.file} {self.unsorted}: the spans of {_traces(len(self.traces))} were "
                             "held in memory until the end of the file (a file sorted by trace id is read one "
                             "trace at a time)")
        elif self.held_from is not None:
            self.report.warn(f"{self.held_from.where}: from this Vercel AI SDK span without a parent id on, "
                             f"{_traces(len(self.traces))} were held in memory until the end of the file, "
                             "as such spans may join a trace written further on")
        joined = apply_joins(self.traces, self.report)
        for trace_id in sorted(self.traces):
            yield _trace(trace_id, self.traces[trace_id], joined.get(trace_id))


def read_otel(values: Iterable[SourceValue], context: ImportContext | None = None) -> Iterator[Trace]:
    """Read every value, group spans by trace id, and yield one Trace per trace id, sorted by id.

    A JSONL file sorted by trace id is read one trace at a time; any other input is held until its
    end (see the module docstring for when, and the warning the import report then gives).
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
    for sv in itertools.chain([first], values):
        try:
            with paused_gc():
                spans_of_value = list(spans_of(sv))
        except LossyNumber as exc:
            raise sv.error(exc.message, exc.path) from None
        for span in spans_of_value:
            done = grouping.add(span)
            if done is not None:
                yield done
    yield from grouping.finish()
