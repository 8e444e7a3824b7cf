"""Adapters: what runs one arm of one case in its sandbox and writes the ``facts.json`` receipt.

Both adapters build the sandbox the same way (:func:`prepare_sandbox`: fixture files, ``git init``,
the tool's init for the storage mode, a local fixture's decoy), run the case's setup commands, install
the arm's skill at ``.agents/skills/<skill>/``, then:

- ``script`` runs the declared actions directly: deterministic and credential-free, what CI uses;
  its transcript is the log of every command it ran;
- ``command`` first runs the caller's agent command (``{prompt}`` and ``{sandbox}`` replaced in its argv)
  in the sandbox, keeps the agent's output as the transcript, then runs the declared actions.

Each fact records the exact argv (program name, not path), exit code, digests of the kept stdout and
stderr, the sandbox tree and ``git status --porcelain=v1`` before and after, the validation verdict and
the paths the command changed. An :class:`InputError` (a failed sandbox init, a timed-out command, a
changed executable, an escaping argument) makes the arm missing; an agent that fails or times out
leaves an arm whose outcome is ``incomplete`` (its actions still run and are graded).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit.contracts.skilleval import GIT_PROGRAM, SkillEvalCase, SkillEvalPolicy, SkillEvalSeed
from evalkit.errors import InputError
from evalkit.io import atomic_write_bytes, atomic_write_text
from evalkit.processes import Finished
from evalkit.skilleval.digest import bytes_sha256, tree_files
from evalkit.skilleval.executables import BoundExecutable, run_bound, scrubbed_env
from evalkit.skilleval.facts import (
    DeclaredCommand,
    declared_commands,
    expected_validation,
    output_name,
    write_receipt,
)
from evalkit.skilleval.gates import Invocation, git_argv_problems
from evalkit.skilleval.sandbox import (
    changed_paths,
    check_argv_paths,
    copy_fixture,
    install_skill,
    plant,
    sandbox_digest,
    sandbox_manifest,
)

SANDBOX = "sandbox"
TRANSCRIPT = "transcript.txt"
LOG = "log.txt"
GIT_STATUS = ["git", "status", "--porcelain=v1"]
_PLACEHOLDER = re.compile(r"\{(prompt|sandbox)\}")


@dataclass
class ArmRequest:
    """Everything an adapter gets for one arm: the case, where to work, and what it may run."""

    case: SkillEvalCase
    seed: SkillEvalSeed
    policy: SkillEvalPolicy
    fixture_dir: Path
    skill_dir: Path
    arm_dir: Path
    executables: dict[str, BoundExecutable]
    timeout: float

    @property
    def sandbox(self) -> Path:
        return self.arm_dir / SANDBOX


@dataclass
class ArmRun:
    """What an adapter returns: the facts it wrote and whether the behavioural run completed."""

    facts: list[dict[str, Any]]
    completed: bool = True
    notes: list[str] = field(default_factory=list)


class _Session:
    """One arm's command runner: the scrubbed environment, the log and the kept outputs."""

    def __init__(self, request: ArmRequest, secrets: dict[str, str] | None = None) -> None:
        self.request = request
        self.env = scrubbed_env(request.executables.values(), request.sandbox)
        self.log: list[str] = []
        self.secrets = {name: value.encode() for name, value in (secrets or {}).items() if len(value) >= 4}

    def redact(self, data: bytes) -> bytes:
        """``data`` with every secret passed to the agent replaced by ``[redacted NAME]``."""
        for name, value in self.secrets.items():
            data = data.replace(value, f"[redacted {name}]".encode())
        return data

    def log_text(self) -> str:
        return self.redact("".join(self.log).encode("utf-8", "surrogateescape")).decode("utf-8", "replace")

    def check_no_secret_left(self) -> None:
        """Refuse the arm when a secret reached a sandbox file (which is sealed evidence); blank it there.

        Raises:
            InputError: naming the file.
        """
        if not self.secrets:
            return
        for rel, path in tree_files(self.request.sandbox):
            data = path.read_bytes()
            if self.redact(data) != data:
                path.write_bytes(self.redact(data))
                raise InputError(f"a secret passed to the agent was written to sandbox/{rel} (now redacted there); "
                                 "the arm's evidence would hold it, so the arm is refused", file=str(path))

    def run(self, argv: list[str], label: str) -> Finished:
        check_argv_paths(argv, label)
        refused = git_argv_problems(Invocation(argv, label), self.request.policy)
        if refused:
            raise InputError(f"{label}: {refused[0].message}")
        bound = self.request.executables.get(argv[0])
        if bound is None:
            raise InputError(f"{label}: program {argv[0]!r} is not bound (the policy does not allow it)")
        result = run_bound(bound, argv, cwd=self.request.sandbox, env=self.env, timeout=self.request.timeout,
                           confine_to=self.request.sandbox)
        status = "timed out" if result.timed_out else f"exit {result.returncode}"
        self.log.append(f"$ {_shown(argv)}\n{status}\n")
        if result.timed_out:
            raise InputError(f"{label}: {_shown(argv)} timed out after {self.request.timeout:g} s")
        return result

    def init(self, argv: list[str], label: str) -> None:
        result = self.run(argv, label)
        for stream, data in (("stdout", result.stdout), ("stderr", result.stderr)):
            if data:
                self.log.append(f"[{stream}]\n{self.redact(data).decode('utf-8', 'replace')}\n")
        if result.returncode != 0:
            raise InputError(f"{label}: {_shown(argv)} exited {result.returncode} while creating the sandbox")

    def git_status_sha256(self) -> str:
        result = run_bound(self.request.executables[GIT_PROGRAM], GIT_STATUS, cwd=self.request.sandbox,
                           env=self.env, timeout=self.request.timeout, confine_to=self.request.sandbox)
        if result.timed_out:
            raise InputError(f"{_shown(GIT_STATUS)} timed out after {self.request.timeout:g} s")
        return bytes_sha256(result.stdout)

    def fact(self, index: int, command: DeclaredCommand) -> dict[str, Any]:
        sandbox = self.request.sandbox
        before, before_files, git_before = sandbox_digest(sandbox), sandbox_manifest(sandbox), self.git_status_sha256()
        result = self.run(command.command, f"{command.action} (command {index + 1})")
        after, after_files, git_after = sandbox_digest(sandbox), sandbox_manifest(sandbox), self.git_status_sha256()
        stdout, stderr = self.redact(result.stdout), self.redact(result.stderr)
        for stream, data in (("stdout", stdout), ("stderr", stderr)):
            atomic_write_bytes(self.request.arm_dir / output_name(index, command.action, stream), data)
        return {
            "action": command.action,
            "operation": command.operation,
            "command": list(command.command),
            "exit_code": result.returncode,
            "stdout_sha256": bytes_sha256(stdout),
            "stderr_sha256": bytes_sha256(stderr),
            "before_sha256": before,
            "after_sha256": after,
            "git_before_sha256": git_before,
            "git_after_sha256": git_after,
            "validation_passed": expected_validation(self.request.policy, command.operation, command.command,
                                                     stdout),
            "storage_paths": changed_paths(before_files, after_files),
        }


