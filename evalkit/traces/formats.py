"""Trace formats by name, sniffing a file's format, and the streaming reader over all of them."""

from __future__ import annotations

import dataclasses
import importlib
import itertools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from evalkit.contracts.trace import Trace
from evalkit.errors import InputError, UnknownTraceFormat
from evalkit.traces.chat_mapping import ChatMapping, find_messages_key
from evalkit.traces.format_table import BUILT_IN, FormatEntry
from evalkit.traces.native import read_parquet
from evalkit.traces.not_traces import explain_not_traces
from evalkit.traces.plugins import add_format, load_plugin_formats
from evalkit.traces.report import ImportContext, ImportReport
from evalkit.traces.source import SourceValue, iter_source_values
from evalkit.traces.trace_format import TraceFormat
from evalkit.traces.usage_folding import FOLDED, FOLDED_KEY, fold_repeated_usage


def _built_in(entry: FormatEntry) -> TraceFormat:
    module = importlib.import_module(entry.module)
    return TraceFormat(entry.name, getattr(module, entry.looks_like), getattr(module, entry.read),
                       per_record=entry.per_record, takes_context=entry.takes_context)


FORMATS: dict[str, TraceFormat] = {entry.name: _built_in(entry) for entry in BUILT_IN}
"""Every trace format by name, in sniffing order: evalkit's own (:mod:`evalkit.traces.format_table`), then
installed plug-ins'."""

load_plugin_formats(FORMATS)  # third-party formats (entry-point group evalkit.trace_formats), sniffed last


def register_format(fmt: TraceFormat, formats: dict[str, TraceFormat] | None = None) -> None:
    """Add a trace format (sniffed after those already registered).

    Args:
        fmt: the format; its ``name`` becomes a ``--format`` choice.
        formats: the registry to add to; evalkit's own :data:`FORMATS` when None.

    Raises:
        ValueError: the name is already registered, or ``fmt`` is not a TraceFormat-like object.
    """
    add_format(fmt, FORMATS if formats is None else formats)


def sniff_format(value: Any) -> str | None:
    """The name of the first format whose shape ``value`` has, or None."""
    for fmt in FORMATS.values():
        if _fits(fmt, value):
            return fmt.name
    return None


def _fits(fmt: TraceFormat, value: Any) -> bool:
    """``fmt.looks_like(value)``; a recogniser that trips over an odd value (a list where it expects
    text) has not recognised it."""
    try:
        return bool(fmt.looks_like(value))
    except (TypeError, AttributeError, KeyError, IndexError, ValueError):
        return False


def _check_format(format: str) -> None:
    if format != "auto" and format not in FORMATS:
        raise InputError(f"unknown trace format {format!r} (one of: auto, {', '.join(FORMATS)})")


def _undetected(sv: SourceValue, mapping: ChatMapping) -> UnknownTraceFormat:
    """The error for a value no format fits, saying which option would help when we can tell."""
    hint = "pass --format to say which"
    key = find_messages_key(sv.value)
    if key is not None and key != mapping.messages_key:
        hint = f"its chat messages are under {key!r}: pass --messages-key {key}"
    if (not_traces := explain_not_traces(sv.value)) is not None:
        hint = not_traces
    return UnknownTraceFormat(f"cannot tell the trace format (tried: {', '.join(FORMATS)}); {hint}", file=sv.file,
                              line=sv.line, path=None if sv.index is None else f"[{sv.index}]")


def detect_format(path: str | Path, mapping: ChatMapping | None = None) -> str:
    """The format of a trace file, from its extension (Parquet) or its first value.

    Raises:
        InputError: when no format fits; the message names the formats tried.
    """
    if Path(path).suffix.lower() == ".parquet":
        return "evalkit"
    first = next(iter_source_values(path), None)
    if first is None:
        raise InputError("empty file: no trace records", file=str(path))
    return _sniffed(first, mapping or ChatMapping())[0]


def _sniffed(first: SourceValue, mapping: ChatMapping) -> tuple[str, ChatMapping]:
    """The format of a file whose first value is ``first``, and the chat mapping to read it with.

    When no format fits and the user left the messages key at its default, a record holding its chat
    messages under another field (tau-bench's ``traj``) is read from that field: a non-empty list of
    ``{role, ...}`` objects that then fits a chat format is not a guess worth stopping for (unless the
    record is of a kind :func:`explain_not_traces` knows a better reading for). The caller
    says so in the import report (see :func:`_found_messages_warning`).

    Raises:
        InputError: when no format fits even so; the message names the formats tried.
    """
    name = sniff_format(mapping.sniff_view(first.value))
    # Not for a known kind whose better reading the error names (a SWE-agent trajectory's `history`
    # holds chat messages, but its plug-in reads the commands and observations too).
    if name is None and mapping.messages_key == ChatMapping.messages_key and explain_not_traces(first.value) is None:
        key = find_messages_key(first.value)
        if key is not None and key != mapping.messages_key:
            found = dataclasses.replace(mapping, messages_key=key)
            name = sniff_format(found.sniff_view(first.value))
            if name is not None:
                return name, found
    if name is None:
        raise _undetected(first, mapping)
    return name, mapping


