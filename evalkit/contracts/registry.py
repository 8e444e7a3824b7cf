"""Every contract by its kind name, and how a kind is recognised from a file's name or content."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from evalkit.contracts.annotation import Annotation, ReviewExport, Taxonomy
from evalkit.contracts.batch import Batch, BatchIndex
from evalkit.contracts.behavior_tree import BehaviorTree
from evalkit.contracts.dataset import AgentRun, Dataset, InterviewAnswers
from evalkit.contracts.edd import ChangeRequestResponse, EddChangeRequest
from evalkit.contracts.flow import ExpectedFlow, FlowGraph
from evalkit.contracts.history import HistoryRecord
from evalkit.contracts.judge import JudgeOutput, JudgeSpec
from evalkit.contracts.judge_run import JudgeRunRecord
from evalkit.contracts.kinds import KINDS
from evalkit.contracts.labels import HumanLabel, LedgerEntry, ValidationResult
from evalkit.contracts.matrix import EvalMatrix
from evalkit.contracts.methodology import MethodologyReview
from evalkit.contracts.modes import DraftTaxonomy, Ratification
from evalkit.contracts.scorecard import Scorecard
from evalkit.contracts.skilleval import (
    SkillEvalAnswers,
    SkillEvalCase,
    SkillEvalFacts,
    SkillEvalPolicy,
    SkillEvalReport,
    SkillEvalSeed,
    SkillEvalStage,
)
from evalkit.contracts.subject import Subject
from evalkit.contracts.summary import NotebookSummary
from evalkit.contracts.trace import Trace
from evalkit.contracts.verdict import CriterionVerdict

CONTRACTS: Mapping[str, type[BaseModel]] = {
    "eval-matrix": EvalMatrix,
    "dataset": Dataset,
    "behavior-tree": BehaviorTree,
    "flow-graph": FlowGraph,
    "expected-flow": ExpectedFlow,
    "methodology-review": MethodologyReview,
    "scorecard": Scorecard,
    "agent-run": AgentRun,
    "edd-change-request": EddChangeRequest,
    "change-request-response": ChangeRequestResponse,
    "criterion-verdict": CriterionVerdict,
    "human-label": HumanLabel,
    "validation-result": ValidationResult,
    "ledger-entry": LedgerEntry,
    "annotation": Annotation,
    "taxonomy": Taxonomy,
    "review-export": ReviewExport,
    "draft-taxonomy": DraftTaxonomy,
    "ratification": Ratification,
    "trace": Trace,
    "skill-eval-case": SkillEvalCase,
    "skill-eval-seed": SkillEvalSeed,
    "skill-eval-facts": SkillEvalFacts,
    "skill-eval-stage": SkillEvalStage,
    "skill-eval-answers": SkillEvalAnswers,
    "skill-eval-report": SkillEvalReport,
    "skill-eval-policy": SkillEvalPolicy,
    "subject": Subject,
    "notebook-summary": NotebookSummary,
    "judge-spec": JudgeSpec,
    "judge-output": JudgeOutput,
    "judge-run-record": JudgeRunRecord,
    "batch": Batch,
    "batch-index": BatchIndex,
    "history-record": HistoryRecord,
    "interview-answers": InterviewAnswers,
}
"""Kind name (kebab-case, as in ``<kind>.schema.json``) to contract class."""

# The command line lists the kinds from evalkit.contracts.kinds without loading the models: a kind added
# here and not there (or in another order) would be missing from --help and --kind.
if tuple(CONTRACTS) != KINDS:
    raise RuntimeError("evalkit.contracts.kinds.KINDS must list the kinds of CONTRACTS, in order: "
                       f"{list(CONTRACTS)}")

LIST_ROOTED: frozenset[str] = frozenset({"skill-eval-facts"})
"""Kinds whose document is a JSON array, not an object."""

# Keys whose presence identifies a record's kind: all of a kind's required, distinctive keys.
_SIGNATURES: Mapping[str, frozenset[str]] = {
    "eval-matrix": frozenset({"designPrinciples", "components"}),
    "dataset": frozenset({"dimensions", "cases"}),
    "behavior-tree": frozenset({"root", "nodes"}),
    "flow-graph": frozenset({"traceId", "nodes", "edges", "unthreadedOutputs"}),
    "expected-flow": frozenset({"dispatchToolNames", "edges", "expectedUiSlots"}),
    "methodology-review": frozenset({"subject", "items", "generatedAt"}),
    "scorecard": frozenset({"matrixVersion", "traceCount", "verdict", "components"}),
    "agent-run": frozenset({"caseId", "repeat", "status"}),
    "edd-change-request": frozenset({"requestId", "swing"}),
    "change-request-response": frozenset({"requestId", "status", "note"}),
    "criterion-verdict": frozenset({"criterionId", "traceId", "result"}),
    "human-label": frozenset({"traceId", "label"}),
    "validation-result": frozenset({"criterionId", "judgeModel", "labelCount"}),
    "ledger-entry": frozenset({"criterionId", "promptDigest", "testSetDigest"}),
    "annotation": frozenset({"traceId", "annotator", "at", "label"}),
    "taxonomy": frozenset({"subject", "version", "modes"}),
    "review-export": frozenset({"format", "annotator", "annotations"}),
    "draft-taxonomy": frozenset({"format", "draftedBy", "modes"}),
    "ratification": frozenset({"format", "draftDigest", "decisions"}),
    "trace": frozenset({"id", "observations"}),
    "skill-eval-case": frozenset({"case_id", "scenario", "oracle"}),
    "skill-eval-seed": frozenset({"git_init", "tool_init"}),
    "skill-eval-facts": frozenset({"action", "exit_code", "stdout_sha256"}),
    "skill-eval-stage": frozenset({"worksheet", "seal"}),
    "skill-eval-answers": frozenset({"human_review", "cases"}),
    "skill-eval-report": frozenset({"session_id", "outcome", "deterministic_checks", "cases", "human_review"}),
    "skill-eval-policy": frozenset({"operations", "init", "storage_modes", "baseline_skills"}),
    "subject": frozenset({"name", "traces", "notebooks"}),
    "notebook-summary": frozenset({"notebook", "title", "subject", "conclusion"}),
    "judge-spec": frozenset({"id", "criterion", "pass", "fail"}),
    "judge-output": frozenset({"critique", "refs", "assumptions", "result", "confidence", "blockedBy"}),
    "judge-run-record": frozenset({"criterionId", "traceId", "repeat", "promptDigest", "attempts", "cached",
                                   "result"}),
    "batch": frozenset({"name", "subjects"}),
    "batch-index": frozenset({"batch", "rows"}),
    "history-record": frozenset({"id", "series", "source", "inputs", "headline"}),
    "interview-answers": frozenset({"dimensions", "seeds"}),
}

# Keys whose presence rules a kind out: a judge's reply is a verdict's fields without its ids.
_EXCLUDED_BY: Mapping[str, frozenset[str]] = {
    "judge-output": frozenset({"criterionId", "traceId"}),
    "taxonomy": frozenset({"draftedBy"}),  # a draft is not a taxonomy until a person ratifies it
}

# File names a skill-eval registry fixes (case.json, fixture/seed.json, facts.json, policy.json) identify
# their kind too.
_FILE_NAMES: Mapping[str, str] = {
    "case": "skill-eval-case",
    "seed": "skill-eval-seed",
    "facts": "skill-eval-facts",
    "policy": "skill-eval-policy",
    "summary": "notebook-summary",
    "failure-modes": "taxonomy",  # the name the README and the sample give a subject's taxonomy
}


def kind_from_filename(name: str) -> str | None:
    """The kind a file name declares: ``eval-matrix.yaml``, ``run1.criterion-verdict.jsonl``, ``case.json``."""
    stem = name.split("/")[-1]
    for suffix in (".schema.json", ".jsonl", ".json", ".yaml", ".yml"):
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    last = stem.rsplit(".", 1)[-1]
    for candidate in (stem, last):
        if candidate in CONTRACTS:
            return candidate
        for plural_suffix in ("s",):
            if candidate.endswith(plural_suffix) and candidate[:-1] in CONTRACTS:
                return candidate[:-1]
    return _FILE_NAMES.get(stem)


def kinds_matching(record: Any) -> list[str]:
    """The kinds a record's keys identify, most specific first (may be empty or several)."""
    if isinstance(record, list):
        if record and all(isinstance(r, dict) for r in record):
            keys = set(record[0])
            return [k for k in LIST_ROOTED if _SIGNATURES[k] <= keys]
        return []
    if not isinstance(record, dict):
        return []
    keys = set(record)
    hits = [k for k, sig in _SIGNATURES.items()
            if k not in LIST_ROOTED and sig <= keys and not _EXCLUDED_BY.get(k, frozenset()) & keys]
    if not hits and _looks_like_modes(record.get("modes")):
        # A taxonomy written without its subject or version is still one: validation says what it lacks.
        return ["taxonomy"]
    # A kind whose signature is contained in another hit's signature is the less specific reading.
    return [k for k in hits if not any(_SIGNATURES[k] < _SIGNATURES[o] for o in hits)]


def _looks_like_modes(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(m, dict) and "id" in m for m in value)
