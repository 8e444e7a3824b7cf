"""Reading label and verdict files, each record validated against its contract."""

from __future__ import annotations

from pathlib import Path

from evalkit.contracts.labels import HumanLabel
from evalkit.contracts.verdict import CriterionVerdict
from evalkit.validation import read_models


def read_labels(path: str | Path) -> list[HumanLabel]:
    """Human labels from a HumanLabel JSONL (or JSON/YAML) file."""
    return read_models(path, HumanLabel)


def read_verdicts(path: str | Path) -> list[CriterionVerdict]:
    """Judge verdicts from a CriterionVerdict JSONL (or JSON/YAML) file."""
    return read_models(path, CriterionVerdict)
