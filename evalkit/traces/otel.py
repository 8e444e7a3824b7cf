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
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from evalkit.contracts.trace import Observation, Trace
from evalkit.io.bulk import paused_gc
from evalkit.traces.otel_attributes import (
    MISSING,
    decode_attributes,
    first_text,
    lookup,
    observation_type,
    payloads,
    span_status,
    usage,
)
from evalkit.traces.otel_ids import (
    BadField,
    LossyNumber,
    is_null_id,
    normalize_id,
    time_from_micros,
    time_from_nanos,
)
from evalkit.traces.report import ImportContext, ImportReport
from evalkit.traces.source import SourceValue
from evalkit.traces.tree import order_observations
from evalkit.traces.vercel_ai import VERCEL_TOOL_NAME, apply_joins

__all__ = ["looks_like_otel", "read_otel"]

# ``spanContext`` / ``parentSpanContext`` / HrTime ``startTime``: spans as the OTel JS SDK holds them.
_TRACE_KEYS = ("traceId", "trace_id", "context.trace_id", "context.traceId", "spanContext.traceId")
_SPAN_KEYS = ("spanId", "span_id", "context.span_id", "context.spanId", "spanContext.spanId")
_PARENT_KEYS = ("parentSpanId", "parent_span_id", "parent_id", "parentId", "parent.span_id",
                "parentSpanContext.spanId")
_START_KEYS = ("startTimeUnixNano", "start_time_unix_nano", "start_time", "startTime")
_END_KEYS = ("endTimeUnixNano", "end_time_unix_nano", "end_time", "endTime")
_OTEL_ONLY_KEYS = ("attributes", "parentSpanId", "parent_span_id", "startTimeUnixNano", "start_time",
                   "kind", "status", "span_events")


@dataclass
class _Span:
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


# --- recognising the input ----------------------------------------------------------------------

def _is_jaeger_span(value: Any) -> bool:
    return isinstance(value, dict) and "spanID" in value and ("operationName" in value or "tags" in value)


def _is_span(value: Any) -> bool:
    """A single span dict (flat export, OTLP-style or Jaeger-style)."""
    if not isinstance(value, dict):
        return False
    if _is_jaeger_span(value):
        return True
    has_trace = lookup(value, _TRACE_KEYS)[0] is not None
    if lookup(value, _SPAN_KEYS)[0] is not None:
        return has_trace or "name" in value
    return has_trace and "name" in value and any(k in value for k in _OTEL_ONLY_KEYS)


def looks_like_otel(value: Any) -> bool:
    """True for an OTLP JSON document, a Tempo batch export, a Jaeger export or flat span dicts."""
    if isinstance(value, list):
        return bool(value) and _is_span(value[0])
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
        return "traceID" in value or (bool(spans) and _is_span(spans[0]))
    return _is_span(value)


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
        raise sv.error(f"{key} must be a string", _join(path, key))
    return value


