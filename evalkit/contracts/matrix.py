"""The eval matrix: a subject's master checklist of components, each graded by binary criteria.

Each criterion's ``checkMethod`` decides whether it runs on the deterministic track or under the pinned judge.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from evalkit.contracts.base import CamelContract, SchemaNamed

ComponentType = Literal[
    "agent", "skill-orchestrator-step", "star-command", "script", "gate", "feature", "pipeline-stage",
]
"""What a component is; listed top-bound first (skill step, agents, commands, scripts, gates)."""

CriterionDimension = Literal["operation-correctness", "data-correctness", "operational-deviation"]
"""The three coverage dimensions a criterion belongs to."""

CheckMethod = Literal[
    "deterministic-script", "typebox-schema", "gate", "trace-cross-ref", "trajectory-diff", "llm-judge", "hybrid",
]
"""How a criterion is checked: the first three need no model, the next three run under the pinned judge,
and ``hybrid`` runs its code check first and asks the judge only when the code check passes."""

Severity = Literal["CRIT", "HIGH", "MED", "LOW"]
"""Impact on variance; a failed CRIT or HIGH criterion fails its component."""

Coverage = Literal["covered", "partial", "none"]
"""How far the existing tests and gates already cover a criterion."""

DETERMINISTIC_CHECK_METHODS: tuple[str, ...] = ("deterministic-script", "typebox-schema", "gate")
"""Check methods that run without a model; every other method runs under the pinned judge."""

JUDGE_CHECK_METHODS: tuple[str, ...] = ("trace-cross-ref", "trajectory-diff", "llm-judge")
"""Check methods that run under the pinned judge only."""


class CheckConfig(CamelContract):
    """The code check a deterministic or hybrid criterion runs: a primitive of ``evalkit.checks`` and its
    parameters (which observation and field to read, what to compare it with)."""

    primitive: str = Field(min_length=1)
    params: dict[str, Any] = Field(default_factory=dict)


class MatrixCriterion(CamelContract):
    """One binary check on a component."""

    dimension: CriterionDimension
    statement: str
    check_method: CheckMethod
    pass_condition: str
    severity: Severity
    existing_coverage: Coverage
    evidence_source: str = Field(min_length=1)
    """The intended behavior or observed deviation the criterion rests on: the seed's mandatory traceability
    (no filler criteria). Required; a criterion without it is refused, naming the criterion."""
    criterion_id: str | None = Field(default=None, min_length=1)
    check: CheckConfig | None = None

    @model_validator(mode="before")
    @classmethod
    def _traceable(cls, data: Any) -> Any:
        if isinstance(data, dict):
            source = data.get("evidenceSource", data.get("evidence_source"))
            if not isinstance(source, str) or not source.strip():
                name = data.get("criterionId") or data.get("criterion_id") or repr(str(data.get("statement", ""))[:60])
                raise ValueError(
                    f"criterion {name} has no evidenceSource: every criterion cites what it rests on (the seed's "
                    "mandatory traceability); add evidenceSource: 'Intended behavior: ...' (the spec, policy or "
                    "design it checks) or 'Observed deviation: ...' (the failure seen in traces)")
        return data


class MatrixComponent(CamelContract):
    """One component of the subject and the criteria it is graded on."""

    component_id: str
    component_name: str
    component_type: ComponentType
    criteria: list[MatrixCriterion]


class EvalMatrix(CamelContract, SchemaNamed):
    """A subject's eval matrix: design principles and graded components."""

    subject: str
    version: str
    generated_at: str
    design_principles: list[str]
    components: list[MatrixComponent]
