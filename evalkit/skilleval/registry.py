"""Loading a skill-eval registry: every rule checked, every problem reported at once.

Layout (``REGISTRY`` is the folder given)::

    REGISTRY/policy.json                                   what the registry may run (skill-eval-policy)
    REGISTRY/cases/<skill>/<case_id>/case.json             one behavioural case (skill-eval-case)
    REGISTRY/cases/<skill>/<case_id>/fixture/seed.json     its fixture's init recipe (skill-eval-seed)
    REGISTRY/cases/<skill>/<case_id>/fixture/...           any other fixture files, copied into the sandbox

The rules, each reported with its file and member path: strict JSON (no byte-order mark, valid UTF-8, no
duplicate key, nothing after the value) and the contracts' exact member sets for the policy, every case and
every seed; the registry's files (:mod:`evalkit.skilleval.registry_tree`); the folder layout; the case
rules against folders, each other and the policy (:mod:`evalkit.skilleval.registry_rules`). Nothing
stops at the first problem: a user fixes the whole list in one pass.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit.contract_files import validate_value
from evalkit.contracts.skilleval import SkillEvalCase, SkillEvalPolicy, SkillEvalSeed
from evalkit.errors import InputError, RegistryInvalid
from evalkit.io import read_json_strict
from evalkit.skilleval.lint import SKILL_FILE
from evalkit.skilleval.policy import POLICY_FILE, read_policy
from evalkit.skilleval.registry_rules import CaseDraft, check_case_files, check_cases
from evalkit.skilleval.registry_tree import RegistryTree, list_registry, shown

CASES_DIR = "cases"
CASE_FILE = "case.json"
FIXTURE_DIR = "fixture"
SEED_FILE = "seed.json"


@dataclass(frozen=True)
class LoadedCase:
    """One valid case with its seed, and where its files are."""

    case: SkillEvalCase
    seed: SkillEvalSeed
    case_dir: Path
    fixture_dir: Path


@dataclass(frozen=True)
class Registry:
    """A valid registry: its policy and its cases sorted by (skill, case_id)."""

    root: Path
    policy: SkillEvalPolicy
    cases: list[LoadedCase]

    def skills(self) -> list[str]:
        """Every skill the registry has cases for, sorted."""
        return sorted({loaded.case.skill for loaded in self.cases})


def uncovered_skills(skills_dir: Path, covered: Iterable[str]) -> list[str]:
    """The skills of a skills folder (``<skill>/SKILL.md``) that are not in ``covered``, sorted."""
    have = set(covered)
    return sorted(p.parent.name for p in Path(skills_dir).glob(f"*/{SKILL_FILE}") if p.parent.name not in have)


def registry_problems(root: str | Path) -> tuple[Registry | None, list[InputError]]:
    """Check a registry without raising: the registry when valid, else None, and every problem.

    Args:
        root: the registry folder.

    Returns:
        ``(registry, [])`` when every rule holds, else ``(None, problems)``; each problem names its file
        (and line, for JSON syntax) and the member path inside it.
    """
    top = Path(root)
    if not top.is_dir():
        return None, [InputError("not a folder; a registry is a folder holding policy.json and cases/",
                                 file=shown(top))]
    tree = list_registry(top)
    policy = _policy(tree)
    drafts = _drafts(tree)
    check_cases(tree, policy, drafts)
    if tree.problems or policy is None:
        return None, tree.problems
    loaded = [LoadedCase(d.case, d.seed, tree.path(d.folder), tree.path(f"{d.folder}/{FIXTURE_DIR}"))
              for d in drafts if d.case is not None and d.seed is not None]
    loaded.sort(key=lambda c: (c.case.skill, c.case.case_id))
    return Registry(top, policy, loaded), []


def load_registry(root: str | Path) -> Registry:
    """The registry in ``root``, every rule checked.

    Args:
        root: the registry folder.

    Returns:
        The registry, cases sorted by (skill, case_id).

    Raises:
        RegistryInvalid: any rule fails; ``problems`` lists every one with its file and member path.
    """
    registry, problems = registry_problems(root)
    if registry is None:
        raise RegistryInvalid(problems, file=shown(Path(root)))
    return registry


def _policy(tree: RegistryTree) -> SkillEvalPolicy | None:
    if POLICY_FILE in tree.refused:
        return None
    if POLICY_FILE not in tree.files:
        tree.problem(POLICY_FILE, "missing: a registry names what it may run in policy.json "
                                  "(see examples/contracts/skill-eval-policy.json)")
        return None
    policy, problems = read_policy(tree.path(POLICY_FILE))
    tree.problems.extend(problems)
    return policy


def _drafts(tree: RegistryTree) -> list[CaseDraft]:
    """Every case folder's files read and checked against the contracts (folders in byte order)."""
    # Other files beside policy.json and cases/ (a README, notes) are the maintainer's business.
    if CASES_DIR not in tree.folders:
        if CASES_DIR in tree.files:
            tree.problem(CASES_DIR, "must be a folder: cases/<skill>/<case_id>/case.json holds the cases")
        elif CASES_DIR not in tree.refused:
            tree.problem(CASES_DIR, "missing folder: cases/<skill>/<case_id>/case.json holds the cases")
        return []
    drafts: list[CaseDraft] = []
    for skill in _subfolders(tree, CASES_DIR, none="holds no skill folders; add cases/<skill>/<case_id>/case.json",
                             not_folder="unexpected file: cases/ holds one folder per skill"):
        skill_rel = f"{CASES_DIR}/{skill}"
        for case_name in _subfolders(tree, skill_rel, none="holds no case folders; every skill needs its cases",
                                     not_folder=f"unexpected file: cases/{skill}/ holds one folder per case"):
            drafts.append(_draft(tree, skill, case_name, f"{skill_rel}/{case_name}"))
    return drafts


