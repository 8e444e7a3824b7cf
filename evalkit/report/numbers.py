"""Numbers as people read them: a report says 5.8 s and 2,123 tokens, not 5825.652 ms and 2123.0.

``summary.json`` keeps the exact values; only what is shown is rounded.
"""

from __future__ import annotations

import math
from typing import Any

SIGNIFICANT = 3
"""Digits kept of a fractional number below 1000 (0.0714, 12.3, 456): enough to compare, few to read."""


def readable(value: Any) -> str:
    """A value for a tile or a table cell: thousands separated, floats to ``SIGNIFICANT`` digits.

    Whole floats lose their ``.0``; booleans read yes or no; text is shown as it is; None is empty.
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if not isinstance(value, int | float):
        return str(value)
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return str(value)
    if isinstance(value, int) or value.is_integer() or abs(value) >= 10 ** SIGNIFICANT:
        return f"{round(value):,}"
    digits = max(SIGNIFICANT - 1 - math.floor(math.log10(abs(value))), 0) if value else 0
    text = f"{value:.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def counted(n: Any, noun: str, plural: str | None = None) -> str:
    """``1 trace``, ``86 traces``, ``1,204 observations``: a readable count with its noun agreeing."""
    word = noun if n == 1 else (plural or noun + "s")
    return f"{readable(n)} {word}"


def readable_duration(ms: float | None) -> tuple[float | None, str]:
    """A duration in the unit a person would say it in: ``(5.8, "s")`` for 5825.652 ms.

    Milliseconds below a second (one decimal below 10 ms), seconds (one decimal) below two minutes, minutes (one decimal) above.
    """
    if ms is None:
        return None, "ms"
    if abs(ms) < 1000:
        return (float(round(ms)) if abs(ms) >= 10 else round(ms, 1)), "ms"
    if abs(ms) < 120_000:
        return round(ms / 1000, 1), "s"
    return round(ms / 60_000, 1), "min"
