"""Comparing a fast JSON reading path with the strict parser: both must give the same value or the same error."""

import json
from typing import Any

from evalkit.errors import StrictJSONError


def outcome(read: Any, text: str) -> Any:
    """What ``read(text)`` gives, comparable across readers: the value (as canonical text and repr, so
    ``1`` and ``1.0`` or ``True`` and ``1`` differ) or the error's message."""
    try:
        value = read(text)
    except StrictJSONError as exc:
        return ("error", exc.message)
    return ("value", json.dumps(value, sort_keys=True), repr(value))
