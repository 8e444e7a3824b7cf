"""Skill evaluations: lint and validate, run sandboxed paired arms, stop for review, resume into a report.

One import for the whole harness; each helper module keeps one concept (the README's skill-eval section
walks through them). Importing it registers the release report's section with the run report.
"""

from __future__ import annotations

from evalkit.skilleval.checks import (
    RegistryCheck,
    check_registry,
    lint_release_skills,
    lint_summary,
    problem_lines,
)
from evalkit.skilleval.digest import DOMAINS, bytes_sha256, file_sha256, outside_git, tree_digest, tree_files
from evalkit.skilleval.executables import BoundExecutable, bind, bind_all
from evalkit.skilleval.gates import GATES, GateProblem
from evalkit.skilleval.grading import AssertionGrade, CaseGrade, grade_case
from evalkit.skilleval.lint import LintReport, SkillDigest, lint_skills
from evalkit.skilleval.policy import load_policy, read_policy, validation_pointer
from evalkit.skilleval.propose import Proposal, failing_cases, propose_patch, skills_diff
from evalkit.skilleval.registry import (
    LoadedCase,
    Registry,
    load_registry,
    registry_problems,
    uncovered_skills,
)
from evalkit.skilleval.report_view import (
    RUN_REPORT_FILE,
    outcome_reason,
    render_report_page,
    report_section,
    report_section_of_file,
    write_report_page,
    write_report_page_of_file,
)
from evalkit.skilleval.resume import build_report, exit_code, outcome_line, render_report, resume
from evalkit.skilleval.run_gates import run_gates
from evalkit.skilleval.run_request import RunRequest, SealedRun, plan_run, run_release
from evalkit.skilleval.runner import RunPlan, run_stage
from evalkit.skilleval.stage import ArmEvidence, StageInputs, arm_evidence, read_stage, stage_inputs
from evalkit.skilleval.worksheet import allowed_comparisons, render_worksheet, write_worksheet

__all__ = [
    "DOMAINS",
    "GATES",
    "RUN_REPORT_FILE",
    "ArmEvidence",
    "AssertionGrade",
    "BoundExecutable",
    "CaseGrade",
    "GateProblem",
    "LintReport",
    "LoadedCase",
    "Proposal",
    "Registry",
    "RegistryCheck",
    "RunPlan",
    "RunRequest",
    "SealedRun",
    "SkillDigest",
    "StageInputs",
    "allowed_comparisons",
    "arm_evidence",
    "bind",
    "bind_all",
    "build_report",
    "bytes_sha256",
    "check_registry",
    "exit_code",
    "failing_cases",
    "file_sha256",
    "grade_case",
    "lint_release_skills",
    "lint_skills",
    "lint_summary",
    "load_policy",
    "load_registry",
    "outcome_line",
    "outcome_reason",
    "outside_git",
    "plan_run",
    "problem_lines",
    "propose_patch",
    "read_policy",
    "read_stage",
    "registry_problems",
    "render_report",
    "render_report_page",
    "render_worksheet",
    "report_section",
    "report_section_of_file",
    "resume",
    "run_gates",
    "run_release",
    "run_stage",
    "skills_diff",
    "stage_inputs",
    "tree_digest",
    "tree_files",
    "uncovered_skills",
    "validation_pointer",
    "write_report_page",
    "write_report_page_of_file",
    "write_worksheet",
]
