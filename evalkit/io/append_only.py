"""Append-only JSONL stores: records are added, never rewritten, and a batch lands whole or not at all.

The annotation store, the test-set ledger and the label/verdict files of ``labels import`` and
``verdicts import`` are such stores; they all read and write through this module, so they all
follow one policy.

Reading. Every line must be a strict JSON record (:func:`evalkit.io.strict_json.loads_strict`) that
is valid for the store's contract; blank lines are skipped. A byte-order mark, a corrupted record in
the middle, garbage: each is an :class:`InputError` naming ``FILE:LINE``. The one exception is an
interrupted write: a *final* line with no line break that starts like a record (``{``) but is not
complete JSON (so a final ``{garbage`` counts as one too: the price of recognising every cut).
evalkit's own appends never leave one (see below); older versions and other tools that append in
place do. Readers leave it out and report it (:attr:`StoreRead.cut_off`); the next append drops it.
A final line without a line break that *is* a complete record is kept (a hand-edited file).

Appending (:func:`append_batch`). The batch is written copy-on-write: the store's bytes as they are,
then the new lines, into an unnamed file in the same folder (``O_TMPFILE`` where the system has it,
else ``.NAME.append``), flushed to disk, then renamed over the store, and the folder is synced. A
reader therefore sees the store before the batch or after it, never part of a batch, and a process
killed at any point (``kill -9``, a full disk) leaves the store as it was. Earlier bytes are copied
as they are; only a cut-off final line is dropped, and the append reports it.

Trade-offs. Each append copies the whole file: fine for stores of human labels and measurements
(megabytes), not for logs of millions of records. The store is replaced by a new file, so a hard
link to it keeps the old content (a symbolic link is followed and its target replaced).

Taking turns. Writers of stores in one folder take turns through an exclusive lock on the folder
(``flock``: per open file, so processes and threads alike wait, and released by the kernel when a
process dies). An import reads the store, leaves out what is there already and appends the rest: it
holds :func:`store_lock` across the three steps, so two imports of one batch at once append it once,
and the second says it found every record there. ``append_batch`` inside that block does not lock again.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from evalkit.errors import InputError, StrictJSONError
from evalkit.io.atomic import default_file_mode
from evalkit.io.canonical import canonical_line
from evalkit.io.regular import open_regular
from evalkit.io.strict_json import loads_strict
from evalkit.io.validation import validate_value

try:
    import fcntl
except ImportError:  # pragma: no cover - not on Windows: appenders do not take turns there
    fcntl = None  # type: ignore[assignment]

M = TypeVar("M", bound=BaseModel)

__all__ = ["Appended", "AppendOnlyStore", "CutOffLine", "StoreRead", "append_batch", "is_cut_off_record",
           "read_store_lines", "read_store_records", "store_lock"]


@dataclass(frozen=True)
class CutOffLine:
    """The final line of a store left unfinished by an interrupted write."""

    line: int
    size: int  # bytes


@dataclass(frozen=True)
class StoreRead(Generic[M]):
    """Every record of a store in file order, and the cut-off final line left out, if any."""

    records: list[M]
    cut_off: CutOffLine | None = None
    lines: list[int] = field(default_factory=list)
    """The line each record is on, in the same order (so a later check can name ``FILE:LINE``)."""


@dataclass(frozen=True)
class Appended:
    """What an append did: records written, and the cut-off final line it dropped, if any."""

    appended: int
    dropped: CutOffLine | None = None


def is_cut_off_record(raw: bytes) -> bool:
    """True when ``raw`` (an unterminated final line that is not valid JSON) looks like a record cut short.

    A record written by evalkit starts with ``{`` and is UTF-8 text; a write cut short keeps that
    start, may end in the middle of a character, and is not JSON even to a lenient parser. Anything
    else (a BOM, garbage, a complete record with duplicate keys or NaN) is not a cut record.
    """
    if not raw.lstrip(b" \t").startswith(b"{"):
        return False
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.end == len(raw) and len(raw) - exc.start < 4  # only the last character is cut
    try:
        json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return True
    return False  # complete JSON that the strict reader refuses: an error, not an interrupted write


def _split(data: bytes) -> tuple[list[bytes], bytes]:
    """The complete lines (without their line break) and the unterminated final part (b"" if none)."""
    lines = data.split(b"\n")
    return lines[:-1], lines[-1]


def _tail(data: bytes, file: str) -> tuple[int, CutOffLine | None]:
    """Where the intact part of ``data`` ends, and the cut-off final line after it, if any.

    Raises:
        StrictJSONError: the unterminated final line is neither a complete record nor a cut one.
    """
    lines, last = _split(data)
    if not last.strip():
        return len(data), None
    try:
        loads_strict(last.rstrip(b"\r"), file=file, line=len(lines) + 1)
    except StrictJSONError:
        if is_cut_off_record(last):
            return len(data) - len(last), CutOffLine(len(lines) + 1, len(last))
        raise
    return len(data), None


def read_store_lines(path: str | Path, *,
                     missing_ok: bool = True) -> tuple[list[tuple[int, Any]], CutOffLine | None]:
    """Every JSON value of a store with its line number, and the cut-off final line left out.

    A missing store is empty when ``missing_ok``, else an error.

    Raises:
        InputError: a line that is not strict JSON (other than a cut-off final line), as FILE:LINE.
    """
    file = str(path)
    if missing_ok and not os.path.lexists(path):
        return [], None
    with open_regular(path) as fh:
        data = fh.read()
    lines, last = _split(data)
    values = []
    for lineno, raw in enumerate(lines, start=1):
        if raw.strip():
            values.append((lineno, loads_strict(raw.rstrip(b"\r"), file=file, line=lineno)))
    _, cut_off = _tail(data, file)
    if last.strip() and cut_off is None:
        values.append((len(lines) + 1, loads_strict(last.rstrip(b"\r"), file=file, line=len(lines) + 1)))
    return values, cut_off


def read_store_records(path: str | Path, model: type[M]) -> StoreRead[M]:
    """Every record of a store as ``model``, in file order (see the module's policy).

    Raises:
        InputError: the first problem, as ``FILE:LINE: field.path: message``.
    """
    values, cut_off = read_store_lines(path)
    records = []
    for lineno, value in values:
        record, problems = validate_value(model, value, file=str(path), line=lineno)
        if problems:
            raise problems[0]
        assert record is not None
        records.append(record)
    return StoreRead(records, cut_off, [lineno for lineno, _ in values])


_held = threading.local()
"""The folders this thread holds the lock of (a second ``flock`` on another descriptor would wait forever)."""


@contextlib.contextmanager
def _folder_lock(folder: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``folder`` so writers of its stores take turns (re-entrant in a thread)."""
    held: set[str] = _held.__dict__.setdefault("folders", set())
    key = os.path.realpath(folder)
    if fcntl is None or key in held:
        yield
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # released by the kernel if the process dies
        held.add(key)
        try:
            yield
        finally:
            held.discard(key)
    finally:
        os.close(fd)


@contextlib.contextmanager
def store_lock(path: str | Path) -> Iterator[None]:
    """Hold the store's lock for a read, a decision and an append (its folder is created when missing).

    Raises:
        InputError: the folder cannot be created or opened.
    """
    folder = Path(os.path.realpath(path)).parent
    with contextlib.ExitStack() as stack:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            stack.enter_context(_folder_lock(folder))
        except OSError as exc:
            raise InputError(f"cannot lock the store's folder: {exc.strerror or exc}", file=str(path)) from None
        yield


def _staging_name(target: Path) -> Path:
    return target.with_name(f".{target.name}.append")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _open_unnamed(folder: Path, mode: int) -> int | None:
    """An unnamed file in ``folder`` (it vanishes if the process dies), or None where unsupported."""
    flag = getattr(os, "O_TMPFILE", None)
    if flag is None:
        return None
    try:
        fd = os.open(folder, flag | os.O_WRONLY, mode)
    except OSError:
        return None
    if not os.path.exists(f"/proc/self/fd/{fd}"):  # naming it later goes through /proc
        os.close(fd)
        return None
    return fd


def _replace(target: Path, data: bytes, mode: int) -> None:
    """Put ``data`` at ``target`` in one rename, after it is on disk."""
    staging = _staging_name(target)
    fd = _open_unnamed(target.parent, mode)
    named = fd is None
    if fd is None:
        fd = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.fchmod(fd, mode)  # the umask applied at creation; keep the store's own mode
        _write_all(fd, data)
        os.fsync(fd)
        if not named:
            # link() would not follow /proc's link to the file; linkat(AT_SYMLINK_FOLLOW) does, and
            # os.link only calls it when a directory fd is given (the path is absolute, so it is unused).
            dfd = os.open(target.parent, os.O_RDONLY)
            try:
                os.link(f"/proc/self/fd/{fd}", staging, src_dir_fd=dfd, follow_symlinks=True)
            finally:
                os.close(dfd)
    finally:
        os.close(fd)
    os.replace(staging, target)
    if fcntl is not None:  # make the rename itself durable
        dfd = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


def append_batch(path: str | Path, records: Sequence[BaseModel | dict[str, Any]]) -> Appended:
    """Append records to a store as canonical JSON lines: all of them or, if interrupted, none.

    The store and its folder are created when missing. Records are models (written with their
    ``to_json_obj()`` when they have one, else ``model_dump(mode="json", by_alias=True)``) or JSON
    objects. A cut-off final line left by an earlier interrupted write is dropped and reported; an
    empty batch writes nothing but still clears what an interrupted append left behind.

    Raises:
        InputError: the store cannot be written, or its unterminated final line is not a cut-off
            record (garbage is never appended after).
    """
    data = "".join(canonical_line(_json_obj(r)) for r in records).encode("utf-8")
    target = Path(os.path.realpath(path))
    file = str(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with _folder_lock(target.parent):
            staging = _staging_name(target)
            if os.path.lexists(staging):
                os.unlink(staging)  # left by an append killed between naming and renaming: never renamed
            if not data:
                return Appended(0)
            old = b""
            if os.path.lexists(target):
                with open_regular(target) as fh:
                    old = fh.read()
            end, cut_off = _tail(old, file)
            kept = old[:end]
            if kept and not kept.endswith(b"\n"):
                kept += b"\n"  # a complete record without its line break (a hand-edited file)
            _replace(target, kept + data, default_file_mode(target))
    except OSError as exc:
        raise InputError(f"cannot append to the store: {exc.strerror or exc}", file=file) from None
    return Appended(len(records), cut_off)


def _json_obj(record: BaseModel | dict[str, Any]) -> Any:
    if isinstance(record, dict):
        return record
    to_json = getattr(record, "to_json_obj", None)
    return to_json() if callable(to_json) else record.model_dump(mode="json", by_alias=True)


class AppendOnlyStore(Generic[M]):
    """An append-only JSONL file of ``model`` records (see the module's policy).

    Args:
        path: the store; created with its folder on the first append.
        model: the contract every line follows.
    """

    def __init__(self, path: str | Path, model: type[M]) -> None:
        self.path = Path(path)
        self.model = model

    def read(self) -> StoreRead[M]:
        """Every record, oldest first, and the cut-off final line left out, if any."""
        return read_store_records(self.path, self.model)

    def append(self, records: Sequence[M]) -> Appended:
        """Append a batch, all of it or none of it."""
        return append_batch(self.path, records)
