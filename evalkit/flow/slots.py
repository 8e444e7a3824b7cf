"""Slots: the named values an observation produces and consumes, and the text they are matched as.

A dict payload has one slot per top-level key. Any other payload (a string, number, boolean or
array) is one slot, ``_value`` for an output and ``_text`` for an input. An absent or null payload
has no slots.

Values are compared as text: a string as it is, anything else as compact JSON with keys sorted at
every level and non-ASCII kept (``json.dumps(v, sort_keys=True, separators=(",", ":"),
ensure_ascii=False)``). orjson writes the same text several times faster, except that:

- it writes floats below 1e-4 differently ("0.00001" and "1.5e-7" where json writes "1e-05" and
  "1.5e-07"); every such float leaves one of :data:`SMALL_FLOAT_MARKERS` in orjson's text;
- it writes NaN and the infinities as null (json: NaN, Infinity);
- it refuses integers beyond 64 bits, lone surrogates and non-string keys.

:func:`sorted_json` detects these cases and hands them to ``json``. For consumer texts, megabytes
per long-context trace, :func:`draft_consumer_text` leaves the small-float check to the caller,
which finds the markers in the same scan that looks for produced values.
"""

from __future__ import annotations

import json
import marshal
import math
from typing import Any

import orjson

from evalkit.contracts.trace import Observation

VALUE_SLOT = "_value"
"""The one slot of an output that is not a JSON object."""

TEXT_SLOT = "_text"
"""The one slot of an input that is not a JSON object."""

DEFAULT_MIN_THREAD_LEN = 12
"""Values shorter than this are ignored: short strings ("ok", "true", ids like "42") occur everywhere
by chance. Twelve characters is the reference flow-graph method's default (mutagent)."""

SMALL_FLOAT_MARKERS: tuple[str, ...] = ("0.0000", *(f"{d}e-" for d in range(10)))
"""orjson's text holds one of these wherever it wrote a float below 1e-4 (look-alikes in strings too)."""


def plain_json(value: Any) -> str:
    """The reference text of a non-string value: compact JSON, keys sorted, non-ASCII kept."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


_MARKER_BYTES = tuple(marker.encode() for marker in SMALL_FLOAT_MARKERS)


def _has_small_float_marker(raw: bytes) -> bool:
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


def _orjson_text(value: Any) -> bytes | None:
    """orjson's text of ``value``, or None where it differs from json's for a reason other than
    small floats."""
    try:
        raw = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # orjson.JSONEncodeError: a huge integer, a lone surrogate, a non-string key
        return None
    if b"null" in raw and _has_non_finite_float(value):
        return None
    return raw


def sorted_json(value: Any) -> str:
    """Exactly :func:`plain_json`'s text, written by orjson whenever that gives the same result."""
    raw = _orjson_text(value)
    if raw is None or _has_small_float_marker(raw):
        return plain_json(value)
    return raw.decode()


def slot_names(payload: Any, single: str) -> list[str]:
    """The sorted slot names of a payload; ``single`` names the one slot of a non-object payload."""
    if payload is None:
        return []
    if isinstance(payload, dict):
        return sorted(payload)
    return [single]


def output_slots(obs: Observation) -> list[tuple[str, Any]]:
    """``(slot, value)`` for each slot of an observation's output, sorted by slot."""
    output = obs.output
    if output is None:  # absent or null
        return []
    if isinstance(output, dict):
        return sorted(output.items())
    return [(VALUE_SLOT, output)]


def value_string(value: Any) -> str:
    """The text a produced value is looked for as: a string as is, else its sorted JSON; trimmed."""
    text = value if isinstance(value, str) else sorted_json(value)
    return text.strip()


def consumer_text(obs: Observation) -> str:
    """The text a produced value must appear in to reach this observation: its input as text."""
    return obs.input if isinstance(obs.input, str) else sorted_json(obs.input)


def draft_consumer_text(obs: Observation) -> tuple[str, bool]:
    """:func:`consumer_text`, quickly: ``(text, final)``.

    When ``final`` is False the text is orjson's, and it is the consumer text unless it contains one
    of :data:`SMALL_FLOAT_MARKERS`; then :func:`consumer_text` gives the right one.
    """
    if isinstance(obs.input, str):
        return obs.input, True
    raw = _orjson_text(obs.input)
    if raw is None:
        return plain_json(obs.input), True
    return raw.decode(), False
