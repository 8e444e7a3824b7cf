"""Skill-eval outputs in Taskrail's snake_case shapes: the report, the sealed stage, the answers.

A run stops after execution with a *stage*: the draft report (every comparison still
``inconclusive``, no reviews) plus a worksheet for the human, sealed by a domain-separated sha256.
The human's *answers* give one comparison and review per case; resuming yields the final *report*.

The report is a safe summary: its free text carries no NUL, no ``raw/`` and no producer-local
absolute path. Its ``outcome`` must follow from its evidence: ``fail`` (failed deterministic checks,
a failed candidate, a ``worse`` case) beats ``pass`` (every candidate passed, required baselines
complete, every case ``same``/``better``/``candidate-only``), and anything else is ``incomplete``.
An ``incomplete`` report may be ``waived`` by a named maintainer whose waiver covers exactly the
inconclusive cases; a waiver never covers a failure.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Literal

from pydantic import model_validator

from evalkit.contracts.base import SchemaNamed
from evalkit.contracts.skilleval_case import (
    CaseId,
    SchemaVersion,
    Sha256,
    SkillEvalContract,
    Slug,
    StorageMode,
    Text,
    check_sorted_strings,
    check_strings,
)

RunOutcome = Literal["pass", "fail", "incomplete"]
ReportOutcome = Literal["pass", "fail", "incomplete", "waived"]
Grade = Literal["pass", "fail"]
Comparison = Literal["same", "better", "worse", "candidate-only", "inconclusive"]

COMPARISONS: tuple[str, ...] = Comparison.__args__  # type: ignore[attr-defined]
PAIRED_COMPARISONS: frozenset[str] = frozenset({"same", "better", "worse"})

WAIVER_REQUIRED_CHECKS: tuple[str, ...] = (
    "command", "cross-platform", "lifecycle", "machine-api", "parity", "security")
"""Credential-free gates a waived report's deterministic-check evidence must all name."""

STAGE_SEAL_DOMAIN = b"evalkit-skill-eval-stage-v1\x00"
"""evalkit's own domain for stage seals (the seed's is ``taskrail-skill-eval-stage-v1``)."""

_GIT_OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z")
_SESSION_ID = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
LOCAL_PATH = re.compile(r"(?i)(^|[\s(\[='\"]|:(?!//))(/|~/|~\\|[a-z]:[\\/]|\\\\)|file:/")
"""The safe-summary rule: a string matching this names a local path (absolute, ``~``, drive, UNC or a
``file:`` URL) and is refused; a web address (``https://host/path``) is not a local path."""


def check_summary(text: str, at: str) -> None:
    """Free text safe to commit: non-empty, no NUL, no ``raw/``, no absolute or home path."""
    if not text:
        raise ValueError(f"{at}: must not be empty")
    if "\x00" in text:
        raise ValueError(f"{at}: must not contain a NUL character")
    if "raw/" in text:
        raise ValueError(f"{at}: must not point into raw evidence ('raw/')")
    if LOCAL_PATH.search(text):
        raise ValueError(f"{at}: must not contain a producer-local absolute or home path")


class RunResult(SkillEvalContract):
    """One arm (candidate or baseline) of one case: its outcome, grade and evidence digests."""

    outcome: RunOutcome
    skill_sha256: Sha256
    executable_sha256: Sha256
    deterministic_grade: Grade
    raw_sha256: Sha256


class ReportCase(SkillEvalContract):
    """One case in a report; a missing arm is null, a human review is null until resumed."""

    case_id: CaseId
    skill: Slug
    storage_mode: StorageMode
    fixture_sha256: Sha256
    baseline_required: bool
    candidate: RunResult | None
    baseline: RunResult | None
    comparison: Comparison
    human_review: str | None

    @property
    def complete(self) -> bool:
        """Whether every required arm exists and is not ``incomplete``."""
        arms = [self.candidate, self.baseline] if self.baseline_required else [self.candidate]
        return all(arm is not None and arm.outcome != "incomplete" for arm in arms)


GateOutcome = Literal["pass", "fail", "not-run"]


class GateResult(SkillEvalContract):
    """One credential-free gate evalkit ran itself: its outcome, what it checked, and each problem found.

    ``not-run`` says why the gate could not run (no command table, no mirror); such a gate is not evidence.
    """

    name: Text
    outcome: GateOutcome
    checked: Text
    problems: list[Text]