def _found_messages_warning(path: str | Path, key: str) -> str:
    return (f"{path}: no format fits the records as they are; their chat messages were found under {key!r} "
            f"and read from there (pass --messages-key {key} to say so, or --format to stop auto-detection)")


def _check_fits(sv: SourceValue, fmt: TraceFormat, mapping: ChatMapping) -> None:
    """Refuse a value a forced format does not fit: a reader could make wrong-looking traces of it."""
    if not _fits(fmt, mapping.sniff_view(sv.value)):
        other = sniff_format(mapping.sniff_view(sv.value))
        looks = f"it looks like {other!r}" if other else "no known format fits it"
        raise sv.error(f"record is not in the {fmt.name!r} format given by --format ({looks})")


def _check_agrees(sv: SourceValue, fmt: TraceFormat, mapping: ChatMapping) -> None:
    """Refuse a record of another format than the one the file's first record was read as.

    The format is sniffed from the first record; a later record sniffed as another is not read as the
    first's format (a native trace read as a prompt/response record loses its observations) nor as its own
    (the file would be two files). A record no format fits goes to the reader, which names its problem.
    """
    other = sniff_format(mapping.sniff_view(sv.value))  # stops at fmt for a record of the file's format
    if other is not None and other != fmt.name:
        raise sv.error(f"record is in the {other!r} format, but the file's first record is {fmt.name!r}: a file holds "
                       "one format (split the file, or fix the first record if it is the odd one)")


def _fitting(values: Iterable[SourceValue], fmt: TraceFormat, mapping: ChatMapping,
             first_only: bool, check: Callable[[SourceValue, TraceFormat, ChatMapping], None]) -> Iterator[SourceValue]:
    for i, sv in enumerate(values):
        if i == 0 or not first_only:
            check(sv, fmt, mapping)
        yield sv


class _Cursor:
    """The value a reader took last, so an error it did not locate can still name the record."""

    def __init__(self) -> None:
        self.last: SourceValue | None = None

    def track(self, values: Iterable[SourceValue]) -> Iterator[SourceValue]:
        for sv in values:
            self.last = sv
            yield sv


def _located(traces: Iterator[Trace], file: str, fmt: TraceFormat, cursor: _Cursor) -> Iterator[Trace]:
    """A reader's traces; a malformed value it did not locate itself is still an InputError.

    Readers check what they read and locate their own errors. A value of a type no reader expects
    (a list where text belongs, a number where an object belongs) can slip past them; it must
    still come out as an InputError naming the file (and the record, for formats read record by
    record), which ``--skip-invalid`` can skip, never as a raw pydantic error or a TypeError.
    """
    def error(message: str, path: str | None = None) -> InputError:
        if fmt.per_record and cursor.last is not None:
            return cursor.last.error(message, path)
        return InputError(message, file=file, path=path)

    try:
        yield from traces
    except InputError:
        raise
    except ValidationError as exc:
        from evalkit.contract_files import validation_problems

        path, msg = validation_problems(exc)[0]
        raise error(f"{msg} (in the trace built from this record)", path or None) from None
    except (TypeError, AttributeError, KeyError, IndexError, ValueError) as exc:
        raise error(f"not the shape of a {fmt.name!r} record: a field holds a value of an unexpected type "
                    f"({type(exc).__name__}: {exc})") from None


def _usage_once(traces: Iterator[Trace], report: ImportReport) -> Iterator[Trace]:
    """Each trace with its wrappers' repeated token usage folded (see :mod:`evalkit.traces.usage_folding`)."""
    for trace in traces:
        observations, folded = fold_repeated_usage(trace.observations)
        if folded:
            report.kept(FOLDED, f"metadata.{FOLDED_KEY}", n=folded)
            trace = trace.model_copy(update={"observations": observations})
        yield trace


@dataclass(frozen=True)
class SkippedRecord:
    """A record left out by ``iter_traces(..., on_invalid=...)``, with the reason."""

    error: InputError
    value: Any


