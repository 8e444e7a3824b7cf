"""Reading OpenTelemetry spans out of any accepted shape: one ``Span`` per span, normalized.

``spans_of`` walks one JSON value (an OTLP document, a Tempo batch export, a Jaeger export or flat
span dicts, see ``evalkit.traces.otel``) and yields its spans in the order they are written. A
malformed field raises an InputError naming file, record and the field's path.

Speed: OTLP spans as collectors write them (hex ids, decimal-string times) take a short path that
builds their observation as it reads them (a ``PlainSpan``, see ``evalkit.traces.otel_observation``),
the same the general ``Span`` gives; any other spelling, and any error, goes the general way, so
error messages and their order are the same on both.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit.traces.otel_attributes import first_text
from evalkit.traces.otel_ids import (
    _HEX_IDS,
    HEX_DIGITS,
    STATUS_KEYS,
    BadField,
    LossyNumber,
    is_hex,
    is_hex_id,
    is_null_id,
    lookup,
    normalize_id,
    plain_span_times,
    plain_start,
    plain_time,
    span_status,
    time_from_micros,
    time_from_nanos,
)
from evalkit.traces.otel_observation import NO_EVENTS, PlainSpan, new_plain_span, observation_of
from evalkit.traces.otel_values import decode_attributes
from evalkit.traces.source import SourceValue

__all__ = ["IDLESS", "TRACE_KEYS", "Span", "is_idless_span", "is_span", "join_path", "spans_of"]

TRACE_KEYS = ("traceId", "trace_id", "context.trace_id", "context.traceId", "spanContext.traceId")
_SPAN_KEYS = ("spanId", "span_id", "context.span_id", "context.spanId", "spanContext.spanId")
_PARENT_KEYS = ("parentSpanId", "parent_span_id", "parent_id", "parentId", "parent.span_id",
                "parentSpanContext.spanId")
_START_KEYS = ("startTimeUnixNano", "start_time_unix_nano", "start_time", "startTime")
_END_KEYS = ("endTimeUnixNano", "end_time_unix_nano", "end_time", "endTime")
_OTEL_ONLY_KEYS = ("attributes", "parentSpanId", "parent_span_id", "startTimeUnixNano", "start_time",
                   "kind", "status", "span_events")


_ABSENT: Any = object()
_OTHER_PARENT_HEADS = frozenset(key.partition(".")[0] for key in _PARENT_KEYS[1:])


@dataclass(slots=True)
class Span:
    """One span, normalized from any accepted shape."""

    sv: SourceValue
    path: str
    raw: Any
    trace_id: str
    span_id: str
    id_key: str
    parent_id: str | None = None
    name: str | None = None
    kind: Any = None
    start: str | None = None
    end: str | None = None
    attributes: dict[str, Any] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    error: bool = False
    status_message: str | None = None
    resource: dict[str, Any] = field(default_factory=dict)
    scope: str | None = None
    joined_from: str | None = None
    """The span's own trace id when it was joined into another trace (Vercel spans without parents)."""
    start_key: int | None = None
    """``tree.start_key(start)`` when the short path knew it already, else None."""

    @property
    def id(self) -> str:
        """The span id: the id of the observation it becomes (``tree.order_observations`` reads it)."""
        return self.span_id


# --- recognising the input ----------------------------------------------------------------------

def _is_jaeger_span(value: Any) -> bool:
    return isinstance(value, dict) and "spanID" in value and ("operationName" in value or "tags" in value)


def is_span(value: Any) -> bool:
    """A single span dict (flat export, OTLP-style or Jaeger-style, or a span without ids)."""
    if not isinstance(value, dict):
        return False
    if _is_jaeger_span(value):
        return True
    has_trace = lookup(value, TRACE_KEYS)[0] is not None
    if lookup(value, _SPAN_KEYS)[0] is not None:
        return has_trace or "name" in value
    return (has_trace and "name" in value and any(k in value for k in _OTEL_ONLY_KEYS)) or is_idless_span(value)


