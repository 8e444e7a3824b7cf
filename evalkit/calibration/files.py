"""Reading label and verdict files, each record validated against its contract."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from evalkit.contract_files import read_models
from evalkit.contracts.labels import HumanLabel
from evalkit.contracts.verdict import CriterionVerdict
from evalkit.errors import InputError
from evalkit.io.append_only import read_store_records
from evalkit.io.documents import document_format

M = TypeVar("M", bound=BaseModel)


def _read(path: str | Path, model: type[M], notes: list[InputError] | None) -> list[M]:
    """JSONL as an append-only store (what ``labels import`` / ``verdicts import`` write); JSON/YAML whole."""
    if document_format(path) != "jsonl":
        return read_models(path, model)
    if not Path(path).exists():
        return read_models(path, model)  # the usual "cannot read file" error
    read = read_store_records(path, model)
    if read.cut_off is not None:
        cut = InputError(f"line cut off by an interrupted write ({read.cut_off.size} bytes, not a record); "
                         "it is left out, and the next import into this file drops it",
                         file=str(path), line=read.cut_off.line)
        if notes is None:
            raise cut  # nobody to tell that it was left out
        notes.append(cut)
    return read.records


def read_labels(path: str | Path, *, notes: list[InputError] | None = None) -> list[HumanLabel]:
    """Human labels from a HumanLabel JSONL (or JSON/YAML) file.

    Args:
        path: the file.
        notes: receives the final line of a JSONL store cut off by an interrupted write, which is
            then left out; without ``notes`` such a line is an error.
    """
    return _read(path, HumanLabel, notes)


def read_verdicts(path: str | Path, *, notes: list[InputError] | None = None) -> list[CriterionVerdict]:
    """Judge verdicts from a CriterionVerdict JSONL (or JSON/YAML) file (``notes`` as in :func:`read_labels`)."""
    return _read(path, CriterionVerdict, notes)
