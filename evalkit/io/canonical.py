"""Canonical JSON: the one way evalkit writes JSON, so the same data always gives the same bytes.

Keys are sorted at every level, non-ASCII text is kept as is (UTF-8), NaN and Infinity are refused.
Documents use a two-space indent and end with a newline; JSONL records are compact, one per line.
"""

from __future__ import annotations

import json
from typing import Any


def canonical_dumps(obj: Any) -> str:
    """A JSON document: sorted keys, two-space indent, UTF-8 text, final newline."""
    return json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def canonical_line(obj: Any) -> str:
    """One JSONL record: sorted keys, no spaces, UTF-8 text, final newline."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False) + "\n"