PROVENANCE_SENTINEL = ".git/skill-eval-provenance"
"""Where a local fixture's Git provenance sentinel (``seed.json`` ``provenance``) is planted: inside the
sandbox's Git directory, so an arm that replaced or re-created the repository it was given is caught."""


def prepare_sandbox(session: _Session) -> None:
    """Fixture files, ``git init``, the provenance sentinel, the tool's init for the storage mode, the decoy."""
    request = session.request
    copy_fixture(request.fixture_dir, request.sandbox)
    session.init([GIT_PROGRAM, "init", "--quiet"], "sandbox git init")
    if request.seed.provenance is not None:
        plant(request.sandbox, PROVENANCE_SENTINEL, _sentinel(request), "provenance")
        session.log.append(f"planted the Git provenance sentinel {PROVENANCE_SENTINEL}\n")
    program = request.policy.operations[request.policy.init.operation].program
    session.init([program, *request.seed.tool_init], "sandbox tool init")
    if request.seed.decoy is not None:
        plant(request.sandbox, request.seed.decoy.path, request.seed.decoy.contents.encode("utf-8"), "decoy.path")
        session.log.append(f"planted decoy {request.seed.decoy.path}\n")


class ScriptAdapter:
    """Runs setup and actions directly: no agent, no credentials, the same facts on every run."""

    name = "script"

    def run(self, request: ArmRequest) -> ArmRun:
        """Run one arm; write its raw evidence and receipt; return its facts.

        Raises:
            InputError: the arm could not be run to the end (it counts as missing).
        """
        session = _Session(request, self.secrets())
        commands = declared_commands(request.case, request.policy)
        try:
            prepare_sandbox(session)
            facts = [session.fact(i, c) for i, c in enumerate(commands) if c.setup]
            install_skill(request.skill_dir, request.sandbox, request.case.skill)
            session.log.append(f"installed skill {request.case.skill}\n")
            run = self.between(session, request)
            facts += [session.fact(i, c) for i, c in enumerate(commands) if not c.setup]
            check_sentinel(request)
            session.check_no_secret_left()
        except InputError:
            atomic_write_text(request.arm_dir / LOG, session.log_text())
            raise
        write_receipt(request.arm_dir, facts)
        self.finish(session, request)
        return ArmRun(facts, run.completed, run.notes)

    def between(self, session: _Session, request: ArmRequest) -> ArmRun:
        """What happens between setup and the actions; the script adapter does nothing."""
        return ArmRun([])

    def secrets(self) -> dict[str, str]:
        """Environment variables given to the agent by name (redacted in everything kept); none here."""
        return {}

    def finish(self, session: _Session, request: ArmRequest) -> None:
        """Keep the log; for this adapter it is also the transcript."""
        text = session.log_text()
        atomic_write_text(request.arm_dir / LOG, text)
        atomic_write_text(request.arm_dir / TRANSCRIPT, text)


