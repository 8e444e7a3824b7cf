"""Tree digests: one sha256 over a folder's regular files, framed so no two trees can collide.

The framing (Taskrail's, with evalkit's own domain names) is::

    sha256(domain || 0x00 || for each file, sorted by its slash relpath as UTF-8 bytes:
           relpath || 0x00 || decimal(len) || 0x00 || bytes || 0x00)

A domain names what is digested (a skill set, a fixture, an arm's raw evidence...), so the digest of
a fixture can never be mistaken for the digest of a skill with the same bytes. Files are read in
chunks of :data:`CHUNK` bytes into one reused buffer: memory does not grow with file size.

Only regular files and folders are digested: a symlink, a FIFO, a socket or a device anywhere in the
tree, or a name that is not UTF-8, is refused with an :class:`~evalkit.errors.InputError` naming the
path, never skipped (a skipped file would let two different trees share a digest).
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable
from pathlib import Path

from evalkit.errors import InputError

CHUNK = 1 << 20
"""Bytes read at a time (1 MiB)."""

DOMAINS: dict[str, str] = {name: f"evalkit-skill-eval-{name}-v1" for name in (
    "skill-set", "skill", "fixtures", "case", "raw", "product", "sandbox")}
"""Every digest domain, by short name: ``DOMAINS["fixtures"] == "evalkit-skill-eval-fixtures-v1"``."""

Exclude = Callable[[str], bool]
"""Called with a slash relpath (of a folder or a file); True leaves it (and all below it) out."""


def bytes_sha256(data: bytes) -> str:
    """The sha256 hex digest of ``data``."""
    return hashlib.sha256(data).hexdigest()


def file_sha256(path: str | Path) -> str:
    """The sha256 hex digest of one regular file, streamed.

    Raises:
        InputError: the file is missing, unreadable, a symlink or not a regular file.
    """
    digest = hashlib.sha256()
    _feed_file(digest, Path(path), bytearray(CHUNK), None)
    return digest.hexdigest()


def tree_files(root: str | Path, exclude: Exclude | None = None) -> list[tuple[str, Path]]:
    """Every regular file below ``root`` as ``(slash relpath, path)``, sorted by relpath's UTF-8 bytes.

    Args:
        root: the folder to list (itself followed if it is a symlink; nothing below it is).
        exclude: optional filter on relpaths; a folder it excludes is not entered.

    Raises:
        InputError: ``root`` is not a folder, or the tree holds a symlink, a special file or a
            non-UTF-8 name (the path is named).
    """
    top = Path(root)
    if not top.is_dir():
        raise InputError("cannot digest: not a folder", file=str(top))
    found: list[tuple[bytes, str, Path]] = []
    pending: list[tuple[str, Path]] = [("", top)]
    while pending:
        prefix, folder = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError as exc:
            raise InputError(f"cannot digest: {exc.strerror or exc}", file=str(folder)) from None
        for entry in entries:
            path = Path(entry.path)
            try:
                name = entry.name.encode("utf-8")
            except UnicodeEncodeError:
                raise InputError("cannot digest: the file name is not valid UTF-8", file=str(path)) from None
            rel = prefix + entry.name
            if exclude is not None and exclude(rel):
                continue
            mode = entry.stat(follow_symlinks=False).st_mode
            if stat.S_ISDIR(mode):
                pending.append((rel + "/", path))
            elif stat.S_ISREG(mode):
                found.append((prefix.encode("utf-8") + name, rel, path))
            else:
                raise InputError(f"cannot digest: {_kind(mode)} is not allowed in a digested tree; "
                                 "only regular files and folders are", file=str(path))
    found.sort(key=lambda item: item[0])
    return [(rel, path) for _, rel, path in found]


def tree_digest(root: str | Path, domain: str, exclude: Exclude | None = None) -> str:
    """The domain-separated digest of every regular file below ``root``.

    Args:
        root: the folder.
        domain: the full domain string, e.g. ``DOMAINS["fixtures"]``.
        exclude: optional filter on relpaths (e.g. :func:`outside_git` for a product tree).

    Returns:
        The sha256 hex digest.

    Raises:
        InputError: as :func:`tree_files`, or a file that changes size while it is read.
    """
    digest = hashlib.sha256(domain.encode("utf-8") + b"\x00")
    buffer = bytearray(CHUNK)
    for rel, path in tree_files(root, exclude):
        digest.update(rel.encode("utf-8") + b"\x00")
        _feed_file(digest, path, buffer, rel)
    return digest.hexdigest()


def outside_git(rel: str) -> bool:
    """An :data:`Exclude` that leaves out Git's own state: the ``.git`` folder at the top."""
    return rel == ".git" or rel.startswith(".git/")


def _feed_file(digest: hashlib._Hash, path: Path, buffer: bytearray, framed: str | None) -> None:
    """Stream a file into ``digest``; with ``framed`` (its relpath), add ``len || 0x00`` before and
    ``0x00`` after the bytes, checking the length did not change while reading."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        reason = "it is a symlink" if os.path.islink(path) else (exc.strerror or str(exc))
        raise InputError(f"cannot digest: {reason}", file=str(path)) from None
    with os.fdopen(fd, "rb", buffering=0) as fh:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputError(f"cannot digest: it is {_kind(info.st_mode)}, not a regular file", file=str(path))
        if framed is not None:
            digest.update(str(info.st_size).encode("ascii") + b"\x00")
        view = memoryview(buffer)
        total = 0
        while True:
            count = fh.readinto(buffer)
            if not count:
                break
            digest.update(view[:count])
            total += count
        if framed is not None:
            if total != info.st_size:
                raise InputError(f"cannot digest: the file changed while it was read ({info.st_size} bytes "
                                 f"announced, {total} read)", file=str(path))
            digest.update(b"\x00")


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISLNK, "a symlink"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "a special file"
