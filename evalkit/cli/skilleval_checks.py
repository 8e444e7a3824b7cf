"""``evalkit skill-eval lint`` and ``evalkit skill-eval validate``: the credential-free checks before a run.

Both are deterministic and need no provider or network: fit for CI. Each prints one line per problem,
``FILE[:LINE]: member.path: message``, and exits 1 when there is any (0 when there is none).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

_LINT_EPILOG = """\
checks, each problem with its file and line:
  frontmatter   SKILL.md opens with YAML between '---' lines: name (1-64 chars, lowercase letters,
                digits, single hyphens, equal to the folder) and description (1-1024 chars) present;
                license, compatibility (<=500 chars), metadata (string map), allowed-tools allowed;
                no other field
  references    relative links, images and reference definitions in SKILL.md and every Markdown file
                it reaches resolve inside the skill folder; so do scripts/, references/, assets/ paths
                named in code
  commands      with --policy: every command the skill names (shell-fenced blocks; code spans and
                unlabeled blocks that read as an invocation) runs a program the policy allows
  packaging     every file of a skill is SKILL.md or reached from it (a link to a folder covers it);
                a skills folder holds one folder per skill
  parity        with --mirror: each skill's tree digest equals its mirror copy's; differing, missing
                and extra files are named
  tree          only regular files and folders with UTF-8 names (no symlinks, FIFOs, devices)

exit status: 0 no problem, 1 problems (or unreadable input), 2 usage error
"""

_VALIDATE_EPILOG = """\
layout:
  REGISTRY/policy.json                                the operations (programs) it may run, init argv,
                                                      storage modes, baseline skills
  REGISTRY/cases/<skill>/<case_id>/case.json          one case
  REGISTRY/cases/<skill>/<case_id>/fixture/seed.json  its fixture's init recipe (+ other fixture files)

rules: strict JSON (no BOM, UTF-8, no duplicate key, no trailing value) and exact member sets for the
policy, every case and seed; case id pattern, <= 64 bytes, unique, equal to its folder; skill equal to
its parent folder; a case per skill in every storage mode of the policy; baseline_required true exactly
for the policy's baseline_skills; complete fixtures (seed.json, tool_init equal to the policy's init for
the mode, local decoy and provenance); the oracle a bijection between assertions and actions; no
generic action ids; every command starts with its operation's program and names no path outside the
sandbox ('..', absolute or home paths); validation-pass only on a command that validates; no symlinks,
special files, hardlink aliases or non-UTF-8 names. Every problem is reported at once.

exit status: 0 valid, 1 problems, 2 usage error
"""


def _print_problems(problems: list[Any]) -> None:
    from evalkit.skilleval import problem_lines

    for line in problem_lines(problems):
        print(line, file=sys.stderr)


def _cmd_lint(args: argparse.Namespace) -> int:
    from evalkit.io import canonical_dumps
    from evalkit.skilleval import lint_release_skills, lint_summary

    report = lint_release_skills(args.skills_dir, mirror=args.mirror, policy=args.policy)
    if args.json:
        sys.stdout.write(canonical_dumps(report.to_json_obj()))
    elif not report.ok:
        _print_problems(report.problems)
    else:
        print("\n".join(lint_summary(report, args.skills_dir, args.mirror)))
    return 0 if report.ok else 1


def _cmd_validate(args: argparse.Namespace) -> int:
    from evalkit.io import canonical_dumps
    from evalkit.skilleval import check_registry

    result = check_registry(args.registry, args.skills)
    if args.json:
        sys.stdout.write(canonical_dumps(result.to_json_obj()))
    elif not result.ok:
        _print_problems(result.problems)
    else:
        print(result.summary())
    return 0 if result.ok else 1


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Add ``lint`` and ``validate`` to ``evalkit skill-eval``."""
    formatter = argparse.RawDescriptionHelpFormatter
    p = commands.add_parser(
        "lint", help="check packaged skills: frontmatter, references, commands, packaging, mirror parity",
        description="Lint a folder of Agent Skills (SKILLS_DIR/<skill>/SKILL.md + resources) the way the\n"
                    "release contract requires: mechanically, deterministically, without credentials (fit for CI).",
        epilog=_LINT_EPILOG, formatter_class=formatter)
    p.add_argument("skills_dir", metavar="SKILLS_DIR", help="folder holding one folder per skill")
    p.add_argument("--mirror", metavar="DIR", help="a copy of the same skills that must be byte-identical "
                                                   "(e.g. the committed mirror of packaged skills)")
    p.add_argument("--policy", metavar="POLICY", help="a registry's policy.json (or the registry folder); "
                                                      "commands the skills name must run programs it allows")
    p.add_argument("--json", action="store_true", help="print the report as JSON (skills, digests, problems)")
    p.set_defaults(func=_cmd_lint)

    p = commands.add_parser(
        "validate", help="check a skill-eval registry (policy, cases, seeds, fixtures) and list every problem",
        description="Validate a skill-eval case registry against its contracts, its folders and its policy.\n"
                    "Every problem is listed with its file and member path, not the first only.",
        epilog=_VALIDATE_EPILOG, formatter_class=formatter)
    p.add_argument("registry", metavar="REGISTRY", help="the registry folder (policy.json and cases/)")
    p.add_argument("--skills", metavar="DIR", help="the candidate skills folder: every skill in it must have "
                                                   "cases in the registry (coverage)")
    p.add_argument("--json", action="store_true", help="print the result as JSON (cases and problems)")
    p.set_defaults(func=_cmd_validate)
