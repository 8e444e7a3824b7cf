"""What a value read from a file may hold: the one policy every reader applies (JSON, JSONL, YAML, traces).

A value is kept exactly as written or refused with a message saying where and why; it is never
changed quietly on the way in. Refused:

- nesting deeper than :data:`MAX_NESTING` objects and arrays (writers and validators downstream
  have their own limits near 255 levels, and a trace wraps its payloads in a few levels more);
- a number a double cannot hold (``1e400`` would become infinity) and an integer longer than
  Python reads (4300 digits); integers of any other size are kept exact, never made floats;
- a lone surrogate (``"\\ud800"`` with no partner): it is not Unicode text and cannot be written;
- anything that is not JSON: objects whose keys are not strings (YAML ``? [a, b]`` or ``1: x``),
  sets, bytes, timestamps, NaN and infinities (YAML ``.nan``, ``.inf``).
"""

from __future__ import annotations

import math
from typing import Any

MAX_NESTING = 100
"""Objects and arrays inside one another, at most. Real traces nest about a dozen levels (the deepest
file in a survey of twenty real exports: 12); 100 leaves room for payloads that are themselves JSON
text, parsed once more on import, within the 255 levels orjson and pydantic write."""

TOO_DEEP = f"nested too deeply (more than {MAX_NESTING} levels of objects and arrays)"


class ValueProblem(ValueError):
    """A value the reading policy refuses; ``path`` is the field path (``a.b[3]``) or ''."""

    def __init__(self, message: str, path: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.path = path


def _path(chain: tuple | None) -> str:
    parts: list[Any] = []
    while chain is not None:
        chain, key = chain
        parts.append(key)
    out = ""
    for key in reversed(parts):
        out += f"[{key}]" if isinstance(key, int) else (f".{key}" if out else str(key))
    return out


def encodes_as_utf8(text: str) -> bool:
    """False when ``text`` holds a lone surrogate: it has no UTF-8 form, so it cannot be written."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_json_value(value: Any, *, check_text: bool = True) -> None:
    """Raise :class:`ValueProblem` when ``value`` breaks the reading policy (see the module doc).

    Args:
        value: a value as a parser built it (dicts, lists, strings, numbers, booleans, None).
        check_text: also look for lone surrogates in every string (skip it when the source text
            cannot hold any, e.g. JSON text without a ``\\ud8..``-``\\udf..`` escape).
    """
    stack: list[tuple[Any, int, tuple | None]] = [(value, 0, None)]
    while stack:
        item, depth, chain = stack.pop()
        if isinstance(item, dict):
            if depth >= MAX_NESTING:
                raise ValueProblem(TOO_DEEP)
            for key, inner in item.items():
                if not isinstance(key, str):
                    raise ValueProblem(f"key {key!r} is not a string (JSON keys are text; quote it)",
                                       _path(chain))
                if check_text and not encodes_as_utf8(key):
                    raise ValueProblem(f"key {key!r} holds a lone surrogate, which is not Unicode text",
                                       _path(chain))
                stack.append((inner, depth + 1, (chain, key)))
        elif isinstance(item, list):
            if depth >= MAX_NESTING:
                raise ValueProblem(TOO_DEEP)
            stack.extend((inner, depth + 1, (chain, i)) for i, inner in enumerate(item))
        elif isinstance(item, str):
            if check_text and not encodes_as_utf8(item):
                raise ValueProblem("text holds a lone surrogate (e.g. \\ud800 without its partner), "
                                   "which is not Unicode text", _path(chain))
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise ValueProblem(f"{item} is not a JSON number", _path(chain))
        elif item is None or isinstance(item, bool | int):
            continue
        else:
            raise ValueProblem(f"a {type(item).__name__} is not a JSON value", _path(chain))


def finite_float(text: str) -> float:
    """A JSON number's float, refusing one a double cannot hold (json's ``parse_float`` hook)."""
    number = float(text)
    if not math.isfinite(number):
        raise ValueProblem(f"number {text[:40]} is too large for a double; write it as a string to keep it")
    return number
