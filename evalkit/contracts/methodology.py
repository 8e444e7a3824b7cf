"""A methodology review: advisory rubric items on the fitness of a subject's process, never pass/fail."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import field_validator, model_validator

from evalkit.contracts.base import CamelContract, SchemaNamed

MR_ID = re.compile(r"MR-[1-9]")
"""The seed's rubric item ids: MR-1 .. MR-9, no others."""

MethodologyFamily = Literal[
    "decision-tree-fitness", "data-flow-efficiency", "methodology-fitness", "sequence-soundness",
    "process-self-feedback", "conformance-vs-fitness", "signal-selection", "confidence-derivation",
    "focus-determination",
]
"""The fitness concern a review item interrogates."""


class MethodologyItem(CamelContract):
    """One review item: what it reads, how it reasons, and which concern it belongs to."""

    id: str
    title: str
    reads: str
    how: str
    family: MethodologyFamily
    advisory: Literal[True] = True
    """Always true (the seed: MR items never gate a run); ``false`` is refused."""
    finding: str | None = None
    """What a review of runs found for this item (advisory; absent in a rubric not yet applied)."""
    evidence: list[str] | None = None
    """What the finding rests on: counts evalkit computed from the traces, or the judge's reading."""

    @field_validator("advisory", mode="before")
    @classmethod
    def _always_advisory(cls, value: object) -> object:
        if value is not True:
            raise ValueError(f"must be true: methodology-review items are advisory and never gate a run "
                             f"(got {value!r})")
        return value

    @field_validator("id")
    @classmethod
    def _mr_id(cls, value: str) -> str:
        if not MR_ID.fullmatch(value):
            raise ValueError(f"must be one of MR-1 .. MR-9, the seed's methodology-review items (got {value!r})")
        return value


class MethodologyReview(CamelContract, SchemaNamed):
    """A subject's methodology-review rubric."""

    subject: str
    version: str
    generated_at: str
    items: list[MethodologyItem]

    @model_validator(mode="after")
    def _each_item_once(self) -> MethodologyReview:
        seen: set[str] = set()
        for i, item in enumerate(self.items):
            if item.id in seen:
                raise ValueError(f"items[{i}].id: {item.id} is already an item of this review")
            seen.add(item.id)
        return self
