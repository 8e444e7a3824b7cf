"""What a failed read or write of the file system means, and what to do about it, in one message.

A full disk, a read-only mount, a quota, a missing permission: each reaches evalkit as an ``OSError``
with an ``errno``. :func:`os_problem` turns one into an :class:`~evalkit.errors.InputError` naming the
path and the fix; the command line's one handler (:func:`evalkit.cli.main.main`) and the atomic writer
use it, so no command ends in a traceback for a disk that is full or read-only.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from evalkit.errors import InputError

_FIXES = {
    errno.ENOSPC: "the disk is full: free space on it, or write elsewhere (--out on another disk)",
    errno.EDQUOT: "your disk quota is used up: free space, or write elsewhere",
    errno.EFBIG: "the file is larger than its file system allows: write elsewhere",
    errno.EROFS: "the file system is read-only: write elsewhere (a folder on a writable disk)",
    errno.EACCES: "no permission: write elsewhere, or ask for write access to that folder",
    errno.EPERM: "not permitted: write elsewhere, or ask for write access to that folder",
}
"""The fix for each error a file system gives when it will not take a write."""

WRITE_REFUSALS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS})
"""The errors that can only be about a write: raised while a command writes a file, they are about that file."""


def os_problem(exc: OSError, path: str | Path | None = None, *, doing: str = "") -> InputError:
    """``exc`` as a located error saying what to do.

    Args:
        exc: the error the system raised.
        path: the file it is about, when the caller knows it better than the error does (a write to an open
            file carries no name).
        doing: what failed, e.g. ``"cannot write"``; default: the system's words alone.
    """
    where = path if path is not None else exc.filename
    words = exc.strerror or str(exc)
    fix = _FIXES.get(exc.errno or 0)
    message = (f"{doing}: {words}" if doing else words) + (f"; {fix}" if fix else "")
    return InputError(message, file=None if where is None else os.fsdecode(where))


def read_only_folder(folder: str | Path) -> bool:
    """True when ``folder`` lies on a file system mounted read-only (where the system can tell)."""
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return False