def iter_traces(path: str | Path, format: str = "auto",
                on_invalid: Callable[[SkippedRecord], None] | None = None, *,
                report: ImportReport | None = None, mapping: ChatMapping | None = None) -> Iterator[Trace]:
    """Stream the traces of a file, one at a time (JSONL files are never held in memory whole).

    Args:
        path: a trace file: native JSONL/JSON or Parquet, Langfuse export, OTLP JSON or span list,
            or OpenAI chat-log records; or a trace dataset folder (partitioned Parquet).
        format: ``auto`` (sniff the file) or a name in :data:`FORMATS`. A forced format must fit
            every record (the first, for formats whose traces span records); a record it does not fit
            is an error, never relabelled.
        on_invalid: when given, a malformed record is passed to it and skipped instead of stopping
            the read (formats whose traces span several records still stop).
        report: when given, counts what was kept, mapped, kept without being understood and skipped
            (see :mod:`evalkit.traces.report`); an empty file is noted in ``report.empty_files``.
        mapping: where chat records keep their messages, id and fields, and a role map
            (see :mod:`evalkit.traces.chat_mapping`); formats that are not chat logs ignore it.

    Raises:
        InputError: unreadable file, unknown format, or a malformed record (``FILE:LINE: field: msg``).
    """
    _check_format(format)
    mapping = mapping or ChatMapping()
    report = report if report is not None else ImportReport()
    dataset = Path(path).is_dir()  # a trace dataset folder (``traces import --partition-by``), file by file
    if dataset or Path(path).suffix.lower() == ".parquet":
        if format not in ("auto", "evalkit"):
            raise InputError(f"Parquet trace files are evalkit's own format, not {format!r}", file=str(path))
        if dataset:
            from evalkit.traces.parquet import iter_dataset_traces  # polars, imported only when needed
        for trace in iter_dataset_traces(path) if dataset else read_parquet(path):
            report.add_trace(trace, "evalkit")
            yield trace
        return
    values = iter_source_values(path)
    first = next(values, None)
    if first is None:
        report.empty_files.append(str(path))
        return
    values = itertools.chain([first], values)
    forced = format != "auto"
    if not forced:
        format, found = _sniffed(first, mapping)
        if found.messages_key != mapping.messages_key:
            report.warn(_found_messages_warning(path, found.messages_key))
            mapping = found
    fmt = FORMATS[format]
    if not mapping.is_default and not fmt.takes_context:
        report.warn(f"{path}: the chat mapping (messages key, id keys, kept fields, role map) does not "
                    f"apply to the {format!r} format and was not used")
    context = ImportContext(report, mapping)

    def read(vals: Iterable[SourceValue]) -> Iterator[Trace]:
        cursor = _Cursor()
        vals = cursor.track(vals)
        traces = _located(fmt.read(vals, context) if fmt.takes_context else fmt.read(vals), str(path), fmt, cursor)
        # evalkit's own files hold what evalkit wrote; every other source may count a model call twice.
        return traces if format == "evalkit" else _usage_once(traces, report)

    check = _check_fits if forced else _check_agrees
    if on_invalid is None or not fmt.per_record:
        if forced or fmt.per_record:
            values = _fitting(values, fmt, mapping, first_only=not fmt.per_record, check=check)
        for trace in read(values):
            report.add_trace(trace, format)
            yield trace
        return
    for sv in values:
        try:
            check(sv, fmt, mapping)
            traces = list(read([sv]))
        except InputError as exc:
            on_invalid(SkippedRecord(exc, sv.value))
            continue
        for trace in traces:
            report.add_trace(trace, format)
            yield trace


def require_traces(paths: str | Path | Iterable[str | Path]) -> None:
    """Refuse, before any work, a trace file that holds no record (empty, blank or ``[]``).

    Folders (trace datasets) and Parquet files are left to their readers.

    Raises:
        InputError: naming the first empty file.
    """
    from evalkit.io.empty_inputs import refuse_empty

    for path in [paths] if isinstance(paths, (str, Path)) else paths:
        if Path(path).is_dir() or Path(path).suffix.lower() == ".parquet":
            continue
        refuse_empty(int(next(iter_source_values(path), None) is not None), file=path, what="trace records",
                     next_step="nothing to read (an empty export, or the wrong file?)")


def load(path: str | Path, format: str = "auto", *, report: ImportReport | None = None,
         mapping: ChatMapping | None = None) -> list[Trace]:
    """All traces of a file as a list (see :func:`iter_traces`)."""
    return list(iter_traces(path, format, report=report, mapping=mapping))