class DeterministicChecks(SkillEvalContract):
    """The credential-free checks: one outcome, the sorted names of the gates that ran, and each gate's result.

    ``gates`` (absent in reports written before evalkit ran the gates itself) records each gate; then
    ``evidence`` is exactly the gates that ran, and ``outcome`` is ``pass`` only when none failed.
    """

    outcome: Grade
    evidence: list[Text]
    gates: list[GateResult] | None = None

    @model_validator(mode="after")
    def _rules(self) -> DeterministicChecks:
        if self.gates is None:
            return self
        ran = sorted(g.name for g in self.gates if g.outcome != "not-run")
        if sorted(self.evidence) != ran:
            raise ValueError(f"deterministic_checks.evidence: must be the gates that ran {ran!r}, got {self.evidence!r}")
        failed = any(g.outcome == "fail" for g in self.gates)
        if self.outcome != ("fail" if failed else "pass"):
            raise ValueError(f"deterministic_checks.outcome: must be {'fail' if failed else 'pass'!r} by its gates")
        return self


class ReleaseRecord(SkillEvalContract):
    """What makes a report fit to release beyond its outcome, decided when the arms ran.

    ``provenance_verified``: the product was a clean worktree on an attached HEAD equal to ``tested_head``
    (false only with ``--allow-dirty``: the report is then not releasable). ``baseline_executable``:
    ``distinct`` from the candidate's, ``declared-identical`` by the maintainer, or ``unused`` (no
    baseline arm ran). ``final_case_set``: the registry was marked final, and resume found it untouched. ``uncovered_skills``: candidate skills
    without cases; any makes the outcome ``incomplete``, which no waiver covers. ``confined``: every arm's
    commands ran with the file system outside their sandbox read-only (false: this machine could not
    confine them, and they ran unconfined). ``watched``: what was checked unchanged after each arm.
    """

    provenance_verified: bool
    baseline_executable: Literal["distinct", "declared-identical", "unused"]
    final_case_set: bool
    uncovered_skills: list[Slug]
    confined: bool
    watched: list[Text]


class Waiver(SkillEvalContract):
    """A named maintainer's acceptance of unavailable behavioural evidence (never of failures)."""

    approver: Text
    reason: Text
    unavailable_capability: Text
    affected_skills: list[Slug]
    affected_cases: list[CaseId]
    residual_risk: Text
    compensating_evidence: list[Text]
    followup: Text


class SkillSetBinding(SkillEvalContract):
    """A released skill set an arm ran: its Taskrail version and the digest of its skill bytes."""

    version: Text
    skills_sha256: Sha256


class AdapterIdentity(SkillEvalContract):
    """The caller-owned adapter; ``observed`` is true when at least one arm produced evidence."""

    name: Text
    version: Text
    observed: bool


def base_outcome(checks: DeterministicChecks, cases: Sequence[ReportCase],
                 uncovered: Sequence[str] = ()) -> tuple[str, str]:
    """The outcome the evidence gives (``fail`` > ``pass`` > ``incomplete``) and the reason why.

    ``uncovered`` names candidate skills without cases: they keep the outcome from ``pass``.
    """
    if checks.outcome == "fail":
        return "fail", "deterministic_checks.outcome is 'fail'"
    for i, case in enumerate(cases):
        cand = case.candidate
        if cand is not None and "fail" in (cand.outcome, cand.deterministic_grade):
            return "fail", f"cases[{i}].candidate failed"
        if case.comparison == "worse":
            return "fail", f"cases[{i}].comparison is 'worse'"
    if uncovered:
        return "incomplete", f"skill(s) without cases: {', '.join(uncovered)}"
    for i, case in enumerate(cases):
        cand = case.candidate
        if cand is None or (cand.outcome, cand.deterministic_grade) != ("pass", "pass"):
            return "incomplete", f"cases[{i}].candidate did not pass"
        if not case.complete:
            return "incomplete", f"cases[{i}].baseline is missing or incomplete"
        if case.comparison not in ("same", "better", "candidate-only"):
            return "incomplete", f"cases[{i}].comparison is {case.comparison!r}"
    return "pass", "every case passed"


