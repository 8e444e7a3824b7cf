"""Case ids: content-derived, identical to the seed evaluator's, so suites built by either interoperate.

The seed hashes a JavaScript string, that is its UTF-16 code units (``charCodeAt``): a character outside
the Basic Multilingual Plane is two surrogate units and two hash steps. Hashing the UTF-8 bytes instead
would give other ids for every non-ASCII query.
"""

from __future__ import annotations

from collections.abc import Mapping

FNV_OFFSET = 0x811C9DC5
FNV_PRIME = 0x01000193
TUPLE_SEPARATOR = "\x01"


def fnv1a32(text: str) -> str:
    """FNV-1a 32-bit over the UTF-16 code units of ``text``, as 8 lowercase hex digits.

    Each 16-bit unit is one step: ``h ^= unit; h = (h * prime) mod 2**32``.
    """
    h = FNV_OFFSET
    data = text.encode("utf-16-le", "surrogatepass")
    for i in range(0, len(data), 2):
        h ^= data[i] | (data[i + 1] << 8)
        h = (h * FNV_PRIME) & 0xFFFFFFFF
    return f"{h:08x}"


def tuple_key(case_tuple: Mapping[str, str]) -> str:
    """The canonical form of a tuple: ``k=v`` pairs sorted by dimension name, joined by ``\\x01``."""
    return TUPLE_SEPARATOR.join(f"{k}={case_tuple[k]}" for k in sorted(case_tuple))


def case_id(case_tuple: Mapping[str, str], query: str) -> str:
    """``case-`` + :func:`fnv1a32` of ``tuple_key + "::" + query``: the same case always gets the same id."""
    return "case-" + fnv1a32(tuple_key(case_tuple) + "::" + query)
