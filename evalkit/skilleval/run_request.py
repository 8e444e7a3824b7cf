"""A run as its command asks for it: options in the user's words, turned into a bound :class:`RunPlan` and run.

``evalkit skill-eval run`` parses its options into a :class:`RunRequest` and calls :func:`run_release`;
notebooks and tests do the same. Everything between is decided here: every program the policy allows is
bound once per arm (``--bin``, ``--baseline-bin``), the adapter is chosen and its agent bound, the
environment variables passed to the agent are picked, and each binding is said on the progress stream.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from evalkit.errors import InputError
from evalkit.skilleval.adapters import CommandAdapter, ScriptAdapter
from evalkit.skilleval.executables import bind, bind_all, parse_bindings
from evalkit.skilleval.registry import Registry, load_registry
from evalkit.skilleval.runner import RunPlan, run_stage
from evalkit.skilleval.stage import read_stage


@dataclass
class RunRequest:
    """The options of one run, as given on the command line (see ``evalkit skill-eval run --help``)."""

    registry: str | Path
    candidate: str | Path
    baseline: str | Path
    out: str | Path
    adapter: str
    bin: list[str] = field(default_factory=list)
    baseline_bin: list[str] = field(default_factory=list)
    agent_command: str | None = None
    agent_env: list[str] = field(default_factory=list)
    agent_timeout: float = 900.0
    timeout: float = 60.0
    session_id: str | None = None
    generated_at: str | None = None
    tested_head: str | None = None
    product: str | Path | None = None
    candidate_version: str = "candidate"
    baseline_version: str = "baseline"
    adapter_version: str | None = None
    model: str | None = None
    mirror: str | Path | None = None
    gates: list[str] = field(default_factory=list)
    allow_dirty: bool = False
    same_baseline_bin: bool = False
    allow_uncovered: bool = False


def _adapter(request: RunRequest, say: Callable[[str], None]) -> ScriptAdapter:
    if request.adapter == "script":
        if request.agent_command:
            raise InputError("--agent-command is for --adapter command; the script adapter runs no agent",
                             path="--agent-command")
        return ScriptAdapter()
    if not request.agent_command:
        raise InputError("--adapter command needs --agent-command 'PROGRAM ARG... {prompt}'", path="--agent-command")
    argv = shlex.split(request.agent_command)
    if not argv:
        raise InputError("--agent-command is empty", path="--agent-command")
    if "/" not in argv[0]:
        raise InputError(f"--agent-command: give the agent's path ({argv[0]!r} would be looked up on PATH, which "
                         f"evalkit never does), e.g. './bin/{argv[0]} {{prompt}}'", path="--agent-command")
    agent = bind(Path(argv[0]).name, argv[0], "--agent-command")
    say(f"agent: {agent.name} bound to {agent.path} (sha256 {agent.sha256[:12]})")
    passed = {name: os.environ[name] for name in request.agent_env if name in os.environ}
    return CommandAdapter(agent, [agent.name, *argv[1:]], request.agent_timeout, passed)


def plan_run(request: RunRequest, say: Callable[[str], None] = lambda line: None) -> RunPlan:
    """Load the registry, bind every executable of both arms and the adapter: the run's plan.

    Args:
        request: the run's options.
        say: called with one line per binding (the command prints them on stderr).

    Raises:
        RegistryInvalid: the registry breaks a rule (every problem listed).
        InputError: a binding or the adapter's options are wrong.
    """
    registry: Registry = load_registry(request.registry)
    programs = registry.policy.programs()
    given = parse_bindings(request.bin, "--bin")
    candidate = bind_all(programs, given, "--bin")
    baseline = bind_all(programs, {**given, **parse_bindings(request.baseline_bin, "--baseline-bin")},
                        "--baseline-bin")
    for arm, bound in (("candidate", candidate), ("baseline", baseline)):
        for executable in bound.values():
            say(f"{arm}: {executable.name} bound to {executable.path} (sha256 {executable.sha256[:12]})")
    adapter = _adapter(request, say)
    plan = RunPlan(registry, Path(request.candidate), Path(request.baseline), Path(request.out), adapter,
                   {"candidate": candidate, "baseline": baseline}, timeout=request.timeout,
                   session_id=request.session_id, generated_at=request.generated_at, tested_head=request.tested_head,
                   product_dir=Path(request.product) if request.product else None,
                   candidate_version=request.candidate_version, baseline_version=request.baseline_version,
                   model={"name": request.model} if request.model else {}, gates=list(request.gates),
                   mirror=Path(request.mirror) if request.mirror else None, allow_dirty=request.allow_dirty,
                   same_baseline_binary=request.same_baseline_bin, allow_uncovered=request.allow_uncovered)
    if request.adapter_version:
        plan.adapter_version = request.adapter_version
    return plan


@dataclass(frozen=True)
class SealedRun:
    """What :func:`run_release` left: the sealed stage, its outcome so far and the exit status it calls for.

    ``exit_code`` is 1 when the outcome is already ``fail`` (a failed gate or candidate), 3 when it can
    only end ``incomplete`` (skills without cases), else 0: stopped for the human review.
    """

    stage_file: Path
    outcome: str
    uncovered_skills: list[str]

    @property
    def exit_code(self) -> int:
        if self.outcome == "fail":
            return 1
        return 3 if self.uncovered_skills else 0


def run_release(request: RunRequest, say: Callable[[str], None] = lambda line: None) -> SealedRun:
    """Plan the run (:func:`plan_run`), run every arm and seal the stage.

    Args:
        request: the run's options.
        say: called with each progress line (bindings, then one line per arm).

    Raises:
        RegistryInvalid, InputError: see :func:`plan_run` and :func:`~evalkit.skilleval.runner.run_stage`.
    """
    plan = plan_run(request, say)
    registry = plan.registry
    arms = sum(1 + c.case.baseline_required for c in registry.cases)
    say(f"running {arms} arm(s) of {len(registry.cases)} case(s) with the {plan.adapter.name} adapter")
    stage_file = run_stage(plan, say)
    report = read_stage(stage_file.parent).report
    return SealedRun(stage_file, report.outcome, report.uncovered_skills)