class SkillEvalReport(SkillEvalContract, SchemaNamed):
    """The committed release-evaluation summary of one session (schema v1)."""

    schema_version: SchemaVersion
    session_id: Text
    generated_at: Text
    tested_head: Text
    candidate_executable_sha256: Sha256
    baseline_executable_sha256: Sha256
    product_sha256: Sha256
    outcome: ReportOutcome
    candidate: SkillSetBinding
    baseline: SkillSetBinding
    fixtures_sha256: Sha256
    adapter: AdapterIdentity
    model: dict[str, Any]
    cases: list[ReportCase]
    deterministic_checks: DeterministicChecks
    human_review: str | None
    waiver: Waiver | None
    release: ReleaseRecord | None = None

    @property
    def uncovered_skills(self) -> list[str]:
        """Candidate skills the run had no cases for (none for a report without a release record)."""
        return [] if self.release is None else list(self.release.uncovered_skills)

    @property
    def releasable(self) -> bool:
        """Whether this report lets a maintainer ship: outcome pass or waived, and verified provenance."""
        return self.outcome in ("pass", "waived") and (self.release is None or self.release.provenance_verified)

    @model_validator(mode="after")
    def _rules(self) -> SkillEvalReport:
        if not _SESSION_ID.fullmatch(self.session_id) or len(self.session_id) > 64:
            raise ValueError(f"session_id: must be a lowercase hyphenated slug of at most 64 bytes, "
                             f"got {self.session_id!r}")
        if not _TIMESTAMP.fullmatch(self.generated_at) or not _parses(self.generated_at):
            raise ValueError(f"generated_at: must be an RFC 3339 UTC timestamp ending in 'Z', "
                             f"got {self.generated_at!r}")
        if not _GIT_OBJECT_ID.fullmatch(self.tested_head):
            raise ValueError(f"tested_head: must be a full lowercase Git object id, got {self.tested_head!r}")
        check_sorted_strings(self.deterministic_checks.evidence, "deterministic_checks.evidence")
        if self.human_review is not None:
            check_summary(self.human_review, "human_review")
        self._check_cases()
        observed = any(c.candidate is not None or c.baseline is not None for c in self.cases)
        if self.adapter.observed != observed:
            raise ValueError(f"adapter.observed: must be {str(observed).lower()}: "
                             f"{'some' if observed else 'no'} case has an arm")
        self._check_outcome()
        return self

    def _check_cases(self) -> None:
        if not self.cases:
            raise ValueError("cases: must not be empty")
        first: dict[str, int] = {}
        for i, case in enumerate(self.cases):
            at = f"cases[{i}]"
            if case.case_id in first:
                raise ValueError(f"{at}.case_id: duplicates cases[{first[case.case_id]}].case_id {case.case_id!r}")
            first[case.case_id] = i
            prev = self.cases[i - 1] if i else None
            if prev is not None and (case.skill, case.case_id) < (prev.skill, prev.case_id):
                raise ValueError(f"{at}: not sorted by (skill, case_id): ({case.skill!r}, {case.case_id!r}) "
                                 f"comes after ({prev.skill!r}, {prev.case_id!r})")
            for arm, executable in (("candidate", self.candidate_executable_sha256),
                                    ("baseline", self.baseline_executable_sha256)):
                run = getattr(case, arm)
                if run is not None and run.executable_sha256 != executable:
                    raise ValueError(f"{at}.{arm}.executable_sha256: must equal {arm}_executable_sha256")
            if case.baseline is not None and not case.baseline_required:
                raise ValueError(f"{at}.baseline: must be null when baseline_required is false")
            if case.comparison in PAIRED_COMPARISONS and (case.candidate is None or case.baseline is None):
                raise ValueError(f"{at}.comparison: {case.comparison!r} needs both candidate and baseline arms")
            if case.comparison == "candidate-only" and case.baseline_required:
                raise ValueError(f"{at}.comparison: 'candidate-only' is only for a case without a required baseline")
            if case.comparison != "inconclusive" and not case.complete:
                raise ValueError(f"{at}.comparison: must be 'inconclusive' while required evidence is missing "
                                 f"or incomplete, got {case.comparison!r}")
            if case.human_review is not None:
                check_summary(case.human_review, f"{at}.human_review")

    def _check_outcome(self) -> None:
        if self.uncovered_skills:
            check_sorted_strings(self.uncovered_skills, "release.uncovered_skills")
        base, why = base_outcome(self.deterministic_checks, self.cases, self.uncovered_skills)
        if self.outcome != "waived":
            if self.waiver is not None:
                raise ValueError(f"waiver: must be null unless outcome is 'waived', got outcome {self.outcome!r}")
            if self.outcome != base:
                raise ValueError(f"outcome: must be {base!r} ({why}), got {self.outcome!r}")
            return
        if self.waiver is None:
            raise ValueError("waiver: required when outcome is 'waived'")
        if base != "incomplete":
            raise ValueError(f"outcome: 'waived' only replaces 'incomplete', but the evidence gives {base!r} ({why})")
        if self.uncovered_skills:
            raise ValueError(f"outcome: a waiver never covers skills without cases ({', '.join(self.uncovered_skills)})")
        if self.deterministic_checks.outcome != "pass":
            raise ValueError("deterministic_checks.outcome: must be 'pass' for a waived report")
        missing = [g for g in WAIVER_REQUIRED_CHECKS if g not in self.deterministic_checks.evidence]
        if missing:
            raise ValueError(f"deterministic_checks.evidence: a waived report must name every credential-free "
                             f"gate; missing {missing!r}")
        waiver = self.waiver
        for name in ("approver", "reason", "unavailable_capability", "residual_risk", "followup"):
            check_summary(getattr(waiver, name), f"waiver.{name}")
        for name in ("affected_skills", "affected_cases", "compensating_evidence"):
            check_sorted_strings(getattr(waiver, name), f"waiver.{name}")
        for i, text in enumerate(waiver.compensating_evidence):
            check_summary(text, f"waiver.compensating_evidence[{i}]")
        open_cases = [c for c in self.cases if c.comparison == "inconclusive"]
        want_cases = sorted(c.case_id for c in open_cases)
        want_skills = sorted({c.skill for c in open_cases})
        if waiver.affected_cases != want_cases:
            raise ValueError(f"waiver.affected_cases: must be exactly the inconclusive cases {want_cases!r}, "
                             f"got {waiver.affected_cases!r}")
        if waiver.affected_skills != want_skills:
            raise ValueError(f"waiver.affected_skills: must be exactly the skills of the inconclusive cases "
                             f"{want_skills!r}, got {waiver.affected_skills!r}")


