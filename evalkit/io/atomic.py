"""Atomic file writes: write a temporary file beside the target, flush it to disk, then rename.

A reader never sees a half-written file, and a crash leaves the previous version intact.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO


def _default_mode(target: Path) -> int:
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


@contextlib.contextmanager
def atomic_writer(path: str | Path, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO]:
    """Open a temporary file for writing that replaces ``path`` only when the block succeeds.

    Args:
        path: the file to write; its folder is created when missing.
        mode: ``"w"`` for text or ``"wb"`` for bytes.
        encoding: text encoding (ignored for bytes).
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        os.chmod(tmp, _default_mode(target))
        binary = "b" in mode
        with os.fdopen(fd, mode, encoding=None if binary else encoding,
                       newline=None if binary else "") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically."""
    with atomic_writer(path, "wb") as fh:
        fh.write(data)


def atomic_write_text(path: str | Path, text: str) -> None:
    """Replace ``path`` with UTF-8 ``text`` atomically (newlines written as given)."""
    with atomic_writer(path, "w") as fh:
        fh.write(text)
