"""The one check every command makes on the paths it will write, before it reads or writes anything.

A command writes its outputs atomically: a temporary file beside the target, renamed over it. That is
what makes a crash harmless, and also what makes a wrong output path harmful: renamed over an input,
the input is gone; renamed over ``/dev/null``, the device node is replaced by a regular file (as root);
renamed into a sealed skill-eval stage, the evidence no longer matches its seal. :func:`guard_outputs`
refuses, naming both paths:

- an output that is one of the command's inputs (after following links, or a hard link to it), or
  another of its outputs;
- an output inside an input folder (a file written into the stage being read);
- a folder output that holds an input (a run folder swapped in over the subject's folder);
- an output that is not a regular file or folder: a device, a FIFO, a socket, or a path through a
  process's file descriptors (``/dev/stdout``, ``/dev/fd/1``, ``/proc/self/fd/1``). Writing to standard
  output this way is refused on purpose: the rename would replace the link or the file the shell
  opened, not write the stream. Every command prints its result; redirect that instead;
- an output inside a sealed stage (a folder holding ``stage.json`` beside ``raw/``): a sealed stage is
  never written again.

A file output must also be writable (:func:`~evalkit.io.atomic.check_writable`), so a typo in ``--out``
fails at once rather than after an hour of judging.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path

from evalkit.errors import InputError
from evalkit.io.atomic import check_writable
from evalkit.io.disk_errors import read_only_folder

PathLike = str | Path
Paths = PathLike | Iterable[PathLike] | None

SEALED_STAGE_FILE = "stage.json"
"""The file that makes a folder a sealed skill-eval stage (with ``raw/`` beside it): evalkit.skilleval's
``STAGE_FILE`` is this name."""

_STREAM_ROOTS = (Path("/dev"), Path("/proc"))
"""Where a path names a device or a process's descriptor rather than a file (``/dev/shm`` aside)."""

_KINDS = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"))


def guard_outputs(outputs: Mapping[str, Paths], inputs: Mapping[str, Paths] | None = None, *,
                  folders: Iterable[str] = ()) -> None:
    """Refuse outputs that would replace an input, a device, a stream or a sealed stage's files.

    Args:
        outputs: what the command writes, by the option that names it (``--out``, or a sidecar such as
            ``OUT.runs.jsonl``); None values (options not given) are skipped.
        inputs: what the command reads, by how the user named it (``TRACES``, ``--spec``); a value may be
            a list (a repeatable option); None values are skipped. A folder input is held whole: no
            output may be written inside it.
        folders: the names in ``outputs`` that are folders the command fills (``--out DIR``): they may
            not hold an input either.

    Raises:
        InputError: naming the output, the path it resolves to and what it would replace.
    """
    named_inputs = [(what, Path(p)) for what, value in (inputs or {}).items() for p in _each(value)]
    folder_outputs = set(folders)
    written: list[tuple[str, Path]] = []
    for option, value in outputs.items():
        for out in _each(value):
            out = Path(out)
            is_folder = option in folder_outputs
            _refuse_special(option, out, is_folder)
            _refuse_sealed(option, out)
            for what, path in named_inputs:
                _refuse_over_input(option, out, what, path, is_folder)
            for other, path in written:
                if _same_file(out, path):
                    raise InputError(f"{option} ({out}) is also {other} ({path}): one file cannot hold both; "
                                     "give each its own path", file=str(out))
            written.append((option, out))
            check_writable(out) if not is_folder else _check_folder_writable(option, out)


def _check_folder_writable(option: str, out: Path) -> None:
    """A folder output's nearest existing folder must take writes (a read-only disk is refused now)."""
    folder = out
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if folder.is_dir() and read_only_folder(folder):
        raise InputError(f"{option} ({out}): {folder} is on a read-only file system; write elsewhere (a folder "
                         "on a writable disk)", file=str(out))


