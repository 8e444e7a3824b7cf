"""Agent-eval contracts: each example round-trips byte-identically, and each rule of the shapes rejects."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from evalkit.contracts.behavior_tree import BehaviorEdge, BehaviorNode, BehaviorTree, Scenario
from evalkit.contracts.dataset import Case, Dataset, Dimension
from evalkit.contracts.edd import (
    DEFAULT_MAX_SWINGS,
    DEFAULT_MAX_WALLCLOCK_MS,
    DEFAULT_NO_IMPROVEMENT_STREAK_LIMIT,
    STOP_REASONS,
    ChangeRequestResponse,
    EddChangeRequest,
    FailingCaseRef,
    LoopBudget,
)
from evalkit.contracts.flow import (
    ExpectedEdge,
    ExpectedFlow,
    FlowEdge,
    FlowGraph,
    FlowNode,
    UnthreadedOutput,
)
from evalkit.contracts.labels import HumanLabel, ValidationResult
from evalkit.contracts.matrix import EvalMatrix, MatrixComponent, MatrixCriterion
from evalkit.contracts.methodology import MethodologyItem, MethodologyReview
from evalkit.contracts.types import ConfidenceInterval, RateConfidenceInterval
from evalkit.contracts.verdict import Assumption, BlockedBy, CriterionVerdict, Ref

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "contracts"

KINDS: dict[str, type[BaseModel]] = {
    "eval-matrix": EvalMatrix,
    "dataset": Dataset,
    "behavior-tree": BehaviorTree,
    "flow-graph": FlowGraph,
    "expected-flow": ExpectedFlow,
    "methodology-review": MethodologyReview,
    "edd-change-request": EddChangeRequest,
    "change-request-response": ChangeRequestResponse,
    "criterion-verdict": CriterionVerdict,
    "human-label": HumanLabel,
    "validation-result": ValidationResult,
}

# The required on-disk fields of every shape, as the seeds and the reference give them.
REQUIRED: dict[type[BaseModel], set[str]] = {
    EvalMatrix: {"subject", "version", "generatedAt", "designPrinciples", "components"},
    MatrixComponent: {"componentId", "componentName", "componentType", "criteria"},
    # evidenceSource: not in the seed's required list, but its description makes it "mandatory traceability"
    MatrixCriterion: {"dimension", "statement", "checkMethod", "passCondition", "severity", "existingCoverage",
                      "evidenceSource"},
    Dataset: {"subject", "dimensions", "cases", "version"},
    Dimension: {"name", "values"},
    Case: {"id", "tuple", "query", "source"},
    BehaviorTree: {"subject", "version", "generatedAt", "root", "nodes"},
    BehaviorNode: {"nodeId", "label", "decisionType", "scenarios", "edges"},
    Scenario: {"scenarioId", "when", "expectedDecision"},
    BehaviorEdge: {"edgeId", "to", "condition"},
    FlowGraph: {"traceId", "nodes", "edges", "unthreadedOutputs"},
    FlowNode: {"id", "index", "type", "name", "produces", "consumes", "isHandoff"},
    FlowEdge: {"from", "to", "slot", "kind"},
    UnthreadedOutput: {"node", "name", "slot"},
    ExpectedFlow: {"dispatchToolNames", "edges", "expectedUiSlots"},
    ExpectedEdge: {"fromTool", "toTool"},
    MethodologyReview: {"subject", "version", "generatedAt", "items"},
    MethodologyItem: {"id", "title", "reads", "how", "family"},
    Ref: {"obs", "path", "value"},
    Assumption: {"text", "kind", "status"},
    BlockedBy: {"kind", "text"},
    CriterionVerdict: {"criterionId", "traceId", "result", "confidence", "critique"},
    FailingCaseRef: {"caseId", "criterionId", "critique", "refs"},
    EddChangeRequest: {
        "requestId", "swing", "subject", "remedyTarget", "failingCases", "proposedRemedy", "status",
    },
    ChangeRequestResponse: {"requestId", "status", "note"},
    LoopBudget: set(),
    HumanLabel: {"traceId", "label"},
    ConfidenceInterval: {"lo", "hi", "level"},
    RateConfidenceInterval: {"lo", "hi", "level"},
    ValidationResult: {
        "criterionId", "judgeModel", "status", "labelCount", "tpr", "tnr", "observedPassRate",
        "correctedRate", "correctionValid",
    },
}

DELETE = object()
Path_ = tuple[str | int, ...]


def example_text(kind: str) -> str:
    return (EXAMPLES / f"{kind}.json").read_text(encoding="utf-8")


def example(kind: str) -> dict[str, Any]:
    return json.loads(example_text(kind))


def mutated(obj: dict[str, Any], path: Path_, value: Any) -> dict[str, Any]:
    """A deep copy of ``obj`` with the item at ``path`` replaced by ``value`` (or deleted)."""
    out = copy.deepcopy(obj)
    parent: Any = out
    for key in path[:-1]:
        parent = parent[key]
    if value is DELETE:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return out


def single_error(kind: str, obj: dict[str, Any]) -> dict[str, Any]:
    with pytest.raises(ValidationError) as info:
        KINDS[kind].model_validate(obj)
    errors = info.value.errors()
    assert len(errors) == 1, errors
    return errors[0]


def canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_example_round_trips_byte_identically(kind: str) -> None:
    text = example_text(kind)
    model = KINDS[kind].model_validate(json.loads(text))
    assert canonical(model.to_json_obj()) == text


@pytest.mark.parametrize("model", list(REQUIRED), ids=lambda m: m.__name__)
def test_required_fields_match_the_seeds(model: type[BaseModel]) -> None:
    required = {field.alias or name for name, field in model.model_fields.items() if field.is_required()}
    assert required == REQUIRED[model]


@pytest.mark.parametrize(
    ("kind", "path"),
    [(kind, (name,)) for kind, model in KINDS.items() for name in sorted(REQUIRED[model])]
    + [
        ("eval-matrix", ("components", 0, "componentId")),
        ("eval-matrix", ("components", 0, "criteria", 0, "passCondition")),
        ("dataset", ("dimensions", 0, "values")),
        ("dataset", ("cases", 1, "tuple")),
        ("dataset", ("cases", 1, "source")),
        ("behavior-tree", ("nodes", 0, "decisionType")),
        ("behavior-tree", ("nodes", 0, "scenarios", 0, "expectedDecision")),
        ("behavior-tree", ("nodes", 0, "edges", 0, "to")),
        ("flow-graph", ("nodes", 0, "isHandoff")),
        ("flow-graph", ("edges", 0, "from")),
        ("flow-graph", ("unthreadedOutputs", 0, "slot")),
        ("expected-flow", ("edges", 0, "toTool")),
        ("methodology-review", ("items", 0, "family")),
        ("edd-change-request", ("failingCases", 0, "refs", 0, "value")),
        ("criterion-verdict", ("refs", 0, "obs")),
        ("criterion-verdict", ("assumptions", 0, "status")),
        ("criterion-verdict", ("blockedBy", "kind")),
        ("validation-result", ("ci", "level")),
    ],
)
def test_missing_required_field_is_rejected(kind: str, path: Path_) -> None:
    error = single_error(kind, mutated(example(kind), path, DELETE))
    assert error["type"] == "missing"
    assert error["loc"] == path


@pytest.mark.parametrize(
    ("kind", "path"),
    [(kind, ()) for kind in KINDS]
    + [
        ("eval-matrix", ("components", 0)),
        ("eval-matrix", ("components", 0, "criteria", 0)),
        ("dataset", ("dimensions", 0)),
        ("dataset", ("cases", 0)),
        ("behavior-tree", ("nodes", 0)),
        ("behavior-tree", ("nodes", 0, "scenarios", 0)),
        ("behavior-tree", ("nodes", 0, "edges", 0)),
        ("flow-graph", ("nodes", 0)),
        ("flow-graph", ("edges", 0)),
        ("flow-graph", ("unthreadedOutputs", 0)),
        ("expected-flow", ("edges", 0)),
        ("methodology-review", ("items", 0)),
        ("edd-change-request", ("failingCases", 0)),
        ("edd-change-request", ("failingCases", 0, "refs", 0)),
        ("criterion-verdict", ("refs", 0)),
        ("criterion-verdict", ("assumptions", 0)),
        ("criterion-verdict", ("blockedBy",)),
        ("validation-result", ("ci",)),
    ],
)
def test_extra_field_on_closed_shape_is_rejected(kind: str, path: Path_) -> None:
    error = single_error(kind, mutated(example(kind), (*path, "unexpectedField"), "x"))
    assert error["type"] == "extra_forbidden"
    assert error["loc"] == (*path, "unexpectedField")


def test_case_tuple_is_a_free_map() -> None:
    obj = mutated(example("dataset"), ("cases", 0, "tuple", "channel"), "email")
    assert Dataset.model_validate(obj).cases[0].tuple["channel"] == "email"


@pytest.mark.parametrize(
    ("kind", "path", "value"),
    [
        ("eval-matrix", ("components", 0, "componentType"), "subagent"),
        ("eval-matrix", ("components", 0, "criteria", 0, "dimension"), "correctness"),
        ("eval-matrix", ("components", 0, "criteria", 0, "checkMethod"), "regex"),
        ("eval-matrix", ("components", 0, "criteria", 0, "severity"), "crit"),
        ("eval-matrix", ("components", 0, "criteria", 0, "existingCoverage"), "full"),
        ("dataset", ("cases", 0, "source"), "manual"),
        ("behavior-tree", ("nodes", 0, "decisionType"), "routing"),
        ("flow-graph", ("edges", 0, "kind"), "dispatch"),
        ("methodology-review", ("items", 0, "family"), "fitness"),
        ("edd-change-request", ("remedyTarget",), "prompt"),
        ("edd-change-request", ("status",), "amended"),
        ("change-request-response", ("status",), "requested"),
        ("change-request-response", ("amendedTarget",), "both"),
        ("criterion-verdict", ("result",), "indeterminate"),
        ("criterion-verdict", ("assumptions", 0, "kind"), "factual"),
        ("criterion-verdict", ("assumptions", 0, "status"), "open"),
        ("criterion-verdict", ("blockedBy", "kind"), "missing-data"),
        ("human-label", ("label",), "uncertain"),
        ("human-label", ("split",), "validation"),
        ("validation-result", ("status",), "calibrated"),
    ],
)
def test_wrong_enum_value_is_rejected(kind: str, path: Path_, value: str) -> None:
    error = single_error(kind, mutated(example(kind), path, value))
    assert error["type"] == "literal_error"
    assert error["loc"] == path


@pytest.mark.parametrize(
    ("kind", "path", "value", "loc", "error_type"),
    [
        ("edd-change-request", ("swing",), 0, ("swing",), "greater_than_equal"),
        ("edd-change-request", ("swing",), "2", ("swing",), "int_type"),
        ("edd-change-request", ("swing",), True, ("swing",), "int_type"),
        ("edd-change-request", ("failingCases",), [], ("failingCases",), "too_short"),
        ("edd-change-request", ("failingCases", 0, "refs"), [], ("failingCases", 0, "refs"), "too_short"),
        ("edd-change-request", ("failingCases", 0, "critique"), "", ("failingCases", 0, "critique"),
         "string_too_short"),
        ("edd-change-request", ("proposedRemedy",), "", ("proposedRemedy",), "string_too_short"),
        ("change-request-response", ("note",), "", ("note",), "string_too_short"),
        ("change-request-response", ("rebuilt",), "yes", ("rebuilt",), "bool_type"),
        ("criterion-verdict", ("confidence",), 1.5, ("confidence",), "less_than_equal"),
        ("criterion-verdict", ("confidence",), -0.1, ("confidence",), "greater_than_equal"),
        ("criterion-verdict", ("confidence",), "0.4", ("confidence",), "float_type"),
        ("dataset", ("version",), -1, ("version",), "greater_than_equal"),
        ("dataset", ("dimensions", 0, "values"), [], ("dimensions", 0, "values"), "too_short"),
        ("dataset", ("cases", 0, "tuple"), {}, ("cases", 0, "tuple"), "too_short"),
        ("dataset", ("cases", 0, "tuple", "mood"), 3, ("cases", 0, "tuple", "mood"), "string_type"),
        ("flow-graph", ("nodes", 0, "index"), -1, ("nodes", 0, "index"), "greater_than_equal"),
        ("expected-flow", ("edges", 0, "fromTool"), "", ("edges", 0, "fromTool"), "string_too_short"),
        ("expected-flow", ("edges", 0, "slot"), "", ("edges", 0, "slot"), "string_too_short"),
        ("expected-flow", ("dispatchToolNames", 0), "", ("dispatchToolNames", 0), "string_too_short"),
        ("expected-flow", ("expectedUiSlots", 0), "", ("expectedUiSlots", 0), "string_too_short"),
        ("validation-result", ("labelCount",), -1, ("labelCount",), "greater_than_equal"),
        ("validation-result", ("tpr",), 1.2, ("tpr",), "less_than_equal"),
        ("validation-result", ("ci", "level"), 1.0, ("ci", "level"), "less_than"),
        ("validation-result", ("ci", "level"), 0.0, ("ci", "level"), "greater_than"),
        ("validation-result", ("ci", "lo"), -0.01, ("ci", "lo"), "greater_than_equal"),
        ("validation-result", ("ci", "hi"), 1.01, ("ci", "hi"), "less_than_equal"),
    ],
)
def test_field_constraint_is_rejected(
    kind: str, path: Path_, value: Any, loc: Path_, error_type: str
) -> None:
    error = single_error(kind, mutated(example(kind), path, value))
    assert error["type"] == error_type
    assert error["loc"] == loc


@pytest.mark.parametrize(
    ("kind", "path", "value", "loc", "message"),
    [
        ("criterion-verdict", ("blockedBy",), DELETE, (), "blockedBy: required when result is 'uncertain'"),
        ("criterion-verdict", ("blockedBy",), None, (), "blockedBy: required when result is 'uncertain'"),
        ("behavior-tree", ("root",), "n-escalation", (), "root: "),
        ("behavior-tree", ("nodes", 0, "edges", 2, "to"), "n-nowhere", (), "nodes[0].edges[2].to: "),
        ("behavior-tree", ("nodes", 1, "nodeId"), "n-triage", (), "nodes[1].nodeId: "),
        ("validation-result", ("ci", "lo"), 0.9, ("ci",), "hi: "),
    ],
)
def test_cross_field_rule_is_rejected(kind: str, path: Path_, value: Any, loc: Path_, message: str) -> None:
    error = single_error(kind, mutated(example(kind), path, value))
    assert error["type"] == "value_error"
    assert error["loc"] == loc
    assert error["msg"].removeprefix("Value error, ").startswith(message)


@pytest.mark.parametrize(
    ("kind", "changes"),
    [
        ("criterion-verdict", [(("result",), "fail"), (("blockedBy",), DELETE)]),
        ("criterion-verdict", [(("result",), "pass"), (("blockedBy",), DELETE), (("confidence",), 1)]),
        ("behavior-tree", [(("nodes", 0, "edges", 0, "to"), "TERMINAL")]),
        ("validation-result", [(("tpr",), None), (("correctedRate",), None)]),
        ("validation-result", [(("ci", "lo"), 0.8517)]),
    ],
)
def test_rule_boundary_is_accepted(kind: str, changes: list[tuple[Path_, Any]]) -> None:
    obj = example(kind)
    for path, value in changes:
        obj = mutated(obj, path, value)
    KINDS[kind].model_validate(obj)


def test_loop_budget_defaults() -> None:
    budget = LoopBudget()
    assert (budget.max_swings, budget.max_wallclock_ms, budget.no_improvement_streak_limit) == (
        DEFAULT_MAX_SWINGS, DEFAULT_MAX_WALLCLOCK_MS, DEFAULT_NO_IMPROVEMENT_STREAK_LIMIT,
    ) == (6, 1_800_000, 2)
    assert budget.to_json_obj() == {}
    assert LoopBudget.model_validate({"maxSwings": 3}).to_json_obj() == {"maxSwings": 3}
    assert STOP_REASONS == ("full-green", "incomplete-evidence", "max-swings", "max-wallclock", "no-improvement-streak")


@pytest.mark.parametrize("field", ["maxSwings", "maxWallclockMs", "noImprovementStreakLimit"])
def test_loop_budget_rejects_zero(field: str) -> None:
    with pytest.raises(ValidationError) as info:
        LoopBudget.model_validate({field: 0})
    assert [e["loc"] for e in info.value.errors()] == [(field,)]


@pytest.mark.parametrize(("field", "value", "message"), [
    ("advisory", False, "must be true: methodology-review items are advisory and never gate a run"),
    ("advisory", 1, "must be true"),
    ("id", "MR-10", "must be one of MR-1 .. MR-9"),
    ("id", "MR-0", "must be one of MR-1 .. MR-9"),
    ("id", "mr-1", "must be one of MR-1 .. MR-9"),
])
def test_methodology_items_are_the_seeds_nine_and_always_advisory(field, value, message) -> None:
    error = single_error("methodology-review", mutated(example("methodology-review"), ("items", 0, field), value))
    assert error["loc"] == ("items", 0, field) and message in error["msg"]


def test_a_methodology_item_id_is_used_once() -> None:
    obj = mutated(example("methodology-review"), ("items", 1, "id"), "MR-1")
    with pytest.raises(ValidationError, match=r"items\[1\].id: MR-1 is already an item of this review"):
        MethodologyReview.model_validate(obj)
