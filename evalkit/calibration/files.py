"""Reading label and verdict files, each record validated against its contract."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from evalkit.contracts.labels import HumanLabel
from evalkit.contracts.verdict import CriterionVerdict
from evalkit.io.documents import read_records
from evalkit.validation import validate_value

M = TypeVar("M", bound=BaseModel)


def read_contract_file(path: str | Path, model: type[M]) -> list[M]:
    """Every record of a JSONL (or JSON/YAML) file as ``model``; a JSON list holds one per item.

    Raises:
        InputError: the first problem, rendered as ``FILE:LINE: field.path: message``.
    """
    file = str(path)
    out: list[M] = []
    for record in read_records(path):
        items = record.value if isinstance(record.value, list) else [record.value]
        for i, item in enumerate(items):
            prefix = f"[{i}]" if isinstance(record.value, list) else ""
            obj, problems = validate_value(model, item, file=file, line=record.line, prefix=prefix)
            if problems:
                raise problems[0]
            assert obj is not None
            out.append(obj)
    return out


def read_labels(path: str | Path) -> list[HumanLabel]:
    """Human labels from a HumanLabel JSONL file."""
    return read_contract_file(path, HumanLabel)


def read_verdicts(path: str | Path) -> list[CriterionVerdict]:
    """Judge verdicts from a CriterionVerdict JSONL file."""
    return read_contract_file(path, CriterionVerdict)

