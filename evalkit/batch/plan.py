"""What a batch runs: its entries expanded into named runs, one per subject and sweep combination.

A run's name is its folder in the batch folder and its row on the index page: the entry's ``name`` (or
the subject's), then, for a sweep, each swept key's label for this run's value, joined by ``_``
(``support-agent_v1_seed-2``). A list value is labelled by its key and value (``seed-2``; a file by its
name without the extension); a mapping gives the labels itself. Two runs with one name are refused.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit.contracts.batch import Batch
from evalkit.contracts.types import LOWER_NAME_PATTERN
from evalkit.errors import InputError

RESERVED_NAMES = ("history", "subjects", "logs")
"""Folders of the batch folder that are not runs: the run history, the runs' subject files, their logs."""
_FILE_SUFFIXES = (".jsonl", ".json", ".yaml", ".yml", ".parquet", ".csv")
NAME_LIMIT = 64
"""A run's name is a subject name (``LowerName``), at most this long."""


@dataclass(frozen=True)
class BatchRun:
    """One run of a batch: a subject file, the values set for it, and the notebooks to run."""

    name: str
    subject: Path
    """The subject file (resolved against the batch file's folder)."""
    written: str = ""
    """The subject file as the batch file or the command line names it (shown on the index page)."""
    values: dict[str, Any] = field(default_factory=dict)
    """Subject fields and ``NOTEBOOK.PARAMETER`` values set for this run (override and sweep)."""
    only: tuple[str, ...] = ()
    entry: int | None = None
    """The batch file's entry it comes from (0-based), for errors; None for subjects named on the command line."""
    renamed: bool = False
    """True when the run's name is not its subject's: the run gets a subject file of its own."""
    error: str | None = None
    """Why the run cannot start (its subject file is unreadable): it is shown failed, the others still run."""

    @property
    def derived(self) -> bool:
        """Whether the run needs a subject file of its own (values set, or a name of its own)."""
        return bool(self.values) or self.renamed


@dataclass(frozen=True)
class BatchPlan:
    """A batch's name, the file it came from (None for subjects on the command line), and its runs in order."""

    name: str
    file: Path | None
    runs: tuple[BatchRun, ...]


def _slug(value: Any, key: str, where: str) -> str:
    if isinstance(value, bool):
        text = str(value).lower()
    elif isinstance(value, int | float):
        text = str(value)
    elif isinstance(value, str):
        text = value
        for suffix in _FILE_SUFFIXES:
            if text.endswith(suffix):
                text = Path(text).name[: -len(suffix)]
                break
    else:
        raise InputError(f"a {type(value).__name__} cannot name a run: give the values as a mapping from a short "
                         "label to the value ({label: value, ...})", path=where)
    short = key.rsplit(".", 1)[-1].replace("_", "-")
    return re.sub(r"[^a-z0-9]+", "-", f"{short}-{text}".lower()).strip("-")


def _choices(values: list[Any] | dict[str, Any], key: str, where: str) -> list[tuple[str, Any]]:
    if isinstance(values, dict):
        return list(values.items())
    return [(_slug(v, key, f"{where}[{i}]"), v) for i, v in enumerate(values)]


def _subject_name(path: Path) -> tuple[str, str | None]:
    """The subject's name, or (when the file cannot be read) a name from the file's and the error."""
    from evalkit.contract_files import read_model
    from evalkit.contracts.subject import Subject

    try:
        return read_model(path, Subject).name, None
    except InputError as exc:
        stem = re.sub(r"[^a-z0-9]+", "-", path.stem.lower()).strip("-") or "subject"
        return stem, exc.render()


def _check_names(runs: Sequence[BatchRun], file: str | None) -> None:
    seen: dict[str, BatchRun] = {}
    for run in runs:
        where = f"subjects[{run.entry}]" if run.entry is not None else str(run.subject)
        if not re.match(LOWER_NAME_PATTERN, run.name) or len(run.name) > NAME_LIMIT:
            raise InputError(f"the run name {run.name!r} is not a name of at most {NAME_LIMIT} lower-case letters, "
                             "digits and single - or _: give the entry a shorter `name`, or the sweep's values short "
                             "labels ({label: value})", file=file, path=where)
        if run.name in RESERVED_NAMES:
            raise InputError(f"{run.name!r} names a folder the batch keeps for itself ({', '.join(RESERVED_NAMES)}): "
                             "give the entry another `name`", file=file, path=where)
        if run.name in seen:
            other = seen[run.name]
            first = f"subjects[{other.entry}]" if other.entry is not None else str(other.subject)
            raise InputError(f"two runs are named {run.name!r} (the other is {first}): give the entries a `name` "
                             "each", file=file, path=where)
        seen[run.name] = run


def plan_batch(path: str | Path) -> BatchPlan:
    """Read a batch file and expand its entries into runs (every combination of each sweep).

    Raises:
        InputError: an invalid batch file, a subject file that cannot be read, or two runs with one name.
    """
    from evalkit.contract_files import read_model

    file = Path(path)
    batch = read_model(file, Batch)
    runs = []
    for i, entry in enumerate(batch.subjects):
        subject = (file.parent / entry.subject).resolve()
        if not subject.is_file():
            raise InputError(f"subject file not found: {entry.subject}", file=str(file), path=f"subjects[{i}].subject")
        own, error = _subject_name(subject)
        base = entry.name or own
        keys = list(entry.sweep)
        grids = [_choices(entry.sweep[k], k, f"subjects[{i}].sweep.{k}") for k in keys]
        for combo in itertools.product(*grids):
            name = "_".join([base, *(label for label, _ in combo)])
            values = {**entry.override, **{k: v for k, (_, v) in zip(keys, combo, strict=True)}}
            runs.append(BatchRun(name=name, subject=subject, values=values, only=tuple(entry.only), entry=i,
                                 renamed=name != own, error=error, written=entry.subject))
    _check_names(runs, str(file))
    return BatchPlan(name=batch.name, file=file, runs=tuple(runs))


def plan_subjects(paths: Sequence[str | Path], *, only: Sequence[str] = ()) -> BatchPlan:
    """Subjects named on the command line as a batch: each runs as it is, named by its subject's name.

    Raises:
        InputError: a subject file that cannot be read, or two subjects with one name.
    """
    runs = []
    for p in paths:
        subject = Path(p).resolve()
        if not subject.is_file():
            raise InputError("subject file not found", file=str(p))
        name, error = _subject_name(subject)
        runs.append(BatchRun(name=name, subject=subject, only=tuple(only), error=error, written=str(p)))
    _check_names(runs, None)
    return BatchPlan(name="subjects", file=None, runs=tuple(runs))
