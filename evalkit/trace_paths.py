"""Where a cited value lives in a trace: ``a.b[2].c`` paths, and whether a value contains cited text.

A verdict's ref (``obs``, ``path``, ``value``) is checked the same way whether a code check wrote it or a
judge did, so the reading of paths and the comparison of cited text are here once, for
:mod:`evalkit.checks` and :mod:`evalkit.judge` alike.
"""

from __future__ import annotations

import json
import re
from typing import Any

from evalkit.io.canonical import compact_sorted_json

_SEGMENT = re.compile(r"([^.\[\]]+)|\[(\d+)\]")

MISSING = object()
"""What reading returns when the path is not present (distinct from an explicit ``null``)."""


def normalize(text: str) -> str:
    """Whitespace collapsed to single spaces, trimmed, lower-cased: how cited and cited-in text compare."""
    return " ".join(text.split()).lower()


def normalize_exact(text: str) -> str:
    """Whitespace collapsed to single spaces and trimmed, case kept: the seed's "whitespace-normalised exact"
    match of a cited value (and how a page's text is compared with a computed value)."""
    return " ".join(text.split())


def parse_path(path: str) -> list[str | int]:
    """``a.b[2].c`` as ``["a", "b", 2, "c"]``; an empty path (or ``.``) is the root.

    Raises:
        ValueError: the path is not dot segments and ``[n]`` indexes.
    """
    if path in ("", "."):
        return []
    steps: list[str | int] = []
    at = 0
    while at < len(path):
        if path[at] == "." and steps:
            at += 1
        match = _SEGMENT.match(path, at)
        if not match:
            raise ValueError(f"path {path!r} is not dot segments and [n] indexes (at character {at})")
        steps.append(match.group(1) if match.group(1) is not None else int(match.group(2)))
        at = match.end()
    return steps


def step_into(value: Any, step: str | int) -> Any:
    """One step of a path: a key of an object or an index of a list, or :data:`MISSING`.

    A string that holds JSON text is read first, since tool outputs often are JSON text and a path may
    go on into it.
    """
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        try:
            value = json.loads(value)
        except ValueError:
            return MISSING
    if isinstance(step, int):
        return value[step] if isinstance(value, list) and -len(value) <= step < len(value) else MISSING
    return value.get(step, MISSING) if isinstance(value, dict) else MISSING


def texts_of(value: Any) -> list[str]:
    """The serializations a cited value may be found in: the JSON text and every string inside."""
    if isinstance(value, str):
        return [value]
    out = [compact_sorted_json(value)]
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            out.append(item)
    return out


def contains(value: Any, cited: str) -> bool:
    """Whether ``cited`` (normalised) is contained in ``value`` (serialized and normalised)."""
    needle = normalize(cited)
    return any(needle in normalize(text) for text in texts_of(value))


def _bounded(haystack: str, needle: str) -> bool:
    """Whether ``needle`` occurs in ``haystack`` without cutting a word at either end."""
    start = haystack.find(needle)
    while start >= 0:
        end = start + len(needle)
        before = haystack[start - 1] if start else " "
        after = haystack[end] if end < len(haystack) else " "
        if not (needle[0].isalnum() and before.isalnum()) and not (needle[-1].isalnum() and after.isalnum()):
            return True
        start = haystack.find(needle, start + 1)
    return False


def contains_exact(value: Any, cited: str) -> bool:
    """Whether ``cited`` occurs verbatim in ``value`` (serialized): whitespace collapsed on both sides, case
    kept, and not cutting a word at either end. How a verdict's ref is re-resolved (the seed's
    "whitespace-normalized EXACT value match"): ``'Refund req'`` does not resolve against ``"Refund
    request"`` (it cuts a word), nor ``'refund request'`` (another case)."""
    needle = normalize_exact(cited)
    return bool(needle) and any(_bounded(normalize_exact(text), needle) for text in texts_of(value))
