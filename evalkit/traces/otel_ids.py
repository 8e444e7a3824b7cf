"""OpenTelemetry span fields: hex, base64 or decimal ids; Unix nanoseconds, microseconds or ISO times; status.

A malformed field raises :class:`BadField` with its path inside the span, which the importer turns
into an InputError naming file and record.
"""

from __future__ import annotations

import base64
import binascii
import re
from datetime import datetime, timedelta
from typing import Any

_HEX = re.compile(r"[0-9a-fA-F]+")
_IS_HEX = _HEX.fullmatch
HEX_DIGITS = "0123456789abcdefABCDEF"
_UNIX_EPOCH = datetime(1970, 1, 1)
# The ISO text of whole seconds already formatted: spans of one export share their seconds, and
# formatting a datetime costs more than the rest of a span's times. Cleared when it grows past the limit.
_SECONDS: dict[int, str] = {}
_SECONDS_KEPT = 4096
_HEADS: dict[str, str] = {}
"""The same, keyed by the digits of the seconds (the nanosecond text but its last nine digits)."""


class BadField(ValueError):
    """A malformed field of one span: ``path`` is relative to the span (``attributes[2]``)."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message)
        self.message = message
        self.path = path


class LossyNumber(BadField):
    """An id that JSON parsing turned into a float (an integer beyond 64 bits): re-read it exactly."""


# --- ids and times ------------------------------------------------------------------------------

def normalize_id(value: Any, width: int, path: str) -> str | None:
    """A hex id: hex strings as given, ``0x`` hex padded, base64 decoded, decimal integers formatted."""
    if value.__class__ is str and _IS_HEX(value):  # the usual case, first: a plain hex id
        return value
    if value is None or value == "":
        return None
    if isinstance(value, float) and value.is_integer():
        if abs(value) >= 2**53:
            raise LossyNumber("id is a number with a fraction or exponent, too large to be an exact integer; "
                              "write it as a string or as a plain integer", path)
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise BadField("id must be a hex string or an integer", path)
    if isinstance(value, int):
        return format(value, f"0{width}x")
    text = value.strip()
    if text[:2].lower() == "0x" and _HEX.fullmatch(text[2:]):
        return text[2:].lower().zfill(width)
    if _HEX.fullmatch(text):
        return text
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return text
    return raw.hex() if len(raw) in (8, 16) else text


def is_hex(text: str) -> bool:
    """True for a non-empty string of hex digits (an id ``normalize_id`` keeps as given)."""
    return bool(text) and not text.strip(HEX_DIGITS)  # as _HEX.fullmatch, without the regex machinery


def _head(seconds_text: str) -> str | None:
    """The ISO text of the whole seconds a decimal string of Unix seconds names (as ``_iso`` writes them);
    None when out of range."""
    head = _HEADS.get(seconds_text)
    if head is None:
        try:
            head = (_UNIX_EPOCH + timedelta(seconds=int(seconds_text))).isoformat()
        except (OverflowError, ValueError):
            return None
        if len(_HEADS) >= _SECONDS_KEPT:
            _HEADS.clear()
        _HEADS[seconds_text] = head
    return head


def plain_time(value: Any) -> str | None:
    """The ISO time of a decimal string of Unix nanoseconds, as ``time_from_nanos`` gives it; None for
    any other value (absent, another spelling, or one ``time_from_nanos`` would refuse)."""
    if value.__class__ is not str or not value.isdigit():
        return None
    if len(value) >= 10 and value.isascii():  # at least whole seconds: the digits are the fields
        head = _head(value[:-9])
        return None if head is None else f"{head}.{value[-9:-3]}Z"
    try:
        return _iso(value, "")
    except BadField:
        return None


def plain_start(value: Any) -> tuple[str, int] | None:
    """(ISO time, ``tree.start_key`` of it) of a decimal string of Unix nanoseconds, as ``time_from_nanos``
    and ``tree.start_key`` give them, without reading the text back; None for any other value (absent,
    "0", another spelling, or one ``time_from_nanos`` would refuse)."""
    if value.__class__ is not str or len(value) < 10 or not value.isdigit() or not value.isascii():
        time = plain_time(value)
        return None if time is None else (time, int(value) // 1000)
    head = _head(value[:-9])
    return None if head is None else (f"{head}.{value[-9:-3]}Z", int(value[:-3]))


_HEX_IDS: set[str] = set()
"""Ids already found to be hex strings: the spans of a trace share its id and mostly one parent, and a
set lookup costs less than looking at each character again. Cleared when it grows past the limit, kept
small as only the ids of the trace being read come back."""
_IDS_KEPT = 256


def is_hex_id(text: Any) -> bool:
    """True for a non-empty string of hex digits (an id ``normalize_id`` keeps as given), remembered."""
    if text.__class__ is not str:
        return False
    if text in _HEX_IDS:
        return True
    if not text or text.strip(HEX_DIGITS):
        return False
    if len(_HEX_IDS) >= _IDS_KEPT:
        _HEX_IDS.clear()
    _HEX_IDS.add(text)
    return True


def plain_span_times(start: Any, end: Any) -> tuple[str, int, str] | None:
    """(start ISO time, its ``tree.start_key``, end ISO time) of two decimal strings of Unix nanoseconds
    of at least whole seconds, as :func:`plain_start` and :func:`plain_time` give them (one call for
    the usual span); None for anything else, which those two then read."""
    if (start.__class__ is not str or end.__class__ is not str or len(start) < 10 or len(end) < 10
            or not start.isdigit() or not end.isdigit() or not start.isascii() or not end.isascii()):
        return None
    start_head = _HEADS.get(start[:-9]) or _head(start[:-9])
    end_head = _HEADS.get(end[:-9]) or _head(end[:-9])
    if start_head is None or end_head is None:
        return None
    return f"{start_head}.{start[-9:-3]}Z", int(start[:-3]), f"{end_head}.{end[-9:-3]}Z"


def is_null_id(value: str | None) -> bool:
    """True for an absent or all-zero parent id."""
    return not value or not value.strip("0")


def _iso(nanos: int | str, path: str) -> str | None:
    """``evalkit.traces.tree.iso_from_unix_nanos`` (the same text, the same errors), with the whole
    seconds formatted once: integer arithmetic, so exact for any nanosecond count."""
    if nanos in (None, "", 0, "0"):
        return None
    try:
        seconds, micros = divmod(int(nanos) // 1000, 1_000_000)
        head = _SECONDS.get(seconds)
        if head is None:
            if len(_SECONDS) >= _SECONDS_KEPT:
                _SECONDS.clear()
            head = _SECONDS[seconds] = (_UNIX_EPOCH + timedelta(seconds=seconds)).isoformat()
    except (OverflowError, ValueError):
        raise BadField(f"time out of range: {str(nanos)[:40]} (Unix nanoseconds)", path) from None
    return f"{head}.{micros:06d}Z"


def time_from_nanos(value: Any, path: str) -> str | None:
    """ISO time from Unix nanoseconds (number or digit string), or an ISO string kept as given."""
    if value.__class__ is str and value.isdigit():  # the usual case, first: OTLP's decimal string
        return _iso(value, path)
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise BadField("not a timestamp", path)
    if isinstance(value, list) and len(value) == 2 and all(
            isinstance(v, int) and not isinstance(v, bool) for v in value):
        return _iso(value[0] * 1_000_000_000 + value[1], path)  # OTel JS HrTime [seconds, nanos]
    if isinstance(value, int | float):
        return _iso(int(value), path)
    if isinstance(value, str):
        text = value.strip()
        if text.isdigit():
            return _iso(text, path)
        try:
            datetime.fromisoformat(text)
        except ValueError:
            raise BadField(f"not a timestamp: {value!r}", path) from None
        return text
    raise BadField("not a timestamp", path)


def time_from_micros(value: Any, path: str) -> str | None:
    """ISO time from Unix microseconds (Jaeger)."""
    if value is None or value == "":
        return None
    micros = value
    if isinstance(value, str):
        try:
            micros = int(value)
        except ValueError:
            raise BadField("not a time in microseconds", path) from None
    if isinstance(micros, bool) or not isinstance(micros, int):
        raise BadField("not a time in microseconds", path)
    return _iso(micros * 1000, path)


# --- span fields ---------------------------------------------------------------------------------

_ERROR_CODES = ("2", "ERROR", "STATUS_CODE_ERROR", "STATUSCODE.ERROR")
STATUS_KEYS = frozenset({"status_code", "statusCode", "status_message", "statusMessage"})
"""Status keys a span may have outside ``status``."""


def lookup(span: dict[str, Any], keys: tuple[str, ...]) -> tuple[str | None, Any]:
    """(key, value) of the first of ``keys`` present; dotted keys look one level down."""
    for key in keys:
        if key in span and "." not in key:  # a plain key; a dotted key is looked for one level down
            return key, span[key]
        head, _, tail = key.partition(".")
        if tail:
            inner = span.get(head)
            if isinstance(inner, dict) and tail in inner:
                return key, inner[tail]
    return None, None


def span_status(span: dict[str, Any]) -> tuple[bool, str | None]:
    """(is the status ERROR, its message) from ``status`` {code|status_code, message|description}."""
    status = span.get("status")
    if not status and span.keys().isdisjoint(STATUS_KEYS):  # the usual case: no status, or {}
        return False, None
    code: Any = span.get("status_code", span.get("statusCode"))
    message: Any = span.get("status_message", span.get("statusMessage"))
    if isinstance(status, dict):
        code = status.get("code", status.get("status_code", status.get("statusCode", code)))
        message = status.get("message") or status.get("description") or message
    elif isinstance(status, str | int):
        code = status
    error = code is not None and str(code).upper() in _ERROR_CODES
    return error, (message if isinstance(message, str) and message else None)
