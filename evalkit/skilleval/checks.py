"""The credential-free checks before a run, as their commands report them: skill lint and registry validation.

``evalkit skill-eval lint`` and ``validate`` print what these return: the problems one line each
(``FILE[:LINE]: member.path: message``) and a count, or a summary of what was checked; ``--json`` prints
:meth:`LintReport.to_json_obj` or :meth:`RegistryCheck.to_json_obj`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit.errors import InputError
from evalkit.skilleval.lint import SKILL_FILE, LintReport, lint_skills
from evalkit.skilleval.policy import POLICY_FILE, load_policy
from evalkit.skilleval.registry import CASES_DIR, Registry, registry_problems, uncovered_skills
from evalkit.skilleval.registry_tree import shown


def problem_lines(problems: list[InputError]) -> list[str]:
    """One line per problem, then their count ("1 problem", "3 problems")."""
    count = len(problems)
    return [problem.render() for problem in problems] + [f"{count} problem{'' if count == 1 else 's'}"]


def lint_release_skills(skills_dir: str | Path, *, mirror: str | Path | None = None,
                        policy: str | Path | None = None) -> LintReport:
    """Lint a skills folder as ``evalkit skill-eval lint`` does.

    Args:
        skills_dir: the folder holding ``<skill>/SKILL.md``.
        mirror: a copy of the same skills that must be byte-identical, or None.
        policy: a registry's ``policy.json``, or the registry folder holding it, or None (commands unchecked).

    Raises:
        RegistryInvalid: the policy file is not a valid policy.
    """
    loaded = None
    cases_dir = None
    if policy is not None:
        path = Path(policy)
        policy_file = path / POLICY_FILE if path.is_dir() else path
        loaded = load_policy(policy_file)
        # A policy inside a registry: its cases/ say which skills have cases (coverage)
        cases_dir = policy_file.parent / CASES_DIR if (policy_file.parent / CASES_DIR).is_dir() else None
    return lint_skills(skills_dir, mirror=mirror, policy=loaded, cases_dir=cases_dir)


def lint_summary(report: LintReport, skills_dir: str | Path, mirror: str | Path | None = None) -> list[str]:
    """What ``lint`` prints for a report without problems: what was checked, then each skill's digest.

    Args:
        report: the lint report.
        skills_dir: the skills folder as the user wrote it.
        mirror: the mirror folder as the user wrote it, or None.
    """
    parts = [f"{len(report.skills)} skill{'' if len(report.skills) == 1 else 's'}"]
    parts.append("commands allowed by the policy" if report.commands_checked else "commands not checked (no --policy)")
    if report.coverage_checked:
        parts.append("every skill has cases")
    if mirror is not None:
        parts.append(f"byte-identical to {mirror}")
    return [f"{skills_dir}: ok ({', '.join(parts)})", *(f"  {s.name}  {s.sha256}" for s in report.skills)]


@dataclass
class RegistryCheck:
    """A registry validated as ``evalkit skill-eval validate`` does: the registry when valid, and every problem."""

    path: str
    registry: Registry | None
    problems: list[InputError] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.registry is not None

    def to_json_obj(self) -> dict[str, Any]:
        """The result as JSON (``--json``): ok, the cases and the problems with file, line, path, message."""
        cases = [] if self.registry is None else [
            {"caseId": c.case.case_id, "skill": c.case.skill, "storageMode": c.case.storage_mode,
             "baselineRequired": c.case.baseline_required} for c in self.registry.cases]
        return {"ok": self.ok, "registry": self.path, "cases": cases,
                "problems": [{"file": p.file, "line": p.line, "path": p.path, "message": p.message}
                             for p in self.problems]}

    def summary(self) -> str:
        """The line ``validate`` prints for a valid registry."""
        assert self.registry is not None
        policy = self.registry.policy
        return (f"{self.path}: ok ({len(self.registry.cases)} cases, {len(self.registry.skills())} skills, storage "
                f"modes {', '.join(policy.storage_modes)}; programs {', '.join(policy.programs())})")


def check_registry(root: str | Path, skills: str | Path | None = None) -> RegistryCheck:
    """Validate a registry folder, every problem collected (see :func:`~evalkit.skilleval.registry.registry_problems`).

    Args:
        root: the registry folder.
        skills: the candidate skills folder, or None; with it, a skill without cases is a problem (coverage).
    """
    registry, problems = registry_problems(root)
    if skills is not None:
        folder = Path(skills)
        if not folder.is_dir():
            problems.append(InputError("not a folder; give the folder holding <skill>/SKILL.md", file=shown(folder)))
        covered = {p.parent.parent.name for p in (Path(root) / CASES_DIR).glob("*/*/case.json")}
        for skill in uncovered_skills(folder, covered) if folder.is_dir() else []:
            problems.append(InputError(
                f"coverage: skill {skill!r} has no cases in {shown(Path(root) / CASES_DIR / skill)}; every shipped "
                "skill needs its committed and local cases", file=shown(folder / skill / SKILL_FILE)))
    return RegistryCheck(str(root), registry if not problems else None, problems)
