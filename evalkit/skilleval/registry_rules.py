"""The registry rules that relate a case to its folders, to the other cases and to the policy.

The contracts check each file on its own (member sets, id patterns, the oracle bijection, generic action
ids); these rules need more than one file: a case id equals its folder and is unique, a skill equals the
parent folder, a seed agrees with its case and with the policy's init argv, every command starts with
the program its operation allows and names no path outside the sandbox (``..``, absolute or home paths),
``validation-pass`` sits on a command that validates, every skill has a
case in each of the policy's storage modes, and ``baseline_required`` says whether the skill shipped in the
prior release. Each problem names the file and member path.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evalkit.contracts.skilleval import (
    SkillEvalCase,
    SkillEvalPolicy,
    SkillEvalSeed,
)
from evalkit.errors import InputError
from evalkit.skilleval.gates import (
    Invocation,
    argv_security_problems,
    command_problems,
    credential_in,
    fixture_file_problems,
    git_argv_problems,
    lifecycle_problems,
    machine_api_problems,
)
from evalkit.skilleval.policy import POLICY_FILE, validation_pointer
from evalkit.skilleval.registry_tree import RegistryTree, shown
from evalkit.skilleval.sandbox import check_argv_paths

_GIT_FOLDER = ".git"


@dataclass
class CaseDraft:
    """One case folder as read: raw JSON values and, when they pass their contracts, the models."""

    skill_folder: str
    case_folder: str
    folder: str
    raw_case: Any = None
    raw_seed: Any = None
    case: SkillEvalCase | None = None
    seed: SkillEvalSeed | None = None

    @property
    def case_file(self) -> str:
        return f"{self.folder}/case.json"

    @property
    def seed_file(self) -> str:
        return f"{self.folder}/fixture/seed.json"

    def raw(self, which: str, key: str) -> str | None:
        """A string member of the raw case or seed, or None when absent or not a string."""
        value = self.raw_case if which == "case" else self.raw_seed
        member = value.get(key) if isinstance(value, dict) else None
        return member if isinstance(member, str) else None


def check_case_files(tree: RegistryTree, draft: CaseDraft) -> None:
    """Rules between a case's files and its folders: names, seed agreement, a complete fixture."""
    case_id = draft.raw("case", "case_id")
    if case_id is not None and case_id != draft.case_folder:
        tree.problem(draft.case_file, f"must equal its folder name {draft.case_folder!r} "
                                      f"(cases/<skill>/<case_id>/), got {case_id!r}", member="case_id")
    skill = draft.raw("case", "skill")
    if skill is not None and skill != draft.skill_folder:
        tree.problem(draft.case_file, f"must equal its parent folder name {draft.skill_folder!r}, got {skill!r}",
                     member="skill")
    case_mode, seed_mode = draft.raw("case", "storage_mode"), draft.raw("seed", "storage_mode")
    if case_mode is not None and seed_mode is not None and case_mode != seed_mode:
        tree.problem(draft.seed_file, f"must equal the case's storage_mode {case_mode!r}, got {seed_mode!r}",
                     member="storage_mode")
    fixture = f"{draft.folder}/fixture"
    if _GIT_FOLDER in tree.children(fixture):
        tree.problem(f"{fixture}/{_GIT_FOLDER}", "a fixture holds plain files; the runner creates the Git "
                                                 "repository (seed.json git_init), so remove .git")
    if draft.seed is not None and draft.seed.decoy is not None:
        _check_decoy(tree, fixture, draft.seed_file, draft.seed.decoy.path)
        secret = credential_in(draft.seed.decoy.contents.encode("utf-8"))
        if secret is not None:
            tree.problem(draft.seed_file, f"security gate: the decoy holds a credential ({secret}); remove it",
                         member="decoy.contents")
    for rel in sorted(tree.files):
        if rel.startswith(f"{fixture}/") and rel != draft.seed_file:
            try:
                data = tree.path(rel).read_bytes()
            except OSError:
                continue  # the listing reported what cannot be read
            tree.problems.extend(fixture_file_problems(rel[len(fixture) + 1:], data, file=shown(tree.path(rel))))