def _each(value: Paths) -> list[PathLike]:
    if value is None:
        return []
    if isinstance(value, str | Path):
        return [value]
    return [v for v in value if v is not None]


def _refuse_special(option: str, out: Path, is_folder: bool) -> None:
    """A device, FIFO, socket, or a process's descriptor: the rename would replace the node itself."""
    hops = _link_hops(out)
    if any(_is_descriptor(hop) for hop in hops):
        raise InputError(f"{option} ({out}) is a process's file descriptor (standard output or another stream), "
                         "not a file: evalkit writes a file beside its target and renames it into place, which "
                         "would replace the link or the file the shell opened rather than write to the stream; "
                         "give a file (the command prints its result: redirect that instead)", file=str(out))
    try:
        mode = os.stat(out).st_mode
    except OSError:
        mode = None  # does not exist yet (or cannot be reached: the write will say so)
    kind = None if mode is None else next((name for test, name in _KINDS if test(mode)), None)
    if mode is not None and kind is None and not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        kind = "not a regular file"
    if kind is None:
        device = next((hop for hop in hops if _under_device_roots(hop)), None)
        kind = None if device is None else f"a device or process path ({device})"
    if kind is not None:
        raise InputError(f"{option} ({out}) is {kind}, not a {'folder' if is_folder else 'file'}: writing would "
                         "replace the node with a regular file; give a file (to discard the output, one in a "
                         "temporary folder)", file=str(out))


def _link_hops(out: Path) -> list[Path]:
    """``out`` made absolute, each link it goes through, and where it ends (links of its folders followed)."""
    hops = [Path(os.path.abspath(out))]
    while hops[-1].is_symlink() and len(hops) < 40:
        hops.append(Path(os.path.normpath(hops[-1].parent / os.readlink(hops[-1]))))
    return [*hops, Path(os.path.realpath(out))]


def _is_descriptor(path: Path) -> bool:
    """``/dev/stdout``, ``/dev/fd/N``, ``/proc/self/fd/N``: a name for an open stream, not a file."""
    return (path.parent in (Path("/dev"), Path("/dev/fd")) and (path.name in ("stdin", "stdout", "stderr")
                                                                 or path.parent.name == "fd")) or (
        path.is_relative_to("/proc") and path.parent.name == "fd")


def _under_device_roots(path: Path) -> bool:
    if path.is_relative_to("/dev/shm"):
        return False  # a memory-backed folder of regular files
    return any(path != root and path.is_relative_to(root) for root in _STREAM_ROOTS)


def _refuse_sealed(option: str, out: Path) -> None:
    """An output inside a sealed stage (or the stage folder itself)."""
    target = out.resolve()
    for folder in (target, *target.parents):
        if (folder / SEALED_STAGE_FILE).is_file() and (folder / "raw").is_dir():
            raise InputError(f"{option} ({out}) is inside the sealed skill-eval stage {folder}: a sealed stage is "
                             "never written again (its evidence would no longer match the seal); write beside "
                             "it, outside the stage folder", file=str(out))


def _refuse_over_input(option: str, out: Path, what: str, path: Path, is_folder: bool) -> None:
    target, source = out.resolve(), path.resolve()
    if _same_file(out, path):
        raise InputError(f"{option} ({out}) is also the input {what} ({path}): writing it would replace what "
                         "this command reads; write to another path", file=str(out))
    if source.is_dir() and target.is_relative_to(source):
        raise InputError(f"{option} ({out}) is inside the input {what} ({path}): writing there would change "
                         "what this command reads; write outside that folder", file=str(out))
    if is_folder and source.is_relative_to(target):
        raise InputError(f"{option} ({out}) holds the input {what} ({path}): the command fills or replaces "
                         "that folder, over what it reads; give a folder that holds no input", file=str(out))


def _same_file(a: Path, b: Path) -> bool:
    """One file under two names: the same path once links are resolved, or the same inode (a hard link)."""
    if a.resolve() == b.resolve():
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet): then they are not one file
        return False
