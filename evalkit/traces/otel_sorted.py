"""Whether an OpenTelemetry JSONL file is sorted by trace id: a light first pass, ids only.

The importer (``evalkit.traces.otel``) hands on each trace once the next trace id starts only when
no span of it can come later, which a reader going line by line cannot know alone. This pass reads
every line with orjson, without the strict checks or building anything, and follows the same keys
as ``evalkit.traces.otel_spans`` to each span's trace id. "Sorted" means every span's trace id is no
smaller than the one before it, so the spans of a trace are together and traces come in the order
the importer gives them.

Any doubt answers False (not sorted: hold every trace until the end, as a whole-file read would):
a line that does not parse here, a Jaeger export, a span whose trace id this pass cannot read. The
importer's own pass then reports whatever is wrong with the file.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from evalkit.errors import InputError
from evalkit.io.regular import open_regular
from evalkit.traces.otel_attributes import lookup
from evalkit.traces.otel_ids import BadField, normalize_id
from evalkit.traces.otel_spans import TRACE_KEYS

__all__ = ["unsorted_reason"]


class _Unsure(ValueError):
    """A value this pass does not follow (the importer decides what it is)."""


def unsorted_reason(path: str | Path) -> str | None:
    """None when every span's trace id in the JSONL file at ``path`` is no smaller than the one before;
    else why the file counts as not sorted, as a clause that follows its name (``is not sorted by trace
    id (line 7 goes back to trace ... after trace ...)``)."""
    previous, lineno = "", 0
    try:
        with open_regular(path) as fh:
            for lineno, raw in enumerate(fh, start=1):
                if raw.isspace():
                    continue
                for trace_id in _trace_ids(orjson.loads(raw)):
                    if trace_id < previous:
                        return (f"is not sorted by trace id (line {lineno} goes back to trace {trace_id!r} "
                                f"after trace {previous!r})")
                    previous = trace_id
    except (OSError, InputError, ValueError, TypeError, AttributeError, KeyError):
        # orjson.JSONDecodeError, BadField and _Unsure are ValueErrors
        if lineno:
            return (f"may not be sorted by trace id (line {lineno} holds a Jaeger export, or a record whose "
                    "trace ids only the full read can tell)")
        return "could not be read ahead to tell whether it is sorted by trace id"
    return None


def _trace_ids(value: Any) -> Iterator[str]:
    """The trace id of each span of one JSON value, in the order ``otel_spans.spans_of`` yields them."""
    if isinstance(value, list):
        for item in value:
            yield _flat_trace_id(item)
        return
    if not isinstance(value, dict):
        raise _Unsure
    for top in ("resourceSpans", "batches"):
        if top in value:
            for rs in value[top] or ():
                key = "scopeSpans" if "scopeSpans" in rs else "instrumentationLibrarySpans"
                for ss in rs.get(key) or ():
                    for span in ss.get("spans") or ():
                        yield _flat_trace_id(span)
            return
    if "data" in value or ("traceID" in value and "spans" in value):
        raise _Unsure  # Jaeger: held whole, as these exports are one document per trace anyway
    if isinstance(value.get("spans"), list):
        for item in value["spans"]:
            yield _flat_trace_id(item)
        return
    yield _flat_trace_id(value)


def _flat_trace_id(span: Any) -> str:
    if not isinstance(span, dict) or "spanID" in span:
        raise _Unsure  # not a span, or Jaeger-style
    _, raw = lookup(span, TRACE_KEYS)
    try:
        trace_id = normalize_id(raw, 32, "")
    except BadField:
        raise _Unsure from None
    if trace_id is None:
        raise _Unsure
    return trace_id
