"""Run every case's arms once, grade them from their facts, and stop at a sealed stage for human review.

Each case runs its candidate arm and, when ``baseline_required``, its baseline arm, each in its own
sandbox, through one adapter. The runner then re-reads the adapter's receipt (refusing missing, extra,
fabricated or mismatched facts), grades the arm from the oracle's predicates only, seals the arm's raw
evidence and records its result. An adapter error or a refused receipt leaves the arm ``null``
(missing): the case stays inconclusive, never passing. Nothing here compares arms or reviews them:
every comparison starts ``inconclusive``, for the human to settle on the worksheet.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evalkit import __version__
from evalkit.contracts.skilleval import DeterministicChecks, ReportCase, base_outcome
from evalkit.errors import InputError
from evalkit.skilleval.adapters import ArmRequest, ScriptAdapter
from evalkit.skilleval.digest import DOMAINS, outside_git, tree_digest
from evalkit.skilleval.executables import BoundExecutable, run_bound, scrubbed_env
from evalkit.skilleval.facts import check_receipt
from evalkit.skilleval.grading import grade_case
from evalkit.skilleval.lint import lint_skills
from evalkit.skilleval.registry import LoadedCase, Registry
from evalkit.skilleval.stage import ARMS, STAGE_FILE, arm_dir, copy_registry, seal_raw, write_stage

_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


@dataclass
class RunPlan:
    """Everything one run needs, decided before the first command.

    ``executables`` maps each arm to its bound programs (the baseline arm may run a different tool
    binary, the prior release's). The run's own deterministic checks are ``registry`` (validated before
    anything runs), ``skill-lint`` (the candidate skills linted against the policy) and, with ``mirror``,
    ``parity`` (the candidate skills byte-identical to their mirror copy); ``gates`` names further
    credential-free checks run elsewhere (in CI) that the maintainer records as evidence.
    """

    registry: Registry
    candidate_dir: Path
    baseline_dir: Path
    out: Path
    adapter: ScriptAdapter
    executables: dict[str, dict[str, BoundExecutable]]
    timeout: float = 60.0
    session_id: str | None = None
    generated_at: str | None = None
    tested_head: str | None = None
    product_dir: Path | None = None
    candidate_version: str = "candidate"
    baseline_version: str = "baseline"
    adapter_version: str = f"evalkit {__version__}"
    model: dict[str, Any] = field(default_factory=dict)
    gates: list[str] = field(default_factory=list)
    mirror: Path | None = None


def tool_program(registry: Registry) -> str:
    """The tool's program: the one its init operation runs (its digest is the arm's executable digest)."""
    policy = registry.policy
    return policy.operations[policy.init.operation].program


def check_plan(plan: RunPlan) -> None:
    """Refuse, before any command runs, what would make the stage unusable; lists every problem.

    Raises:
        InputError: the stage folder is not empty, a case's skill is missing from the candidate (or,
            where a baseline is required, from the baseline) folder, or a binding is malformed.
    """
    problems = [f"{where}: the {what} skills folder does not exist" for what, where in
                (("candidate", plan.candidate_dir), ("baseline", plan.baseline_dir)) if not where.is_dir()]
    if plan.out.exists() and (not plan.out.is_dir() or any(plan.out.iterdir())):
        problems.append(f"{plan.out}: the stage folder must be new or empty (raw evidence is never overwritten)")
    for loaded in plan.registry.cases:
        case = loaded.case
        if not (plan.candidate_dir / case.skill / "SKILL.md").is_file():
            problems.append(f"{plan.candidate_dir}: no skill {case.skill!r} (needed by case {case.case_id!r})")
        if case.baseline_required and not (plan.baseline_dir / case.skill / "SKILL.md").is_file():
            problems.append(f"{plan.baseline_dir}: no skill {case.skill!r} (case {case.case_id!r} needs a baseline)")
    if plan.session_id is not None and (not _SLUG.fullmatch(plan.session_id) or len(plan.session_id) > 64):
        problems.append(f"--session-id: must be a lowercase hyphenated slug of at most 64 bytes, got {plan.session_id!r}")
    if problems:
        raise InputError("cannot run:\n  " + "\n  ".join(dict.fromkeys(problems)))


def run_stage(plan: RunPlan, progress: Callable[[str], None] = lambda line: None) -> Path:
    """Run every arm, write the sealed stage and return the path of ``stage.json``.

    Args:
        plan: the run's inputs and bindings.
        progress: called with one line per arm (the CLI prints it on stderr).

    Raises:
        InputError: a problem found before running (:func:`check_plan`) or while sealing.
    """
    check_plan(plan)
    generated_at = plan.generated_at or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    session_id = plan.session_id or "skill-eval-" + re.sub(r"[^0-9t]", "", generated_at.lower())
    product = plan.product_dir or plan.registry.root
    tested_head = plan.tested_head or _git_head(plan, product)
    frozen = _freeze(plan, product)
    checks = _deterministic_checks(plan, progress)
    plan.out.mkdir(parents=True, exist_ok=True)
    copy_registry(plan.registry.root, plan.out)
    tool = tool_program(plan.registry)
    cases, worksheet = [], []
    for loaded in plan.registry.cases:
        case = loaded.case
        arms: dict[str, Any] = {}
        for arm in ARMS:
            arms[arm] = None
            if arm == "baseline" and not case.baseline_required:
                continue
            arms[arm] = _run_arm(plan, loaded, arm, frozen[f"{arm}/{case.skill}"], progress)
        cases.append({"case_id": case.case_id, "skill": case.skill, "storage_mode": case.storage_mode,
                      "fixture_sha256": frozen[f"case/{case.case_id}"], "baseline_required": case.baseline_required,
                      **arms, "comparison": "inconclusive", "human_review": None})
        worksheet.append({"case_id": case.case_id, "skill": case.skill,
                          "human_review_questions": list(case.human_review_questions), **arms})
    changed = sorted(name for name, digest in _freeze(plan, product).items() if frozen.get(name) != digest)
    if changed:
        raise InputError(f"inputs changed while the arms ran ({', '.join(changed)}); the evidence would not match "
                         "them: run again into a new stage folder", file=str(plan.out))
    report = {
        "schema_version": 1, "session_id": session_id, "generated_at": generated_at, "tested_head": tested_head,
        "candidate_executable_sha256": plan.executables["candidate"][tool].sha256,
        "baseline_executable_sha256": plan.executables["baseline"][tool].sha256,
        "product_sha256": frozen["product"], "outcome": "incomplete",
        "candidate": {"version": plan.candidate_version, "skills_sha256": frozen["candidate"]},
        "baseline": {"version": plan.baseline_version, "skills_sha256": frozen["baseline"]},
        "fixtures_sha256": frozen["registry"],
        "adapter": {"name": plan.adapter.name, "version": plan.adapter_version,
                    "observed": any(c["candidate"] is not None or c["baseline"] is not None for c in cases)},
        "model": dict(plan.model), "cases": cases, "deterministic_checks": checks,
        "human_review": None, "waiver": None,
    }
    # The contract's own precedence: a failed candidate is already ``fail``; else ``incomplete`` until reviewed.
    report["outcome"] = base_outcome(DeterministicChecks.model_validate(report["deterministic_checks"]),
                                     [ReportCase.model_validate(c) for c in cases])[0]
    write_stage(plan.out, report, worksheet)
    return plan.out / STAGE_FILE


def _freeze(plan: RunPlan, product: Path) -> dict[str, str]:
    """Every input's digest, taken before the first command (and again after the last, to compare)."""
    frozen = {"product": tree_digest(product, DOMAINS["product"], outside_git),
              "registry": tree_digest(plan.registry.root, DOMAINS["fixtures"]),
              "candidate": tree_digest(plan.candidate_dir, DOMAINS["skill-set"]),
              "baseline": tree_digest(plan.baseline_dir, DOMAINS["skill-set"])}
    for loaded in plan.registry.cases:
        case = loaded.case
        frozen[f"case/{case.case_id}"] = tree_digest(loaded.case_dir, DOMAINS["case"])
        for arm, folder in (("candidate", plan.candidate_dir), ("baseline", plan.baseline_dir)):
            if (folder / case.skill).is_dir():
                frozen[f"{arm}/{case.skill}"] = tree_digest(folder / case.skill, DOMAINS["skill"])
    return frozen


