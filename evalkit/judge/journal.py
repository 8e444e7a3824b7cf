"""The judge run's journal: one JSONL record per finished (criterion, trace, repeat), appended as it lands.

It follows the reading policy of :mod:`evalkit.io.append_only` (strict JSON per line, ``FILE:LINE`` on
a bad record, a *final* line cut short by an interrupted write is left out and reported, then dropped
before the next append). Appending differs on purpose: ``append_batch`` copies the whole store per
batch (its docstring: fine for labels, not for logs of millions of records), while a judge run appends
thousands of small records while calls are in flight. Here each batch of whole lines is written with
one ``O_APPEND`` write and ``fsync``: a process killed at any point (``kill -9``) leaves every earlier
line intact and at most the last line cut short, which the next reader drops. Reading streams line
by line, so resuming a large run does not hold the journal in memory.

:func:`append_lines` is the one place that writes; switching it to ``append_batch`` is a one-line change.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from evalkit.errors import InputError, StrictJSONError
from evalkit.io.append_only import CutOffLine
from evalkit.io.strict_json import loads_strict

try:
    import fcntl
except ImportError:  # pragma: no cover - not on Windows: no journal lock there
    fcntl = None  # type: ignore[assignment]


def iter_journal(path: str | Path, *, cut_off: list[CutOffLine] | None = None) -> Iterator[tuple[int, Any]]:
    """Every record with its line number, streamed; a cut-off final line is left out (and put in ``cut_off``).

    Raises:
        InputError: a line that is not strict JSON (other than a cut-off final line), as ``FILE:LINE``.
    """
    file = str(path)
    if not os.path.lexists(path):
        return
    with open(path, "rb") as fh:
        lineno = 0
        for raw in fh:
            lineno += 1
            complete = raw.endswith(b"\n")
            body = raw.rstrip(b"\r\n")
            if not body.strip():
                continue
            try:
                value = loads_strict(body, file=file, line=lineno)
            except StrictJSONError:
                if not complete and body.lstrip().startswith(b"{"):
                    if cut_off is not None:
                        cut_off.append(CutOffLine(lineno, len(raw)))
                    return
                raise
            yield lineno, value


def drop_cut_off_tail(path: str | Path) -> CutOffLine | None:
    """Remove a final line left unfinished by an interrupted write (checked from the file's end only)."""
    if not os.path.lexists(path):
        return None
    with open(path, "rb+") as fh:
        size = fh.seek(0, os.SEEK_END)
        if size == 0:
            return None
        chunk = 1 << 16
        start = max(0, size - chunk)
        fh.seek(start)
        tail = fh.read()
        if tail.endswith(b"\n"):
            return None
        while b"\n" not in tail and start > 0:  # a very long final line
            start = max(0, start - chunk)
            fh.seek(start)
            tail = fh.read()
        last = tail.rsplit(b"\n", 1)[-1]
        try:
            loads_strict(last)
        except StrictJSONError:
            if not last.lstrip().startswith(b"{"):
                raise InputError("final line is neither a record nor a cut-off record", file=str(path)) from None
            fh.truncate(size - len(last))
            fh.flush()
            os.fsync(fh.fileno())
            return CutOffLine(-1, len(last))
        fh.write(b"\n")  # a complete record without its line break (a hand-edited file)
        return None


def append_lines(path: str | Path, lines: Sequence[str]) -> None:
    """Append whole lines (each ending in ``\\n``) in one write, then flush them to disk."""
    if not lines:
        return
    data = "".join(lines).encode("utf-8")
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def journal_lock(path: str | Path) -> Iterator[None]:
    """Hold an exclusive lock beside the journal, so two runs never write one journal at once.

    Raises:
        InputError: another process holds the lock.
    """
    if fcntl is None:
        yield
        return
    lock = Path(f"{path}.lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock, os.O_WRONLY | os.O_CREAT, 0o666)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InputError("another judge run is writing this journal", file=str(path)) from None
        yield
    finally:
        os.close(fd)  # releases the lock; the kernel releases it too if the process dies
