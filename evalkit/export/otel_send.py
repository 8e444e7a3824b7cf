"""Sending evaluation spans to an OTLP/HTTP endpoint with the official OpenTelemetry SDK exporter.

The spans are the ones written to the OTLP JSON file, rebuilt as SDK ``ReadableSpan`` objects with
their fixed ids and times, so the collector receives exactly what the file shows. Headers (an API
key) come from ``OTEL_EXPORTER_OTLP_HEADERS`` / ``OTEL_EXPORTER_OTLP_TRACES_HEADERS``, which the SDK
exporter reads itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit

from evalkit import __version__
from evalkit.errors import InputError
from evalkit.export.otel import EVALUATION_EVENT, SCOPE_NAME, SERVICE_NAME, EvaluationSpan

BATCH_SPANS = 512
"""Spans per request: the SDK's own default batch size, which collectors accept."""

TRACES_PATH = "/v1/traces"


def traces_url(endpoint: str) -> str:
    """The OTLP/HTTP traces URL: ``/v1/traces`` is appended to a bare collector address, as the SDK does
    for ``OTEL_EXPORTER_OTLP_ENDPOINT``; a URL with a path is used as given."""
    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InputError(f"{endpoint!r} is not an http(s) URL (e.g. http://127.0.0.1:4318)",
                         path="--endpoint")
    return endpoint.rstrip("/") + TRACES_PATH if parts.path in ("", "/") else endpoint


def _sdk_spans(spans: Sequence[EvaluationSpan]) -> list:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import Event, ReadableSpan
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    from opentelemetry.trace import Link, SpanContext, SpanKind, TraceFlags

    resource = Resource({"service.name": SERVICE_NAME})
    scope = InstrumentationScope(SCOPE_NAME, __version__)
    sampled = TraceFlags(TraceFlags.SAMPLED)
    out = []
    for s in spans:
        trace_id = int(s.trace_id, 16)

        def context(span_id: str, *, remote: bool, trace_id: int = trace_id) -> SpanContext:
            return SpanContext(trace_id, int(span_id, 16), is_remote=remote, trace_flags=sampled)

        out.append(ReadableSpan(
            name=s.name, context=context(s.span_id, remote=False),
            parent=context(s.parent_span_id, remote=True) if s.parent_span_id else None,
            resource=resource, attributes=dict(s.span_attributes),
            events=[Event(EVALUATION_EVENT, dict(s.event_attributes), timestamp=s.time_unix_nano)],
            links=[Link(context(link, remote=True)) for link in s.links], kind=SpanKind.INTERNAL,
            start_time=s.time_unix_nano, end_time=s.time_unix_nano, instrumentation_scope=scope))
    return out


def send_otlp(spans: Sequence[EvaluationSpan], endpoint: str, *, timeout: float = 10.0) -> int:
    """Send the spans over OTLP/HTTP (protobuf) in batches; returns the number of requests made.

    Raises:
        InputError: the ``export`` extra is not installed, the URL is not http(s), or the collector
            refused a batch (after the SDK's own retries).
    """
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.trace.export import SpanExportResult
    except ImportError:
        raise InputError("sending to an OTLP endpoint needs the OpenTelemetry SDK: "
                         "pip install 'evalkit[export]'", path="--endpoint") from None
    url = traces_url(endpoint)
    exporter = OTLPSpanExporter(endpoint=url, timeout=timeout)
    sdk_spans = _sdk_spans(spans)
    requests = 0
    try:
        for start in range(0, len(sdk_spans), BATCH_SPANS):
            result = exporter.export(sdk_spans[start:start + BATCH_SPANS])
            requests += 1
            if result is not SpanExportResult.SUCCESS:
                raise InputError(f"the collector at {url} did not accept spans {start + 1}-"
                                 f"{min(start + BATCH_SPANS, len(sdk_spans))} of {len(sdk_spans)} "
                                 f"({requests - 1} earlier batches were sent); see the log above",
                                 path="--endpoint")
    finally:
        exporter.shutdown()
    return requests
