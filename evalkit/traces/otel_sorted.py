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

Most lines are not parsed at all: a line of one trace's spans, as a collector's file exporter writes
them, has its trace id found by a byte scan (:func:`_scanned_id`). The scan is sure only when every
"trace" in the line begins a ``"traceId"`` key holding the same hex id: then no span spells its trace
id another way (``trace_id``, ``context.trace_id``, Jaeger's ``traceID``; a key written with an ASCII
``\\u00XX`` escape is ruled out too) and every span's trace id is that one. Any other line (two
traces, a link to another trace, spaced otherwise) is parsed.
"""

from __future__ import annotations

import itertools
import operator
import re
from pathlib import Path
from typing import Any

import orjson

from evalkit.errors import InputError
from evalkit.io.regular import open_regular
from evalkit.traces.otel_ids import HEX_DIGITS, BadField, is_hex_id, lookup, normalize_id
from evalkit.traces.otel_spans import TRACE_KEYS

__all__ = ["unsorted_reason"]


class _Unsure(ValueError):
    """A value this pass does not follow (the importer decides what it is)."""


_TRACE_ID = operator.itemgetter("traceId")
_SPAN_IDS = itertools.repeat("spanID")
_UNREADABLE: Any = object()
"""In a line's trace ids: here came a span (or value) this pass could not read."""
_KEY = b'"traceId"'
_ASCII_ESCAPE = re.compile(rb"\\u00[2-7]")
"""An escaped ASCII character, which a key could be spelt with (``"\\u0074raceId"``)."""
_HEX_BYTES = HEX_DIGITS.encode()


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
                scanned = _scanned_id(raw)
                if scanned is not None and scanned >= previous:
                    previous = scanned  # the usual case: found without parsing
                    continue
                ids: list[str] = []
                try:
                    _trace_ids(orjson.loads(raw), ids)
                except (InputError, ValueError, TypeError, AttributeError, KeyError):
                    ids.append(_UNREADABLE)  # after the ids read before it, as a lazy read would come to it
                if ids and ids[0] >= previous and all(map(operator.le, ids, itertools.islice(ids, 1, None))):
                    previous = ids[-1]
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


def _scanned_id(raw: bytes) -> str | None:
    """The trace id of every span of the line, when the line holds one trace's spans and spells their
    trace ids alike (``"traceId":"HEX"`` or ``"traceId": "HEX"``), found without parsing it; None for
    any other line (see the module docstring)."""
    first = raw.find(_KEY)
    if first < 0 or b"\\u00" in raw and _ASCII_ESCAPE.search(raw):
        return None
    start = first + len(_KEY)
    if raw.startswith(b':"', start):
        start += 2
    elif raw.startswith(b': "', start):
        start += 3
    else:
        return None
    end = raw.find(b'"', start)
    # Every "trace" of the line must begin a "traceId" key holding this id, spelt the same way: so no
    # other spelling of a trace id (each holds "trace"), and no span of another trace. Counted in C:
    # "trace" is in each whole entry, so equal counts pair each "trace" with an entry.
    if (end > start and not raw[start:end].strip(_HEX_BYTES)
            and raw.count(raw[first:end + 1]) == raw.count(b"trace")):
        return raw[start:end].decode("ascii")
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
