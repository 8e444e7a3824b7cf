"""Skill lint: the seed's required contract checks on a folder of packaged Agent Skills, credential-free.

``SKILLS_DIR/<skill>/SKILL.md`` (+ resources) for each skill. Checked, each problem with its file and line:

- **Frontmatter** (:mod:`evalkit.skilleval.frontmatter`): the Agent Skills fields and limits; ``name``
  equals the folder.
- **References resolve** (:mod:`evalkit.skilleval.skill_references`): every relative link (``[text](path)``,
  images, reference definitions) in ``SKILL.md`` and in every Markdown file it reaches, and every path into
  ``scripts/``, ``references/`` or ``assets/`` it names, exists inside the skill folder; a file named in
  prose or code with the wrong letter case is a problem. Absolute paths and paths leaving the skill are
  refused.
- **Commands allowed** (with ``--policy``): the program of every shell command the skill names is one the
  registry's policy allows. Commands are the lines of shell-fenced blocks (:mod:`evalkit.skilleval.skill_markdown`),
  and code spans or lines of unlabeled fenced blocks that read as an invocation: ``$ `` first, or a program
  followed by a flag (``rm -rf build``), or an allowed program followed by anything.
- **Nested resources packaged**: every file in the skill folder is ``SKILL.md`` or reached from it through
  references (links, or a file's name in prose, code spans or commands; a link to a folder covers every
  file below it; the ``license`` field may name a file). A file nothing reaches is never found by an
  agent: reference it or remove it.
- **Mirror parity** (with ``--mirror``): each skill's tree digest equals its mirror copy's; differing,
  missing and extra files are named.
- **The release gates** (:mod:`evalkit.skilleval.gates`) on every command and file of a skill: ``command``,
  ``lifecycle`` and ``machine-api`` with ``--policy``; ``cross-platform`` and ``security`` (no eval
  definitions or credentials inside a skill) always.
- **Provider independence**: no model provider or model named anywhere in a skill's Markdown.
- **Coverage** (with ``--policy`` naming a registry): every skill has cases in ``REGISTRY/cases/<skill>/``.

The tree itself may hold only regular files and folders with UTF-8 names (the digests need that).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit.contracts.skilleval import SkillEvalPolicy
from evalkit.errors import InputError
from evalkit.skilleval.digest import DOMAINS, tree_digest
from evalkit.skilleval.frontmatter import check_frontmatter
from evalkit.skilleval.gates import (
    Invocation,
    command_problems,
    cross_platform_problems,
    lifecycle_problems,
    machine_api_problems,
    provider_problems,
    skill_file_problems,
)
from evalkit.skilleval.mirror import compare_mirror
from evalkit.skilleval.registry_tree import RegistryTree, list_tree, shown
from evalkit.skilleval.skill_markdown import link_target, scan_markdown, shell_commands, split_frontmatter
from evalkit.skilleval.skill_references import SkillReferences

SKILL_FILE = "SKILL.md"

_PROGRAM = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")


@dataclass(frozen=True)
class SkillDigest:
    """One linted skill and its tree digest (None when its tree could not be digested)."""

    name: str
    sha256: str | None


@dataclass
class LintReport:
    """Every skill linted and every problem found; ``ok`` when there is none."""

    skills_dir: str
    skills: list[SkillDigest] = field(default_factory=list)
    skill_set_sha256: str | None = None
    mirror: str | None = None
    commands_checked: bool = False
    coverage_checked: bool = False
    problems: list[InputError] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_json_obj(self) -> dict[str, Any]:
        """The report as JSON (``--json``): skills with digests, and problems with file, line, path, message."""
        return {
            "ok": self.ok,
            "skillsDir": self.skills_dir,
            "skillSetSha256": self.skill_set_sha256,
            "mirror": self.mirror,
            "commandsChecked": self.commands_checked,
            "skills": [{"name": s.name, "sha256": s.sha256} for s in self.skills],
            "problems": [{"file": p.file, "line": p.line, "path": p.path, "message": p.message}
                         for p in self.problems],
        }


def lint_skills(skills_dir: str | Path, *, mirror: str | Path | None = None,
                policy: SkillEvalPolicy | None = None, cases_dir: Path | None = None) -> LintReport:
    """Lint every skill in ``skills_dir``.

    Args:
        skills_dir: the folder of skills, ``<skill>/SKILL.md`` each.
        mirror: an optional copy of the same skills (e.g. the committed mirror) that must be byte-identical.
        policy: an optional registry policy; with it, every command the skills name must be allowed.
        cases_dir: an optional registry's ``cases/`` folder; with it, a skill without cases is a problem.

    Returns:
        The report: skills with their tree digests, and every problem with file and line.
    """
    top = Path(skills_dir)
    report = LintReport(shown(top), mirror=shown(Path(mirror)) if mirror is not None else None,
                        commands_checked=policy is not None, coverage_checked=cases_dir is not None)
    if not top.is_dir():
        report.problems.append(InputError("not a folder; give the folder holding <skill>/SKILL.md",
                                          file=shown(top)))
        return report
    tree = list_tree(top, holder="a skills folder", hardlinks=False)
    skills = _skill_folders(tree)
    for skill in skills:
        _lint_skill(tree, skill, policy)
        if cases_dir is not None and not _has_cases(cases_dir / skill):
            tree.problem(f"{skill}/{SKILL_FILE}", f"coverage: skill {skill!r} has no cases in {shown(cases_dir / skill)}; "
                                                  "every shipped skill needs its committed and local cases")
        report.skills.append(SkillDigest(skill, _digest(top / skill, "skill")))
    report.skill_set_sha256 = _digest(top, "skill-set") if skills else None
    if mirror is not None:
        compare_mirror(tree, Path(mirror))
    report.problems = tree.problems
    return report


def _has_cases(folder: Path) -> bool:
    """Whether a registry's ``cases/<skill>/`` folder holds at least one case folder with its case.json."""
    return folder.is_dir() and any((case / "case.json").is_file() for case in folder.iterdir() if case.is_dir())


