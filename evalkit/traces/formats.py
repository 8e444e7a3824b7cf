"""Trace formats by name, sniffing a file's format, and the streaming reader over all of them."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit.contracts.trace import Trace
from evalkit.io.errors import InputError
from evalkit.traces.langfuse import looks_like_langfuse, read_langfuse
from evalkit.traces.native import looks_like_native, read_native, read_parquet
from evalkit.traces.openai_chat import looks_like_openai_chat, read_openai_chat
from evalkit.traces.otel import looks_like_otel, read_otel
from evalkit.traces.source import SourceValue, iter_source_values


@dataclass(frozen=True)
class TraceFormat:
    """One importer: how to recognise a value of its format and how to read values into traces."""

    name: str
    looks_like: Callable[[Any], bool]
    read: Callable[[Iterable[SourceValue]], Iterator[Trace]]
    per_record: bool = True
    """Each value is read on its own (so one bad record can be skipped); False when spans of one
    trace may be spread over many values, as in OpenTelemetry exports."""


# Sniffing tries formats in this order; the native shape is the most specific, so it goes first.
FORMATS: dict[str, TraceFormat] = {
    f.name: f for f in (
        TraceFormat("evalkit", looks_like_native, read_native),
        TraceFormat("langfuse", looks_like_langfuse, read_langfuse),
        TraceFormat("otel", looks_like_otel, read_otel, per_record=False),
        TraceFormat("openai-chat", looks_like_openai_chat, read_openai_chat),
    )
}


def sniff_format(value: Any) -> str | None:
    """The name of the first format whose shape ``value`` has, or None."""
    for fmt in FORMATS.values():
        if fmt.looks_like(value):
            return fmt.name
    return None


def _check_format(format: str) -> None:
    if format != "auto" and format not in FORMATS:
        raise InputError(f"unknown trace format {format!r} (one of: auto, {', '.join(FORMATS)})")


def detect_format(path: str | Path) -> str:
    """The format of a trace file, from its extension (Parquet) or its first value.

    Raises:
        InputError: when no format fits; the message names the formats tried.
    """
    if Path(path).suffix.lower() == ".parquet":
        return "evalkit"
    first = next(iter_source_values(path), None)
    if first is None:
        raise InputError("empty file: no trace records", file=str(path))
    name = sniff_format(first.value)
    if name is None:
        raise InputError(f"cannot tell the trace format (tried: {', '.join(FORMATS)}); "
                         "pass --format to say which", file=str(path))
    return name


@dataclass(frozen=True)
class SkippedRecord:
    """A record left out by ``iter_traces(..., on_invalid=...)``, with the reason."""

    error: InputError
    value: Any


def iter_traces(path: str | Path, format: str = "auto",
                on_invalid: Callable[[SkippedRecord], None] | None = None) -> Iterator[Trace]:
    """Stream the traces of a file, one at a time (JSONL files are never held in memory whole).

    Args:
        path: a trace file: native JSONL/JSON or Parquet, Langfuse export, OTLP JSON or span list,
            or OpenAI chat-log records.
        format: ``auto`` (sniff the file), ``evalkit``, ``langfuse``, ``otel`` or ``openai-chat``.
        on_invalid: when given, a malformed record is passed to it and skipped instead of stopping
            the read (formats whose traces span several records still stop).

    Raises:
        InputError: unreadable file, unknown format, or a malformed record (``FILE:LINE: field: msg``).
    """
    _check_format(format)
    if Path(path).suffix.lower() == ".parquet":
        if format not in ("auto", "evalkit"):
            raise InputError(f"Parquet trace files are evalkit's own format, not {format!r}", file=str(path))
        yield from read_parquet(path)
        return
    values = iter_source_values(path)
    if format == "auto":
        first = next(values, None)
        if first is None:
            return
        format = sniff_format(first.value) or ""
        if not format:
            raise InputError(f"cannot tell the trace format (tried: {', '.join(FORMATS)}); "
                             "pass --format to say which", file=str(path))
        values = itertools.chain([first], values)
    fmt = FORMATS[format]
    if on_invalid is None or not fmt.per_record:
        yield from fmt.read(values)
        return
    for sv in values:
        try:
            traces = list(fmt.read([sv]))
        except InputError as exc:
            on_invalid(SkippedRecord(exc, sv.value))
            continue
        yield from traces


def load(path: str | Path, format: str = "auto") -> list[Trace]:
    """All traces of a file as a list (see :func:`iter_traces`)."""
    return list(iter_traces(path, format))
