"""Skill-eval inputs in snake_case shapes: a case, its fixture seed, an adapter's facts, a registry's policy.

``case.json`` declares one behavioural case of one packaged skill: the prompt, the deterministic
assertions, the questions left to a human reviewer, an executable scenario (setup and action command
vectors, run in a sandbox named after the case) and an oracle that binds every assertion to exactly
one action through a mechanical predicate. ``fixture/seed.json`` is the recipe that initialises the
case's fixture. ``facts.json`` is the receipt an adapter writes: one record per command it ran.

The shapes are generalised from Taskrail's to any tool: an action's ``operation`` is any slug ending in
``-command`` and its argv is checked here for shape only. Which operations exist, which program each
runs and the tool's init argv per storage mode are the registry's ``policy.json``
(:mod:`evalkit.contracts.skilleval_policy`); the registry validator (:mod:`evalkit.skilleval.registry`)
checks every case and seed against it.

The shapes are closed and strict: no coercion (``"1"`` is not ``1``, ``1`` is not ``true``), and every
field is required unless noted, a nullable one included. Rules relating several fields are checked on
the whole document, every broken one reported (not the first only: :class:`RuleProblems`); their messages
start with the field's path in the file, then ``": "``, e.g.
``scenario.actions[1].command[1]: must be a non-empty string without NUL, got ''``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, ConfigDict, Field, RootModel, StringConstraints, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError, ValidationError

from evalkit.contracts.base import SchemaNamed, SnakeContract
from evalkit.contracts.types import SLUG_PATTERN, Slug
from evalkit.contracts.types import NonEmptyStr as Text

SHA256_PATTERN = r"^[0-9a-f]{64}$"
MAX_CASE_ID_BYTES = 64

OPERATION_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*-command$"
"""An operation names a kind of command a registry may run: ``git-command``, ``tasknote-command``."""

GIT_OPERATION = "git-command"
"""The operation every policy declares: fixtures are Git repositories and facts carry Git digests."""

GIT_PROGRAM = "git"

StorageMode = Literal["committed", "local"]
Operation = Annotated[str, StringConstraints(pattern=OPERATION_PATTERN)]
Predicate = Literal["command-exit-zero", "validation-pass", "git-worktree-clean"]

STORAGE_MODES: tuple[str, ...] = StorageMode.__args__  # type: ignore[attr-defined]
PREDICATES: tuple[str, ...] = Predicate.__args__  # type: ignore[attr-defined]

PREDICATE_OPERATIONS: dict[str, str] = {"git-worktree-clean": GIT_OPERATION}
"""Predicates that only make sense over one operation; the others accept any (``validation-pass`` needs an
operation whose policy entry declares ``validation``: a registry rule, since only the policy knows)."""

GENERIC_ACTION_LABELS: frozenset[str] = frozenset(
    {"create-isolated-sandbox", "positive", "negative", "recovery", "boundary"})
"""Labels that say what kind of check an action is, not what it does; refused as action ids."""


def _not_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("must be an integer, not a boolean")
    return value


def _only_bool(value: Any) -> Any:
    if not isinstance(value, bool):
        raise ValueError("must be a boolean")
    return value


SchemaVersion = Annotated[Literal[1], BeforeValidator(_not_bool)]
CaseId = Annotated[str, StringConstraints(pattern=SLUG_PATTERN, max_length=MAX_CASE_ID_BYTES)]
Sha256 = Annotated[str, StringConstraints(pattern=SHA256_PATTERN)]


class SkillEvalContract(SnakeContract):
    """A closed, strict skill-eval shape: no extra fields and no type coercion."""

    model_config = ConfigDict(extra="forbid", strict=True)


class RuleProblems:
    """Every rule a document breaks, collected so that all are reported at once, one error each."""

    def __init__(self) -> None:
        self.messages: list[str] = []

    def add(self, message: str) -> None:
        """Record one broken rule, ``"<path>: <problem>"``."""
        self.messages.append(message)

    def check(self, rule: Callable[..., None], *args: Any, **kwargs: Any) -> bool:
        """Run a rule helper that raises ValueError; record its message. True when the rule held."""
        try:
            rule(*args, **kwargs)
        except ValueError as exc:
            self.messages.append(str(exc))
            return False
        return True

    def raise_any(self, title: str) -> None:
        """Raise one pydantic ValidationError holding every recorded problem (nothing when there is none)."""
        if self.messages:
            raise ValidationError.from_exception_data(title, [
                InitErrorDetails(type=PydanticCustomError("value_error", "{rule}", {"rule": m}), loc=(), input=None)
                for m in self.messages])


# -- rule helpers shared with the report shapes; each raises ValueError("<path>: <problem>") --------

def check_strings(values: Sequence[str], at: str, *, allow_empty: bool = False) -> None:
    """A string array that must be duplicate-free, and non-empty unless ``allow_empty``."""
    if not values and not allow_empty:
        raise ValueError(f"{at}: must not be empty")
    first: dict[str, int] = {}
    for i, value in enumerate(values):
        if value in first:
            raise ValueError(f"{at}[{i}]: duplicates {at}[{first[value]}] {value!r}")
        first[value] = i


def check_sorted_strings(values: Sequence[str], at: str) -> None:
    """A string array that must be non-empty, sorted (by code point) and duplicate-free."""
    check_strings(values, at)
    for i in range(1, len(values)):
        if values[i] < values[i - 1]:
            raise ValueError(f"{at}[{i}]: not sorted: {values[i]!r} comes after {values[i - 1]!r}")


def check_argv(argv: Sequence[str], at: str, *, min_parts: int = 2) -> None:
    """The shape of a command vector: at least ``min_parts`` non-empty strings without NUL.

    Which program may start it is the policy's business (:mod:`evalkit.skilleval.registry`).
    """
    if len(argv) < min_parts:
        need = "a program and at least one argument" if min_parts == 2 else f"at least {min_parts} part(s)"
        raise ValueError(f"{at}: needs {need}, got {list(argv)!r}")
    for i, part in enumerate(argv):
        if not part or "\x00" in part:
            raise ValueError(f"{at}[{i}]: must be a non-empty string without NUL, got {part!r}")


def _check_relative_path(path: str, at: str) -> None:
    parts = path.split("/")
    if "\\" in path or ":" in parts[0] or any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"{at}: must be a relative slash path inside the fixture, got {path!r}")


# -- case.json ------------------------------------------------------------------------------------

class ScenarioAction(SkillEvalContract):
    """One named command of a scenario; its id names what it does (not positive/negative/...)."""

    id: Slug
    operation: Operation
    command: list[str]


class Scenario(SkillEvalContract):
    """The executable part of a case: fixture source, sandbox name, setup and action commands.

    ``setup`` entries are plain argv vectors (the policy decides which programs may start them) or
    named actions like ``actions``; both forms are accepted.
    """

    fixture: Literal["fixture"]
    sandbox: CaseId
    setup: list[ScenarioAction | list[str]]
    actions: list[ScenarioAction]

    def setup_argvs(self) -> list[list[str]]:
        """Every setup command as an argv vector, whichever form it was written in."""
        return [list(s.command) if isinstance(s, ScenarioAction) else list(s) for s in self.setup]


class OracleAssertion(SkillEvalContract):
    """One assertion bound to the action whose facts decide it, and the predicate that does."""

    assertion: Text
    action: Slug
    predicate: Predicate


class Oracle(SkillEvalContract):
    assertions: list[OracleAssertion]


class SkillEvalCase(SkillEvalContract, SchemaNamed):
    """``case.json``: one strict behavioural case of one packaged skill in one storage mode."""

    schema_version: SchemaVersion
    case_id: CaseId
    skill: Slug
    storage_mode: StorageMode
    baseline_required: bool
    prompt: Text
    expected_observation: Text
    assertions: list[Text]
    human_review_questions: list[Text]
    scenario: Scenario
    oracle: Oracle

    @model_validator(mode="after")
    def _rules(self) -> SkillEvalCase:
        problems = RuleProblems()
        problems.check(check_strings, self.assertions, "assertions")
        problems.check(check_strings, self.human_review_questions, "human_review_questions")
        if self.scenario.sandbox != self.case_id:
            problems.add(f"scenario.sandbox: must equal case_id {self.case_id!r}, got {self.scenario.sandbox!r}")
        ids: dict[str, str] = {}

        def check_action(action: ScenarioAction, at: str) -> None:
            if action.id in GENERIC_ACTION_LABELS:
                problems.add(f"{at}.id: {action.id!r} is a generic label; name what the action does")
            if action.id in ids:
                problems.add(f"{at}.id: duplicates {ids[action.id]}.id {action.id!r}")
            ids.setdefault(action.id, at)
            problems.check(check_argv, action.command, f"{at}.command")

        for i, step in enumerate(self.scenario.setup):
            if isinstance(step, ScenarioAction):
                check_action(step, f"scenario.setup[{i}]")
            else:
                problems.check(check_argv, step, f"scenario.setup[{i}]")
        if not self.scenario.actions:
            problems.add("scenario.actions: must not be empty")
        for i, action in enumerate(self.scenario.actions):
            check_action(action, f"scenario.actions[{i}]")
        self._check_oracle(problems)
        problems.raise_any(type(self).__name__)
        return self

    def _check_oracle(self, problems: RuleProblems) -> None:
        """The oracle is a bijection: each assertion mapped once, each action checked once."""
        actions = {a.id: a for a in self.scenario.actions}
        assertions = set(self.assertions)
        by_assertion: dict[str, int] = {}
        by_action: dict[str, int] = {}
        for i, entry in enumerate(self.oracle.assertions):
            at = f"oracle.assertions[{i}]"
            if entry.assertion not in assertions:
                problems.add(f"{at}.assertion: {entry.assertion!r} is not one of the case's assertions")
            elif entry.assertion in by_assertion:
                problems.add(f"{at}.assertion: {entry.assertion!r} is already mapped by "
                             f"oracle.assertions[{by_assertion[entry.assertion]}]")
            else:
                by_assertion[entry.assertion] = i
            if entry.action not in actions:
                problems.add(f"{at}.action: {entry.action!r} is not a declared scenario action id")
                continue
            if entry.action in by_action:
                problems.add(f"{at}.action: {entry.action!r} is already checked by "
                             f"oracle.assertions[{by_action[entry.action]}]")
            else:
                by_action[entry.action] = i
            needed = PREDICATE_OPERATIONS.get(entry.predicate)
            if needed is not None and actions[entry.action].operation != needed:
                problems.add(f"{at}.predicate: {entry.predicate!r} needs a {needed} action, "
                             f"but {entry.action!r} is a {actions[entry.action].operation}")
        for assertion in self.assertions:
            if assertion not in by_assertion:
                problems.add(f"oracle.assertions: assertion {assertion!r} is not mapped to an action")
        for action_id in actions:
            if action_id not in by_action:
                problems.add(f"oracle.assertions: action {action_id!r} is not checked by any assertion")


# -- fixture/seed.json ----------------------------------------------------------------------------

class Decoy(SkillEvalContract):
    """Exact stale logical-state bytes a local fixture plants to tempt a skill into trusting them."""

    path: Text
    contents: str


class SkillEvalSeed(SkillEvalContract, SchemaNamed):
    """``fixture/seed.json``: how a case's fixture is initialised (Git first, then the tool).

    ``tool_init`` is the argv of the tool's init command without its program; the registry checks it
    equals the policy's ``init`` for the storage mode. ``decoy`` and ``provenance`` (the Git
    provenance sentinel) are required for local storage and must be absent for committed storage.
    """

    schema_version: SchemaVersion
    storage_mode: StorageMode
    git_init: Annotated[Literal[True], BeforeValidator(_only_bool)]
    tool_init: list[str]
    decoy: Decoy | None = None
    provenance: Text | None = None

    @model_validator(mode="after")
    def _rules(self) -> SkillEvalSeed:
        problems = RuleProblems()
        problems.check(check_argv, self.tool_init, "tool_init", min_parts=1)
        for name in ("decoy", "provenance"):
            if self.storage_mode == "local" and getattr(self, name) is None:
                problems.add(f"{name}: required for storage_mode 'local'")
            if self.storage_mode == "committed" and name in self.model_fields_set:
                problems.add(f"{name}: not allowed for storage_mode 'committed'")
        if self.decoy is not None:
            problems.check(_check_relative_path, self.decoy.path, "decoy.path")
        problems.raise_any(type(self).__name__)
        return self


# -- facts.json -----------------------------------------------------------------------------------

class ActionFact(SkillEvalContract):
    """What one command actually did: exact argv and exit code, output and before/after digests.

    ``before``/``after`` digest the sandbox tree, ``git_before``/``git_after`` the output of
    ``git status --porcelain=v1``; ``validation_passed`` is null when the command validates nothing.
    """

    action: Text
    operation: Operation
    command: list[str]
    exit_code: int
    stdout_sha256: Sha256
    stderr_sha256: Sha256
    before_sha256: Sha256
    after_sha256: Sha256
    git_before_sha256: Sha256
    git_after_sha256: Sha256
    validation_passed: bool | None
    storage_paths: list[Text]


class SkillEvalFacts(RootModel[Annotated[list[ActionFact], Field(min_length=1)]]):
    """``facts.json``: the adapter's receipt, a non-empty JSON list with one fact per action name."""

    @model_validator(mode="after")
    def _rules(self) -> SkillEvalFacts:
        problems = RuleProblems()
        first: dict[str, int] = {}
        for i, fact in enumerate(self.root):
            if fact.action in first:
                problems.add(f"[{i}].action: duplicates [{first[fact.action]}].action {fact.action!r}")
            first.setdefault(fact.action, i)
            problems.check(check_argv, fact.command, f"[{i}].command")
            seen: set[str] = set()
            for j, path in enumerate(fact.storage_paths):
                if path in seen:
                    problems.add(f"[{i}].storage_paths[{j}]: duplicate path {path!r}")
                seen.add(path)
        problems.raise_any(type(self).__name__)
        return self

    def __iter__(self) -> Iterator[ActionFact]:  # type: ignore[override]
        return iter(self.root)

    def __len__(self) -> int:
        return len(self.root)

    def __getitem__(self, index: int) -> ActionFact:
        return self.root[index]

    def to_json_obj(self) -> list[dict[str, Any]]:
        """The JSON-ready list of facts, on-disk names."""
        return self.model_dump(mode="json")
