"""The ``facts.json`` receipt: written by an adapter, re-read and checked by the runner before any grade.

An adapter returns one fact per setup and action command it ran and writes the same list, in the seed's
field order with a two-space indent and a final newline, to ``<arm>/facts.json``, beside each
command's exact output in ``<arm>/commands/NN-<action>.stdout|.stderr``. The runner trusts none of it:
:func:`check_receipt` re-reads the file and refuses (naming what) a missing receipt, one that does not
round-trip byte for byte, one that differs from what the adapter returned, a missing or extra fact, a
fact for an undeclared command (fabricated), and a fact whose output digests or validation verdict do
not match the output files kept beside it (mismatched).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from evalkit.contracts.skilleval import ActionFact, SkillEvalCase, SkillEvalFacts, SkillEvalPolicy
from evalkit.errors import InputError, StrictJSONError
from evalkit.io import atomic_write_text, loads_strict
from evalkit.io.regular import open_regular
from evalkit.skilleval.digest import file_sha256
from evalkit.skilleval.policy import validation_pointer

RECEIPT = "facts.json"
COMMANDS = "commands"


@dataclass(frozen=True)
class DeclaredCommand:
    """One command a case declares (setup first, then actions), as its fact must record it."""

    action: str
    operation: str
    command: list[str]
    setup: bool


def declared_commands(case: SkillEvalCase, policy: SkillEvalPolicy) -> list[DeclaredCommand]:
    """Every command of a case in run order; a plain setup argv is named ``setup-N`` (1-based).

    Raises:
        InputError: a setup argv whose program the policy does not allow.
    """
    out: list[DeclaredCommand] = []
    for i, step in enumerate(case.scenario.setup):
        if isinstance(step, list):
            operation = policy.operation_of_program(step[0])
            if operation is None:
                raise InputError(f"scenario.setup[{i}][0]: {step[0]!r} is not a program the policy allows",
                                 path=f"scenario.setup[{i}]")
            out.append(DeclaredCommand(f"setup-{i + 1}", operation, list(step), True))
        else:
            out.append(DeclaredCommand(step.id, step.operation, list(step.command), True))
    out.extend(DeclaredCommand(a.id, a.operation, list(a.command), False) for a in case.scenario.actions)
    return out


def output_name(index: int, action: str, stream: str) -> str:
    """The relpath of one fact's kept output, e.g. ``commands/01-list-notes.stdout`` (``index`` 0-based)."""
    return f"{COMMANDS}/{index + 1:02d}-{action}.{stream}"


def render_receipt(facts: Sequence[dict[str, Any]]) -> str:
    """The receipt's exact text: the seed's field order, two-space indent, UTF-8, final newline."""
    ordered = [{name: fact[name] for name in ActionFact.model_fields} for fact in facts]
    return json.dumps(ordered, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_receipt(arm_dir: Path, facts: Sequence[dict[str, Any]]) -> None:
    """Write ``facts.json`` atomically (what every adapter calls)."""
    atomic_write_text(arm_dir / RECEIPT, render_receipt(facts))


def validation_verdict(stdout: bytes, pointer: str) -> bool:
    """The boolean at a JSON Pointer in a command's JSON output; False when it is not JSON or not a boolean."""
    try:
        value: Any = json.loads(stdout)
    except (ValueError, RecursionError):
        return False
    if pointer:
        for token in pointer[1:].split("/"):
            key = token.replace("~1", "/").replace("~0", "~")
            if isinstance(value, dict) and key in value:
                value = value[key]
            elif isinstance(value, list) and key.isdigit() and (key == "0" or not key.startswith("0")) \
                    and int(key) < len(value):
                value = value[int(key)]
            else:
                return False
    return value if isinstance(value, bool) else False


def expected_validation(policy: SkillEvalPolicy, operation: str, argv: Sequence[str], stdout: bytes) -> bool | None:
    """``validation_passed`` for a command: the verdict when it is its operation's validation, else None."""
    pointer = validation_pointer(policy, operation, argv)
    return None if pointer is None else validation_verdict(stdout, pointer)


def check_receipt(arm_dir: Path, returned: Sequence[dict[str, Any]] | None, case: SkillEvalCase,
                  policy: SkillEvalPolicy) -> list[ActionFact]:
    """Re-read an arm's receipt and accept it only if it is exactly the facts the commands produced.

    Args:
        arm_dir: the arm's raw evidence folder.
        returned: the facts the adapter returned (None when re-checking a receipt on its own).
        case: the case the arm ran.
        policy: the registry's policy.

    Returns:
        The validated facts, in order.

    Raises:
        InputError: naming the receipt (or output file) and what is wrong.
    """
    path = arm_dir / RECEIPT
    where = str(path)
    if not path.is_file():
        raise InputError("missing receipt: the adapter wrote no facts.json", file=where)
    with open_regular(path) as fh:
        data = fh.read()
    try:
        value = loads_strict(data, file=where)
        facts = list(SkillEvalFacts.model_validate(value))
    except StrictJSONError as exc:
        raise InputError(f"receipt is not strict JSON: {exc.message}", file=where, line=exc.line) from None
    except ValidationError as exc:
        first = exc.errors()[0]
        at = ".".join(str(p) for p in first["loc"])
        raise InputError(f"receipt is not a facts list: {first['msg']}", file=where, path=at or None) from None
    if render_receipt(value).encode("utf-8") != data:
        raise InputError("receipt does not round-trip byte for byte (not the canonical rendering)", file=where)
    if returned is not None and render_receipt(returned) != render_receipt(value):
        raise InputError("receipt differs from the facts the adapter returned", file=where)
    declared = declared_commands(case, policy)
    for i, want in enumerate(declared):
        if i >= len(facts):
            raise InputError(f"missing fact: no fact for declared command {want.action!r}", file=where,
                                 path=f"[{i}]")
        fact = facts[i]
        if (fact.action, fact.operation, fact.command) != (want.action, want.operation, want.command):
            raise InputError(f"fabricated fact: {fact.action!r} ({fact.operation} {fact.command!r}) is not the "
                                 f"declared command {want.action!r} ({want.operation} {want.command!r})",
                                 file=where, path=f"[{i}]")
    if len(facts) > len(declared):
        raise InputError(f"extra fact: {facts[len(declared)].action!r} was not declared", file=where,
                             path=f"[{len(declared)}]")
    for i, fact in enumerate(facts):
        _check_outputs(arm_dir, i, fact, policy)
    return facts


def _check_outputs(arm_dir: Path, index: int, fact: ActionFact, policy: SkillEvalPolicy) -> None:
    where = str(arm_dir / RECEIPT)
    for stream, claimed in (("stdout", fact.stdout_sha256), ("stderr", fact.stderr_sha256)):
        rel = output_name(index, fact.action, stream)
        kept = arm_dir / rel
        if not kept.is_file():
            raise InputError(f"mismatched fact: its {stream} file {rel} is missing", file=where,
                                 path=f"[{index}].{stream}_sha256")
        if file_sha256(kept) != claimed:
            raise InputError(f"mismatched fact: {stream}_sha256 does not match the kept {rel}", file=where,
                                 path=f"[{index}].{stream}_sha256")
    stdout = (arm_dir / output_name(index, fact.action, "stdout")).read_bytes()
    verdict = expected_validation(policy, fact.operation, fact.command, stdout)
    if fact.validation_passed != verdict:
        raise InputError(f"mismatched fact: validation_passed is {fact.validation_passed!r} but the kept stdout "
                             f"gives {verdict!r}", file=where, path=f"[{index}].validation_passed")
