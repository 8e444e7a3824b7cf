"""Verdicts as OpenTelemetry GenAI evaluation events, in an OTLP JSON traces document.

Each verdict or label becomes one ``gen_ai.evaluation.result`` event (GenAI semantic conventions:
``gen_ai.evaluation.name``, ``.score.value``, ``.score.label``, ``.explanation``). The event sits on
a zero-length span that is a child of the judged trace's root span, in the same trace, so a backend
shows it under the run it judges; the observations the verdict cites are span links.

Ids: a trace imported from OpenTelemetry (or from Langfuse, whose ids are OTel ids) keeps its
32-hex trace id and 16-hex span ids. A trace whose ids are not OTel ids (``tr-0001``) gets ids
derived from them by SHA-256, the same on every run; the evalkit ids travel along as
``evalkit.trace.id`` / ``evalkit.observation.id`` so the round trip finds the trace again.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from evalkit import __version__
from evalkit.errors import InputError
from evalkit.export.evaluations import Evaluation
from evalkit.io.canonical import canonical_line

EVALUATION_EVENT = "gen_ai.evaluation.result"
SCOPE_NAME = "evalkit.export"
SERVICE_NAME = "evalkit"
RECORD_ATTRIBUTE = "evalkit.record"
"""The verdict or label as evalkit wrote it (canonical JSON), for a lossless round trip."""
KIND_ATTRIBUTE = "evalkit.evaluation.kind"
TRACE_ATTRIBUTE = "evalkit.trace.id"
OBSERVATION_ATTRIBUTE = "evalkit.observation.id"
SPAN_KIND_INTERNAL = 1  # OTLP's SpanKind enum: SPAN_KIND_INTERNAL

_TRACE_ID = re.compile(r"[0-9a-f]{32}")
_SPAN_ID = re.compile(r"[0-9a-f]{16}")


def _derived(width: int, *parts: str) -> str:
    digest = hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:width]
    return digest if set(digest) != {"0"} else "1".zfill(width)  # all-zero ids are invalid in OTel


def otel_trace_id(trace_id: str) -> tuple[str, bool]:
    """The OTel trace id of an evalkit trace, and whether it was derived (not the trace's own)."""
    if _TRACE_ID.fullmatch(trace_id.lower()) and set(trace_id) != {"0"}:
        return trace_id.lower(), False
    return _derived(32, "evalkit-trace", trace_id), True


def otel_span_id(trace_id: str, observation_id: str) -> str:
    """The OTel span id of an observation: its own id when it is one, else derived from both ids."""
    if _SPAN_ID.fullmatch(observation_id.lower()) and set(observation_id) != {"0"}:
        return observation_id.lower()
    return _derived(16, "evalkit-span", trace_id, observation_id)


def evaluation_span_id(ev: Evaluation) -> str:
    """The span id of the evaluation itself: one per trace, decider and name (and annotator)."""
    return _derived(16, "evalkit-evaluation", *ev.key)


def unix_nanos(iso: str) -> int:
    """Unix nanoseconds of an ISO 8601 time (a time without zone is read as UTC)."""
    dt = datetime.fromisoformat(iso)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    delta = dt - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1000


@dataclass(frozen=True)
class EvaluationSpan:
    """One evaluation as an OTel span carrying its event: plain values, ready for JSON or the SDK."""

    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    time_unix_nano: int
    span_attributes: dict[str, str]
    event_attributes: dict[str, str | float]
    links: tuple[str, ...]
    """Span ids (same trace) of the observations the verdict cites."""


@dataclass(frozen=True)
class OtelExport:
    """The spans to write or send, and how many traces had ids derived rather than kept."""

    spans: list[EvaluationSpan]
    derived_trace_ids: int
    kept_trace_ids: int


def _time(ev: Evaluation, at: str | None) -> int:
    when = ev.trace.time or at
    if when is None:
        raise InputError(f"trace {ev.trace.id!r} records no time to stamp its evaluation with; "
                         "pass --time ISO8601", path="--time")
    return unix_nanos(when)


def evaluation_spans(evaluations: Sequence[Evaluation], *, at: str | None = None) -> OtelExport:
    """The OTel span of every evaluation (see the module docstring for ids and parenting).

    Args:
        evaluations: from :func:`evalkit.export.evaluations_of`.
        at: the time for evaluations of traces that record none (ISO 8601).

    Raises:
        InputError: a trace without any time when ``at`` is not given.
    """
    spans = []
    derived: dict[str, bool] = {}
    for ev in evaluations:
        trace_id, was_derived = otel_trace_id(ev.trace.id)
        derived[ev.trace.id] = was_derived
        root = ev.trace.root_observation_id
        span_attrs = {KIND_ATTRIBUTE: ev.kind, TRACE_ATTRIBUTE: ev.trace.id}
        if root is not None:
            span_attrs[OBSERVATION_ATTRIBUTE] = root
        event: dict[str, str | float] = {"gen_ai.evaluation.name": ev.name,
                                         "gen_ai.evaluation.score.label": ev.result}
        if ev.score is not None:
            event["gen_ai.evaluation.score.value"] = ev.score
        if ev.explanation:
            event["gen_ai.evaluation.explanation"] = ev.explanation
        event[RECORD_ATTRIBUTE] = canonical_line(ev.record).rstrip("\n")
        spans.append(EvaluationSpan(
            trace_id=trace_id, span_id=evaluation_span_id(ev),
            parent_span_id=otel_span_id(ev.trace.id, root) if root is not None else None,
            name=f"evaluation {ev.name}", time_unix_nano=_time(ev, at), span_attributes=span_attrs,
            event_attributes=event,
            links=tuple(otel_span_id(ev.trace.id, o) for o in ev.cited_observation_ids)))
    return OtelExport(spans, sum(derived.values()), len(derived) - sum(derived.values()))


def _any_value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    return {"stringValue": str(value)}


def _attributes(values: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": _any_value(v)} for k, v in values.items()]


def _span_json(span: EvaluationSpan) -> dict[str, Any]:
    nanos = str(span.time_unix_nano)  # OTLP JSON writes 64-bit integers as strings
    out: dict[str, Any] = {
        "traceId": span.trace_id, "spanId": span.span_id, "name": span.name, "kind": SPAN_KIND_INTERNAL,
        "startTimeUnixNano": nanos, "endTimeUnixNano": nanos, "attributes": _attributes(span.span_attributes),
        "events": [{"name": EVALUATION_EVENT, "timeUnixNano": nanos,
                    "attributes": _attributes(span.event_attributes)}],
        "status": {},
    }
    if span.parent_span_id is not None:
        out["parentSpanId"] = span.parent_span_id
    if span.links:
        out["links"] = [{"traceId": span.trace_id, "spanId": s} for s in span.links]
    return out


def otlp_document(spans: Sequence[EvaluationSpan]) -> dict[str, Any]:
    """An OTLP JSON ``ExportTraceServiceRequest`` holding every span (one resource, one scope)."""
    return {"resourceSpans": [{
        "resource": {"attributes": _attributes({"service.name": SERVICE_NAME})},
        "scopeSpans": [{"scope": {"name": SCOPE_NAME, "version": __version__},
                        "spans": [_span_json(s) for s in spans]}],
    }]}
