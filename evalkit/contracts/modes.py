"""Failure modes drafted by an LLM from open-coding notes, and a person's ratification of them.

A draft is not a taxonomy: nothing in it is a failure mode until a reviewer has decided on every drafted
mode (accept, rename, merge, split or reject). The ratification records each decision, who made it and
when; the taxonomy is built from those decisions alone (:func:`evalkit.analysis.ratify`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field, field_validator, model_validator

from evalkit.contracts.annotation import Annotation, ModeId
from evalkit.contracts.base import CamelContract, SchemaNamed
from evalkit.contracts.types import NonEmptyStr

DRAFT_FORMAT = "evalkit-draft-modes"
RATIFICATION_FORMAT = "evalkit-ratification"
DECISIONS = ("accept", "rename", "merge", "split", "reject")
"""What a reviewer may do with a drafted mode."""


def _iso(value: str) -> str:
    try:
        datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"not an ISO 8601 timestamp: {value!r}") from None
    return value


class DraftMode(CamelContract):
    """One drafted failure mode: a name, a definition, rules a second coder can apply, the notes it groups."""

    id: ModeId
    name: NonEmptyStr
    definition: NonEmptyStr
    include: list[NonEmptyStr] = Field(default_factory=list)
    """What counts as this mode."""
    exclude: list[NonEmptyStr] = Field(default_factory=list)
    """What looks like it but does not count (often: another mode)."""
    examples: list[NonEmptyStr] = Field(min_length=1)
    """The trace ids of the notes the model placed in this mode."""


class UnplacedNote(CamelContract):
    """A note no drafted mode holds: listed for the reviewer, never forced into a mode."""

    trace_id: NonEmptyStr
    annotator: NonEmptyStr
    note: NonEmptyStr
    reason: NonEmptyStr


class DraftedBy(CamelContract):
    """Who drafted: the provider, model and temperature, the prompt's digest and what it was given."""

    provider: NonEmptyStr
    model: NonEmptyStr
    temperature: float = Field(ge=0, le=0)
    prompt_digest: NonEmptyStr
    notes: int = Field(ge=0, strict=True)
    """How many notes the prompt held."""
    notes_digest: NonEmptyStr
    """``sha256:`` of the notes as given (trace, annotator, note, in order)."""
    calls: int | None = Field(default=None, ge=2, strict=True)
    """With the notes sent in batches: how many calls (``promptDigest`` is then the digest of their digests)."""


class DraftTaxonomy(CamelContract, SchemaNamed):
    """``draft.yaml``: the drafted modes and the unplaced notes, waiting for a person to ratify them."""

    format: Literal["evalkit-draft-modes"]
    version: Literal[1]
    subject: NonEmptyStr
    drafted_by: DraftedBy
    modes: list[DraftMode]
    unplaced: list[UnplacedNote] = Field(default_factory=list)

    @model_validator(mode="after")
    def _ids_once(self) -> DraftTaxonomy:
        seen: set[str] = set()
        for i, mode in enumerate(self.modes):
            if mode.id in seen:
                raise ValueError(f"modes[{i}].id: drafted mode {mode.id!r} is listed twice")
            seen.add(mode.id)
        return self


class RatifiedPart(CamelContract):
    """One failure mode a decision makes: its id, name, definition, rules and the notes it keeps."""

    id: ModeId
    name: NonEmptyStr
    definition: NonEmptyStr
    include: list[NonEmptyStr] = Field(default_factory=list)
    exclude: list[NonEmptyStr] = Field(default_factory=list)
    examples: list[NonEmptyStr] = Field(default_factory=list)


class Decision(CamelContract):
    """A reviewer's decision on one drafted mode.

    ``accept`` and ``rename`` make one mode (``parts``: one, renamed or not); ``split`` makes two or more;
    ``merge`` folds the drafted mode into another drafted mode (``into``) that is itself kept; ``reject``
    makes none.
    """

    draft_mode: ModeId
    action: Literal["accept", "rename", "merge", "split", "reject"]
    parts: list[RatifiedPart] = Field(default_factory=list)
    into: ModeId | None = None
    reviewer: NonEmptyStr
    at: NonEmptyStr
    note: str | None = None

    @field_validator("at")
    @classmethod
    def _when(cls, value: str) -> str:
        return _iso(value)

    @model_validator(mode="after")
    def _shape(self) -> Decision:
        want = {"accept": (1, 1), "rename": (1, 1), "split": (2, None), "merge": (0, 0), "reject": (0, 0)}
        low, high = want[self.action]
        if len(self.parts) < low or (high is not None and len(self.parts) > high):
            many = f"{low}" if low == high else f"at least {low}"
            raise ValueError(f"parts: a {self.action} decision makes {many} mode(s), not {len(self.parts)}")
        if (self.action == "merge") != (self.into is not None):
            raise ValueError("into: a merge names the drafted mode it goes into, and only a merge does")
        if self.into == self.draft_mode:
            raise ValueError(f"into: mode {self.draft_mode!r} cannot be merged into itself")
        return self


class Ratification(CamelContract, SchemaNamed):
    """What the review page exports after ratifying a draft: one decision per drafted mode, and the
    reviewer's coding of the noted traces with the ratified modes (annotations with modes)."""

    format: Literal["evalkit-ratification"]
    version: Literal[1]
    reviewer: NonEmptyStr
    at: NonEmptyStr
    draft_digest: NonEmptyStr
    """``sha256:`` of the draft ratified (:func:`evalkit.analysis.draft_digest`): decisions on another draft
    are refused."""
    decisions: list[Decision]
    annotations: list[Annotation] = Field(default_factory=list)

    @field_validator("at")
    @classmethod
    def _when(cls, value: str) -> str:
        return _iso(value)

    @model_validator(mode="after")
    def _one_reviewer(self) -> Ratification:
        for i, decision in enumerate(self.decisions):
            if decision.reviewer != self.reviewer:
                raise ValueError(f"decisions[{i}].reviewer: {decision.reviewer!r} is not the export's reviewer "
                                 f"{self.reviewer!r}")
        for i, annotation in enumerate(self.annotations):
            if annotation.annotator != self.reviewer:
                raise ValueError(f"annotations[{i}].annotator: {annotation.annotator!r} is not the export's "
                                 f"reviewer {self.reviewer!r}")
        return self
