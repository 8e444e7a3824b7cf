"""A skill-eval registry's ``policy.json``: the executables it may run and how its tool is initialised.

The seed hard-codes one tool (``git-command`` runs ``git``, ``taskrail-command`` runs ``taskrail``).
evalkit reads the same facts from the registry's policy instead, so any command-line tool can be
evaluated: each *operation* names the one program its actions run, the tool's operation may declare how
its output says "valid" (for the ``validation-pass`` predicate), ``init`` gives the tool's init argv per
storage mode, ``storage_modes`` the modes every skill needs a case in, and ``baseline_skills`` the
skills the prior release shipped (so their cases must require a baseline arm).

``git-command`` running ``git`` is always required: fixtures are Git repositories and every fact
carries Git status digests.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import StringConstraints, model_validator

from evalkit.contracts.base import SchemaNamed
from evalkit.contracts.skilleval_case import (
    GIT_OPERATION,
    GIT_PROGRAM,
    Operation,
    RuleProblems,
    SchemaVersion,
    SkillEvalContract,
    Slug,
    StorageMode,
    check_argv,
    check_strings,
)

PROGRAM_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._+-]*$"
"""A bare program name (no directory): the runner binds it to one absolute path and digest."""

_JSON_POINTER = re.compile(r"(/([^~/]|~[01])*)*")

Program = Annotated[str, StringConstraints(pattern=PROGRAM_PATTERN, max_length=255)]


class OperationValidation(SkillEvalContract):
    """How to read a validation verdict from a command's output.

    When an action's arguments (argv after the program) start with ``argv``, the runner parses its
    stdout as JSON and reads the boolean at the JSON Pointer ``pointer`` (RFC 6901) as
    ``validation_passed``; anything but a boolean there, or stdout that is not JSON, is ``false``.
    """

    argv: list[str]
    pointer: str


class PolicyOperation(SkillEvalContract):
    """One operation: the program its actions must start with, and optionally how it validates.

    ``commands`` is the program's documented command table, subcommand -> its documented flags (the key
    ``""`` holds flags allowed before the subcommand); with it, the ``command`` gate checks every command
    skills and cases name. ``json_flag`` (e.g. ``--json``) is the flag that makes a subcommand answer in
    JSON: every invocation of a subcommand documenting it must pass it (the ``machine-api`` gate).
    """

    program: Program
    validation: OperationValidation | None = None
    commands: dict[str, list[str]] | None = None
    json_flag: str | None = None


class ToolInit(SkillEvalContract):
    """The tool's init command per storage mode (argv without the program), run by ``operation``.

    A mode listed in the policy's ``storage_modes`` needs its argv; a mode not listed must be absent.
    """

    operation: Operation
    committed: list[str] | None = None
    local: list[str] | None = None

    def argv_for(self, mode: str) -> list[str] | None:
        """The init argv (program excluded) for a storage mode, or None when the policy has none."""
        value: list[str] | None = getattr(self, mode)
        return value


class SkillEvalPolicy(SkillEvalContract, SchemaNamed):
    """``policy.json``: what a skill-eval registry may run, and the coverage its cases must have."""

    schema_version: SchemaVersion
    tool: Slug
    operations: dict[Operation, PolicyOperation]
    init: ToolInit
    storage_modes: list[StorageMode]
    baseline_skills: list[Slug]
    lifecycle: list[str] | None = None
    """The tool's subcommands in canonical order (the ``lifecycle`` gate); default: its init subcommand first."""
    platform_only: list[str] | None = None
    """Programs the ``cross-platform`` gate refuses, replacing evalkit's built-in list."""
    final: bool = False
    """The case set is final: the report records that it ran, and was resumed on, exactly these cases."""
    git_config_allowed: list[str] | None = None
    """Git settings a case may give with ``git -c KEY=VALUE`` (none by default: ``-c alias.x=!cmd`` runs a shell)."""

    @model_validator(mode="after")
    def _rules(self) -> SkillEvalPolicy:
        problems = RuleProblems()
        git = self.operations.get(GIT_OPERATION)
        if git is None:
            problems.add(f"operations: must declare {GIT_OPERATION!r} (fixtures are Git repositories)")
        elif git.program != GIT_PROGRAM:
            problems.add(f"operations.{GIT_OPERATION}.program: must be {GIT_PROGRAM!r}, got {git.program!r}")
        if git is not None and git.validation is not None:
            problems.add(f"operations.{GIT_OPERATION}.validation: git validates nothing; remove it")
        owner: dict[str, str] = {}
        for name, operation in self.operations.items():
            if operation.validation is not None and name != GIT_OPERATION:
                at = f"operations.{name}.validation"
                problems.check(check_argv, operation.validation.argv, f"{at}.argv", min_parts=1)
                if not _JSON_POINTER.fullmatch(operation.validation.pointer):
                    problems.add(f"{at}.pointer: must be an RFC 6901 JSON Pointer like '/valid', "
                                 f"got {operation.validation.pointer!r}")
            if operation.program in owner:
                problems.add(f"operations.{name}.program: {operation.program!r} is already the program of "
                             f"operation {owner[operation.program]!r}; one program, one operation")
            owner.setdefault(operation.program, name)
        if self.init.operation not in self.operations:
            problems.add(f"init.operation: {self.init.operation!r} is not one of operations {sorted(self.operations)}")
        elif self.init.operation == GIT_OPERATION:
            problems.add("init.operation: must be the tool's operation; the fixture's 'git init' is implied")
        problems.check(check_strings, self.storage_modes, "storage_modes", allow_empty=False)
        for mode in ("committed", "local"):
            argv = self.init.argv_for(mode)
            if mode in self.storage_modes and argv is None:
                problems.add(f"init.{mode}: required, since storage_modes lists {mode!r}")
            if mode not in self.storage_modes and argv is not None:
                problems.add(f"init.{mode}: not allowed, since storage_modes does not list {mode!r}")
            if argv is not None:
                problems.check(check_argv, argv, f"init.{mode}", min_parts=1)
        problems.check(check_strings, self.baseline_skills, "baseline_skills", allow_empty=True)
        for name, operation in self.operations.items():
            table = operation.commands
            for sub, flags in (table or {}).items():
                problems.check(check_strings, flags, f"operations.{name}.commands.{sub or '(before the subcommand)'}", allow_empty=True)
                bad = [f for f in flags if not f.startswith("-")]
                if bad:
                    problems.add(f"operations.{name}.commands.{sub}: flags start with '-', got {bad[0]!r}")
            if operation.json_flag is not None and table is None:
                problems.add(f"operations.{name}.json_flag: needs the command table (operations.{name}.commands) "
                             "that says which subcommands offer it")
        init_table = self.operations[self.init.operation].commands if self.init.operation in self.operations else None
        if self.lifecycle is not None:
            problems.check(check_strings, self.lifecycle, "lifecycle")
            for i, sub in enumerate(self.lifecycle):
                if init_table is not None and sub not in init_table:
                    problems.add(f"lifecycle[{i}]: {sub!r} is not a subcommand in operations.{self.init.operation}"
                                 ".commands")
        if self.platform_only is not None:
            problems.check(check_strings, self.platform_only, "platform_only", allow_empty=True)
        problems.raise_any(type(self).__name__)
        return self

    def programs(self) -> list[str]:
        """Every program the registry may run, sorted."""
        return sorted(op.program for op in self.operations.values())

    def operation_of_program(self, program: str) -> str | None:
        """The operation whose actions run ``program``, or None when the policy does not allow it."""
        for name, operation in self.operations.items():
            if operation.program == program:
                return name
        return None