def _digest(path: Path, domain: str) -> str | None:
    try:
        return tree_digest(path, DOMAINS[domain])
    except InputError:
        return None  # what stops the digest is already a problem of the tree


def _skill_folders(tree: RegistryTree) -> list[str]:
    skills = []
    for name in tree.children(""):
        if name in tree.folders:
            skills.append(name)
        elif name in tree.files:
            tree.problem(name, "unexpected file: a skills folder holds one folder per skill (<skill>/SKILL.md)")
    if not skills and not tree.problems:
        tree.problem("", "holds no skill folders; expected <skill>/SKILL.md")
    return skills


def _lint_skill(tree: RegistryTree, skill: str, policy: SkillEvalPolicy | None) -> None:
    skill_md = f"{skill}/{SKILL_FILE}"
    files = {rel[len(skill) + 1:] for rel in tree.files if rel.startswith(f"{skill}/")}
    folders = {rel[len(skill) + 1:] for rel in tree.folders if rel.startswith(f"{skill}/")}
    if SKILL_FILE not in files:
        if skill_md not in tree.refused:
            tree.problem(skill_md, "missing: every skill folder holds its SKILL.md")
        return
    reached: set[str] = {SKILL_FILE}
    queue = [SKILL_FILE]
    invocations: list[Invocation] = []
    while queue:
        rel = queue.pop(0)
        text = _read_text(tree, f"{skill}/{rel}")
        if text is None:
            continue
        tree.problems.extend(provider_problems(text, file=shown(tree.path(f"{skill}/{rel}"))))
        first_line = 1
        if rel == SKILL_FILE:
            front = split_frontmatter(text)
            if front is None:
                tree.problems.append(InputError("must start with YAML frontmatter between '---' lines (name, "
                                                "description)", file=shown(tree.path(skill_md)), line=1))
            else:
                values, problems = check_frontmatter(front, skill, shown(tree.path(skill_md)))
                tree.problems.extend(problems)
                text, first_line = front.body, front.body_line
                _reach_license(values.get("license"), files, reached)
        found = _references(tree, skill, rel, text, first_line, files, folders, policy, invocations)
        for target in sorted(found - reached):
            reached.add(target)
            if target.endswith(".md"):
                queue.append(target)
    for rel in sorted(files - reached):
        tree.problem(f"{skill}/{rel}", "not packaged: nothing in SKILL.md (or a file it references) refers to "
                                       "this file, so an agent never finds it; reference it or remove it")
    for rel in sorted(files):
        try:
            data = tree.path(f"{skill}/{rel}").read_bytes()
        except OSError:
            continue  # reported where it was read
        tree.problems.extend(skill_file_problems(f"{skill}/{rel}", data, file=shown(tree.path(f"{skill}/{rel}"))))
    _check_gates(tree, invocations, policy)


