"""Opening an input file: only a regular file is read; a FIFO, a device or a folder is refused at once.

Opening a FIFO (a named pipe) for reading waits for a writer that may never come, so evalkit would
hang without a word; a device can stream forever. The file is checked before it is opened.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from evalkit.errors import InputError

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def check_regular(path: str | Path) -> None:
    """Raise an InputError naming the file unless ``path`` is a regular file that exists."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror or exc}", file=str(path)) from None
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
        raise InputError(f"cannot read file: it is {kind}, not a regular file; save the data to a file first",
                         file=str(path))


def open_regular(path: str | Path) -> BinaryIO:
    """Open a regular file for reading bytes.

    Raises:
        InputError: the file is missing, unreadable, or not a regular file (FIFO, device, folder).
    """
    check_regular(path)
    try:
        return open(path, "rb")  # noqa: SIM115 - the caller closes it (with ... as fh)
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror or exc}", file=str(path)) from None
