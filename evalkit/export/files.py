"""From files to files: read verdicts, labels and traces, write the OTLP or Langfuse export atomically."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from evalkit.calibration import read_labels, read_verdicts
from evalkit.export.evaluations import Evaluation, evaluations_of, judged_traces
from evalkit.export.langfuse import basic_auth, ingestion_batch, ingestion_url
from evalkit.export.otel import OtelExport, evaluation_spans, otlp_document
from evalkit.export.otel_send import traces_url
from evalkit.io.atomic import atomic_write_text
from evalkit.io.canonical import canonical_dumps
from evalkit.io.empty_inputs import refuse_empty
from evalkit.traces import iter_traces


def read_evaluations(verdicts: str | Path, traces: str | Path,
                     labels: str | Path | None = None) -> list[Evaluation]:
    """Every verdict (and label) of the files, paired with its trace from ``traces``.

    Raises:
        InputError: an unreadable file, an invalid record, or a verdict or label naming a trace that
            is not in ``traces``; a verdicts file with no verdict.
    """
    read = read_verdicts(verdicts)
    refuse_empty(len(read), file=verdicts, what="verdicts", next_step="nothing to export (an empty run, or the "
                 "wrong file?)")
    judged = judged_traces(iter_traces(traces))
    return evaluations_of(read, read_labels(labels) if labels is not None else [], judged,
                          verdicts_file=str(verdicts), labels_file=str(labels), traces_file=str(traces))


@dataclass(frozen=True)
class Written:
    """What an export wrote: evaluations, traces they cover, and (OTel) traces whose ids were derived."""

    evaluations: int
    traces: int
    derived_trace_ids: int = 0


def write_otlp(evaluations: list[Evaluation], out: str | Path, *,
               at: str | None = None) -> tuple[Written, OtelExport]:
    """Write the evaluations as one OTLP JSON traces document (canonical JSON, atomic)."""
    export = evaluation_spans(evaluations, at=at)
    atomic_write_text(out, canonical_dumps(otlp_document(export.spans)))
    traces = export.derived_trace_ids + export.kept_trace_ids
    return Written(len(export.spans), traces, export.derived_trace_ids), export


def write_langfuse(evaluations: list[Evaluation], out: str | Path, *,
                   at: str | None = None) -> tuple[Written, dict]:
    """Write the evaluations as a Langfuse ingestion batch of ``score-create`` events (canonical, atomic)."""
    batch = ingestion_batch(evaluations, at=at)
    atomic_write_text(out, canonical_dumps(batch))
    return Written(len(batch["batch"]), len({ev.trace.id for ev in evaluations})), batch


def check_destination(target: str, endpoint: str) -> None:
    """Check a send can start (an http(s) URL; Langfuse keys set) before anything is written.

    Raises:
        InputError: a URL that is not http(s), or a missing Langfuse key (the variable is named).
    """
    if target == "otel":
        traces_url(endpoint)
    else:
        ingestion_url(endpoint)
        basic_auth()
