"""A judge's verdict on one criterion for one trace, with the refs and typed assumptions it rests on.

``uncertain`` is the abstain state and must say what blocked the decision.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from evalkit.contracts.base import CamelContract, SchemaNamed

VerdictResult = Literal["pass", "fail", "uncertain"]
"""A criterion verdict; ``uncertain`` is an abstain that needs ``blockedBy``."""

AssumptionKind = Literal["factual-intent", "normative", "scope"]
"""What kind of premise the trace did not establish."""

AssumptionStatus = Literal["verified", "unverified", "hypothesis", "eliminated"]
"""How far an assumption has been checked."""


class Ref(CamelContract):
    """A re-resolvable citation: the observation, the field path in it, and the exact value cited."""

    obs: str
    path: str
    value: str


class Assumption(CamelContract):
    """A premise the verdict leans on that the trace did not establish."""

    text: str
    kind: AssumptionKind
    status: AssumptionStatus


class BlockedBy(CamelContract):
    """Why a verdict abstained: the unbound term or ungroundable premise."""

    kind: AssumptionKind
    text: str


class CriterionVerdict(CamelContract, SchemaNamed):
    """The verdict on one criterion for one trace; the critique comes before the result.

    ``confidence`` and ``critique`` are always written, and ``null`` only where the verdict came from
    a source that recorded none (a published table of predictions, another tool's 0/1 output): an
    explicit "not recorded", never an invented number or text.
    """

    criterion_id: str
    trace_id: str
    result: VerdictResult
    confidence: float | None = Field(ge=0, le=1, strict=True)
    critique: str | None
    refs: list[Ref] | None = None
    assumptions: list[Assumption] | None = None
    blocked_by: BlockedBy | None = None
    independent_verify: bool | None = Field(default=None, strict=True)
    """True when a reviewer distinct from the judge (the LLM verifier) checked that the evidence entails it."""
    verified_by: str | None = None
    """Who verified the verdict after the judge decided: ``refs`` (every ref re-resolved against the trace)
    or ``llm PROVIDER/MODEL`` (refs, then an independent verifier call); absent when nothing verified it."""
    verify_reason: str | None = None
    """What the verification found: why it downgraded the verdict, or (LLM) why the evidence supports it."""

    @model_validator(mode="after")
    def _uncertain_needs_blocked_by(self) -> CriterionVerdict:
        if self.result == "uncertain" and self.blocked_by is None:
            raise ValueError("blockedBy: required when result is 'uncertain'")
        return self
