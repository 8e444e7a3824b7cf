"""OpenTelemetry span ids and times: hex, base64 or decimal ids; Unix nanoseconds, microseconds or ISO times.

A malformed field raises :class:`BadField` with its path inside the span, which the importer turns
into an InputError naming file and record.
"""

from __future__ import annotations

import base64
import binascii
import re
from datetime import datetime
from typing import Any

from evalkit.traces.tree import iso_from_unix_nanos

_HEX = re.compile(r"[0-9a-fA-F]+")


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


def is_null_id(value: str | None) -> bool:
    """True for an absent or all-zero parent id."""
    return not value or set(value) == {"0"}


def _iso(nanos: int | str, path: str) -> str | None:
    try:
        return iso_from_unix_nanos(nanos)
    except (OverflowError, ValueError):
        raise BadField(f"time out of range: {str(nanos)[:40]} (Unix nanoseconds)", path) from None


def time_from_nanos(value: Any, path: str) -> str | None:
    """ISO time from Unix nanoseconds (number or digit string), or an ISO string kept as given."""
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
