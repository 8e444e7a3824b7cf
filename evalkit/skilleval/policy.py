"""A registry's ``policy.json``: read strictly, and the questions the rest of the harness asks of it.

The shape is the ``skill-eval-policy`` contract (:class:`~evalkit.contracts.skilleval.SkillEvalPolicy`):
the operations a registry may run, each with its one program, the tool's init argv per storage mode, the
storage modes every skill needs a case in, and the skills the prior release shipped.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from evalkit.contract_files import validate_value
from evalkit.contracts.skilleval import SkillEvalPolicy
from evalkit.errors import InputError, RegistryInvalid
from evalkit.io import read_json_strict

POLICY_FILE = "policy.json"
"""The policy's file name at the top of a registry."""


def read_policy(path: str | Path) -> tuple[SkillEvalPolicy | None, list[InputError]]:
    """Read and check one policy file, collecting every problem instead of stopping at the first.

    Args:
        path: the ``policy.json`` file.

    Returns:
        The policy (None when it has problems) and the problems, each naming the file and member path.
    """
    try:
        value = read_json_strict(path)
    except InputError as exc:
        return None, [exc]
    policy, problems = validate_value(SkillEvalPolicy, value, file=str(path))
    return policy, problems


def load_policy(path: str | Path) -> SkillEvalPolicy:
    """The policy in ``path``.

    Raises:
        RegistryInvalid: the file is not strict JSON or breaks the contract; ``problems`` lists every one.
    """
    policy, problems = read_policy(path)
    if policy is None:
        raise RegistryInvalid(problems, file=str(path))
    return policy


def validation_pointer(policy: SkillEvalPolicy, operation: str, argv: Sequence[str]) -> str | None:
    """The JSON Pointer to read a validation verdict from, when ``argv`` is its operation's validation command.

    A command validates when its operation declares ``validation`` and its arguments (``argv`` after the
    program) start with the declared ``validation.argv``; the runner then reads the boolean at the
    returned pointer in the command's JSON stdout. Any other command validates nothing (None).

    Args:
        policy: the registry's policy.
        operation: the action's operation.
        argv: the action's full argv, program first.
    """
    entry = policy.operations.get(operation)
    if entry is None or entry.validation is None:
        return None
    wanted = entry.validation.argv
    if list(argv[1:1 + len(wanted)]) != list(wanted):
        return None
    return entry.validation.pointer
