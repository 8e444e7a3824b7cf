"""Verdicts and labels out to OpenTelemetry and Langfuse, and scores made there back in as verdicts."""

from evalkit.export.evaluations import Evaluation, JudgedTrace, check_time, evaluations_of, judged_traces
from evalkit.export.files import Written, check_destination, read_evaluations, write_langfuse, write_otlp
from evalkit.export.langfuse import ingestion_batch, send_scores
from evalkit.export.otel import EvaluationSpan, evaluation_spans, otel_span_id, otel_trace_id, otlp_document
from evalkit.export.otel_send import send_otlp
from evalkit.export.roundtrip import (
    ImportedVerdicts,
    ScoreReading,
    verdicts_from_langfuse,
    verdicts_from_otel,
)

__all__ = [
    "Evaluation",
    "EvaluationSpan",
    "ImportedVerdicts",
    "JudgedTrace",
    "ScoreReading",
    "Written",
    "check_destination",
    "check_time",
    "evaluation_spans",
    "evaluations_of",
    "ingestion_batch",
    "judged_traces",
    "otel_span_id",
    "otel_trace_id",
    "otlp_document",
    "read_evaluations",
    "send_otlp",
    "send_scores",
    "verdicts_from_langfuse",
    "verdicts_from_otel",
    "write_langfuse",
    "write_otlp",
]
