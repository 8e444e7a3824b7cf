"""An input with nothing in it is an error, not a result: a command that read no traces, verdicts or records
would otherwise write an empty file, print zeros and exit 0, and a script would take that for a pass."""

from __future__ import annotations

from pathlib import Path

from evalkit.errors import InputError


def refuse_empty(count: int, *, file: str | Path, what: str, next_step: str) -> None:
    """Raise when ``count`` is 0.

    Args:
        count: how many ``what`` the file held.
        file: the file, named in the error.
        what: what the command needed, in the plural ("verdicts", "traces").
        next_step: what to do about it.

    Raises:
        InputError: ``no WHAT in the file: NEXT_STEP``, naming the file.
    """
    if count == 0:
        raise InputError(f"no {what} in the file: {next_step}", file=str(file))