def _parses(timestamp: str) -> bool:
    try:
        datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


# -- stage ----------------------------------------------------------------------------------------

class WorksheetEntry(SkillEvalContract):
    """What the human reviewer sees for one case: its questions and the frozen arm results."""

    case_id: CaseId
    skill: Slug
    human_review_questions: list[Text]
    candidate: RunResult | None
    baseline: RunResult | None


def stage_seal(stage: Mapping[str, Any]) -> str:
    """The seal of a stage: sha256 hex of the domain, a NUL and the compact sorted-key JSON of its
    ``schema_version``, ``report`` and ``worksheet`` (any other key, e.g. ``seal``, is ignored)."""
    payload = {key: stage[key] for key in ("schema_version", "report", "worksheet")}
    # io.canonical.compact_json's text, spelled out here because contracts import nothing from evalkit
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(STAGE_SEAL_DOMAIN + text.encode("utf-8")).hexdigest()


class SkillEvalStage(SkillEvalContract, SchemaNamed):
    """Sealed evidence between execution and human review: a draft report and its worksheet.

    The draft carries no comparison but ``inconclusive``, no human review and no waiver; the
    worksheet lists the report's cases in order with identical arms.
    """

    schema_version: SchemaVersion
    report: SkillEvalReport
    worksheet: list[WorksheetEntry]
    seal: Sha256

    @model_validator(mode="after")
    def _rules(self) -> SkillEvalStage:
        report = self.report
        if report.waiver is not None:
            raise ValueError("report.waiver: must be null in a stage")
        if report.human_review is not None:
            raise ValueError("report.human_review: must be null in a stage; reviews come with the answers")
        for i, case in enumerate(report.cases):
            if case.comparison != "inconclusive":
                raise ValueError(f"report.cases[{i}].comparison: must be 'inconclusive' in a stage, "
                                 f"got {case.comparison!r}")
            if case.human_review is not None:
                raise ValueError(f"report.cases[{i}].human_review: must be null in a stage")
        if len(self.worksheet) != len(report.cases):
            raise ValueError(f"worksheet: must have one entry per report case ({len(report.cases)}), "
                             f"got {len(self.worksheet)}")
        for i, (entry, case) in enumerate(zip(self.worksheet, report.cases, strict=True)):
            for name in ("case_id", "skill", "candidate", "baseline"):
                if getattr(entry, name) != getattr(case, name):
                    raise ValueError(f"worksheet[{i}].{name}: must equal report.cases[{i}].{name}")
            check_strings(entry.human_review_questions, f"worksheet[{i}].human_review_questions")
            for j, question in enumerate(entry.human_review_questions):
                check_summary(question, f"worksheet[{i}].human_review_questions[{j}]")
        expected = stage_seal({"schema_version": self.schema_version, "report": report.to_json_obj(),
                               "worksheet": [entry.to_json_obj() for entry in self.worksheet]})
        if self.seal != expected:
            raise ValueError("seal: does not match the staged report and worksheet; the stage was modified")
        return self


# -- answers --------------------------------------------------------------------------------------

class CaseAnswer(SkillEvalContract):
    """The human's conclusion for one staged case."""

    case_id: CaseId
    comparison: Comparison
    human_review: Text


class SkillEvalAnswers(SkillEvalContract, SchemaNamed):
    """The reviewed worksheet: an overall review and one answer per staged case."""

    schema_version: SchemaVersion
    human_review: Text
    cases: list[CaseAnswer]

    @model_validator(mode="after")
    def _rules(self) -> SkillEvalAnswers:
        check_summary(self.human_review, "human_review")
        if not self.cases:
            raise ValueError("cases: must not be empty")
        first: dict[str, int] = {}
        for i, answer in enumerate(self.cases):
            if answer.case_id in first:
                raise ValueError(f"cases[{i}].case_id: duplicates cases[{first[answer.case_id]}].case_id "
                                 f"{answer.case_id!r}")
            first[answer.case_id] = i
            check_summary(answer.human_review, f"cases[{i}].human_review")
        return self
