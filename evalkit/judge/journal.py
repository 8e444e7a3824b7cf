"""The judge run's journal: one JSONL record per finished (criterion, trace, repeat), appended as it lands.

It follows the reading policy of :mod:`evalkit.io.append_only` (strict JSON per line, ``FILE:LINE`` on
a bad record, a *final* line cut short by an interrupted write is left out and reported, then dropped
before the next append), with the store's own test of what a cut-off line is
(:func:`~evalkit.io.append_only.is_cut_off_record`): a complete record the strict reader refuses (a
duplicate key) is an error in both, never a line "cut off". Appending differs on purpose: ``append_batch`` copies the whole store per
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
from evalkit.io.append_only import CutOffLine, is_cut_off_record
from evalkit.io.strict_json import loads_strict
from evalkit.judge.reply_cap import DEFAULT_MAX_TOKENS

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
                if not complete and is_cut_off_record(body):
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
            if not is_cut_off_record(last):
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


def journal_header(provider: Any) -> dict[str, Any]:
    """The journal's first record: the judge pinned for the whole run (C-PIN).

    Provider, model, temperature, and the reply's token cap (``maxTokens``) for providers that send one:
    a run resumed with any of them changed would mix two judges' verdicts in one file.
    """
    pin: dict[str, Any] = {"model": provider.model, "provider": provider.name,
                           "temperature": float(provider.temperature)}
    max_tokens = getattr(provider, "max_tokens", None)
    if max_tokens is not None:
        pin["maxTokens"] = int(max_tokens)
    return {"judgeJournal": pin}


_PIN_FLAGS = {"provider": "--provider", "model": "--model", "maxTokens": "--max-tokens"}


def check_journal_header(record: dict[str, Any], header: dict[str, Any], path: str | Path, line: int) -> None:
    """Refuse to resume a journal that another judge wrote.

    Raises:
        InputError: the pins differ; the message names each field that differs, both values, and the way out.
    """
    if record == header:
        return
    was, now = record.get("judgeJournal") or {}, header["judgeJournal"]
    # A journal written before the cap was recorded was written at the default cap (as replay keys are).
    if isinstance(was, dict) and "maxTokens" not in was and now.get("maxTokens") == DEFAULT_MAX_TOKENS \
            and was == {k: v for k, v in now.items() if k != "maxTokens"}:
        return
    fields = sorted(set(was) | set(now))
    changes = "; ".join(f"{k} {was.get(k, 'not recorded')!r} in the journal, {now.get(k, 'not sent')!r} now"
                        for k in fields if was.get(k) != now.get(k))
    hints = [_PIN_FLAGS[k] for k in fields if k in _PIN_FLAGS and was.get(k) != now.get(k) and k in was]
    undo = f"rerun with the journal's {' and '.join(hints)}, " if hints else ""
    raise InputError(f"this journal is of another judge ({changes}): {undo}pass another --journal, or delete "
                     "it to start over", file=str(path), line=line)


@contextlib.contextmanager
def journal_lock(path: str | Path) -> Iterator[None]:
    """Hold an exclusive lock beside the journal, so two runs never write one journal at once; the lock file
    is removed when the run ends (a killed run's is left, and the next run takes it over).

    Raises:
        InputError: another process holds the lock.
    """
    if fcntl is None:
        yield
        return
    lock = Path(f"{path}.lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise InputError("another judge run is writing this journal", file=str(path)) from None
        try:  # the file locked must still be the one at the path: a run ending now removes its lock file
            if os.stat(lock).st_ino == os.fstat(fd).st_ino:
                break
        except FileNotFoundError:
            pass
        os.close(fd)
    try:
        yield
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(lock)  # while still held: a run waiting on this inode sees it gone and opens a new one
        os.close(fd)  # releases the lock; the kernel releases it too if the process dies
