"""Every code-check primitive by the name a matrix's ``check.primitive`` uses, and building one."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evalkit.checks.base import Check
from evalkit.checks.budgets import NoLoop, StepBudget
from evalkit.checks.primitives import (
    FormatValidity,
    Presence,
    RecoveryAfterFailure,
    RefIntegrity,
    SchemaConformance,
    StringEquality,
    ToolOutputFailure,
)
from evalkit.checks.trajectory import ArgumentCorrect, ToolCalled, ToolNotCalled
from evalkit.checks.trajectory_match import TrajectoryMatch
from evalkit.errors import CheckError

TRAJECTORY_CHECKS: tuple[type[Check], ...] = (ToolCalled, ToolNotCalled, TrajectoryMatch, ArgumentCorrect, StepBudget,
                                              NoLoop)
"""The checks on a trace's tool calls and steps (``docs/checks.md``, "Trajectory checks")."""

PRIMITIVES: dict[str, type[Check]] = {c.primitive: c for c in (
    Presence, StringEquality, FormatValidity, SchemaConformance, RefIntegrity, RecoveryAfterFailure,
    ToolOutputFailure, *TRAJECTORY_CHECKS)}
"""Every primitive by the name a matrix's ``check.primitive`` uses."""


def build_check(criterion_id: str, primitive: str, params: Mapping[str, Any], *, where: str = "check") -> Check:
    """The check a criterion configures.

    Raises:
        CheckError: unknown primitive, or parameters it does not accept.
    """
    cls = PRIMITIVES.get(primitive)
    if cls is None:
        raise CheckError(f"unknown check primitive {primitive!r} (one of: {', '.join(PRIMITIVES)})",
                         path=f"{where}.primitive")
    return cls(criterion_id, params, where=f"{where}.params")
