"""Re-reading a trace file's value with integers kept exact, for ids that JSON parsing made floats."""

from __future__ import annotations

import json
from typing import Any

from evalkit.traces.source import SourceValue

__all__ = ["reread_exact"]


def reread_exact(sv: SourceValue, cache: dict[str, Any]) -> SourceValue | None:
    """The value re-read with the standard json module, which keeps integers beyond 64 bits exact.

    orjson (used by ``iter_source_values``) turns such integers into floats, which breaks the
    decimal trace ids of any-agent exports.

    Args:
        sv: the value as first read (its file, line and index say where to find it again).
        cache: file -> its lines or parsed document, shared over calls so each file is read once.

    Returns:
        The value re-read, or None when the file cannot be read again.
    """
    try:
        if sv.line is not None:
            if sv.file not in cache:
                with open(sv.file, "rb") as fh:
                    cache[sv.file] = fh.read().splitlines()
            value = json.loads(cache[sv.file][sv.line - 1])
        else:
            if sv.file not in cache:
                with open(sv.file, "rb") as fh:
                    cache[sv.file] = json.loads(fh.read())
            value = cache[sv.file] if sv.index is None else cache[sv.file][sv.index]
    except (OSError, ValueError, IndexError, KeyError, TypeError):
        return None
    return SourceValue(value, sv.file, sv.line, sv.index)
