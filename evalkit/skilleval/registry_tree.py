"""The files of a skill-eval registry, listed once and refused where they could alias or escape.

A registry is evidence: its digests must mean one set of bytes. So only regular files and folders are
allowed. A symlink could point anywhere (and change between validation and a run), a FIFO or device
has no fixed bytes, a hardlink alias shares its bytes with a file elsewhere that can change them
behind the registry's back, and a name that is not UTF-8 cannot be framed in a tree digest. Each is
reported as a problem naming the path; the walk goes on so every problem is found at once.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from evalkit.errors import InputError

_SPECIAL = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
            (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def shown(path: Path | str) -> str:
    """A path printable whatever its bytes: a name that is not UTF-8 shows its bad bytes escaped."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


@dataclass
class RegistryTree:
    """The accepted entries of a registry, by slash relpath, and the problems met listing them."""

    root: Path
    folders: set[str] = field(default_factory=set)
    files: set[str] = field(default_factory=set)
    refused: set[str] = field(default_factory=set)
    problems: list[InputError] = field(default_factory=list)
    names: dict[str, list[str]] = field(default_factory=dict)

    def children(self, folder: str) -> list[str]:
        """The names directly inside ``folder`` ("" for the root), accepted or refused, sorted by bytes."""
        return self.names.get(folder, [])

    def path(self, rel: str) -> Path:
        """The path of a relpath under the root, as the user gave the root."""
        return self.root / rel if rel else self.root

    def problem(self, rel: str, message: str, *, member: str | None = None) -> None:
        """Record a problem about the file or folder at ``rel``."""
        self.problems.append(InputError(message, file=shown(self.path(rel)), path=member))


def list_registry(root: Path) -> RegistryTree:
    """Every file and folder below ``root``, with a problem for each one a registry may not hold.

    Args:
        root: the registry folder (itself may be reached through a symlink; nothing below it may).

    Returns:
        The tree: accepted folders and files, the refused relpaths (not entered, not read) and the problems.
    """
    return list_tree(root, holder="a registry", hardlinks=True)


def list_tree(root: Path, *, holder: str, hardlinks: bool) -> RegistryTree:
    """Every file and folder below ``root``, refusing symlinks, special files and non-UTF-8 names.

    Args:
        root: the folder (itself may be reached through a symlink; nothing below it may).
        holder: what the folder is, for messages ("a registry", "a skills folder").
        hardlinks: whether to refuse hardlink aliases too.

    Returns:
        The tree: accepted folders and files, the refused relpaths (not entered, not read) and the problems.
    """
    tree = RegistryTree(root)
    first_of_inode: dict[tuple[int, int], str] = {}
    pending = [""]
    while pending:
        folder = pending.pop()
        try:
            entries = sorted(os.scandir(tree.path(folder)), key=lambda e: os.fsencode(e.name))
        except OSError as exc:
            tree.problem(folder, f"cannot list folder: {exc.strerror or exc}")
            tree.refused.add(folder)
            continue
        tree.names[folder] = [entry.name for entry in entries]
        below: list[str] = []
        for entry in entries:
            rel = f"{folder}/{entry.name}" if folder else entry.name
            reason = _refusal(entry, rel, first_of_inode if hardlinks else None, holder)
            if reason is not None:
                tree.refused.add(rel)
                tree.problem(rel, reason)
            elif entry.is_dir(follow_symlinks=False):
                tree.folders.add(rel)
                below.append(rel)
            else:
                tree.files.add(rel)
        pending.extend(reversed(below))  # depth first in byte order, so problems read top to bottom
    return tree


def _refusal(entry: os.DirEntry[str], rel: str, first_of_inode: dict[tuple[int, int], str] | None,
             holder: str) -> str | None:
    """Why the folder may not hold this entry, or None when it may (hardlinks checked when given the map)."""
    try:
        entry.name.encode("utf-8")
    except UnicodeEncodeError:
        return "the name is not valid UTF-8; rename it (digests frame names as UTF-8)"
    try:
        info = entry.stat(follow_symlinks=False)
    except OSError as exc:
        return f"cannot stat: {exc.strerror or exc}"
    mode = info.st_mode
    if stat.S_ISLNK(mode):
        return f"a symlink; {holder} holds regular files and folders only (copy the target in)"
    if stat.S_ISDIR(mode):
        return None
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _SPECIAL if test(mode)), "a special file")
        return f"{kind}; {holder} holds regular files and folders only"
    if first_of_inode is None:
        return None
    key = (info.st_dev, info.st_ino)
    if key in first_of_inode:
        return f"a hardlink alias of {first_of_inode[key]}; give each file its own bytes (copy it)"
    first_of_inode[key] = rel
    if info.st_nlink > 1:
        return (f"a hardlink alias ({info.st_nlink} names for one file); its bytes can change through "
                "another name, so copy it instead")
    return None
