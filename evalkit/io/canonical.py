"""Canonical JSON: the one way evalkit writes JSON, so the same data always gives the same bytes.

Keys are sorted at every level, non-ASCII text is kept as is (UTF-8), NaN and Infinity are refused.
Documents use a two-space indent and end with a newline; JSONL records are compact, one per line.

Compact text is written by orjson whenever it gives exactly the bytes ``json.dumps(v,
sort_keys=True, separators=(",", ":"), ensure_ascii=False)`` gives, several times faster. It
differs in three places, each detected and handed to ``json``:

- floats below 1e-4 ("0.00001" and "1.5e-7" where json writes "1e-05" and "1.5e-07"): every such
  float leaves one of :data:`SMALL_FLOAT_MARKERS` in orjson's text;
- NaN and the infinities (orjson writes null);
- integers beyond 64 bits, lone surrogates, non-string keys and non-JSON types (orjson refuses).
"""

from __future__ import annotations

import json
import marshal
import math
from typing import Any

import orjson

_ORJSON_OPTIONS = (orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
                   | orjson.OPT_PASSTHROUGH_SUBCLASS)
"""Sorted keys; types json would refuse (datetimes, dataclasses) are refused too, so both agree."""


def canonical_dumps(obj: Any) -> str:
    """A JSON document: sorted keys, two-space indent, UTF-8 text, final newline."""
    return json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def canonical_line(obj: Any) -> str:
    """One JSONL record: sorted keys, no spaces, UTF-8 text, final newline."""
    return compact_sorted_json(obj, allow_nan=False) + "\n"


def compact_json(value: Any, *, allow_nan: bool = True) -> str:
    """The reference compact text: keys sorted, no spaces, non-ASCII kept (``json`` itself)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=allow_nan)


SMALL_FLOAT_MARKERS: tuple[str, ...] = ("0.0000", *(f"{d}e-" for d in range(10)))
"""orjson's text holds one of these wherever it wrote a float below 1e-4 (look-alikes in strings too)."""


_MARKER_BYTES = tuple(marker.encode() for marker in SMALL_FLOAT_MARKERS)


def has_small_float_marker(raw: bytes) -> bool:
    # Plain substring search, not a regular expression: several times faster on long texts.
    return any(marker in raw for marker in _MARKER_BYTES)


def _may_hold_non_finite_float(value: Any) -> bool:
    """False when ``value`` surely holds no NaN or infinity; much faster than walking it.

    marshal writes a float as its 8 IEEE bytes, little-endian; in a NaN or an infinity the last two
    are [f0-ff] then 7f or ff. That pair never occurs inside UTF-8 text, so outside floats it can
    only come from an integer's bytes (a negative one, say): then the walk decides.
    """
    try:
        raw = marshal.dumps(value)
    except ValueError:  # not marshallable (a dict subclass, say) or nested too deeply
        return True
    for last in (b"\x7f", b"\xff"):
        at = raw.find(last, 1)
        while at != -1:
            if raw[at - 1] >= 0xF0:
                return True
            at = raw.find(last, at + 1)
    return False


def _has_non_finite_float(value: Any) -> bool:
    if not _may_hold_non_finite_float(value):
        return False
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
        elif isinstance(item, float) and not math.isfinite(item):
            return True
    return False


def orjson_text(value: Any) -> bytes | None:
    """orjson's text of ``value``, or None where it differs from json's for a reason other than
    small floats."""
    try:
        raw = orjson.dumps(value, option=_ORJSON_OPTIONS)
    except TypeError:  # orjson.JSONEncodeError: a huge integer, a lone surrogate, a non-string key
        return None
    if b"null" in raw and _has_non_finite_float(value):
        return None
    return raw


def compact_sorted_json(value: Any, *, allow_nan: bool = True) -> str:
    """Exactly :func:`compact_json`'s text, written by orjson whenever that gives the same result."""
    raw = orjson_text(value)
    if raw is None or has_small_float_marker(raw):
        return compact_json(value, allow_nan=allow_nan)
    return raw.decode()
