"""Error analysis: one reviewer's annotation of a trace, the failure-mode taxonomy, and a review export.

Annotations live in an append-only JSONL store: relabelling a trace appends a new record, and the
latest record per (trace, annotator) wins when reading. The taxonomy is the axial coding: a handful of
named failure modes, optionally nested, and rules that map note text onto them.

An annotation is not a :class:`evalkit.contracts.HumanLabel`: annotations find the failure modes before
any criterion exists (per trace, with notes and modes); human labels are per-criterion ground truth, split
train/dev/test, that a judge for a criterion is validated against.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from evalkit.contracts.base import CamelContract, SchemaNamed
from evalkit.contracts.labels import HumanLabel, HumanVerdict
from evalkit.contracts.types import SLUG_PATTERN, NonEmptyStr

ModeId = Annotated[str, Field(pattern=SLUG_PATTERN, max_length=64)]
"""A failure-mode id: a lowercase slug such as ``hallucinated-policy``."""

REVIEW_EXPORT_FORMAT = "evalkit-review-export"


class Annotation(CamelContract, SchemaNamed):
    """One reviewer's label on one trace: pass, fail or defer, a note, and the failure modes seen.

    ``at`` is when the label was given, injected by whoever writes the record (never read from a clock
    inside evalkit's logic). Only a ``fail`` names failure modes or a first failing observation.
    """

    trace_id: NonEmptyStr
    annotator: NonEmptyStr
    at: NonEmptyStr
    label: HumanVerdict
    note: str | None = None
    modes: list[ModeId] = Field(default_factory=list)
    first_failing_obs: NonEmptyStr | None = None

    @field_validator("at")
    @classmethod
    def _iso_time(cls, value: str) -> str:
        try:
            datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(f"not an ISO 8601 timestamp: {value!r}") from None
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Annotation:
        seen: set[str] = set()
        for i, mode in enumerate(self.modes):
            if mode in seen:
                raise ValueError(f"modes[{i}]: failure mode {mode!r} is listed twice")
            seen.add(mode)
        if self.label != "fail" and self.modes:
            raise ValueError(f"modes: only a fail label names failure modes (label is {self.label!r})")
        if self.label != "fail" and self.first_failing_obs is not None:
            raise ValueError(f"firstFailingObs: only a fail label has one (label is {self.label!r})")
        return self


class FailureMode(CamelContract):
    """One failure mode: a short name, a definition a second reviewer could apply, and examples."""

    id: ModeId
    name: NonEmptyStr
    definition: NonEmptyStr
    examples: list[str] = Field(default_factory=list)
    parent: ModeId | None = None
    include: list[NonEmptyStr] | None = None
    """What counts as this mode (a ratified draft's rules; a second coder is shown them)."""
    exclude: list[NonEmptyStr] | None = None
    """What looks like this mode but does not count."""


class NoteRule(CamelContract):
    """Notes matching ``pattern`` (a case-insensitive regular expression) describe failure ``mode``."""

    pattern: NonEmptyStr
    mode: ModeId

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a regular expression: {exc}") from None
        return value


class Taxonomy(CamelContract, SchemaNamed):
    """A subject's failure modes (ids unique, parents known, no cycles) and its note-to-mode rules."""

    subject: NonEmptyStr
    version: int = Field(ge=0, strict=True)
    modes: list[FailureMode] = Field(min_length=1)
    note_rules: list[NoteRule] | None = None

    @model_validator(mode="after")
    def _well_formed(self) -> Taxonomy:
        index: dict[str, int] = {}
        for i, mode in enumerate(self.modes):
            if mode.id in index:
                raise ValueError(f"modes[{i}].id: duplicate failure-mode id {mode.id!r}")
            index[mode.id] = i
        parent_of = {m.id: m.parent for m in self.modes}
        for i, mode in enumerate(self.modes):
            if mode.parent is not None and mode.parent not in index:
                raise ValueError(f"modes[{i}].parent: unknown failure mode {mode.parent!r}")
        for i, mode in enumerate(self.modes):
            chain = [mode.id]
            step = mode.parent
            while step is not None:
                if step in chain:
                    cycle = " -> ".join([*chain[chain.index(step):], step])
                    raise ValueError(f"modes[{i}].parent: parents form a cycle ({cycle})")
                chain.append(step)
                step = parent_of[step]
        for i, rule in enumerate(self.note_rules or []):
            if rule.mode not in index:
                raise ValueError(f"noteRules[{i}].mode: unknown failure mode {rule.mode!r}")
        return self

    def mode_ids(self) -> list[str]:
        """The failure-mode ids, in file order."""
        return [m.id for m in self.modes]


class ReviewExport(CamelContract, SchemaNamed):
    """What the review page downloads: one annotator's labels, ready for ``evalkit labels import``; with the
    judge's verdicts on the page, also the reviewer's per-criterion labels (``humanLabels``)."""

    format: Literal["evalkit-review-export"]
    version: Literal[1]
    annotator: NonEmptyStr
    annotations: list[Annotation]
    human_labels: list[HumanLabel] = Field(default_factory=list)
    """Per-criterion labels given beside the judge's verdicts: a confirmation, or an override naming the
    verdict it overrides (``overrides``)."""

    @model_validator(mode="after")
    def _one_annotator(self) -> ReviewExport:
        for i, annotation in enumerate(self.annotations):
            if annotation.annotator != self.annotator:
                raise ValueError(f"annotations[{i}].annotator: {annotation.annotator!r} is not the "
                                 f"export's annotator {self.annotator!r}")
        for i, label in enumerate(self.human_labels):
            if label.annotator != self.annotator:
                raise ValueError(f"humanLabels[{i}].annotator: {label.annotator!r} is not the export's "
                                 f"annotator {self.annotator!r}")
            if label.criterion_id is None:
                raise ValueError(f"humanLabels[{i}].criterionId: a label given beside a verdict names its criterion")
        return self
