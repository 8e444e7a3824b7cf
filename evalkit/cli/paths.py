"""Checks on the paths a command is given, made before it reads or writes anything."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from evalkit.errors import InputError


def _same_file(a: Path, b: Path) -> bool:
    """One file under two names: the same path once links are resolved, or the same inode (a hard link)."""
    if a.resolve() == b.resolve():
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet): then they are not one file
        return False


def refuse_output_over_input(out: str | Path, inputs: Iterable[tuple[str, str | Path | None]],
                             option: str = "--out") -> None:
    """Refuse an output that is one of the command's inputs: writing it would replace what is being read.

    Args:
        out: the file the command writes.
        inputs: ``(what, path)`` for every file the command reads (``what`` names it as the user gave
            it, ``TRACES`` or ``--verdicts``); None paths (options not given) are skipped.
        option: how the output was named on the command line.

    Raises:
        InputError: naming the output and the input it is.
    """
    target = Path(out)
    for what, path in inputs:
        if path is not None and _same_file(target, Path(path)):
            raise InputError(f"{option} is also the input {what} ({path}): writing it would replace the file "
                             "this command reads; write to another file", file=str(out))
