"""A batch file: many subjects (or one subject swept over a grid of values) run as one batch.

Each entry names a subject file (relative to the batch file). ``override`` sets values for that entry,
``sweep`` gives a list of values per key and the entry runs once per combination (a papermill parameter
grid). A key is a subject field (``seed``, ``verdicts``, ``judge_runs``, ...) or ``NOTEBOOK.PARAMETER``, a
notebook's own parameter (``01_error_analysis.sample_size``). A sweep's values may be a list (each run is
named by its values) or a mapping from a short label to the value (``{v1: verdicts.v1.jsonl}``).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from evalkit.contracts.base import SchemaNamed, SnakeContract
from evalkit.contracts.subject import Subject
from evalkit.contracts.summary import Headline
from evalkit.contracts.types import LowerName, NonEmptyStr

NOT_OVERRIDDEN = ("name", "parameters")
"""Subject fields a batch does not set directly: an entry's ``name`` names its runs, and notebook
parameters are set one by one as ``NOTEBOOK.PARAMETER``."""
_PARAMETER_KEY = re.compile(r"^[a-z0-9]+(?:[-_][a-z0-9]+)*\.[A-Za-z_][A-Za-z0-9_]*$")
LABEL_PATTERN = r"^[a-z0-9]+(?:[-_.][a-z0-9]+)*$"


def check_key(key: str, where: str) -> str:
    """A key a batch may set: a subject field, or ``NOTEBOOK.PARAMETER`` (else ValueError naming it)."""
    if key in Subject.model_fields and key not in NOT_OVERRIDDEN:
        return key
    if _PARAMETER_KEY.match(key):
        return key
    settable = ", ".join(f for f in Subject.model_fields if f not in NOT_OVERRIDDEN)
    raise ValueError(f"{where}.{key}: not a subject field ({settable}) nor NOTEBOOK.PARAMETER "
                     "(e.g. 01_error_analysis.sample_size)")


class BatchEntry(SnakeContract):
    """One subject of a batch, run once, or once per combination of its sweep's values."""

    subject: NonEmptyStr
    """The subject file, relative to the batch file."""
    name: LowerName | None = None
    """The run's name (its folder and row); default: the subject's name. A sweep adds each value's label."""
    only: list[LowerName] = Field(default_factory=list)
    """Run only these of the subject's notebooks."""
    override: dict[str, Any] = Field(default_factory=dict)
    """Values set for every run of the entry: ``{seed: 3, 01_error_analysis.by: channel}``."""
    sweep: dict[str, list[Any] | dict[str, Any]] = Field(default_factory=dict)
    """Per key, the values to run with; every combination of them is one run."""

    @field_validator("override", "sweep")
    @classmethod
    def _keys(cls, value: dict[str, Any], info: Any) -> dict[str, Any]:
        for key in value:
            check_key(key, info.field_name)
        return value

    @field_validator("sweep")
    @classmethod
    def _values(cls, value: dict[str, Any]) -> dict[str, Any]:
        for key, values in value.items():
            if not values:
                raise ValueError(f"sweep.{key}: give at least one value")
            if isinstance(values, dict):
                bad = [label for label in values if not re.match(LABEL_PATTERN, label)]
                if bad:
                    raise ValueError(f"sweep.{key}: label {bad[0]!r} must be lower-case letters and digits "
                                     "joined by - _ or . (it becomes part of a folder name)")
        return value

    @model_validator(mode="after")
    def _apart(self) -> BatchEntry:
        both = sorted(set(self.override) & set(self.sweep))
        if both:
            raise ValueError(f"sweep.{both[0]}: also set under override; a key is either fixed or swept")
        return self


class Batch(SnakeContract, SchemaNamed):
    """``evalkit batch BATCH.yaml``: the subjects to run, each into its own folder, with one index page."""

    name: LowerName
    description: str | None = None
    subjects: list[BatchEntry] = Field(min_length=1)


class BatchRow(SnakeContract):
    """One run of a batch as its index shows it: how it went, its headline numbers, where its report is."""

    name: LowerName
    subject: NonEmptyStr
    """The subject file as the batch names it."""
    values: dict[str, Any] = Field(default_factory=dict)
    """The values the batch set for this run (override and sweep)."""
    status: Literal["ok", "failed", "not-run"]
    """``failed``: a notebook failed, or the run could not start (``error`` says why); ``not-run``: the batch
    stopped before it."""
    error: str | None = None
    report: str | None = None
    """The run's report, relative to the batch folder."""
    log: str | None = None
    """What the run printed, relative to the batch folder."""
    headline: Headline | None = None


class BatchIndex(SnakeContract, SchemaNamed):
    """``OUT/batch.json``: every run of a batch, in the batch's order; ``OUT/index.html`` shows it."""

    batch: NonEmptyStr
    run_at: str | None = None
    rows: list[BatchRow]