def is_idless_span(value: Any) -> bool:
    """A span recorded without trace or span ids (Vercel AI SDK and Mastra spans as test exporters keep them):
    a name, an attributes object and a start time, and no id at all."""
    return (isinstance(value, dict) and isinstance(value.get("name"), str) and isinstance(value.get("attributes"), dict)
            and lookup(value, _START_KEYS)[0] is not None and lookup(value, TRACE_KEYS)[0] is None
            and lookup(value, _SPAN_KEYS)[0] is None)


IDLESS = "none"
"""The ``id_key`` of a span recorded without ids: its ids are made up from where it sits in the file."""


# --- walking the shapes -------------------------------------------------------------------------

def _list(sv: SourceValue, container: dict[str, Any], key: str, path: str) -> list[Any]:
    value = container.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise sv.error(f"{key} must be a list", path)
    return value


def _text(sv: SourceValue, container: dict[str, Any], key: str, path: str) -> str | None:
    value = container.get(key)
    if value is not None and not isinstance(value, str):
        raise sv.error(f"{key} must be a string", join_path(path, key))
    return value


def _object(sv: SourceValue, value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise sv.error("must be an object", path)
    return value


def spans_of(sv: SourceValue) -> Iterator[PlainSpan | Span]:
    """Every span of one JSON value, normalized."""
    value = sv.value
    if isinstance(value, list):
        for i, item in enumerate(value):
            yield _flat_or_jaeger(sv, _object(sv, item, f"[{i}]"), f"[{i}]")
        return
    if not isinstance(value, dict):
        raise sv.error("not an OpenTelemetry span, OTLP document or Jaeger export")
    for top in ("resourceSpans", "batches"):
        if top in value:
            yield from _otlp(sv, _list(sv, value, top, top), top)
            return
    if "data" in value:
        for i, trace in enumerate(_list(sv, value, "data", "data")):
            yield from _jaeger_trace(sv, _object(sv, trace, f"data[{i}]"), f"data[{i}]")
        return
    if "traceID" in value and "spans" in value:
        yield from _jaeger_trace(sv, value, "")
        return
    if isinstance(value.get("spans"), list):
        for i, item in enumerate(value["spans"]):
            yield _flat_or_jaeger(sv, _object(sv, item, f"spans[{i}]"), f"spans[{i}]")
        return
    if is_span(value) or any(k in value for k in _OTEL_ONLY_KEYS):
        yield _flat_or_jaeger(sv, value, "")
        return
    raise sv.error("not an OpenTelemetry span, OTLP document or Jaeger export")


def join_path(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _otlp(sv: SourceValue, resource_spans: list[Any], top: str) -> Iterator[PlainSpan | Span]:
    for i, rs in enumerate(resource_spans):
        rpath = f"{top}[{i}]"
        rs = _object(sv, rs, rpath)
        resource_obj = rs.get("resource") or {}
        resource = _decode(sv, resource_obj.get("attributes") if isinstance(resource_obj, dict) else resource_obj,
                           f"{rpath}.resource.attributes")
        scope_key = "scopeSpans" if "scopeSpans" in rs else "instrumentationLibrarySpans"
        for j, ss in enumerate(_list(sv, rs, scope_key, f"{rpath}.{scope_key}")):
            spath = f"{rpath}.{scope_key}[{j}]"
            ss = _object(sv, ss, spath)
            scope_obj = ss.get("scope") or ss.get("instrumentationLibrary") or {}
            scope = scope_obj.get("name") if isinstance(scope_obj, dict) else None
            plain_scope = scope if isinstance(scope, str) and scope else None
            for k, span in enumerate(_list(sv, ss, "spans", f"{spath}.spans")):
                path = f"{spath}.spans[{k}]"
                if span.__class__ is dict:
                    plain = _plain_span(sv, span, path, resource, plain_scope)
                    if plain is not None:
                        yield plain
                        continue
                yield _flat_span(sv, _object(sv, span, path), path, resource, scope or None)


def _decode(sv: SourceValue, raw: Any, path: str) -> dict[str, Any]:
    try:
        return decode_attributes(raw, path)
    except BadField as exc:
        raise sv.error(exc.message, exc.path) from None


def _flat_or_jaeger(sv: SourceValue, span: dict[str, Any], path: str) -> Span:
    if _is_jaeger_span(span):
        return _jaeger_span(sv, span, path, {}, {})
    return _flat_span(sv, span, path, None, None)


def _required_id(sv: SourceValue, span: dict[str, Any], path: str, keys: tuple[str, ...],
                 width: int, what: str) -> tuple[str, str]:
    key, raw = lookup(span, keys)
    if key is None:
        snake = "context" in span or any(k in span for k in ("trace_id", "span_id", "parent_span_id", "start_time"))
        key = ("context." if "context" in span else "") + (keys[1] if snake else keys[0])
    value = _field(sv, normalize_id, raw, width, join_path(path, key))
    if value is None:
        raise sv.error(f"span has no {what}", join_path(path, key))
    return value, key


def _field(sv: SourceValue, fn: Any, *args: Any) -> Any:
    try:
        return fn(*args)
    except LossyNumber:
        raise
    except BadField as exc:
        raise sv.error(exc.message, exc.path) from None


def _plain_ids(span: dict[str, Any]) -> tuple[str, str, str | None] | None:
    """(trace id, span id, parent id) when the span spells them as collectors do (``traceId``,
    ``spanId`` and ``parentSpanId`` hex strings, the first keys tried); None otherwise."""
    trace_id, span_id = span.get("traceId"), span.get("spanId")
    if not (trace_id.__class__ is str and is_hex(trace_id) and span_id.__class__ is str and is_hex(span_id)):
        return None
    parent = span.get("parentSpanId", _ABSENT)
    if parent is _ABSENT:  # a root span, as OTLP JSON leaves empty fields out, unless spelt another way
        return (trace_id, span_id, None) if span.keys().isdisjoint(_OTHER_PARENT_HEADS) else None
    if parent.__class__ is not str or (parent and not is_hex(parent)):
        return None
    return trace_id, span_id, parent or None


def _time(sv: SourceValue, span: dict[str, Any], path: str, keys: tuple[str, ...]) -> str | None:
    plain = plain_time(span.get(keys[0]))
    if plain is not None:
        return plain
    key, raw = lookup(span, keys)
    return _field(sv, time_from_nanos, raw, join_path(path, key or keys[0]))


def _plain_span(sv: SourceValue, span: dict[str, Any], path: str, resource: dict[str, Any],
                scope: str | None) -> PlainSpan | Span | None:
    """An OTLP span as collectors write it (hex ``traceId`` / ``spanId`` / ``parentSpanId``, decimal-string
    ``start/endTimeUnixNano``, no events), with its observation built (a ``PlainSpan``, or the same
    ``Span`` as :func:`_flat_span` gives for a Vercel AI SDK span); None for any other spelling or any
    error, which :func:`_flat_span` then reads (and locates). ``scope`` is a non-empty string or None."""
    trace_id = span.get("traceId")  # shared by the trace's spans: remembered once found to be hex
    if trace_id.__class__ is not str or not (trace_id in _HEX_IDS or is_hex_id(trace_id)):
        return None
    span_id = span.get("spanId")  # new with each span: looked at, not remembered
    if span_id.__class__ is not str or not span_id or span_id.strip(HEX_DIGITS):
        return None
    parent = span.get("parentSpanId", _ABSENT)
    if parent is _ABSENT:  # a root span, as OTLP JSON leaves empty fields out, unless spelt another way
        if not span.keys().isdisjoint(_OTHER_PARENT_HEADS):
            return None
        parent = None
    elif parent.__class__ is not str:
        return None
    elif parent in _HEX_IDS or is_hex_id(parent):
        if not parent.strip("0"):  # all zeros: no parent
            parent = None
    elif parent == "":
        parent = None
    else:
        return None
    if "events" in span or "span_events" in span:
        return None
    start_raw, end_raw = span.get("startTimeUnixNano"), span.get("endTimeUnixNano")
    times = plain_span_times(start_raw, end_raw)
    if times is None:
        start = plain_start(start_raw)
        end = plain_time(end_raw)
        if start is None or end is None:
            return None
        times = start[0], start[1], end
    try:
        attributes = decode_attributes(span.get("attributes"), "")
    except BadField:
        return None
    if not span.get("status") and span.keys().isdisjoint(STATUS_KEYS):  # the usual case: no status, or {}
        error, message = False, None
    else:
        error, message = span_status(span)
    name = span.get("name")
    if name is not None and name.__class__ is not str and not isinstance(name, str):
        name = None
    kind = span.get("kind")
    if "ai.operationId" in attributes:  # a Vercel AI SDK span may yet be joined: kept open to change
        return Span(sv, path, span, trace_id, span_id, "spanId", parent, name, kind, times[0], times[2],
                    attributes, [], error, message, resource, scope, None, times[1])
    observation = observation_of(span_id, parent, name, kind, times[0], times[2], attributes, NO_EVENTS,
                                 error, message, resource, scope, None)
    return new_plain_span((observation, sv, path, span, trace_id, span_id, parent, times[1]))


def _flat_span(sv: SourceValue, span: dict[str, Any], path: str, resource: dict[str, Any] | None,
               scope: str | None) -> Span:
    """An OTLP span (with its resource and scope) or a flat span dict."""
    ids = _plain_ids(span)
    if ids is not None:
        (trace_id, span_id, parent), id_key = ids, "spanId"
    elif is_idless_span(span):
        # One trace per file; the parent ids such spans may carry name spans the file does not hold, so
        # parents come from timing (see ``otel.nest_by_time``).
        trace_id, parent, id_key = Path(sv.file).name, None, IDLESS
        where = [str(n) for n in (sv.line, None if sv.index is None else sv.index + 1) if n is not None]
        if path.endswith("]"):
            where.append(str(int(path.rpartition("[")[2].rstrip("]")) + 1))
        span_id = "span-" + ".".join(where or ["1"])
    else:
        trace_id, _ = _required_id(sv, span, path, TRACE_KEYS, 32, "trace id")
        span_id, id_key = _required_id(sv, span, path, _SPAN_KEYS, 16, "span id")
        parent_key, parent_raw = lookup(span, _PARENT_KEYS)
        parent = _field(sv, normalize_id, parent_raw, 16, join_path(path, parent_key or "parentSpanId"))
    events = []
    if "events" in span or "span_events" in span:
        events = _events(sv, span, path)
    if resource is None:
        res = span.get("resource")
        resource = _decode(sv, res.get("attributes") if isinstance(res, dict) and "attributes" in res else res,
                           join_path(path, "resource.attributes"))
    if scope is None:
        scope_obj = next((span[k] for k in ("scope", "instrumentation_scope", "instrumentationScope",
                                            "instrumentation_library") if k in span), None)
        scope = scope_obj.get("name") if isinstance(scope_obj, dict) else scope_obj
    error, message = span_status(span)
    name = span.get("name")
    start, end = _time(sv, span, path, _START_KEYS), _time(sv, span, path, _END_KEYS)
    try:
        attributes = decode_attributes(span.get("attributes"), "")
    except BadField:  # again, to say where
        attributes = _decode(sv, span.get("attributes"), join_path(path, "attributes"))
    return Span(sv, path, span, trace_id, span_id, id_key, None if is_null_id(parent) else parent,
                name if isinstance(name, str) else None, span.get("kind"), start, end, attributes, events,
                error, message, resource, scope if isinstance(scope, str) and scope else None)


def _events(sv: SourceValue, span: dict[str, Any], path: str) -> list[dict[str, Any]]:
    events = []
    raw_events = span.get("events", span.get("span_events"))
    events_key = "events" if "events" in span else "span_events"
    if raw_events is not None and not isinstance(raw_events, list):
        raise sv.error("events must be a list", join_path(path, events_key))
    for i, event in enumerate(raw_events or []):
        epath = join_path(path, f"{events_key}[{i}]")
        event = _object(sv, event, epath)
        _, when = lookup(event, ("timeUnixNano", "time_unix_nano", "timestamp", "time"))
        events.append({"name": event.get("name"), "time": _field(sv, time_from_nanos, when, epath),
                       "attributes": _decode(sv, event.get("attributes"), join_path(epath, "attributes"))})
    return events


def _jaeger_trace(sv: SourceValue, trace: dict[str, Any], path: str) -> Iterator[Span]:
    processes = trace.get("processes") if isinstance(trace.get("processes"), dict) else {}
    for k, span in enumerate(_list(sv, trace, "spans", join_path(path, "spans"))):
        spath = join_path(path, f"spans[{k}]")
        yield _jaeger_span(sv, _object(sv, span, spath), spath, trace, processes)


def _jaeger_references(sv: SourceValue, span: dict[str, Any], path: str) -> list[dict[str, Any]]:
    """A span's references, each an object with a known ``refType`` (a reference left out would lose a parent)."""
    refs = _list(sv, span, "references", join_path(path, "references"))
    for i, ref in enumerate(refs):
        rpath = join_path(path, f"references[{i}]")
        _object(sv, ref, rpath)
        if ref.get("refType") not in ("CHILD_OF", "FOLLOWS_FROM"):
            raise sv.error(f"refType is CHILD_OF or FOLLOWS_FROM, not {ref.get('refType')!r}",
                           join_path(rpath, "refType"))
    return refs


def _jaeger_span(sv: SourceValue, span: dict[str, Any], path: str, trace: dict[str, Any],
                 processes: dict[str, Any]) -> Span:
    trace_id = _field(sv, normalize_id, span.get("traceID", trace.get("traceID")), 32,
                      join_path(path, "traceID"))
    span_id = _field(sv, normalize_id, span.get("spanID"), 16, join_path(path, "spanID"))
    if trace_id is None:
        raise sv.error("span has no trace id", join_path(path, "traceID"))
    if span_id is None:
        raise sv.error("span has no span id", join_path(path, "spanID"))
    refs = _jaeger_references(sv, span, path)
    ref = next((r for r in refs if r.get("refType") == "CHILD_OF"), None) or next(
        (r for r in refs if r.get("refType") == "FOLLOWS_FROM"), None)
    parent = _field(sv, normalize_id, ref.get("spanID") if ref else span.get("parentSpanID"), 16,
                    join_path(path, "references"))
    attrs = _decode(sv, span.get("tags"), join_path(path, "tags"))
    start_raw, duration = span.get("startTime"), span.get("duration")
    start = _field(sv, time_from_micros, start_raw, join_path(path, "startTime"))
    end = None
    if duration is not None:
        # microseconds, a whole number not below zero: -5 or 1e308 would give an end before the start or none
        if isinstance(duration, bool) or not isinstance(duration, int) or duration < 0:
            raise sv.error(f"a Jaeger span's duration is whole microseconds, 0 or more, not {duration!r}",
                           join_path(path, "duration"))
        if start is not None:
            end = _field(sv, time_from_micros, int(start_raw) + duration, join_path(path, "duration"))
    events = []
    for i, log in enumerate(_list(sv, span, "logs", join_path(path, "logs"))):
        lpath = join_path(path, f"logs[{i}]")
        fields = _decode(sv, _object(sv, log, lpath).get("fields"), join_path(lpath, "fields"))
        name = fields.pop("event", "log")
        events.append({"name": name, "time": _field(sv, time_from_micros, log.get("timestamp"),
                                                    join_path(lpath, "timestamp")), "attributes": fields})
    process_id = span.get("processID")
    process = (processes.get(process_id) if isinstance(process_id, str) else None) or span.get("process") or {}
    resource: dict[str, Any] = {}
    if isinstance(process, dict):
        if process.get("serviceName"):
            resource["service.name"] = process["serviceName"]
        resource.update(_decode(sv, process.get("tags"), join_path(path, "process.tags")))
    error = attrs.get("error") in (True, "true") or str(attrs.get("otel.status_code", "")).upper() == "ERROR"
    return Span(
        sv=sv, path=path, raw=span, trace_id=trace_id, span_id=span_id, id_key="spanID",
        parent_id=None if is_null_id(parent) else parent, name=_text(sv, span, "operationName", path),
        kind=attrs.get("span.kind"), start=start, end=end, attributes=attrs, events=events, error=error,
        status_message=first_text(attrs, "otel.status_description"), resource=resource,
        scope=first_text(attrs, "otel.scope.name", "otel.library.name"),
    )
