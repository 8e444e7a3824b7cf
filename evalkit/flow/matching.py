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
from dataclasses import dataclass, field

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

KEY_LEN = 48
"""The automaton holds each value's first characters only; a hit is checked against the whole value.
Produced values run to kilobytes (retrieved records, replies): an automaton of whole values costs more
to build than every scan it then makes, and a 48-character start rarely occurs without the rest."""


@dataclass(slots=True)
class Occurrences:
    """The values found in one text (shared with later texts: do not modify)."""

    text: str
    first_ends: list[int]
    """Where each found value's first occurrence ends, ascending."""
    ids: list[int]
    """The found values' ids, in the order of ``first_ends``."""
    id_set: set[int]
    long_at: list[int] = field(default_factory=list)
    """Where each occurrence of the key of a value longer than its key starts, ascending: a later text
    sharing this one's prefix checks from them whether such a value runs on past the shared part."""
    long_keys: list[tuple] = field(default_factory=list)
    """The automaton's entry of each key in ``long_at``."""


def common_prefix_len(a: str, b: str) -> int:
    """The length of the longest common prefix of two strings, compared block by block in C."""
    n = min(len(a), len(b))
    lo, step = 0, 256
    # The usual pair, a conversation and the same one a turn later, parts near the end of the shorter:
    # one comparison of the bulk (copying it once) before the search.
    if n > 4 * step and a[: n - step] == b[: n - step]:
        lo = n - step
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
            # key -> the ids of the values starting with it (several values may share their first characters)
            keyed: dict[str, list[int]] = {}
            for vid, value in enumerate(values):
                if not value:
                    raise InputError(f"values[{vid}]: an empty value occurs everywhere; it cannot be found, "
                                     "so leave empty values out before matching")
                keyed.setdefault(value[:KEY_LEN], []).append(vid)
            automaton = ahocorasick.Automaton()
            for key, (vid, *others) in keyed.items():
                long = any(len(values[v]) > len(key) for v in (vid, *others))
                automaton.add_word(key, (len(key), vid, values[vid], [(o, values[o]) for o in others], long))
            automaton.make_automaton()
            self._automaton = automaton
        self._recent: dict[str, deque[Occurrences]] = {}

    def _scan(self, found: Occurrences, start: int, new: list[tuple[int, int]] | None = None) -> Occurrences:
        """Add the values that first occur in ``found.text`` at or after ``start`` (and those in ``new``,
        ``(end, id)`` of values found before ``start``)."""
        assert self._automaton is not None
        text, id_set, long_at, long_keys = found.text, found.id_set, found.long_at, found.long_keys
        new = [] if new is None else new  # (end of the first occurrence, id)
        for key_end, entry in self._automaton.iter(text, start):
            key_len, vid, value, others, long = entry
            at = key_end - key_len + 1
            if long:
                long_at.append(at)
                long_keys.append(entry)
            # Most hits are a value found already; a key is rarely shared (``others`` usually empty).
            if vid not in id_set and (len(value) == key_len or text.startswith(value, at)):
                id_set.add(vid)
                new.append((at + len(value) - 1, vid))
            for vid, value in others:
                if vid not in id_set and text.startswith(value, at):
                    id_set.add(vid)
                    new.append((at + len(value) - 1, vid))
        # Hits come in the order their keys end, a value's first occurrence first; by where values end:
        new.sort()
        found.first_ends.extend(end for end, _ in new)
        found.ids.extend(vid for _, vid in new)
        return found

    def _resume(self, found: Occurrences, earlier: Occurrences, shared: int) -> None:
        """Add to ``found`` (the values kept from ``earlier``) those of its text that end past the
        ``shared`` prefix.

        A value that ends past the prefix and is no longer than a key starts at most ``KEY_LEN - 1``
        characters before the prefix's end, as does a longer value whose key does: the scan starts
        there. A longer value whose key lies wholly inside the prefix has that key where ``earlier``
        has it: its recorded key occurrences there are checked, so the scan need not go back by the
        longest value (kilobytes) on every text.
        """
        start = max(0, shared - KEY_LEN + 1)
        inside = bisect_left(earlier.long_at, start)  # keys starting before the scan: wholly in the prefix
        found.long_at = earlier.long_at[:inside]
        found.long_keys = earlier.long_keys[:inside]
        text, id_set, runs_on = found.text, found.id_set, []
        for k in range(bisect_left(found.long_at, shared - self._longest + 1), inside):
            at, (_, first_id, first_value, others, _) = found.long_at[k], found.long_keys[k]
            for vid, value in ((first_id, first_value), *others):
                if vid not in id_set and at + len(value) > shared and text.startswith(value, at):
                    id_set.add(vid)
                    runs_on.append((at + len(value) - 1, vid))
        self._scan(found, start, runs_on)

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
            self._resume(found, earlier, shared)
        recent = self._recent.pop(head, None) or deque(maxlen=_CANDIDATES)
        recent.append(found)
        self._recent[head] = recent
        if len(self._recent) > _GROUPS:
            del self._recent[next(iter(self._recent))]
        return found
