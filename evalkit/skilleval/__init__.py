"""Skill evaluations: lint and validate, run sandboxed paired arms, stop for review, resume into a report.

One import for the whole harness; each helper module keeps one concept (see ``/work/coord/SKILLEVAL.md``).
"""

from __future__ import annotations

from evalkit.skilleval.digest import DOMAINS, bytes_sha256, file_sha256, outside_git, tree_digest, tree_files
from evalkit.skilleval.executables import BoundExecutable, bind, bind_all
from evalkit.skilleval.grading import AssertionGrade, CaseGrade, grade_case
from evalkit.skilleval.lint import LintReport, SkillDigest, lint_skills
from evalkit.skilleval.policy import load_policy, read_policy, validation_pointer
from evalkit.skilleval.registry import LoadedCase, Registry, load_registry, registry_problems
from evalkit.skilleval.report_view import render_report_page, report_section, write_report_page
from evalkit.skilleval.resume import build_report, render_report, resume
from evalkit.skilleval.runner import RunPlan, run_stage
from evalkit.skilleval.stage import ArmEvidence, StageInputs, arm_evidence, read_stage, stage_inputs
from evalkit.skilleval.worksheet import allowed_comparisons, render_worksheet, write_worksheet

__all__ = [
    "DOMAINS",
    "ArmEvidence",
    "AssertionGrade",
    "BoundExecutable",
    "CaseGrade",
    "LintReport",
    "LoadedCase",
    "Registry",
    "RunPlan",
    "SkillDigest",
    "StageInputs",
    "allowed_comparisons",
    "arm_evidence",
    "bind",
    "bind_all",
    "build_report",
    "bytes_sha256",
    "file_sha256",
    "grade_case",
    "lint_skills",
    "load_policy",
    "load_registry",
    "outside_git",
    "read_policy",
    "read_stage",
    "registry_problems",
    "render_report",
    "render_report_page",
    "render_worksheet",
    "report_section",
    "resume",
    "run_stage",
    "stage_inputs",
    "tree_digest",
    "tree_files",
    "validation_pointer",
    "write_report_page",
    "write_worksheet",
]
