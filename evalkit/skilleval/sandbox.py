"""One sandbox per arm, made from the case's fixture; nothing in it may point outside it.

The fixture's files (all but ``seed.json``, the recipe itself) are copied in; a symlink, a special file,
a non-UTF-8 name, an absolute path or a ``..`` segment anywhere in the fixture is refused, as is a
command argument that is an absolute or home path or climbs out with ``..``. The tree digests of a
sandbox leave out ``.git/index`` only: Git's stat cache holds inode numbers and times that differ on
every run, while what it records (the staged state) is in the Git status digests of every fact.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from evalkit.errors import InputError
from evalkit.skilleval.digest import DOMAINS, file_sha256, tree_digest, tree_files

SEED_FILE = "seed.json"
VOLATILE = ".git/index"
SKILLS_FOLDER = ".agents/skills"
"""Where the arm's skill is installed in the sandbox, as agents that read Agent Skills look for it."""

_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")


def sandbox_exclude(rel: str) -> bool:
    """The sandbox digest's filter: Git's volatile stat cache is left out."""
    return rel == VOLATILE


def sandbox_digest(sandbox: Path) -> str:
    """The ``sandbox`` domain digest of a sandbox's files, Git state included but its stat cache."""
    return tree_digest(sandbox, DOMAINS["sandbox"], sandbox_exclude)


def sandbox_manifest(sandbox: Path) -> dict[str, str]:
    """Every file of the sandbox (as the digest sees them) mapped to its sha256."""
    return {rel: file_sha256(path) for rel, path in tree_files(sandbox, sandbox_exclude)}


def changed_paths(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """Slash paths added, removed or changed between two manifests, sorted."""
    return sorted(rel for rel in before.keys() | after.keys() if before.get(rel) != after.get(rel))


def check_relative(path: str, what: str) -> PurePosixPath:
    """A relative slash path that stays inside its folder.

    Raises:
        InputError: empty, absolute, a home or drive path, a backslash, or a ``.``/``..`` segment.
    """
    parts = path.split("/")
    if (not path or path.startswith(("/", "~")) or "\\" in path or _DRIVE.match(path) or "\x00" in path
            or any(p in ("", ".", "..") for p in parts)):
        raise InputError(f"{what}: {path!r} must be a relative path inside the sandbox (no '..', no absolute "
                         "or home path)")
    return PurePosixPath(path)


def check_argv_paths(argv: Sequence[str], what: str) -> None:
    """Refuse a command argument that reaches outside the sandbox by its path.

    An argument (or the value after ``=`` in ``--opt=value``) is refused when it is absolute, a home
    path (``~``), a drive path, or has a ``..`` segment. ``HEAD..main`` (no ``..`` segment) is fine.

    Raises:
        InputError: naming the argument's index.
    """
    for i, arg in enumerate(argv[1:], start=1):
        for value in {arg, arg.partition("=")[2]}:
            if not value:
                continue
            segments = value.replace("\\", "/").split("/")
            if value.startswith(("/", "~", "\\")) or _DRIVE.match(value) or ".." in segments:
                raise InputError(f"{what}[{i}]: {arg!r} reaches outside the sandbox; commands may only name "
                                 "relative paths inside it")


def copy_fixture(fixture: Path, sandbox: Path) -> list[str]:
    """Copy the fixture's files (``seed.json`` excepted) into a new, empty ``sandbox``; returns their relpaths.

    Raises:
        InputError: the sandbox exists already, or the fixture holds a symlink, a special file or a
            non-UTF-8 name (named).
    """
    if sandbox.exists():
        raise InputError("cannot create the sandbox: it exists already; give a fresh --out folder",
                         file=str(sandbox))
    files = tree_files(fixture, lambda rel: rel == SEED_FILE)
    sandbox.mkdir(parents=True)
    for rel, source in files:
        _copy_into(sandbox, check_relative(rel, f"fixture file {rel}"), source)
    return [rel for rel, _ in files]


def install_skill(skill_dir: Path, sandbox: Path, skill: str) -> None:
    """Copy one skill folder to ``.agents/skills/<skill>/`` in the sandbox (symlinks refused)."""
    target = sandbox / SKILLS_FOLDER / skill
    for rel, source in tree_files(skill_dir):
        _copy_into(sandbox, PurePosixPath(SKILLS_FOLDER, skill, rel), source)
    target.mkdir(parents=True, exist_ok=True)


def plant(sandbox: Path, rel: str, contents: bytes, what: str) -> None:
    """Write a file at a relative path in the sandbox (a local fixture's decoy), refusing escapes."""
    _write_inside(sandbox, check_relative(rel, what), contents)


def _copy_into(sandbox: Path, rel: PurePosixPath, source: Path) -> None:
    target = _inside(sandbox, rel)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as src, open(target, "xb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    executable = os.stat(source).st_mode & stat.S_IXUSR
    os.chmod(target, 0o755 if executable else 0o644)


def _write_inside(sandbox: Path, rel: PurePosixPath, contents: bytes) -> None:
    target = _inside(sandbox, rel)
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.is_symlink():
        raise InputError(f"{rel}: is a symlink in the sandbox; refusing to write through it", file=str(target))
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "wb") as fh:
        fh.write(contents)


def _inside(sandbox: Path, rel: PurePosixPath) -> Path:
    """``sandbox/rel``, refused unless its real parent folder is inside the sandbox (no symlinked folder)."""
    root = Path(os.path.realpath(sandbox))
    target = sandbox.joinpath(*rel.parts)
    parent = Path(os.path.realpath(target.parent))
    if parent != root and root not in parent.parents:
        raise InputError(f"{rel}: resolves outside the sandbox (through a symlink); refused", file=str(target))
    return target
