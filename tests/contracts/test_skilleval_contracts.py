"""Skill-eval contracts: each example round-trips byte-identically, and each rule of the shapes rejects."""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from evalkit.contracts.skilleval import (
    ActionFact,
    AdapterIdentity,
    CaseAnswer,
    Decoy,
    DeterministicChecks,
    GateResult,
    OperationValidation,
    Oracle,
    OracleAssertion,
    PolicyOperation,
    ReleaseRecord,
    ReportCase,
    RunResult,
    Scenario,
    ScenarioAction,
    SkillEvalAnswers,
    SkillEvalCase,
    SkillEvalFacts,
    SkillEvalPolicy,
    SkillEvalReport,
    SkillEvalSeed,
    SkillEvalStage,
    SkillSetBinding,
    ToolInit,
    Waiver,
    WorksheetEntry,
    base_outcome,
    stage_seal,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "contracts"

KINDS: dict[str, type[BaseModel]] = {
    "skill-eval-case": SkillEvalCase,
    "skill-eval-seed": SkillEvalSeed,
    "skill-eval-facts": SkillEvalFacts,
    "skill-eval-stage": SkillEvalStage,
    "skill-eval-answers": SkillEvalAnswers,
    "skill-eval-report": SkillEvalReport,
    "skill-eval-policy": SkillEvalPolicy,
}

# Every on-disk field of every shape, as Taskrail's contract lists them.
FIELDS: dict[type[BaseModel], set[str]] = {
    SkillEvalCase: {"schema_version", "case_id", "skill", "storage_mode", "baseline_required", "prompt",
                    "expected_observation", "assertions", "human_review_questions", "scenario", "oracle"},
    Scenario: {"fixture", "sandbox", "setup", "actions"},
    ScenarioAction: {"id", "operation", "command"},
    Oracle: {"assertions"},
    OracleAssertion: {"assertion", "action", "predicate"},
    SkillEvalSeed: {"schema_version", "storage_mode", "git_init", "tool_init", "decoy", "provenance"},
    Decoy: {"path", "contents"},
    ActionFact: {"action", "operation", "command", "exit_code", "stdout_sha256", "stderr_sha256", "before_sha256",
                 "after_sha256", "git_before_sha256", "git_after_sha256", "validation_passed", "storage_paths"},
    RunResult: {"outcome", "skill_sha256", "executable_sha256", "deterministic_grade", "raw_sha256"},
    ReportCase: {"case_id", "skill", "storage_mode", "fixture_sha256", "baseline_required", "candidate",
                 "baseline", "comparison", "human_review"},
    DeterministicChecks: {"outcome", "evidence", "gates"},
    GateResult: {"name", "outcome", "checked", "problems"},
    ReleaseRecord: {"provenance_verified", "baseline_executable", "final_case_set", "uncovered_skills", "confined",
                    "watched"},
    Waiver: {"approver", "reason", "unavailable_capability", "affected_skills", "affected_cases",
             "residual_risk", "compensating_evidence", "followup"},
    SkillSetBinding: {"version", "skills_sha256"},
    AdapterIdentity: {"name", "version", "observed"},
    SkillEvalReport: {"schema_version", "session_id", "generated_at", "tested_head", "candidate_executable_sha256",
                      "baseline_executable_sha256", "product_sha256", "outcome", "candidate", "baseline",
                      "fixtures_sha256", "adapter", "model", "cases", "deterministic_checks", "human_review",
                      "waiver", "release"},
    WorksheetEntry: {"case_id", "skill", "human_review_questions", "candidate", "baseline"},
    SkillEvalStage: {"schema_version", "report", "worksheet", "seal"},
    CaseAnswer: {"case_id", "comparison", "human_review"},
    SkillEvalAnswers: {"schema_version", "human_review", "cases"},
    SkillEvalPolicy: {"schema_version", "tool", "operations", "init", "storage_modes", "baseline_skills",
                      "lifecycle", "platform_only", "final", "git_config_allowed"},
    PolicyOperation: {"program", "validation", "commands", "json_flag"},
    OperationValidation: {"argv", "pointer"},
    ToolInit: {"operation", "committed", "local"},
}


def canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def load(kind: str) -> Any:
    return json.loads((EXAMPLES / f"{kind}.json").read_text(encoding="utf-8"))


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def reseal(stage: dict[str, Any]) -> dict[str, Any]:
    stage["seal"] = stage_seal(stage)
    return stage


def passing_report() -> dict[str, Any]:
    """The example's waived report with its missing baseline arm present: a plain ``pass``."""
    report = load("skill-eval-report")
    local = report["cases"][1]
    local["baseline"] = dict(report["cases"][0]["baseline"], raw_sha256=sha("raw local baseline"))
    local["comparison"] = "better"
    report.update(outcome="pass", waiver=None)
    return report


def failures(exc: ValidationError) -> list[str]:
    """Each error as ``<loc>: <message>``; a document rule's message carries its own path."""
    out = []
    for err in exc.errors():
        msg = err["msg"].removeprefix("Value error, ")
        loc = ".".join(str(part) for part in err["loc"])
        out.append(f"{loc}: {msg}" if loc else msg)
    return out


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_example_round_trips_byte_identically(kind: str) -> None:
    text = (EXAMPLES / f"{kind}.json").read_text(encoding="utf-8")
    model = KINDS[kind].model_validate(json.loads(text))
    assert canonical(model.to_json_obj()) == text


@pytest.mark.parametrize("model", list(FIELDS), ids=lambda m: m.__name__)
def test_on_disk_fields(model: type[BaseModel]) -> None:
    # a file's shape also takes the optional $schema key, for editors (contracts/base.py SchemaNamed)
    assert set(model.model_fields) - {"schema_uri"} == FIELDS[model]


def test_variants_that_must_validate() -> None:
    report = SkillEvalReport.model_validate(passing_report())
    assert report.outcome == "pass" and report.waiver is None
    waived = SkillEvalReport.model_validate(load("skill-eval-report"))
    assert base_outcome(waived.deterministic_checks, waived.cases)[0] == "incomplete"

    committed = {"schema_version": 1, "storage_mode": "committed", "git_init": True,
                 "tool_init": ["init", "--json"]}
    assert canonical(SkillEvalSeed.model_validate(committed).to_json_obj()) == canonical(committed)

    case = load("skill-eval-case")
    case["scenario"]["setup"] = [{"id": "stage-fixture-files", "operation": "git-command",
                                  "command": ["git", "add", "--all"]}, ["taskrail", "validate", "--json"]]
    parsed = SkillEvalCase.model_validate(case)
    assert parsed.scenario.setup_argvs() == [["git", "add", "--all"], ["taskrail", "validate", "--json"]]
    assert canonical(parsed.to_json_obj()) == canonical(case)

    # Any tool's operation is a slug ending in -command; the policy, not the contract, says its program.
    case = load("skill-eval-case")
    case["scenario"]["actions"][0].update(operation="tasknote-command", command=["tasknote", "check", "--json"])
    assert SkillEvalCase.model_validate(case).scenario.actions[0].operation == "tasknote-command"

    policy = load("skill-eval-policy")
    committed_only = dict(policy, storage_modes=["committed"], baseline_skills=[],
                          init={"operation": "taskrail-command", "committed": ["init", "--json"]})
    parsed_policy = SkillEvalPolicy.model_validate(committed_only)
    assert parsed_policy.programs() == ["git", "taskrail"]
    assert parsed_policy.operation_of_program("taskrail") == "taskrail-command"
    assert parsed_policy.operation_of_program("make") is None
    assert canonical(parsed_policy.to_json_obj()) == canonical(committed_only)

    facts = SkillEvalFacts.model_validate(load("skill-eval-facts"))
    assert len(facts) == 4 and [f.action for f in facts][2] == "validate-repaired-repository"
    assert facts.to_json_obj() == load("skill-eval-facts")


def test_stage_seal_is_domain_separated_compact_sorted_json() -> None:
    stage = load("skill-eval-stage")
    body = {k: stage[k] for k in ("worksheet", "report", "schema_version")}
    compact = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    assert stage_seal(body) == hashlib.sha256(b"evalkit-skill-eval-stage-v1\x00" + compact).hexdigest()
    assert stage_seal(stage) == stage["seal"] == stage_seal(body)
    body["worksheet"] = body["worksheet"][::-1]
    assert stage_seal(body) != stage["seal"]


DROP = object()
Edit = tuple[tuple[Any, ...], Any]


def edited(doc: Any, edits: list[Edit]) -> Any:
    """``doc`` with each (path, value) applied; a callable value maps the old one, DROP deletes."""
    doc = copy.deepcopy(doc)
    for path, value in edits:
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        if value is DROP:
            del parent[path[-1]]
        elif callable(value):
            parent[path[-1]] = value(parent[path[-1]])
        else:
            parent[path[-1]] = value
    return doc


SOURCES: dict[str, tuple[type[BaseModel], Callable[[], Any]]] = {
    "case": (SkillEvalCase, lambda: load("skill-eval-case")),
    "seed": (SkillEvalSeed, lambda: load("skill-eval-seed")),
    "facts": (SkillEvalFacts, lambda: load("skill-eval-facts")),
    "report": (SkillEvalReport, lambda: load("skill-eval-report")),
    "pass": (SkillEvalReport, passing_report),
    "stage": (SkillEvalStage, lambda: load("skill-eval-stage")),
    "answers": (SkillEvalAnswers, lambda: load("skill-eval-answers")),
    "policy": (SkillEvalPolicy, lambda: load("skill-eval-policy")),
}

ACT = ("scenario", "actions")
ORA = ("oracle", "assertions")
W = ("waiver",)
C = ("cases",)
R = ("report",)
GATES = ["command", "cross-platform", "lifecycle", "machine-api", "parity", "security"]

REJECTIONS: list[tuple[str, str, list[Edit], str]] = [
    # case.json
    ("missing-field", "case", [(("prompt",), DROP)], "prompt: Field required"),
    ("extra-field", "case", [(("notes",), "x")], "notes: Extra inputs are not permitted"),
    ("extra-nested", "case", [(ACT + (0, "timeout"), 5)], "scenario.actions.0.timeout: Extra inputs"),
    ("wrong-enum", "case", [(("storage_mode",), "shared")], "storage_mode: Input should be 'committed' or 'local'"),
    ("schema-version", "case", [(("schema_version",), 2)], "schema_version: Input should be 1"),
    ("schema-version-bool", "case", [(("schema_version",), True)], "schema_version: must be an integer"),
    ("strict-bool", "case", [(("baseline_required",), "true")], "baseline_required: Input should be a valid boolean"),
    ("bad-case-id", "case", [(("case_id",), "Taskrail_Repair")], "case_id: String should match pattern"),
    ("long-case-id", "case", [(("case_id",), "a" * 65)], "case_id: String should have at most 64 characters"),
    ("sandbox", "case", [(("scenario", "sandbox"), "taskrail-repair")],
     "scenario.sandbox: must equal case_id 'taskrail-repair-local'"),
    ("empty-assertions", "case", [(("assertions",), [])], "assertions: must not be empty"),
    ("duplicate-question", "case", [(("human_review_questions",), lambda v: [v[0], v[0]])],
     "human_review_questions[1]: duplicates human_review_questions[0]"),
    ("generic-label-create-isolated-sandbox", "case", [(ACT + (0, "id"), "create-isolated-sandbox"), (ORA + (0, "action"), "create-isolated-sandbox")],
     "scenario.actions[0].id: 'create-isolated-sandbox' is a generic label"),
    ("generic-label-positive", "case", [(ACT + (0, "id"), "positive"), (ORA + (0, "action"), "positive")],
     "scenario.actions[0].id: 'positive' is a generic label"),
    ("generic-label-negative", "case", [(ACT + (0, "id"), "negative"), (ORA + (0, "action"), "negative")],
     "scenario.actions[0].id: 'negative' is a generic label"),
    ("generic-label-recovery", "case", [(ACT + (0, "id"), "recovery"), (ORA + (0, "action"), "recovery")],
     "scenario.actions[0].id: 'recovery' is a generic label"),
    ("generic-label-boundary", "case", [(ACT + (0, "id"), "boundary"), (ORA + (0, "action"), "boundary")],
     "scenario.actions[0].id: 'boundary' is a generic label"),
    ("duplicate-action", "case", [(ACT + (1, "id"), "validate-repaired-repository")],
     "scenario.actions[1].id: duplicates scenario.actions[0].id"),
    ("operation-slug", "case", [(ACT + (0, "operation"), "taskrail")],
     "scenario.actions.0.operation: String should match pattern"),
    ("argv-short", "case", [(ACT + (1, "command"), ["git"])], "scenario.actions[1].command: needs a program"),
    ("argv-empty-part", "case", [(ACT + (1, "command", 1), "")],
     "scenario.actions[1].command[1]: must be a non-empty string without NUL"),
    ("argv-nul", "case", [(("scenario", "setup", 0, 1), "a\x00b")],
     "scenario.setup[0][1]: must be a non-empty string without NUL"),
    ("setup-short", "case", [(("scenario", "setup", 0), ["make"])], "scenario.setup[0]: needs a program"),
    ("oracle-action-twice", "case", [(ORA + (1, "action"), "validate-repaired-repository")],
     "oracle.assertions[1].action: 'validate-repaired-repository' is already checked by oracle.assertions[0]"),
    ("oracle-assertion-twice", "case", [(ORA + (1, "assertion"), "validation passes after repair")],
     "oracle.assertions[1].assertion: 'validation passes after repair' is already mapped"),
    ("oracle-unmapped", "case", [(ORA, lambda v: v[:1])],
     "oracle.assertions: assertion 'repair leaves the Git worktree clean' is not mapped"),
    ("oracle-unchecked-action", "case",
     [(ACT, lambda v: v + [{"id": "list-tasks", "operation": "taskrail-command",
                            "command": ["taskrail", "task", "list", "--json"]}])],
     "oracle.assertions: action 'list-tasks' is not checked"),
    ("oracle-undeclared", "case", [(ORA + (0, "action"), "validate-everything")],
     "oracle.assertions[0].action: 'validate-everything' is not a declared scenario action id"),
    ("oracle-unknown-assertion", "case", [(ORA + (0, "assertion"), "validation passes")],
     "oracle.assertions[0].assertion: 'validation passes' is not one of"),
    ("predicate-enum", "case", [(ORA + (0, "predicate"), "llm-judge")], "oracle.assertions.0.predicate: Input should be"),
    ("predicate-operation", "case", [(ORA + (0, "predicate"), "git-worktree-clean")],
     "oracle.assertions[0].predicate: 'git-worktree-clean' needs a git-command action"),
    ("predicate-dropped", "case", [(ORA + (0, "predicate"), "taskrail-validation-pass")],
     "oracle.assertions.0.predicate: Input should be"),
    # fixture/seed.json
    ("init-empty", "seed", [(("tool_init",), [])], "tool_init: needs at least 1 part(s)"),
    ("init-part", "seed", [(("tool_init", 1), "")], "tool_init[1]: must be a non-empty string"),
    ("init-old-name", "seed", [(("taskrail_init",), ["init", "--json"])], "taskrail_init: Extra inputs"),
    ("local-decoy", "seed", [(("decoy",), DROP)], "decoy: required for storage_mode 'local'"),
    ("local-provenance", "seed", [(("provenance",), None)], "provenance: required for storage_mode 'local'"),
    ("committed-decoy", "seed", [(("storage_mode",), "committed"), (("tool_init",), ["init", "--json"])],
     "decoy: not allowed for storage_mode 'committed'"),
    ("git-init", "seed", [(("git_init",), False)], "git_init: Input should be True"),
    ("git-init-int", "seed", [(("git_init",), 1)], "git_init: must be a boolean"),
    ("decoy-path", "seed", [(("decoy", "path"), "../planning/STATE.md")], "decoy.path: must be a relative slash path"),
    # facts.json
    ("duplicate-fact", "facts", [((3, "action"), "validate-repaired-repository")],
     "[3].action: duplicates [2].action 'validate-repaired-repository'"),
    ("empty-facts", "facts", [((), lambda _: [])], "List should have at least 1 item"),
    ("fact-digest", "facts", [((0, "stdout_sha256"), "ABC")], "0.stdout_sha256: String should match pattern"),
    ("fact-exit-code", "facts", [((0, "exit_code"), "0")], "0.exit_code: Input should be a valid integer"),
    ("fact-missing", "facts", [((1, "validation_passed"), DROP)], "1.validation_passed: Field required"),
    ("fact-extra", "facts", [((1, "changed_paths"), [])], "1.changed_paths: Extra inputs are not permitted"),
    ("fact-argv", "facts", [((2, "command"), ["taskrail"])], "[2].command: needs a program"),
    ("fact-operation", "facts", [((2, "operation"), "validate")], "2.operation: String should match pattern"),
    # report: waiver
    ("unsorted-waiver", "report", [(W + ("compensating_evidence",), lambda v: v[::-1])],
     "waiver.compensating_evidence[1]: not sorted"),
    ("duplicate-waiver", "report", [(W + ("compensating_evidence",), lambda v: [v[0], v[0]])],
     "waiver.compensating_evidence[1]: duplicates waiver.compensating_evidence[0]"),
    ("empty-waiver-array", "report", [(W + ("affected_skills",), [])], "waiver.affected_skills: must not be empty"),
    ("waiver-not-waived", "report", [(("outcome",), "incomplete")],
     "waiver: must be null unless outcome is 'waived'"),
    ("waived-without-waiver", "report", [(W, None)], "waiver: required when outcome is 'waived'"),
    ("waived-missing-gate", "report", [(("deterministic_checks", "evidence"), lambda v: [g for g in v if g != "parity"])],
     "deterministic_checks.evidence: a waived report must name every credential-free gate"),
    ("waived-failed-checks", "report", [(("deterministic_checks", "outcome"), "fail")],
     "outcome: 'waived' only replaces 'incomplete', but the evidence gives 'fail'"),
    ("waived-failed-case", "report", [(C + (2, "candidate", "outcome"), "fail")],
     "outcome: 'waived' only replaces 'incomplete', but the evidence gives 'fail'"),
    ("waiver-cases", "report", [(W + ("affected_cases",), ["taskrail-repair-committed", "taskrail-repair-local"])],
     "waiver.affected_cases: must be exactly the inconclusive cases ['taskrail-repair-local']"),
    ("waiver-skills", "report", [(W + ("affected_skills",), ["taskrail-repair", "taskrail-spec-review"])],
     "waiver.affected_skills: must be exactly"),
    ("waiver-unsafe", "report", [(W + ("followup",), "see ~/notes/rerun.md")],
     "waiver.followup: must not contain a producer-local absolute or home path"),
    # report: cases and bindings
    ("unsorted-cases", "report", [(C, lambda v: [v[0], v[2], v[1]])], "cases[2]: not sorted by (skill, case_id)"),
    ("duplicate-case", "report", [(C + (1, "case_id"), "taskrail-repair-committed")],
     "cases[1].case_id: duplicates cases[0].case_id"),
    ("paired-needs-arms", "report", [(C + (1, "comparison"), "better")],
     "cases[1].comparison: 'better' needs both candidate and baseline arms"),
    ("candidate-only-baseline", "report", [(C + (1, "comparison"), "candidate-only")],
     "cases[1].comparison: 'candidate-only' is only for a case without a required baseline"),
    ("incomplete-not-inconclusive", "pass", [(C + (1, "baseline", "outcome"), "incomplete")],
     "cases[1].comparison: must be 'inconclusive' while required evidence is missing or incomplete"),
    ("unrequired-baseline", "report", [(C + (2, "baseline"), lambda _: load("skill-eval-report")["cases"][0]["baseline"])],
     "cases[2].baseline: must be null when baseline_required is false"),
    ("arm-executable", "report", [(C + (0, "candidate", "executable_sha256"), sha("other build"))],
     "cases[0].candidate.executable_sha256: must equal candidate_executable_sha256"),
    ("timestamp-offset", "report", [(("generated_at",), "2025-06-14T09:30:00+00:00")],
     "generated_at: must be an RFC 3339 UTC timestamp"),
    ("timestamp-range", "report", [(("generated_at",), "2025-13-14T09:30:00Z")],
     "generated_at: must be an RFC 3339 UTC timestamp"),
    ("tested-head", "report", [(("tested_head",), "HEAD")], "tested_head: must be a full lowercase Git object id"),
    ("session-id", "report", [(("session_id",), "Release 0.5")], "session_id: must be a lowercase hyphenated slug"),
    ("unsorted-evidence", "report", [(("deterministic_checks", "evidence"), lambda v: v[::-1])],
     "deterministic_checks.evidence[1]: not sorted"),
    ("adapter-observed", "report", [(("adapter", "observed"), False)], "adapter.observed: must be true"),
    ("report-enum", "report", [(("outcome",), "skipped")], "outcome: Input should be"),
    ("raw-path", "report", [(C + (0, "human_review"), "details in raw/taskrail-repair")],
     "cases[0].human_review: must not point into raw evidence"),
    ("absolute-path", "report", [(("human_review",), "logs at /home/me/evals")],
     "human_review: must not contain a producer-local absolute or home path"),
    ("missing-nullable", "report", [(("waiver",), DROP)], "waiver: Field required"),
    # report: outcome precedence
    ("pass-with-worse", "pass", [(C + (0, "comparison"), "worse")],
     "outcome: must be 'fail' (cases[0].comparison is 'worse'), got 'pass'"),
    ("pass-with-failed-candidate", "pass", [(C + (2, "candidate", "outcome"), "fail")],
     "outcome: must be 'fail' (cases[2].candidate failed), got 'pass'"),
    ("pass-with-failed-grade", "pass", [(C + (0, "candidate", "deterministic_grade"), "fail")],
     "outcome: must be 'fail' (cases[0].candidate failed), got 'pass'"),
    ("pass-with-failed-checks", "pass", [(("deterministic_checks", "outcome"), "fail")],
     "outcome: must be 'fail' (deterministic_checks.outcome is 'fail'), got 'pass'"),
    ("pass-while-inconclusive", "report", [(("outcome",), "pass"), (W, None)],
     "outcome: must be 'incomplete' (cases[1].baseline is missing or incomplete), got 'pass'"),
    ("incomplete-when-passing", "pass", [(("outcome",), "incomplete")], "outcome: must be 'pass'"),
    # stage
    ("wrong-seal", "stage", [(("seal",), sha("forged"))], "seal: does not match the staged report and worksheet"),
    ("tampered-stage", "stage", [(R + C + (0, "candidate", "raw_sha256"), sha("other raw")),
                                 (("worksheet", 0, "candidate", "raw_sha256"), sha("other raw"))],
     "seal: does not match the staged report and worksheet"),
    ("seal-format", "stage", [(("seal",), "not-a-digest")], "seal: String should match pattern"),
    ("worksheet-arm", "stage", [(("worksheet", 0, "candidate", "raw_sha256"), sha("other raw")), ((), reseal)],
     "worksheet[0].candidate: must equal report.cases[0].candidate"),
    ("worksheet-count", "stage", [(("worksheet",), lambda v: v[:2]), ((), reseal)],
     "worksheet: must have one entry per report case (3), got 2"),
    ("stage-comparison", "stage", [(R + C + (0, "comparison"), "same"), ((), reseal)],
     "report.cases[0].comparison: must be 'inconclusive' in a stage"),
    ("stage-review", "stage", [(R + ("human_review",), "premature"), ((), reseal)],
     "report.human_review: must be null in a stage"),
    ("stage-questions", "stage", [(("worksheet", 0, "human_review_questions"), []), ((), reseal)],
     "worksheet[0].human_review_questions: must not be empty"),
    ("stage-report-rules", "stage", [(R + ("outcome",), "pass"), ((), reseal)], "report: outcome: must be 'incomplete'"),
    # answers
    ("duplicate-answer", "answers", [(C + (1, "case_id"), "taskrail-repair-committed")],
     "cases[1].case_id: duplicates cases[0].case_id"),
    ("answer-enum", "answers", [(C + (0, "comparison"), "equal")], "cases.0.comparison: Input should be"),
    ("answer-empty", "answers", [(C, [])], "cases: must not be empty"),
    ("answer-review", "answers", [(C + (2, "human_review"), "")], "cases.2.human_review: String should have at least 1"),
    ("answer-unsafe", "answers", [(("human_review",), "see C:\\evals\\run")],
     "human_review: must not contain a producer-local absolute or home path"),
    # policy.json
    ("policy-no-git", "policy", [(("operations", "git-command"), DROP)], "operations: must declare 'git-command'"),
    ("policy-git-program", "policy", [(("operations", "git-command", "program"), "hg")],
     "operations.git-command.program: must be 'git'"),
    ("policy-git-validation", "policy",
     [(("operations", "git-command", "validation"), {"argv": ["status"], "pointer": "/ok"})],
     "operations.git-command.validation: git validates nothing"),
    ("policy-operation-name", "policy", [(("operations", "taskrail"), {"program": "taskrail2"})],
     "operations.taskrail.[key]: String should match pattern"),
    ("policy-program-path", "policy", [(("operations", "taskrail-command", "program"), "/usr/bin/taskrail")],
     "operations.taskrail-command.program: String should match pattern"),
    ("policy-program-twice", "policy", [(("operations", "other-command"), {"program": "taskrail"})],
     "operations.other-command.program: 'taskrail' is already the program of operation 'taskrail-command'"),
    ("policy-pointer", "policy", [(("operations", "taskrail-command", "validation", "pointer"), "valid")],
     "operations.taskrail-command.validation.pointer: must be an RFC 6901 JSON Pointer"),
    ("policy-pointer-escape", "policy", [(("operations", "taskrail-command", "validation", "pointer"), "/a~2")],
     "operations.taskrail-command.validation.pointer: must be an RFC 6901 JSON Pointer"),
    ("policy-validation-argv", "policy", [(("operations", "taskrail-command", "validation", "argv"), [])],
     "operations.taskrail-command.validation.argv: needs at least 1 part(s)"),
    ("policy-init-unknown", "policy", [(("init", "operation"), "tasknote-command")],
     "init.operation: 'tasknote-command' is not one of operations"),
    ("policy-init-git", "policy", [(("init", "operation"), "git-command")], "init.operation: must be the tool's"),
    ("policy-init-missing-mode", "policy", [(("init", "local"), DROP)],
     "init.local: required, since storage_modes lists 'local'"),
    ("policy-init-extra-mode", "policy", [(("storage_modes",), ["committed"])],
     "init.local: not allowed, since storage_modes does not list 'local'"),
    ("policy-init-empty", "policy", [(("init", "committed"), [])], "init.committed: needs at least 1 part(s)"),
    ("policy-modes-empty", "policy", [(("storage_modes",), []), (("init", "local"), DROP),
                                      (("init", "committed"), DROP)], "storage_modes: must not be empty"),
    ("policy-mode-twice", "policy", [(("storage_modes",), ["local", "committed", "local"])],
     "storage_modes[2]: duplicates storage_modes[0] 'local'"),
    ("policy-mode-enum", "policy", [(("storage_modes",), ["shared"])], "storage_modes.0: Input should be"),
    ("policy-baseline-twice", "policy", [(("baseline_skills",), ["taskrail-repair", "taskrail-repair"])],
     "baseline_skills[1]: duplicates baseline_skills[0]"),
    ("policy-baseline-slug", "policy", [(("baseline_skills",), ["Taskrail Repair"])],
     "baseline_skills.0: String should match pattern"),
    ("policy-tool", "policy", [(("tool",), "Task Rail")], "tool: String should match pattern"),
    ("policy-extra", "policy", [(("operations", "taskrail-command", "flags"), [])],
     "operations.taskrail-command.flags: Extra inputs"),
]


def apply(doc: Any, edits: list[Edit]) -> Any:
    out = doc
    for path, value in edits:
        out = value(out) if path == () else edited(out, [(path, value)])
    return out


@pytest.mark.parametrize(("source", "edits", "expected"), [r[1:] for r in REJECTIONS], ids=[r[0] for r in REJECTIONS])
def test_rule_rejects_with_field_path(source: str, edits: list[Edit], expected: str) -> None:
    model, make = SOURCES[source]
    doc = make()
    model.model_validate(doc)  # the unedited document is valid, so the edit alone is what fails
    with pytest.raises(ValidationError) as info:
        model.model_validate(apply(doc, edits))
    found = failures(info.value)
    assert any(f.startswith(expected) for f in found), found


def test_every_broken_rule_of_a_document_is_reported_at_once() -> None:
    case = load("skill-eval-case")
    case["human_review_questions"] = []
    case["scenario"]["sandbox"] = "taskrail-repair"
    case["oracle"]["assertions"][1]["action"] = "validate-repaired-repository"
    with pytest.raises(ValidationError) as info:
        SkillEvalCase.model_validate(case)
    assert failures(info.value) == [
        "human_review_questions: must not be empty",
        "scenario.sandbox: must equal case_id 'taskrail-repair-local', got 'taskrail-repair'",
        "oracle.assertions[1].action: 'validate-repaired-repository' is already checked by oracle.assertions[0]",
        "oracle.assertions[1].predicate: 'git-worktree-clean' needs a git-command action, "
        "but 'validate-repaired-repository' is a taskrail-command",
        "oracle.assertions: action 'inspect-worktree-status' is not checked by any assertion",
    ]
    policy = load("skill-eval-policy")
    policy["operations"]["git-command"]["program"] = "hg"
    policy["storage_modes"] = ["local", "local"]
    with pytest.raises(ValidationError) as info:
        SkillEvalPolicy.model_validate(policy)
    assert failures(info.value) == [
        "operations.git-command.program: must be 'git', got 'hg'",
        "storage_modes[1]: duplicates storage_modes[0] 'local'",
        "init.committed: not allowed, since storage_modes does not list 'committed'",
    ]