def _subfolders(tree: RegistryTree, rel: str, *, none: str, not_folder: str) -> Iterator[str]:
    """The folders below ``rel`` in byte order, refused entries passed over (they have their problem).

    A problem ``none`` when ``rel`` holds nothing, and ``not_folder`` for each file where a folder belongs,
    reported as the walk reaches it so problems stay in folder order.
    """
    names = [n for n in tree.children(rel) if f"{rel}/{n}" not in tree.refused]
    if not names:
        tree.problem(rel, none)
    for name in names:
        if f"{rel}/{name}" in tree.folders:
            yield name
        else:
            tree.problem(f"{rel}/{name}", not_folder)

def _draft(tree: RegistryTree, skill: str, case_name: str, case_rel: str) -> CaseDraft:
    draft = CaseDraft(skill_folder=skill, case_folder=case_name, folder=case_rel)
    for name in tree.children(case_rel):
        if name not in (CASE_FILE, FIXTURE_DIR) and f"{case_rel}/{name}" not in tree.refused:
            tree.problem(f"{case_rel}/{name}", "unexpected entry: a case folder holds case.json and fixture/ only")
    raw_case = _read(tree, f"{case_rel}/{CASE_FILE}", "missing: every case folder holds its case.json")
    if raw_case is not _UNREAD:
        draft.raw_case = raw_case
        draft.case = _validate(tree, SkillEvalCase, raw_case, f"{case_rel}/{CASE_FILE}")
    fixture_rel = f"{case_rel}/{FIXTURE_DIR}"
    if fixture_rel in tree.folders:
        raw_seed = _read(tree, f"{fixture_rel}/{SEED_FILE}",
                         "missing: a fixture holds its init recipe, fixture/seed.json")
        if raw_seed is not _UNREAD:
            draft.raw_seed = raw_seed
            draft.seed = _validate(tree, SkillEvalSeed, raw_seed, f"{fixture_rel}/{SEED_FILE}")
    elif fixture_rel in tree.files:
        tree.problem(fixture_rel, "must be a folder: every case has a fixture/ with its seed.json")
    elif fixture_rel not in tree.refused:
        tree.problem(fixture_rel, "missing folder: every case has a fixture/ with its seed.json")
    check_case_files(tree, draft)
    return draft


_UNREAD = object()


def _read(tree: RegistryTree, rel: str, missing: str) -> Any:
    """A strict JSON file's value, or ``_UNREAD`` (with a problem) when absent, refused or not strict JSON."""
    if rel in tree.refused:
        return _UNREAD
    if rel not in tree.files:
        tree.problem(rel, missing)
        return _UNREAD
    try:
        return read_json_strict(tree.path(rel))
    except InputError as exc:
        tree.problems.append(exc)
        return _UNREAD


def _validate(tree: RegistryTree, model: type[Any], value: Any, rel: str) -> Any:
    parsed, problems = validate_value(model, value, file=shown(tree.path(rel)))
    tree.problems.extend(problems)
    return parsed
