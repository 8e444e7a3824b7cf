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
from evalkit.io.disk_errors import WRITE_REFUSALS, os_problem
from evalkit.skilleval.adapters import ArmRequest, ScriptAdapter
from evalkit.skilleval.confine import confinement
from evalkit.skilleval.digest import DOMAINS, file_sha256, outside_git, tree_digest
from evalkit.skilleval.executables import BoundExecutable, run_bound, scrubbed_env
from evalkit.skilleval.facts import check_receipt
from evalkit.skilleval.gates import GATES, undocumented_operations
from evalkit.skilleval.grading import grade_case
from evalkit.skilleval.registry import LoadedCase, Registry, uncovered_skills
from evalkit.skilleval.registry_rules import case_invocations
from evalkit.skilleval.run_gates import run_gates
from evalkit.skilleval.stage import (
    ARMS,
    STAGE_FILE,
    arm_dir,
    copy_registry,
    seal_raw,
    write_run_inputs,
    write_stage,
)
from evalkit.skilleval.unfinished import mark_running, remove_killed_stage

_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


@dataclass
class RunPlan:
    """Everything one run needs, decided before the first command.

    ``executables`` maps each arm to its bound programs; where a baseline arm runs, its tool binary is the
    prior release's and must differ from the candidate's unless ``same_baseline_binary`` says the release
    did not change it. The deterministic checks are run here (:mod:`evalkit.skilleval.run_gates`);
    ``gates`` names gates that must run (``parity`` needs ``mirror``). The product must be a clean worktree
    on an attached HEAD equal to ``tested_head`` unless ``allow_dirty`` (the report is then not
    releasable); candidate skills without cases are refused unless ``allow_uncovered`` (the outcome is
    then ``incomplete``).
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
    allow_dirty: bool = False
    same_baseline_binary: bool = False
    allow_uncovered: bool = False


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
    unknown = sorted(set(plan.gates) - set(GATES))
    if unknown:
        problems.append(f"--gate: unknown gate(s) {', '.join(unknown)}; evalkit runs the gates {', '.join(GATES)} "
                        "itself and records what each found")
    if "parity" in plan.gates and plan.mirror is None:
        problems.append("--gate parity: needs --mirror DIR, the committed copy the candidate skills must equal")
    undocumented = undocumented_operations(
        [i for c in plan.registry.cases for i in case_invocations(plan.registry.policy, c.case, "", c.seed.tool_init)],
        plan.registry.policy)
    if "command" in plan.gates and undocumented:
        problems.append(f"--gate command: the policy has no command table for {', '.join(undocumented)} "
                        "(operations.<operation>.commands), so the gate cannot run")
    uncovered = uncovered_skills(plan.candidate_dir, plan.registry.skills()) if plan.candidate_dir.is_dir() else []
    if uncovered and not plan.allow_uncovered:
        problems.append(f"{plan.candidate_dir}: coverage: skill(s) {', '.join(uncovered)} have no cases in "
                        f"{plan.registry.root}; add their committed and local cases (--allow-uncovered runs anyway, "
                        "and the outcome is then incomplete)")
    problems += _baseline_binary_problems(plan)
    if problems:
        raise InputError("cannot run:\n  " + "\n  ".join(dict.fromkeys(problems)))


def _baseline_binary_problems(plan: RunPlan) -> list[str]:
    """The baseline arm runs the prior release's tool binary, not the candidate's (unless declared identical)."""
    if not any(loaded.case.baseline_required for loaded in plan.registry.cases):
        return []
    tool = tool_program(plan.registry)
    same = plan.executables["candidate"][tool].sha256 == plan.executables["baseline"][tool].sha256
    if same and not plan.same_baseline_binary:
        return [f"--baseline-bin: the baseline arm would run the candidate's {tool} (same sha256); give the prior "
                f"release's binary with --baseline-bin {tool}=PATH, or --same-baseline-bin when this release does "
                f"not change {tool}"]
    if not same and plan.same_baseline_binary:
        return [f"--same-baseline-bin: the baseline's {tool} is not the candidate's (their sha256 differ); drop one"]
    return []


def baseline_executable(plan: RunPlan) -> str:
    """How the baseline arm's tool relates to the candidate's: ``distinct``, ``declared-identical`` or ``unused``."""
    if not any(loaded.case.baseline_required for loaded in plan.registry.cases):
        return "unused"
    tool = tool_program(plan.registry)
    same = plan.executables["candidate"][tool].sha256 == plan.executables["baseline"][tool].sha256
    return "declared-identical" if same else "distinct"


def run_stage(plan: RunPlan, progress: Callable[[str], None] = lambda line: None) -> Path:
    """Run every arm, write the sealed stage and return the path of ``stage.json``.

    Args:
        plan: the run's inputs and bindings.
        progress: called with one line per arm (the CLI prints it on stderr).

    Raises:
        InputError: a problem found before running (:func:`check_plan`) or while sealing.
    """
    remove_killed_stage(plan.out, STAGE_FILE, progress)
    check_plan(plan)
    generated_at = plan.generated_at or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    session_id = plan.session_id or "skill-eval-" + re.sub(r"[^0-9t]", "", generated_at.lower())
    product = plan.product_dir or plan.registry.root
    tested_head, verified = check_provenance(plan, product, progress)
    frozen = _freeze(plan, product)
    checks = run_gates(plan.registry, plan.candidate_dir, plan.mirror, progress)
    uncovered = uncovered_skills(plan.candidate_dir, plan.registry.skills())
    confined = confinement() is not None
    if not confined:
        progress("not confined: this machine cannot give commands a private mount namespace (unshare), so arms run "
                 "with the file system writable; the report says so")
    watched = watch_list(plan, product)
    release = {"provenance_verified": verified, "baseline_executable": baseline_executable(plan),
               "final_case_set": plan.registry.policy.final, "uncovered_skills": uncovered,
               "confined": confined, "watched": [label for label, _, _ in watched]}
    plan.out.mkdir(parents=True, exist_ok=True)
    running = mark_running(plan.out)  # a run killed from here on leaves a stage the next run removes
    copy_registry(plan.registry.root, plan.out)
    write_run_inputs(plan.out, plan.registry.root, plan.candidate_dir, plan.baseline_dir)
    tool = tool_program(plan.registry)
    cases, worksheet = [], []
    for loaded in plan.registry.cases:
        case = loaded.case
        arms: dict[str, Any] = {}
        for arm in ARMS:
            arms[arm] = None
            if arm == "baseline" and not case.baseline_required:
                continue
            before = watch_snapshot(watched)
            arms[arm] = _run_arm(plan, loaded, arm, frozen[f"{arm}/{case.skill}"], progress)
            changed = [label for label, digest in watch_snapshot(watched).items() if before[label] != digest]
            if changed:
                progress(f"{case.case_id} {arm}: missing (outside its sandbox changed while it ran: "
                         f"{', '.join(changed)})")
                arms[arm] = None
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
        "human_review": None, "waiver": None, "release": release,
    }
    # The contract's own precedence: a failed candidate is already ``fail``; else ``incomplete`` until reviewed.
    report["outcome"] = base_outcome(DeterministicChecks.model_validate(report["deterministic_checks"]),
                                     [ReportCase.model_validate(c) for c in cases], uncovered)[0]
    running.unlink()
    write_stage(plan.out, report, worksheet)
    return plan.out / STAGE_FILE


def watch_list(plan: RunPlan, product: Path) -> list[tuple[str, Path, str]]:
    """What must not change while an arm runs, each with the label the report names it by.

    The caller's and the system's Git configuration (what ``git config --global`` or an escaped hook
    would write), the registry, both skill sets and the product.
    """
    home = Path.home()
    return [("the caller's global Git config", home / ".gitconfig", "file"),
            ("the caller's Git config folder", home / ".config" / "git", "tree"),
            ("the system Git config", Path("/etc/gitconfig"), "file"),
            ("the registry", plan.registry.root, "tree"), ("the candidate skills", plan.candidate_dir, "tree"),
            ("the baseline skills", plan.baseline_dir, "tree"), ("the product", product, "product")]


def watch_snapshot(watched: list[tuple[str, Path, str]]) -> dict[str, str]:
    """Each watched thing's digest now (``absent`` when it does not exist)."""
    found = {}
    for label, path, kind in watched:
        try:
            if not path.exists():
                found[label] = "absent"
            elif kind == "file":
                found[label] = file_sha256(path)
            else:
                found[label] = tree_digest(path, DOMAINS["product" if kind == "product" else "fixtures"],
                                           outside_git if kind == "product" else None)
        except InputError as exc:
            found[label] = f"unreadable: {exc.message}"
    return found


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
    except OSError as exc:  # the disk, not the arm: the run cannot go on, and the stage is not sealed
        if exc.errno not in WRITE_REFUSALS:
            raise
        raise os_problem(exc, folder, doing="cannot write the arm's evidence") from None
    graded = grade_case(case, plan.registry.policy, facts)
    outcome = graded.grade if run.completed else "incomplete"
    failed = [g.assertion for g in graded.assertions if not g.passed] + graded.problems
    detail = f"; failed: {'; '.join(failed)}" if failed else ""
    notes = f" ({'; '.join(run.notes)})" if run.notes else ""
    progress(f"{case.case_id} {arm}: {outcome}, grade {graded.grade}, {len(facts)} commands{notes}{detail}")
    return {"outcome": outcome, "skill_sha256": skill_sha256,
            "executable_sha256": executables[tool_program(plan.registry)].sha256,
            "deterministic_grade": graded.grade, "raw_sha256": seal_raw(folder)}


