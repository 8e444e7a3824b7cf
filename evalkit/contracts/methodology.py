"""A methodology review: advisory rubric items on the fitness of a subject's process, never pass/fail."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from evalkit.contracts.base import CamelContract, SchemaNamed

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
    advisory: bool | None = Field(default=None, strict=True)
    finding: str | None = None
    """What a review of runs found for this item (advisory; absent in a rubric not yet applied)."""
    evidence: list[str] | None = None
    """What the finding rests on: counts evalkit computed from the traces, or the judge's reading."""


class MethodologyReview(CamelContract, SchemaNamed):
    """A subject's methodology-review rubric."""

    subject: str
    version: str
    generated_at: str
    items: list[MethodologyItem]