def _check_gates(tree: RegistryTree, invocations: list[Invocation], policy: SkillEvalPolicy | None) -> None:
    """The release gates over every command the skill names, in the order each file names them."""
    for invocation in invocations:
        tree.problems.extend(cross_platform_problems(invocation, policy))
        if policy is not None:
            tree.problems.extend(command_problems(invocation, policy))
            tree.problems.extend(machine_api_problems(invocation, policy))
    if policy is not None:
        for file in dict.fromkeys(i.file for i in invocations):
            tree.problems.extend(lifecycle_problems([i for i in invocations if i.file == file], policy))


def _read_text(tree: RegistryTree, rel: str) -> str | None:
    try:
        return tree.path(rel).read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        tree.problem(rel, f"not valid UTF-8 at byte {exc.start}")
    except OSError as exc:
        tree.problem(rel, f"cannot read: {exc.strerror or exc}")
    return None


def _reach_license(license_text: Any, files: set[str], reached: set[str]) -> None:
    if isinstance(license_text, str):
        reached.update(word.strip(".,;:()") for word in license_text.split() if word.strip(".,;:()") in files)


def _references(tree: RegistryTree, skill: str, rel: str, text: str, first_line: int, files: set[str],
                folders: set[str], policy: SkillEvalPolicy | None, invocations: list[Invocation]) -> set[str]:
    """Files of the skill that ``rel`` reaches; a problem for each reference that does not resolve."""
    scan = scan_markdown(text, first_line)
    file = shown(tree.path(f"{skill}/{rel}"))
    refs = SkillReferences(files, folders, rel, file)
    for link in scan.links:
        target = link_target(link.text)
        if target is not None:
            refs.link(target, link.line)
    for mention in scan.prose:
        for word in mention.text.split():
            if not word.startswith(("](", "[")):
                refs.word(word, mention.line)
    commands = list(scan.commands)
    for mention in [*scan.spans, *scan.plain]:
        words = mention.text.split()
        if _reads_as_command(words, policy):
            line = mention.text.strip().removeprefix("$ ")
            commands.extend((argv, mention.line) for argv in shell_commands(line))
        else:
            for word in words:
                refs.word(word, mention.line)
    invocations.extend(Invocation(argv, file, line) for argv, line in sorted(commands, key=lambda c: c[1]) if argv)
    for argv, line in commands:
        for word in argv[1:]:
            refs.word(word, line)
        if policy is not None and argv and policy.operation_of_program(argv[0]) is None:
            refs.problems.append(InputError(
                f"command {argv[0]!r} is not allowed by the policy (allowed: {', '.join(policy.programs())})",
                file=file, line=line))
    tree.problems.extend(sorted(refs.problems, key=lambda p: p.line or 0))
    return refs.reached


def _reads_as_command(words: list[str], policy: SkillEvalPolicy | None) -> bool:
    """Whether a code span is an invocation rather than a name: see the module docstring."""
    if words and words[0] == "$":
        return len(words) > 1
    if len(words) < 2 or not _PROGRAM.fullmatch(words[0]):
        return False
    if policy is not None and policy.operation_of_program(words[0]) is not None:
        return True
    return any(w.startswith("-") and len(w) > 1 for w in words[1:])
