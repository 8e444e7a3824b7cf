"""The run folder of ``evalkit run``: built beside its place, swapped in whole when the run ends.

A run is built in a hidden sibling, ``.NAME.partial-PID-TOKEN``. When it ends, the folder it replaces
is renamed to ``.NAME.old-PID-TOKEN``, the new one takes its name, and the old one is removed. A run
killed at any point (``kill -9``, a power cut) therefore leaves the previous run folder as it was, or,
killed between the two renames, no folder and the previous one beside it, which the next run puts
back. Never a report beside half of the next run's notebooks. The next run into the same folder
removes what a killed one left (folders whose process is gone); one still running is left alone.

A run replaces its whole folder, so a folder that holds anything but a run (no ``run.json``) is
refused rather than replaced.
"""

from __future__ import annotations

import contextlib
import glob
import os
import secrets
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path

from evalkit.errors import InputError
from evalkit.io.atomic import process_alive, replace_folder

__all__ = ["building"]

PARTIAL, REPLACED = "partial", "old"
"""The kinds of hidden sibling: the run being built, and the folder it replaces during the swap."""


def _siblings(out: Path, kind: str) -> list[Path]:
    """The ``kind`` folders of runs into ``out`` whose process has ended (left by a kill)."""
    prefix = f".{out.name}.{kind}-"
    stale = []
    for path in sorted(out.parent.glob(f"{glob.escape(prefix)}*")):
        pid = path.name[len(prefix):].split("-", 1)[0]
        if not (pid.isdigit() and process_alive(int(pid))):
            stale.append(path)
    return stale


def _clear_leftovers(out: Path) -> None:
    """Remove what killed runs into ``out`` left beside it; a run killed between the two renames of
    its swap left no folder at all, and the previous one is put back."""
    for old in _siblings(out, REPLACED):
        if os.path.lexists(out):
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(old, out)
    for partial in _siblings(out, PARTIAL):
        shutil.rmtree(partial, ignore_errors=True)


def _check_run_folder(out: Path) -> None:
    """Refuse an ``out`` a run cannot replace: a file, or a folder with other things than a run in it."""
    from evalkit.report import MANIFEST_FILE

    if out.exists() and not out.is_dir():
        raise InputError("cannot write the run here: it is a file; name a folder", file=str(out))
    if out.is_dir() and not (out / MANIFEST_FILE).is_file() and any(out.iterdir()):
        raise InputError(f"cannot write the run here: the folder holds files and is not a run folder (no "
                         f"{MANIFEST_FILE}); a run replaces its whole folder, so name a new or empty one",
                         file=str(out))


@contextlib.contextmanager
def building(out_dir: str | Path, inputs: Iterable[Path] = ()) -> Iterator[Path]:
    """A fresh hidden folder beside ``out_dir`` to build a run in, swapped in for it when the block ends.

    If the block raises, the folder is removed and ``out_dir`` is left as it was; if the process is
    killed, the next run into ``out_dir`` removes it.

    Args:
        out_dir: the run folder.
        inputs: files and folders the run reads; none may be inside ``out_dir``, which is replaced whole.

    Raises:
        InputError: ``out_dir`` is a file, a folder of other things than a run, a folder holding one of
            the inputs, or cannot be written.
    """
    out = Path(os.path.realpath(out_dir))  # a link to the run folder: the folder it names is replaced
    _check_run_folder(out)
    for path in inputs:
        if Path(os.path.realpath(path)).is_relative_to(out):
            raise InputError(f"cannot write the run here: the folder holds {path}, which the run reads, and a "
                             "run replaces its whole folder; name another folder", file=str(out_dir))
    token = f"{os.getpid()}-{secrets.token_hex(4)}"
    partial = out.parent / f".{out.name}.{PARTIAL}-{token}"
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        _clear_leftovers(out)
        partial.mkdir()
    except OSError as exc:
        raise InputError(f"cannot write the run here: {exc.strerror or exc}", file=str(out_dir)) from None
    try:
        yield partial
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    replace_folder(partial, out, out.parent / f".{out.name}.{REPLACED}-{token}")
