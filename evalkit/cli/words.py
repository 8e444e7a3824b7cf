"""Small helpers for the sentences commands print, shared by every command group."""

from __future__ import annotations


def plural(n: int, word: str) -> str:
    """``1 trace``, ``2 traces``: a count with its noun.

    Args:
        n: the count.
        word: the singular noun; an ``s`` is added for any count but one.
    """
    return f"{n} {word}{'' if n == 1 else 's'}"