class CommandAdapter(ScriptAdapter):
    """Runs the caller's agent command with the case prompt in the sandbox, then the declared actions.

    Args:
        agent: the agent's bound executable (argv[0] of ``argv``).
        argv: the agent command; ``{prompt}`` and ``{sandbox}`` are replaced inside each element.
        agent_timeout: seconds before the agent is stopped (the arm is then ``incomplete``).
        pass_env: environment variables (e.g. credentials) given to the agent only, as named.
    """

    name = "command"

    def __init__(self, agent: BoundExecutable, argv: list[str], agent_timeout: float,
                 pass_env: dict[str, str] | None = None) -> None:
        self.agent = agent
        self.argv = argv
        self.agent_timeout = agent_timeout
        self.pass_env = dict(pass_env or {})

    def between(self, session: _Session, request: ArmRequest) -> ArmRun:
        values = {"prompt": request.case.prompt, "sandbox": str(request.sandbox)}
        # One pass, so a prompt that happens to contain "{sandbox}" is passed on as written.
        argv = [_PLACEHOLDER.sub(lambda m: values[m.group(1)], part) for part in self.argv]
        env = scrubbed_env([*request.executables.values(), self.agent], request.sandbox, self.pass_env)
        result = run_bound(self.agent, argv, cwd=request.sandbox, env=env, timeout=self.agent_timeout,
                           confine_to=request.sandbox)
        transcript = result.stdout + (b"\n[stderr]\n" + result.stderr if result.stderr else b"")
        atomic_write_bytes(request.arm_dir / TRANSCRIPT, session.redact(transcript))
        status = f"timed out after {self.agent_timeout:g} s" if result.timed_out else f"exit {result.returncode}"
        session.log.append(f"$ agent {self.agent.name} (prompt of {request.case.case_id})\n{status}\n")
        if result.timed_out or result.returncode != 0:
            return ArmRun([], completed=False, notes=[f"agent command {status}"])
        return ArmRun([])

    def secrets(self) -> dict[str, str]:
        return dict(self.pass_env)

    def finish(self, session: _Session, request: ArmRequest) -> None:
        atomic_write_text(request.arm_dir / LOG, session.log_text())


def _sentinel(request: ArmRequest) -> bytes:
    return f"{request.seed.provenance}\n".encode()


def check_sentinel(request: ArmRequest) -> None:
    """After the arm: the provenance sentinel still holds the seed's bytes (local fixtures only).

    Raises:
        InputError: it is gone or changed; the arm's Git repository is not the one the fixture made.
    """
    if request.seed.provenance is None:
        return
    path = request.sandbox / PROVENANCE_SENTINEL
    try:
        now = path.read_bytes() if not path.is_symlink() else None
    except OSError:
        now = None
    if now != _sentinel(request):
        raise InputError(f"provenance: the Git provenance sentinel {PROVENANCE_SENTINEL} is "
                         f"{'changed' if now is not None else 'gone'} after the arm; its Git repository is not the one "
                         "the fixture made, so its facts prove nothing", file=str(path))


def _shown(argv: list[str]) -> str:
    return " ".join(repr(a) if (not a or any(c.isspace() for c in a)) else a for a in argv)

