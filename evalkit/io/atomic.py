"""Atomic file writes: write a temporary file beside the target, flush it to disk, then rename.

A reader never sees a half-written file, and a crash leaves the previous version intact. The
temporary file is named ``.TARGET.PID.RANDOM.tmp``: it is removed when the write fails or is
interrupted (an exception, Ctrl-C, SIGTERM inside :func:`terminate_as_exit`), and a process killed
outright (kill -9, power loss) leaves one behind that the next write of the same target removes,
once the process that made it is gone.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import sys
import tempfile
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from evalkit.errors import InputError
from evalkit.io.disk_errors import WRITE_REFUSALS, os_problem, read_only_folder


def default_file_mode(target: Path) -> int:
    """The mode a plainly created file would get: the target's own, else 0o666 less the umask.

    ``mkstemp`` creates files readable by the owner only; without this, every file evalkit writes
    would silently lose group and world read permission.
    """
    try:
        return target.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` runs (this one does; one of another user's counts as running)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # the process exists but belongs to someone else
        return True
    return True


def remove_stale_temps(path: str | Path) -> list[Path]:
    """Remove temporary files an interrupted write of ``path`` left behind; returns those removed.

    A temporary file whose process still runs is another write in progress and is left alone; one
    without a process id comes from an older evalkit and is removed.
    """
    target = Path(path)
    prefix = f".{target.name}."
    removed = []
    for name in glob.glob(glob.escape(str(target.parent / prefix)) + "*.tmp"):
        temp = Path(name)
        pid = temp.name[len(prefix):].split(".", 1)[0]
        if pid.isdigit() and process_alive(int(pid)):
            continue
        with contextlib.suppress(OSError):
            temp.unlink()
            removed.append(temp)
    return removed


def remove_dead_work(path: str | Path, kind: str) -> list[Path]:
    """Remove the work folders or files ``.NAME.PID.KIND`` beside ``path`` whose process is gone.

    A command that builds ``path`` in steps stages them in ``.NAME.PID.KIND`` (a partitioned import's
    ``importing`` folder, a cluster run's ``parts``) and removes it when done; one killed outright
    (kill -9) leaves it behind. The next run removes those of dead processes, saying so on stderr,
    and leaves a live process's alone (that run is still going).

    Returns:
        The paths removed.
    """
    target = Path(path)
    prefix, suffix = f".{target.name}.", f".{kind}"
    removed = []
    for name in glob.glob(glob.escape(str(target.parent / prefix)) + "*" + glob.escape(suffix)):
        work = Path(name)
        pid = work.name[len(prefix):-len(suffix)]
        if not pid.isdigit() or process_alive(int(pid)):
            continue
        with contextlib.suppress(OSError):
            if work.is_dir() and not work.is_symlink():
                shutil.rmtree(work)
            else:
                work.unlink()
            removed.append(work)
            print(f"removed {work}: left by an earlier run that was killed (process {pid} is gone)",
                  file=sys.stderr)
    return removed


def replace_folder(built: Path, out: Path, old: Path) -> None:
    """Put the folder ``built`` beside ``out`` in its place: ``out`` is moved aside to ``old``, then removed.

    Two renames in one folder: a process killed between them leaves no ``out`` and a whole ``old``, which
    the next run puts back (see :mod:`evalkit.run_folder`) or removes with its process gone.
    """
    if os.path.lexists(out):
        os.rename(out, old)
        os.rename(built, out)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(built, out)


def check_writable(path: str | Path) -> None:
    """Raise an InputError now, before any work, when ``path`` cannot be written.

    Refused: a folder, a path below an existing file, and a folder evalkit may not write in.
    """
    target = Path(path)
    if target.is_dir():
        raise InputError("cannot write: it is a folder; give a file name", file=str(target))
    folder = target.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise InputError(f"cannot write: {folder} is a file, not a folder", file=str(target))
    if read_only_folder(folder):
        raise InputError(f"cannot write: {folder} is on a read-only file system; write elsewhere (a folder on a "
                         "writable disk)", file=str(target))
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(f"cannot write: no permission to write in {folder}; write elsewhere, or ask for write "
                         "access to that folder", file=str(target))


def _cannot_write(target: Path, exc: OSError) -> InputError:
    return os_problem(exc, target, doing="cannot write")


def _open_temp(target: Path) -> tuple[int, str]:
    """A new temporary file beside ``target`` (its folder made), with the mode ``target`` would get."""
    check_writable(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temps(target)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.{os.getpid()}.", suffix=".tmp", dir=target.parent)
        os.chmod(tmp, default_file_mode(target))
    except OSError as exc:
        raise _cannot_write(target, exc) from None
    return fd, tmp


def _to_disk(fh: IO, target: Path) -> None:
    try:
        fh.flush()
        os.fsync(fh.fileno())
    except OSError as exc:
        raise _cannot_write(target, exc) from None


def _into_place(tmp: str, target: Path) -> None:
    try:
        os.replace(tmp, target)
    except OSError as exc:
        raise _cannot_write(target, exc) from None


def _fdopen(fd: int, mode: str, encoding: str | None) -> IO:
    binary = "b" in mode
    return os.fdopen(fd, mode, encoding=None if binary else encoding, newline=None if binary else "")


@contextlib.contextmanager
def atomic_writer(path: str | Path, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO]:
    """Open a temporary file for writing that replaces ``path`` only when the block succeeds.

    Args:
        path: the file to write; its folder is created when missing.
        mode: ``"w"`` for text or ``"wb"`` for bytes.
        encoding: text encoding (ignored for bytes).

    Raises:
        InputError: ``path`` cannot be written (a folder, below a file, no permission, disk full).
    """
    with atomic_writers([path], mode, encoding) as (fh,):
        yield fh


@contextlib.contextmanager
def atomic_writers(paths: Sequence[str | Path], mode: str = "w",
                   encoding: str | None = "utf-8") -> Iterator[tuple[IO, ...]]:
    """:func:`atomic_writer` for files written together (a result and its sidecars): one temporary file
    each, all replacing their paths only when the block succeeds, the first path last (once it is in
    place, the others are). Their flushes to disk run at the same time: each fsync waits on the disk
    for milliseconds, and one after another they were most of the time a run's end took.

    Raises:
        InputError: a path cannot be written; none of them is replaced then.
    """
    targets = [Path(p) for p in paths]
    temps: list[str] = []
    handles: list[IO] = []
    try:
        try:
            with contextlib.ExitStack() as stack:
                for target in targets:
                    fd, tmp = _open_temp(target)
                    temps.append(tmp)
                    handles.append(stack.enter_context(_fdopen(fd, mode, encoding)))
                yield tuple(handles)
                _all_to_disk(handles, targets)
        except OSError as exc:  # a write, or the close that flushes it, refused by the disk
            if exc.errno not in WRITE_REFUSALS:
                raise  # not about these files (a source that cannot be read): the caller says what
            raise _cannot_write(targets[0], exc) from None
        for tmp, target in reversed(list(zip(temps, targets, strict=True))):
            _into_place(tmp, target)
            temps.remove(tmp)
    except BaseException:
        for tmp in temps:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        raise


def _all_to_disk(handles: list[IO], targets: list[Path]) -> None:
    """Flush and fsync every handle, the others on threads while this one does the first."""
    if len(handles) == 1:
        _to_disk(handles[0], targets[0])
        return
    errors: list[BaseException] = []

    def sync(fh: IO, target: Path) -> None:
        try:
            _to_disk(fh, target)
        except BaseException as exc:  # re-raised below, in the writing thread
            errors.append(exc)

    threads = [threading.Thread(target=sync, args=pair) for pair in zip(handles[1:], targets[1:], strict=True)]
    for thread in threads:
        thread.start()
    sync(handles[0], targets[0])
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically."""
    with atomic_writer(path, "wb") as fh:
        fh.write(data)


def atomic_write_text(path: str | Path, text: str) -> None:
    """Replace ``path`` with UTF-8 ``text`` atomically (newlines written as given)."""
    with atomic_writer(path, "w") as fh:
        fh.write(text)


def atomic_write_lines(path: str | Path, lines: Iterable[str]) -> int:
    """Replace ``path`` with ``lines`` (each ending in its own newline) atomically; returns how many.

    The lines are written as they come, so a large file is never held in memory whole.
    """
    count = 0
    with atomic_writer(path, "w") as fh:
        for line in lines:
            fh.write(line)
            count += 1
    return count


def _exit_on_terminate(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


@contextlib.contextmanager
def terminate_as_exit() -> Iterator[None]:
    """Within the block, SIGTERM ends the process through ``SystemExit``, so writers clean up.

    By default SIGTERM ends Python at once, leaving the temporary file of a write in progress. Only
    the main thread can set a signal handler; elsewhere the block changes nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _exit_on_terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