def _check_decoy(tree: RegistryTree, fixture: str, seed_file: str, path: str) -> None:
    parts = path.split("/")
    if parts[0] == _GIT_FOLDER:
        tree.problem(seed_file, f"must not be inside .git/ (the decoy is stale state in the worktree), "
                                f"got {path!r}", member="decoy.path")
        return
    for depth in range(1, len(parts) + 1):
        rel = f"{fixture}/{'/'.join(parts[:depth])}"
        if depth == len(parts) and (rel in tree.files or rel in tree.folders or rel in tree.refused):
            tree.problem(seed_file, f"{path!r} already exists in the fixture; the runner plants the decoy "
                                    "bytes from seed.json, so the fixture must not hold that path",
                         member="decoy.path")
        elif depth < len(parts) and (rel in tree.files or rel in tree.refused):
            tree.problem(seed_file, f"{'/'.join(parts[:depth])!r} is a file in the fixture, so the decoy "
                                    f"{path!r} cannot be planted below it", member="decoy.path")
            return


def check_cases(tree: RegistryTree, policy: SkillEvalPolicy | None, drafts: list[CaseDraft]) -> None:
    """Rules across cases (unique ids, coverage, baseline classification) and against the policy."""
    first: dict[str, str] = {}
    for draft in drafts:
        case_id = draft.case.case_id if draft.case is not None else draft.raw("case", "case_id")
        if case_id is None:
            continue
        if case_id in first:
            tree.problem(draft.case_file, f"{case_id!r} duplicates the case_id of {tree.path(first[case_id])}",
                         member="case_id")
        else:
            first[case_id] = draft.case_file
    if policy is None:
        return  # its problems are reported; rules against it would only guess
    for draft in drafts:
        if draft.case is not None and draft.case.skill == draft.skill_folder:
            # (a case naming another skill is reported; judging it as that skill would only add noise)
            _check_against_policy(tree, policy, draft.case, draft.case_file)
            _check_gates(tree, policy, draft)
        if draft.case is not None and draft.seed is not None:
            expected = policy.init.argv_for(draft.seed.storage_mode)
            if expected is not None and draft.seed.tool_init != expected:
                tree.problem(draft.seed_file, f"must be the policy's init.{draft.seed.storage_mode} {expected!r}, "
                                              f"got {draft.seed.tool_init!r}", member="tool_init")
    _check_coverage(tree, policy, drafts)


def _check_against_policy(tree: RegistryTree, policy: SkillEvalPolicy, case: SkillEvalCase, file: str) -> None:
    if case.storage_mode not in policy.storage_modes:
        tree.problem(file, f"{case.storage_mode!r} is not one of the policy's storage_modes {policy.storage_modes}",
                     member="storage_mode")
    shipped = case.skill in policy.baseline_skills
    if case.baseline_required != shipped:
        why = (f"{case.skill!r} is in the policy's baseline_skills (it shipped in the prior release)" if shipped
               else f"{case.skill!r} is not in the policy's baseline_skills (a new skill has no baseline arm)")
        tree.problem(file, f"must be {str(shipped).lower()}: {why}", member="baseline_required")
    operations = {}
    for i, step in enumerate(case.scenario.setup):
        if isinstance(step, list):
            _check_paths(tree, file, f"scenario.setup[{i}]", step)
            if policy.operation_of_program(step[0]) is None:
                tree.problem(file, f"{step[0]!r} is not a program the policy allows {policy.programs()}",
                             member=f"scenario.setup[{i}][0]")
        else:
            _check_action(tree, policy, file, f"scenario.setup[{i}]", step.operation, step.command)
    for i, action in enumerate(case.scenario.actions):
        operations[action.id] = (action.operation, action.command)
        _check_action(tree, policy, file, f"scenario.actions[{i}]", action.operation, action.command)
    for i, entry in enumerate(case.oracle.assertions):
        if entry.predicate != "validation-pass" or entry.action not in operations:
            continue
        operation, argv = operations[entry.action]
        declared = policy.operations.get(operation)
        if declared is None:
            continue  # the unknown operation is reported on the action
        if declared.validation is None:
            tree.problem(file, f"'validation-pass' needs an operation that declares validation in the policy; "
                               f"{operation!r} (action {entry.action!r}) declares none",
                         member=f"oracle.assertions[{i}].predicate")
        elif validation_pointer(policy, operation, argv) is None:
            tree.problem(file, f"'validation-pass' on action {entry.action!r}: its arguments must start with "
                               f"{operation}'s validation argv {declared.validation.argv!r}, or the runner "
                               f"reads no validation result", member=f"oracle.assertions[{i}].predicate")


