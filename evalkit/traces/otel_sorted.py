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

import itertools
import operator
from pathlib import Path
from typing import Any

import orjson

from evalkit.errors import InputError
from evalkit.io.regular import open_regular
from evalkit.traces.otel_ids import BadField, is_hex_id, lookup, normalize_id
from evalkit.traces.otel_spans import TRACE_KEYS

__all__ = ["unsorted_reason"]


class _Unsure(ValueError):
    """A value this pass does not follow (the importer decides what it is)."""


_TRACE_ID = operator.itemgetter("traceId")
_SPAN_IDS = itertools.repeat("spanID")
_UNREADABLE: Any = object()
"""In a line's trace ids: here came a span (or value) this pass could not read."""


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
                ids: list[str] = []
                try:
                    _trace_ids(orjson.loads(raw), ids)
                except (InputError, ValueError, TypeError, AttributeError, KeyError):
                    ids.append(_UNREADABLE)  # after the ids read before it, as a lazy read would come to it
                if ids and ids[0] >= previous and all(map(operator.le, ids, itertools.islice(ids, 1, None))):
                    previous = ids[-1]  # the usual case: checked in C, without a loop here
                    continue
                for trace_id in ids:
                    if trace_id is _UNREADABLE:
                        raise _Unsure
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


def _trace_ids(value: Any, ids: list[str]) -> None:
    """Append the trace id of each span of one JSON value to ``ids``, in the order
    ``otel_spans.spans_of`` yields them (those before a span this pass cannot read stay appended)."""
    if isinstance(value, list):
        ids += map(_flat_trace_id, value)
        return
    if not isinstance(value, dict):
        raise _Unsure
    for top in ("resourceSpans", "batches"):
        if top in value:
            for rs in value[top] or ():
                key = "scopeSpans" if "scopeSpans" in rs else "instrumentationLibrarySpans"
                for ss in rs.get(key) or ():
                    _span_trace_ids(ss.get("spans") or (), ids)
            return
    if "data" in value or ("traceID" in value and "spans" in value):
        raise _Unsure  # Jaeger: held whole, as these exports are one document per trace anyway
    if isinstance(value.get("spans"), list):
        ids += map(_flat_trace_id, value["spans"])
        return
    ids.append(_flat_trace_id(value))


def _span_trace_ids(spans: Any, ids: list[str]) -> None:
    """Append the trace id of each of ``spans`` to ``ids``, as ``map(_flat_trace_id, spans)`` would."""
    if spans.__class__ is list:
        # The usual case, in C: every span a dict with a ``traceId`` and no Jaeger ``spanID``, and one
        # trace id (or a few) for the lot, each a hex string.
        try:
            trace_ids = list(map(_TRACE_ID, spans))
            distinct = set(trace_ids)
        except (KeyError, TypeError):  # not a span dict, no traceId, or an id that is a list or map
            distinct = None
        if (distinct is not None and all(map(is_hex_id, distinct))
                and not any(map(operator.contains, spans, _SPAN_IDS))):
            ids += trace_ids
            return
    ids += map(_flat_trace_id, spans)


def _flat_trace_id(span: Any) -> str:
    if span.__class__ is dict:  # the usual case first: a hex traceId, the first key looked up, kept as is
        trace_id = span.get("traceId")
        if is_hex_id(trace_id) and "spanID" not in span:
            return trace_id
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
