"""A scorecard: the run's gate verdict from the eval matrix, per component and per criterion.

A component fails when a CRIT or HIGH criterion failed on any trace; it is incomplete when none failed
but a CRIT or HIGH criterion was uncertain, errored, missing or skipped somewhere; otherwise it passes.
Skipped criteria never fail a component; a skip rate of at least 0.5 is a warning. The run verdict is the
worst component verdict (fail > incomplete > pass).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from evalkit.contracts.base import CamelContract, SchemaNamed
from evalkit.contracts.matrix import CheckMethod, Severity
from evalkit.contracts.types import Rate, RateConfidenceInterval

RunVerdict = Literal["pass", "incomplete", "fail"]
"""The gate verdict of a component or a run, worst first: fail > incomplete > pass."""

TrackName = Literal["deterministic", "llm-judge", "hybrid"]
"""Where a criterion was decided."""

Count = Field(ge=0, strict=True)


class RateInterval(RateConfidenceInterval):
    """A rate with its confidence interval (a :class:`RateConfidenceInterval`) and how it was computed."""

    rate: Rate
    method: str


class OutcomeCounts(CamelContract):
    """How a criterion came out over the traces."""

    passed: int = Count
    failed: int = Count
    uncertain: int = Count
    errored: int = Count
    missing: int = Count
    skipped: int = Count


class JudgeRecord(CamelContract):
    """Which judge decided a criterion (the seed's pin rule: model id and temperature on the scorecard), and
    the digest of its prompt (spec, system message, schema: the same on every trace it judged)."""

    provider: str
    model: str
    temperature: float
    prompt_digest: str | None
    """The judge's digest (``judgeDigest`` of its run records); null in records written before it existed."""


class CriterionScore(CamelContract):
    """One criterion's outcomes, pass rate and (where its judge is validated) corrected rate."""

    criterion_id: str
    severity: Severity
    check_method: CheckMethod
    track: TrackName
    counts: OutcomeCounts
    pass_rate: RateInterval | None = None
    corrected: RateInterval | None = None
    corrected_note: str | None = None
    skip_rate: float = Field(ge=0, le=1)
    gating: bool = Field(strict=True)
    failing_traces: list[str] = Field(default_factory=list)
    judges: list[JudgeRecord] = Field(default_factory=list)
    """The judges that decided it (judge and hybrid tracks; normally one), from the judge run's records."""


class ComponentScore(CamelContract):
    """One component's verdict and why."""

    component_id: str
    component_name: str
    verdict: RunVerdict
    reasons: list[str]
    criteria: list[CriterionScore]


RegressionResult = Literal["pass", "fail", "incomplete", "not-run"]
"""How a case derived from a past failure came out in this run: fixed, failing again, undecided (a
criterion uncertain, errored, missing or skipped on it), or not run (no trace)."""


class RegressionCase(CamelContract):
    """One regression case (a case derived from a failing past trace) in this run."""

    case_id: str
    origin_trace_id: str | None = None
    failure_modes: list[str] = Field(default_factory=list)
    """The failure modes (or failed criteria) the origin trace showed."""
    criteria: list[str] = Field(default_factory=list)
    """The criteria it was judged on: those of ``failureModes`` the matrix has, else every criterion."""
    result: RegressionResult
    failed_criteria: list[str] = Field(default_factory=list)
    undecided_criteria: list[str] = Field(default_factory=list)
    traces: int = Count


class RegressionSet(CamelContract):
    """The suite's regression cases in this run, and how many are fixed, fail again, are undecided, or did
    not run."""

    cases: list[RegressionCase]
    passed: int = Count
    failed: int = Count
    incomplete: int = Count
    not_run: int = Count


class Scorecard(CamelContract, SchemaNamed):
    """The gate verdict of one run over a set of traces."""

    subject: str
    matrix_version: str
    generated_at: str
    trace_count: int = Count
    verdict: RunVerdict
    components: list[ComponentScore]
    warnings: list[str] = Field(default_factory=list)
    regressions: RegressionSet | None = None
    """The suite's cases derived from past failures, when it has any (``evalkit eval run``)."""