def check_provenance(plan: RunPlan, product: Path, progress: Callable[[str], None]) -> tuple[str, bool]:
    """The tested HEAD, and whether the product is a clean worktree on an attached HEAD equal to it.

    Raises:
        InputError: naming the product folder and every broken provenance rule, unless ``allow_dirty``
            (then the run goes on and the report says the provenance is not verified); or no HEAD is known.
    """
    git = plan.executables["candidate"]["git"]

    def run_git(*args: str) -> tuple[int | None, str]:
        result = run_bound(git, ["git", *args], cwd=product, env=scrubbed_env([git], product), timeout=plan.timeout)
        return result.returncode, result.stdout.decode("utf-8", "replace")

    problems = []
    code, out = run_git("rev-parse", "HEAD")
    head = out.strip() if code == 0 and re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", out.strip()) else None
    if head is None:
        problems.append("the product folder is not in a Git worktree with a commit")
    else:
        if run_git("symbolic-ref", "-q", "HEAD")[0] != 0:
            problems.append(f"HEAD is detached (at {head[:12]}); check out the branch under test")
        changed = [line[3:] for line in run_git("status", "--porcelain=v1", "--untracked-files=all")[1].splitlines()]
        if changed:
            problems.append(f"the worktree is not clean: {len(changed)} changed or untracked path(s), first "
                            f"{changed[0]!r}; commit or stash them")
        if plan.tested_head is not None and plan.tested_head != head:
            problems.append(f"--tested-head {plan.tested_head} is not the product's HEAD {head}")
    tested = plan.tested_head or head
    if problems and not plan.allow_dirty:
        raise InputError("provenance: the candidate must come from a clean, attached HEAD equal to --tested-head:\n  "
                         + "\n  ".join(problems) + "\n(--allow-dirty runs anyway and marks the report not releasable)",
                         file=str(product))
    if tested is None:
        raise InputError("cannot tell the tested HEAD: the product folder is not in a Git repository with a commit; "
                         "give --tested-head SHA", file=str(product))
    for problem in problems:
        progress(f"provenance not verified (--allow-dirty): {problem}")
    return tested, not problems