def case_invocations(policy: SkillEvalPolicy, case: SkillEvalCase, file: str,
                     tool_init: list[str] | None = None) -> list[Invocation]:
    """Every command a case runs, in order: the tool's init (from the seed), its setup, its actions."""
    found = []
    if tool_init is not None:
        found.append(Invocation([policy.operations[policy.init.operation].program, *tool_init], file,
                                member="fixture/seed.json tool_init"))
    for i, step in enumerate(case.scenario.setup):
        argv = step if isinstance(step, list) else step.command
        found.append(Invocation(list(argv), file, member=f"scenario.setup[{i}]"))
    for i, action in enumerate(case.scenario.actions):
        found.append(Invocation(list(action.command), file, member=f"scenario.actions[{i}].command"))
    return found


def _check_gates(tree: RegistryTree, policy: SkillEvalPolicy, draft: CaseDraft) -> None:
    """The command, machine-api, lifecycle and security gates over every command of a case."""
    assert draft.case is not None
    file = shown(tree.path(draft.case_file))
    init = draft.seed.tool_init if draft.seed is not None else None
    invocations = case_invocations(policy, draft.case, file, init)
    for invocation in invocations:
        tree.problems.extend(command_problems(invocation, policy))
        tree.problems.extend(machine_api_problems(invocation, policy))
        tree.problems.extend(argv_security_problems(invocation))
        tree.problems.extend(git_argv_problems(invocation, policy))
    tree.problems.extend(lifecycle_problems(invocations, policy))


def _check_paths(tree: RegistryTree, file: str, at: str, argv: list[str]) -> None:
    """An argument that reaches outside the sandbox is refused now, not first at run time."""
    try:
        check_argv_paths(argv, at)
    except InputError as exc:
        member, _, message = exc.message.partition(": ")
        tree.problem(file, message, member=member)


def _check_action(tree: RegistryTree, policy: SkillEvalPolicy, file: str, at: str, operation: str,
                  argv: list[str]) -> None:
    _check_paths(tree, file, f"{at}.command", argv)
    declared = policy.operations.get(operation)
    if declared is None:
        tree.problem(file, f"{operation!r} is not one of the policy's operations {sorted(policy.operations)}",
                     member=f"{at}.operation")
    elif argv[0] != declared.program:
        tree.problem(file, f"must be {declared.program!r}, the program of operation {operation!r} in the "
                           f"policy, got {argv[0]!r}", member=f"{at}.command[0]")


def _check_coverage(tree: RegistryTree, policy: SkillEvalPolicy, drafts: list[CaseDraft]) -> None:
    modes: dict[str, set[str]] = {}
    unknown: set[str] = set()  # skills with a case whose mode cannot be read: coverage is not judged
    for draft in drafts:
        covered = modes.setdefault(draft.skill_folder, set())
        mode = draft.raw("case", "storage_mode")
        if mode is None:
            unknown.add(draft.skill_folder)
        else:
            covered.add(mode)
    for skill, covered in sorted(modes.items()):
        for mode in policy.storage_modes:
            if mode not in covered and skill not in unknown:
                tree.problem(f"cases/{skill}", f"no case in storage mode {mode!r}: every skill needs a case in "
                                               f"each of the policy's storage_modes {policy.storage_modes}")
    for i, skill in enumerate(policy.baseline_skills):
        if skill not in modes:
            tree.problem(POLICY_FILE, f"{skill!r} has no cases under cases/; list only skills the registry "
                                      "evaluates", member=f"baseline_skills[{i}]")
