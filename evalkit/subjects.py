"""Subject files: read, validated, and their input files resolved and held inside the subject's folder.

A subject names what one evaluation reads (traces, labels, verdicts, matrix, ...), by paths relative to the
subject file. Every command that reads a subject (``evalkit run``, ``eval run``, ``edd``, ``dataset``) and
every notebook reads it through :func:`load_subject`, so the folder rule is the same everywhere.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from evalkit.contracts.subject import Subject
from evalkit.contracts.summary import InputDigest
from evalkit.errors import InputError


@dataclass(frozen=True)
class ResolvedSubject:
    """A subject file read and validated, with its inputs resolved against the file's folder."""

    subject: Subject
    path: Path

    @property
    def base(self) -> Path:
        return self.path.parent

    def resolve(self, relative: str | None) -> Path | None:
        """An input's path on this machine (None when the subject does not name it)."""
        return None if relative is None else (self.base / relative).resolve()


ALLOW_OUTSIDE_ENV = "EVALKIT_ALLOW_OUTSIDE"
"""Set to ``1``, subjects may name paths outside their folder. ``evalkit run --allow-outside`` sets it for
its notebooks' kernels (they read the subject again); other commands that read a subject honour it too."""


def outside_allowed(allow_outside: bool | None) -> bool:
    """Whether input files may sit outside the subject's folder: the flag when given, else the environment."""
    return allow_outside if allow_outside is not None else os.environ.get(ALLOW_OUTSIDE_ENV) == "1"


def load_subject(path: str | Path, *, allow_outside: bool | None = None) -> ResolvedSubject:
    """Read a subject file and check every input file it names: inside the subject's folder, and existing.

    Args:
        path: the subject file.
        allow_outside: accept input files outside the subject file's folder (``..``, absolute paths,
            links out); None: only when the environment sets ``EVALKIT_ALLOW_OUTSIDE=1``. Folders given
            as ``*_path`` parameters (what other evalkit commands wrote) are not held to the folder.

    Raises:
        InputError: invalid subject file, a path outside the subject's folder, or an input file that
            is missing (each named by its field).
    """
    from evalkit.contract_files import read_model

    p = Path(path)
    resolved = ResolvedSubject(read_model(p, Subject), p.resolve())
    check_inputs(resolved.subject, resolved.base, allow_outside=allow_outside, file=str(path))
    return resolved


def check_inputs(subject: Subject, base: Path, *, allow_outside: bool | None = None, file: str | None = None,
                 where: str = "") -> None:
    """Check every input file a subject names: inside ``base`` (unless allowed), and existing.

    Args:
        subject: the subject.
        base: the folder its paths are relative to.
        allow_outside: as for :func:`load_subject`.
        file: the file to name in an error.
        where: prefix of the field path in an error (a batch entry's).

    Raises:
        InputError: a path outside the folder, or a missing input file, named by its field.
    """
    if not outside_allowed(allow_outside):
        folder = base.resolve()
        # Input files only: a ``*_path`` parameter names a folder another evalkit command wrote (an eval run,
        # an EDD loop), which may well sit elsewhere (the sample's ``eval_run_path: ../../reports/sample-eval``).
        for field, rel in subject.input_paths().items():
            if not (folder / rel).resolve().is_relative_to(folder):
                raise InputError(f"{rel} is outside the subject's folder {folder} (after following links): a "
                                 "subject reads its files from its own folder and below; move the file there, "
                                 f"or allow it with evalkit run --allow-outside ({ALLOW_OUTSIDE_ENV}=1 for "
                                 "other commands)", file=file, path=where + field)
    for field, rel in subject.input_paths().items():
        if not (base / rel).is_file():
            raise InputError(f"input file not found: {rel}", file=file, path=where + field)


def input_digests(resolved: ResolvedSubject) -> list[InputDigest]:
    """SHA-256 and size of every input, named as the subject file names it."""
    digests = []
    for field, rel in resolved.subject.input_paths().items():
        data = (resolved.base / rel).read_bytes()
        digests.append(InputDigest(field=field, path=rel, sha256=hashlib.sha256(data).hexdigest(),
                                   bytes=len(data)))
    return digests


def subject_inputs(path: str | Path) -> dict[str, Path]:
    """The subject file and every input file it names, by how a message names them (``SUBJECT``,
    ``the subject's traces``): what a command reading the subject must not write over.

    A subject that cannot be read gives only itself: the command reading it says what is wrong.
    """
    from evalkit.contract_files import read_model

    inputs = {"SUBJECT": Path(path)}
    try:
        subject = read_model(path, Subject)
    except InputError:
        return inputs
    base = Path(path).parent
    inputs.update({f"the subject's {field}": base / rel for field, rel in subject.input_paths().items()})
    return inputs
