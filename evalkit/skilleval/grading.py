"""Deterministic grades, from the case's oracle and the recorded facts only: adapters never grade.

An arm passes when it has one fact per declared command, every setup command exited 0, and each oracle
entry's action was observed with its declared operation and argv and its predicate holds:

- ``command-exit-zero``: the command exited 0;
- ``validation-pass``: the command's operation declares a validation in the policy, it exited 0 and
  its ``validation_passed`` is true;
- ``git-worktree-clean``: a ``git-command`` that exited 0 and left ``git status --porcelain=v1``
  unchanged (``git_before_sha256 == git_after_sha256``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from evalkit.contracts.skilleval import GIT_OPERATION, ActionFact, SkillEvalCase, SkillEvalPolicy
from evalkit.skilleval.facts import declared_commands


@dataclass(frozen=True)
class AssertionGrade:
    """One oracle entry's verdict and, when it failed, why (in words a reviewer can check)."""

    assertion: str
    action: str
    predicate: str
    passed: bool
    reason: str


@dataclass(frozen=True)
class CaseGrade:
    """An arm's deterministic grade with the verdict of every assertion and every problem found."""

    grade: str
    assertions: list[AssertionGrade]
    problems: list[str]


def _predicate(predicate: str, fact: ActionFact, policy: SkillEvalPolicy) -> tuple[bool, str]:
    if fact.exit_code != 0:
        return False, f"exited {fact.exit_code}"
    if predicate == "command-exit-zero":
        return True, "exited 0"
    if predicate == "validation-pass":
        operation = policy.operations.get(fact.operation)
        if operation is None or operation.validation is None:
            return False, f"operation {fact.operation!r} declares no validation"
        if fact.validation_passed is not True:
            return False, f"validation_passed is {fact.validation_passed!r}"
        return True, "exited 0 and validated"
    if predicate == "git-worktree-clean":
        if fact.operation != GIT_OPERATION:
            return False, f"not a {GIT_OPERATION}"
        if fact.git_before_sha256 != fact.git_after_sha256:
            return False, "git status changed"
        return True, "exited 0 and git status unchanged"
    return False, f"unknown predicate {predicate!r}"


def grade_case(case: SkillEvalCase, policy: SkillEvalPolicy,
               facts: Sequence[ActionFact | dict[str, Any]]) -> CaseGrade:
    """Grade one arm of a case from its facts.

    Args:
        case: the case (its scenario and oracle).
        policy: the registry's policy (which operations validate).
        facts: the arm's facts in run order (models or their JSON dicts).

    Returns:
        ``CaseGrade`` with ``grade`` "pass" or "fail", one ``AssertionGrade`` per oracle entry in
        oracle order, and every problem (count, failed setup) in words.
    """
    observed = [f if isinstance(f, ActionFact) else ActionFact.model_validate(f) for f in facts]
    declared = declared_commands(case, policy)
    problems: list[str] = []
    if len(observed) != len(declared):
        problems.append(f"{len(observed)} facts for {len(declared)} declared commands")
    by_action = {fact.action: fact for fact in observed}
    for want in declared:
        fact = by_action.get(want.action)
        if want.setup and fact is not None and fact.exit_code != 0:
            problems.append(f"setup command {want.action!r} exited {fact.exit_code}")
    actions = {a.id: a for a in case.scenario.actions}
    grades = []
    for entry in case.oracle.assertions:
        fact = by_action.get(entry.action)
        action = actions[entry.action]
        if fact is None:
            passed, reason = False, "no fact observed"
        elif (fact.operation, fact.command) != (action.operation, action.command):
            passed, reason = False, "observed command differs from the declared one"
        else:
            passed, reason = _predicate(entry.predicate, fact, policy)
        grades.append(AssertionGrade(entry.assertion, entry.action, entry.predicate, passed, reason))
    grade = "pass" if not problems and all(g.passed for g in grades) else "fail"
    return CaseGrade(grade, grades, problems)