def _object(sv: SourceValue, value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise sv.error("must be an object", path)
    return value


def _spans_of(sv: SourceValue) -> Iterator[_Span]:
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
    if _is_span(value) or any(k in value for k in _OTEL_ONLY_KEYS):
        yield _flat_or_jaeger(sv, value, "")
        return
    raise sv.error("not an OpenTelemetry span, OTLP document or Jaeger export")


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _otlp(sv: SourceValue, resource_spans: list[Any], top: str) -> Iterator[_Span]:
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
            for k, span in enumerate(_list(sv, ss, "spans", f"{spath}.spans")):
                path = f"{spath}.spans[{k}]"
                yield _flat_span(sv, _object(sv, span, path), path, resource, scope or None)


def _decode(sv: SourceValue, raw: Any, path: str) -> dict[str, Any]:
    try:
        return decode_attributes(raw, path)
    except BadField as exc:
        raise sv.error(exc.message, exc.path) from None


def _flat_or_jaeger(sv: SourceValue, span: dict[str, Any], path: str) -> _Span:
    if _is_jaeger_span(span):
        return _jaeger_span(sv, span, path, {}, {})
    return _flat_span(sv, span, path, None, None)


def _required_id(sv: SourceValue, span: dict[str, Any], path: str, keys: tuple[str, ...],
                 width: int, what: str) -> tuple[str, str]:
    key, raw = lookup(span, keys)
    if key is None:
        snake = "context" in span or any(k in span for k in ("trace_id", "span_id", "parent_span_id", "start_time"))
        key = ("context." if "context" in span else "") + (keys[1] if snake else keys[0])
    value = _field(sv, normalize_id, raw, width, _join(path, key))
    if value is None:
        raise sv.error(f"span has no {what}", _join(path, key))
    return value, key


def _field(sv: SourceValue, fn: Any, *args: Any) -> Any:
    try:
        return fn(*args)
    except LossyNumber:
        raise
    except BadField as exc:
        raise sv.error(exc.message, exc.path) from None


def _flat_span(sv: SourceValue, span: dict[str, Any], path: str, resource: dict[str, Any] | None,
               scope: str | None) -> _Span:
    """An OTLP span (with its resource and scope) or a flat span dict."""
    trace_id, _ = _required_id(sv, span, path, _TRACE_KEYS, 32, "trace id")
    span_id, id_key = _required_id(sv, span, path, _SPAN_KEYS, 16, "span id")
    parent_key, parent_raw = lookup(span, _PARENT_KEYS)
    parent = _field(sv, normalize_id, parent_raw, 16, _join(path, parent_key or "parentSpanId"))
    start_key, start_raw = lookup(span, _START_KEYS)
    end_key, end_raw = lookup(span, _END_KEYS)
    events = []
    raw_events = span.get("events", span.get("span_events"))
    events_key = "events" if "events" in span else "span_events"
    if raw_events is not None and not isinstance(raw_events, list):
        raise sv.error("events must be a list", _join(path, events_key))
    for i, event in enumerate(raw_events or []):
        epath = _join(path, f"{events_key}[{i}]")
        event = _object(sv, event, epath)
        _, when = lookup(event, ("timeUnixNano", "time_unix_nano", "timestamp", "time"))
        events.append({"name": event.get("name"), "time": _field(sv, time_from_nanos, when, epath),
                       "attributes": _decode(sv, event.get("attributes"), _join(epath, "attributes"))})
    if resource is None:
        res = span.get("resource")
        resource = _decode(sv, res.get("attributes") if isinstance(res, dict) and "attributes" in res else res,
                           _join(path, "resource.attributes"))
    if scope is None:
        scope_obj = next((span[k] for k in ("scope", "instrumentation_scope", "instrumentationScope",
                                            "instrumentation_library") if k in span), None)
        scope = scope_obj.get("name") if isinstance(scope_obj, dict) else scope_obj
    error, message = span_status(span)
    return _Span(
        sv=sv, path=path, raw=span, trace_id=trace_id, span_id=span_id, id_key=id_key,
        parent_id=None if is_null_id(parent) else parent,
        name=span.get("name") if isinstance(span.get("name"), str) else None, kind=span.get("kind"),
        start=_field(sv, time_from_nanos, start_raw, _join(path, start_key or "startTimeUnixNano")),
        end=_field(sv, time_from_nanos, end_raw, _join(path, end_key or "endTimeUnixNano")),
        attributes=_decode(sv, span.get("attributes"), _join(path, "attributes")), events=events,
        error=error, status_message=message, resource=resource,
        scope=scope if isinstance(scope, str) and scope else None,
    )


def _jaeger_trace(sv: SourceValue, trace: dict[str, Any], path: str) -> Iterator[_Span]:
    processes = trace.get("processes") if isinstance(trace.get("processes"), dict) else {}
    for k, span in enumerate(_list(sv, trace, "spans", _join(path, "spans"))):
        spath = _join(path, f"spans[{k}]")
        yield _jaeger_span(sv, _object(sv, span, spath), spath, trace, processes)


def _jaeger_span(sv: SourceValue, span: dict[str, Any], path: str, trace: dict[str, Any],
                 processes: dict[str, Any]) -> _Span:
    trace_id = _field(sv, normalize_id, span.get("traceID", trace.get("traceID")), 32,
                      _join(path, "traceID"))
    span_id = _field(sv, normalize_id, span.get("spanID"), 16, _join(path, "spanID"))
    if trace_id is None:
        raise sv.error("span has no trace id", _join(path, "traceID"))
    if span_id is None:
        raise sv.error("span has no span id", _join(path, "spanID"))
    refs = [r for r in _list(sv, span, "references", _join(path, "references")) if isinstance(r, dict)]
    ref = next((r for r in refs if r.get("refType") == "CHILD_OF"), None) or next(
        (r for r in refs if r.get("refType") == "FOLLOWS_FROM"), None)
    parent = _field(sv, normalize_id, ref.get("spanID") if ref else span.get("parentSpanID"), 16,
                    _join(path, "references"))
    attrs = _decode(sv, span.get("tags"), _join(path, "tags"))
    start_raw, duration = span.get("startTime"), span.get("duration")
    start = _field(sv, time_from_micros, start_raw, _join(path, "startTime"))
    end = None
    if isinstance(start_raw, int) and isinstance(duration, int) and not isinstance(duration, bool):
        end = _field(sv, time_from_micros, start_raw + duration, _join(path, "duration"))
    events = []
    for i, log in enumerate(_list(sv, span, "logs", _join(path, "logs"))):
        lpath = _join(path, f"logs[{i}]")
        fields = _decode(sv, _object(sv, log, lpath).get("fields"), _join(lpath, "fields"))
        name = fields.pop("event", "log")
        events.append({"name": name, "time": _field(sv, time_from_micros, log.get("timestamp"),
                                                    _join(lpath, "timestamp")), "attributes": fields})
    process_id = span.get("processID")
    process = (processes.get(process_id) if isinstance(process_id, str) else None) or span.get("process") or {}
    resource: dict[str, Any] = {}
    if isinstance(process, dict):
        if process.get("serviceName"):
            resource["service.name"] = process["serviceName"]
        resource.update(_decode(sv, process.get("tags"), _join(path, "process.tags")))
    error = attrs.get("error") in (True, "true") or str(attrs.get("otel.status_code", "")).upper() == "ERROR"
    return _Span(
        sv=sv, path=path, raw=span, trace_id=trace_id, span_id=span_id, id_key="spanID",
        parent_id=None if is_null_id(parent) else parent, name=_text(sv, span, "operationName", path),
        kind=attrs.get("span.kind"), start=start, end=end, attributes=attrs, events=events, error=error,
        status_message=first_text(attrs, "otel.status_description"), resource=resource,
        scope=first_text(attrs, "otel.scope.name", "otel.library.name"),
    )


# --- mapping to observations --------------------------------------------------------------------

def _observation(span: _Span) -> Observation:
    attrs = span.attributes
    obs_type = observation_type(attrs)
    name = span.name
    if obs_type == "TOOL":
        name = first_text(attrs, "gen_ai.tool.name", "tool.name", *VERCEL_TOOL_NAME) or (
            name.removeprefix("execute_tool ") if name else None)
    fields: dict[str, Any] = {
        "id": span.span_id, "type": obs_type, "name": name, "parent_id": span.parent_id,
        "start_time": span.start, "end_time": span.end,
        "model": first_text(attrs, "gen_ai.response.model", "ai.response.model", "gen_ai.request.model",
                            "llm.model_name", "ai.model.id"),
        "usage": usage(attrs),
    }
    if span.error:
        fields["level"] = "ERROR"
        fields["status_message"] = span.status_message
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
    fields["metadata"] = metadata
    fields = {k: v for k, v in fields.items() if v is not None}
    inp, out = payloads(obs_type, attrs, span.events)
    if inp is not MISSING:
        fields["input"] = inp
    if out is not MISSING:
        fields["output"] = out
    return Observation(**fields)


def read_otel(values: Iterable[SourceValue], context: ImportContext | None = None) -> Iterator[Trace]:
    """Read every value, group spans by trace id, and yield one Trace per trace id, sorted by id.

    Vercel AI SDK spans that lost their parent ids are joined to their wrappers first (see
    ``evalkit.traces.vercel_ai``); each join is counted in ``context.report``.

    Raises:
        evalkit.errors.InputError: a value of an unknown shape, or a span without a trace or span id, with
            non-object attributes, a bad time, or a span id used twice in one trace.
    """
    traces: dict[str, dict[str, _Span]] = {}
    for sv in values:
        try:
            with paused_gc():
                spans_of_value = list(_spans_of(sv))
        except LossyNumber as exc:
            raise sv.error(exc.message, exc.path) from None
        for span in spans_of_value:
            spans = traces.setdefault(span.trace_id, {})
            seen = spans.get(span.span_id)
            if seen is not None:
                if seen.raw == span.raw:
                    continue
                raise span.sv.error(f"span id {span.span_id!r} used twice in trace {span.trace_id!r}",
                                    _join(span.path, span.id_key))
            spans[span.span_id] = span
    joined = apply_joins(traces, context.report if context is not None else ImportReport())
    for trace_id in sorted(traces):
        with paused_gc():
            observations = order_observations([_observation(s) for s in traces[trace_id].values()])
            fields: dict[str, Any] = {"id": trace_id, "metadata": {"source": "otel"},
                                      "observations": observations}
            if trace_id in joined:
                fields["metadata"]["joinedTraceIds"] = sorted(joined[trace_id])
            if observations and observations[0].name is not None:
                fields["name"] = observations[0].name
            trace = Trace(**fields)
        yield trace
