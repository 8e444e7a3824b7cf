"""The eval-driven-development loop: change requests from the evaluator, replies from the engineer, and the
budget that bounds the loop.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from evalkit.contracts.base import CamelContract, SchemaNamed
from evalkit.contracts.edd_defaults import (
    DEFAULT_MAX_SWINGS,
    DEFAULT_MAX_WALLCLOCK_MS,
    DEFAULT_NO_IMPROVEMENT_STREAK_LIMIT,
)
from evalkit.contracts.types import NonEmptyStr
from evalkit.contracts.verdict import Ref

RemedyTarget = Literal["agentspec", "impl"]
"""Where a fix belongs: the agent's definition, or only its implementation."""

LoopPhase = Literal["build", "variance", "accuracy", "done", "stopped"]
"""Where the loop is; variance always comes before accuracy."""

StopReason = Literal["full-green", "incomplete-evidence", "max-swings", "max-wallclock", "no-improvement-streak"]
"""Why the loop ended, in the order the stop conditions are checked (success first). ``incomplete-evidence``
is evalkit's, beside the seed's four: nothing failed, but a gating criterion was not decided everywhere, so
the loop can neither claim green nor ask for a fix."""

STOP_REASONS: tuple[str, ...] = StopReason.__args__  # type: ignore[attr-defined]
"""The stop reasons in check order."""



class FailingCaseRef(CamelContract):
    """One failing case handed to the engineer, grounded by the judge's critique and at least one ref."""

    case_id: NonEmptyStr
    criterion_id: NonEmptyStr
    critique: NonEmptyStr
    refs: list[Ref] = Field(min_length=1)


class EddChangeRequest(CamelContract, SchemaNamed):
    """The evaluator's request to amend the subject; the remedy is a hypothesis, not a patch."""

    request_id: NonEmptyStr
    swing: int = Field(ge=1, strict=True)
    subject: NonEmptyStr
    remedy_target: RemedyTarget
    failing_cases: list[FailingCaseRef] = Field(min_length=1)
    proposed_remedy: NonEmptyStr
    status: Literal["requested"]


class ChangeRequestResponse(CamelContract, SchemaNamed):
    """The engineer's reply: amended (re-evaluate) or rejected with a reason (do not)."""

    request_id: NonEmptyStr
    status: Literal["amended", "rejected"]
    amended_target: RemedyTarget | None = None
    rebuilt: bool | None = Field(default=None, strict=True)
    note: NonEmptyStr


class LoopBudget(CamelContract):
    """The bounds that stop the loop when it does not reach full green."""

    max_swings: int = Field(default=DEFAULT_MAX_SWINGS, ge=1, strict=True)
    max_wallclock_ms: int = Field(default=DEFAULT_MAX_WALLCLOCK_MS, ge=1, strict=True)
    no_improvement_streak_limit: int = Field(default=DEFAULT_NO_IMPROVEMENT_STREAK_LIMIT, ge=1, strict=True)