def _deterministic_checks(plan: RunPlan, progress: Callable[[str], None]) -> dict[str, Any]:
    """Lint the candidate skills (and their mirror) now; a problem fails the checks, never the run."""
    report = lint_skills(plan.candidate_dir, mirror=plan.mirror, policy=plan.registry.policy)
    for problem in report.problems:
        progress(f"skill lint: {problem.render()}")
    ran = {"registry", "skill-lint", *(["parity"] if plan.mirror is not None else []), *plan.gates}
    outcome = "pass" if report.ok else "fail"
    progress(f"deterministic checks: {outcome} ({', '.join(sorted(ran))}; {len(report.problems)} lint problem(s))")
    return {"outcome": outcome, "evidence": sorted(ran)}


def _run_arm(plan: RunPlan, loaded: LoadedCase, arm: str, skill_sha256: str,
             progress: Callable[[str], None]) -> dict[str, Any] | None:
    case = loaded.case
    folder = arm_dir(plan.out, case.case_id, arm)
    skills = plan.candidate_dir if arm == "candidate" else plan.baseline_dir
    executables = plan.executables[arm]
    request = ArmRequest(case, loaded.seed, plan.registry.policy, loaded.fixture_dir, skills / case.skill, folder,
                         executables, plan.timeout)
    try:
        run = plan.adapter.run(request)
        facts = check_receipt(folder, run.facts, case, plan.registry.policy)
    except InputError as exc:
        progress(f"{case.case_id} {arm}: missing (adapter error: {exc.render()})")
        return None
    graded = grade_case(case, plan.registry.policy, facts)
    outcome = graded.grade if run.completed else "incomplete"
    failed = [g.assertion for g in graded.assertions if not g.passed] + graded.problems
    detail = f"; failed: {'; '.join(failed)}" if failed else ""
    notes = f" ({'; '.join(run.notes)})" if run.notes else ""
    progress(f"{case.case_id} {arm}: {outcome}, grade {graded.grade}, {len(facts)} commands{notes}{detail}")
    return {"outcome": outcome, "skill_sha256": skill_sha256,
            "executable_sha256": executables[tool_program(plan.registry)].sha256,
            "deterministic_grade": graded.grade, "raw_sha256": seal_raw(folder)}


def _git_head(plan: RunPlan, product: Path) -> str:
    git = plan.executables["candidate"]["git"]
    result = run_bound(git, ["git", "rev-parse", "HEAD"], cwd=product,
                       env=scrubbed_env([git], product), timeout=plan.timeout)
    head = result.stdout.decode("utf-8", "replace").strip()
    if result.exit_code != 0 or not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", head):
        raise InputError("cannot tell the tested HEAD: the product folder is not in a Git repository with a commit; "
                         "give --tested-head SHA", file=str(product))
    return head
