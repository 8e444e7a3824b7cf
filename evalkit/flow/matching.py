"""Which produced values occur in which consumer texts: one Aho-Corasick scan, shared prefixes reused.

Checking every value against every later input costs values x inputs x input length. An Aho-Corasick
automaton over all values finds every value in one pass over a text. That alone is not enough on
long-context traces, where each model call's input repeats the whole conversation so far: the
same long prefix would be scanned again for every call. So each long text is compared with the
recent texts that start the same way; the values found in their common prefix are taken over, and
only the rest of the text is scanned.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

import ahocorasick

from evalkit.errors import InputError

REUSE_MIN_PREFIX = 2048
"""A shared prefix shorter than this is rescanned: taking over its values would cost about as much."""

_HEAD_LEN = 64
"""Texts are grouped by their first characters; two texts can share a long prefix only within a group."""

_CANDIDATES = 4
"""How many recent texts of a group are compared, so interleaved conversations each find their own."""

_GROUPS = 64
"""How many groups are remembered (the least recently used is forgotten), so memory stays bounded."""


@dataclass(slots=True)
class Occurrences:
    """The values found in one text (shared with later texts: do not modify)."""

    text: str
    first_ends: list[int]
    """Where each found value's first occurrence ends, ascending."""
    ids: list[int]
    """The found values' ids, in the order of ``first_ends``."""
    id_set: set[int]


def common_prefix_len(a: str, b: str) -> int:
    """The length of the longest common prefix of two strings, compared block by block in C."""
    n = min(len(a), len(b))
    lo, step = 0, 256
    while lo < n:
        hi = min(n, lo + step)
        if a[lo:hi] != b[lo:hi]:
            break
        lo, step = hi, step * 2
    else:
        return n
    # Invariant: a[:lo] == b[:lo] and a[lo:hi] != b[lo:hi].
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid
    return lo


class ValueFinder:
    """Finds, for text after text, which of a fixed set of values occur in it.

    Args:
        values: distinct, non-empty strings; a value's id is its position in this sequence.
    """

    def __init__(self, values: Sequence[str]) -> None:
        self._automaton: ahocorasick.Automaton | None = None
        self._longest = max((len(v) for v in values), default=0)
        if values:
            automaton = ahocorasick.Automaton()
            for vid, value in enumerate(values):
                if not value:
                    raise InputError(f"values[{vid}]: an empty value occurs everywhere; it cannot be found, "
                                     "so leave empty values out before matching")
                automaton.add_word(value, vid)
            automaton.make_automaton()
            self._automaton = automaton
        self._recent: dict[str, deque[Occurrences]] = {}

    def _scan(self, found: Occurrences, start: int) -> Occurrences:
        """Add the values that first occur in ``found.text`` at or after ``start``."""
        assert self._automaton is not None
        id_set, first_ends, ids = found.id_set, found.first_ends, found.ids
        for end, vid in self._automaton.iter(found.text, start):
            if vid not in id_set:
                id_set.add(vid)
                first_ends.append(end)
                ids.append(vid)
        return found

    def _best_earlier(self, text: str, head: str) -> tuple[Occurrences | None, int]:
        best, best_len = None, 0
        for earlier in reversed(self._recent.get(head, ())):
            shared = common_prefix_len(earlier.text, text)
            if shared > best_len:
                best, best_len = earlier, shared
                if shared >= len(text) // 2:  # the usual case, the conversation so far: look no further
                    break
        return best, best_len

    def find(self, text: str) -> Occurrences:
        """The values that occur in ``text``."""
        if self._automaton is None:
            return Occurrences(text, [], [], set())
        if len(text) < REUSE_MIN_PREFIX:
            return self._scan(Occurrences(text, [], [], set()), 0)
        head = text[:_HEAD_LEN]
        earlier, shared = self._best_earlier(text, head)
        if earlier is None or shared < REUSE_MIN_PREFIX:
            found = self._scan(Occurrences(text, [], [], set()), 0)
        else:
            # Values whose first occurrence ends inside the shared prefix occur here too, and no other
            # value occurs inside it. A value that ends past the prefix starts at most longest - 1
            # characters before the prefix's end, so the scan starts there.
            keep = bisect_left(earlier.first_ends, shared)
            if keep == len(earlier.ids):
                found = Occurrences(text, earlier.first_ends.copy(), earlier.ids.copy(),
                                    earlier.id_set.copy())
            else:
                ids = earlier.ids[:keep]
                found = Occurrences(text, earlier.first_ends[:keep], ids, set(ids))
            self._scan(found, max(0, shared - self._longest + 1))
        recent = self._recent.pop(head, None) or deque(maxlen=_CANDIDATES)
        recent.append(found)
        self._recent[head] = recent
        if len(self._recent) > _GROUPS:
            del self._recent[next(iter(self._recent))]
        return found
