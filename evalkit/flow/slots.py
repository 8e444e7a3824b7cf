"""Slots: the named values an observation produces and consumes, and the text they are matched as.

A dict payload has one slot per top-level key. Any other payload (a string, number, boolean or
array) is one slot, ``_value`` for an output and ``_text`` for an input. An absent or null payload
has no slots.

Values are compared as text: a string as it is, anything else as compact JSON with keys sorted at
every level and non-ASCII kept: :func:`evalkit.io.canonical.compact_sorted_json`, orjson where it
agrees with ``json`` to the byte (see that module for where it does not). For consumer texts, megabytes
per long-context trace, :func:`draft_consumer_text` leaves the small-float check to the caller,
which finds the markers in the same scan that looks for produced values.
"""

from __future__ import annotations

from typing import Any

from evalkit.contracts.trace import Observation
from evalkit.flow.defaults import DEFAULT_MIN_THREAD_LEN as DEFAULT_MIN_THREAD_LEN  # build.py reads it here
from evalkit.io.canonical import SMALL_FLOAT_MARKERS as SMALL_FLOAT_MARKERS  # re-exported for the builder
from evalkit.io.canonical import compact_json as plain_json
from evalkit.io.canonical import compact_sorted_json as sorted_json
from evalkit.io.canonical import orjson_text

VALUE_SLOT = "_value"
"""The one slot of an output that is not a JSON object."""

TEXT_SLOT = "_text"
"""The one slot of an input that is not a JSON object."""


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
    raw = orjson_text(obs.input)
    if raw is None:
        return plain_json(obs.input), True
    return raw.decode(), False
