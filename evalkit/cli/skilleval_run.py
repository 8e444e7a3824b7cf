"""``evalkit skill-eval run`` and ``evalkit skill-eval resume``: run the arms to a sealed stage, then report.

Thin over :mod:`evalkit.skilleval`: ``run`` validates the registry, binds every executable once, runs each
case's arms through the chosen adapter (progress on stderr, one line per arm) and stops at the sealed
stage; ``resume`` verifies the stage and writes the report from the human's answers.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import sys
from collections import Counter
from datetime import datetime
from pathlib import Path

from evalkit.errors import InputError

_RFC3339_UTC = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z")


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds (got {text!r})") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive (got {text})")
    return value


def _timestamp(text: str) -> str:
    try:
        ok = bool(_RFC3339_UTC.fullmatch(text)) and bool(datetime.fromisoformat(text.replace("Z", "+00:00")))
    except ValueError:
        ok = False
    if not ok:
        raise argparse.ArgumentTypeError(f"expected an RFC 3339 UTC time like 2026-01-31T12:00:00Z (got {text!r})")
    return text


def _git_object(text: str) -> str:
    if not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", text):
        raise argparse.ArgumentTypeError(f"expected a full lowercase Git object id (got {text!r})")
    return text


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _run(args: argparse.Namespace) -> int:
    from evalkit.skilleval import load_registry
    from evalkit.skilleval.adapters import CommandAdapter, ScriptAdapter
    from evalkit.skilleval.executables import bind, bind_all, parse_bindings
    from evalkit.skilleval.runner import RunPlan, run_stage

    registry = load_registry(args.registry)
    programs = registry.policy.programs()
    given = parse_bindings(args.bin or [], "--bin")
    candidate = bind_all(programs, given, "--bin")
    baseline = bind_all(programs, {**given, **parse_bindings(args.baseline_bin or [], "--baseline-bin")},
                        "--baseline-bin")
    for arm, bound in (("candidate", candidate), ("baseline", baseline)):
        for executable in bound.values():
            how = "found on PATH" if executable.found_on_path else "given"
            _say(f"{arm}: {executable.name} bound to {executable.path} (sha256 {executable.sha256[:12]}, {how})")
    if args.adapter == "command":
        if not args.agent_command:
            raise InputError("--adapter command needs --agent-command 'PROGRAM ARG... {prompt}'", path="--agent-command")
        argv = shlex.split(args.agent_command)
        if not argv:
            raise InputError("--agent-command is empty", path="--agent-command")
        agent = bind(Path(argv[0]).name, argv[0] if "/" in argv[0] else None)
        _say(f"agent: {agent.name} bound to {agent.path} (sha256 {agent.sha256[:12]})")
        passed = {name: os.environ[name] for name in args.agent_env or [] if name in os.environ}
        adapter = CommandAdapter(agent, [agent.name, *argv[1:]], args.agent_timeout, passed)
    else:
        if args.agent_command:
            raise InputError("--agent-command is for --adapter command; the script adapter runs no agent",
                             path="--agent-command")
        adapter = ScriptAdapter()
    plan = RunPlan(registry, Path(args.candidate), Path(args.baseline), Path(args.out), adapter,
                   {"candidate": candidate, "baseline": baseline}, timeout=args.timeout,
                   session_id=args.session_id, generated_at=args.generated_at, tested_head=args.tested_head,
                   product_dir=Path(args.product) if args.product else None,
                   candidate_version=args.candidate_version, baseline_version=args.baseline_version,
                   model={"name": args.model} if args.model else {}, gates=args.gate or [],
                   mirror=Path(args.mirror) if args.mirror else None)
    if args.adapter_version:
        plan.adapter_version = args.adapter_version
    arms = sum(1 + c.case.baseline_required for c in registry.cases)
    _say(f"running {arms} arm(s) of {len(registry.cases)} case(s) with the {adapter.name} adapter")
    stage_file = run_stage(plan, _say)
    print(f"stage sealed: {stage_file}")
    print(f"stopped for human review: evalkit skill-eval worksheet {args.out} --out worksheet.html")
    return 0


def _resume(args: argparse.Namespace) -> int:
    from evalkit.skilleval.resume import resume

    current = {name: Path(value) for name, value in
               (("registry", args.registry), ("candidate", args.candidate), ("baseline", args.baseline)) if value}
    report = resume(args.stage, args.answers, args.out, args.waiver, current=current)
    counts = Counter(case.comparison for case in report.cases)
    shown = ", ".join(f"{n} {name}" for name, n in sorted(counts.items()))
    print(f"report: outcome {report.outcome} ({len(report.cases)} cases: {shown}) -> {args.out}")
    return 0


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Add ``run`` and ``resume`` to ``evalkit skill-eval``."""
    run = commands.add_parser(
        "run", help="run every case's candidate and baseline arms in sandboxes, stop at a sealed stage",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run each case of a validated registry: the candidate arm and, where the case requires it, "
                    "the baseline arm, each once in its own sandbox made from the case's fixture. Every program "
                    "the policy allows is bound once to an absolute path and sha256 (re-checked before each "
                    "command); commands run as argv without a shell, with a scrubbed environment and a timeout. "
                    "Grades come only from the oracle's predicates over the recorded facts. Writes STAGE/stage.json "
                    "(sealed, no local paths) beside the raw evidence in STAGE/raw/, then stops for human review.",
        epilog="example:\n  evalkit skill-eval run data/skilleval/registry --candidate data/skilleval/skills/candidate \\\n"
               "      --baseline data/skilleval/skills/baseline --adapter script --out build/stage \\\n"
               "      --bin tasknote=data/skilleval/tool/tasknote\n"
               "reruns with the same --generated-at and --session-id write byte-identical stages.")
    run.add_argument("registry", metavar="REGISTRY", help="the case registry (policy.json and cases/)")
    run.add_argument("--candidate", required=True, metavar="DIR", help="the candidate skills: DIR/<skill>/SKILL.md")
    run.add_argument("--baseline", required=True, metavar="DIR", help="the prior release's skills")
    run.add_argument("--adapter", required=True, choices=("script", "command"),
                     help="script: run setup and actions directly (deterministic, for CI); command: run "
                          "--agent-command with the case prompt first, then the actions")
    run.add_argument("--out", required=True, metavar="STAGE", help="a new or empty folder for the stage")
    run.add_argument("--bin", action="append", metavar="NAME=PATH",
                     help="bind a policy program to this file (repeatable); others are looked up on PATH once")
    run.add_argument("--baseline-bin", action="append", metavar="NAME=PATH",
                     help="a different binary for the baseline arm (e.g. the prior release's tool)")
    run.add_argument("--agent-command", metavar="ARGV",
                     help="the agent to run (split like a shell would, never run by one); {prompt} and {sandbox} "
                          "are replaced in its arguments")
    run.add_argument("--agent-env", action="append", metavar="NAME",
                     help="pass this environment variable (e.g. a credential) to the agent only (repeatable)")
    run.add_argument("--agent-timeout", type=_seconds, default=900.0, metavar="S",
                     help="seconds before the agent is stopped; the arm is then incomplete (default 900)")
    run.add_argument("--timeout", type=_seconds, default=60.0, metavar="S",
                     help="seconds allowed per command; a timeout makes the arm missing (default 60)")
    run.add_argument("--session-id", metavar="ID", help="the session's slug (default from --generated-at)")
    run.add_argument("--generated-at", type=_timestamp, metavar="RFC3339", help="the run's time (default now, UTC)")
    run.add_argument("--tested-head", type=_git_object, metavar="SHA",
                     help="the product commit under test (default: git rev-parse HEAD in --product)")
    run.add_argument("--product", metavar="DIR", help="the product tree digested as product_sha256 (default REGISTRY)")
    run.add_argument("--candidate-version", default="candidate", metavar="V", help="the candidate's version label")
    run.add_argument("--baseline-version", default="baseline", metavar="V", help="the baseline's version label")
    run.add_argument("--adapter-version", metavar="V",
                     help="the adapter's version in the report (default: evalkit's; give your agent's version "
                          "with --adapter command)")
    run.add_argument("--model", metavar="NAME", help="the model the agent used, recorded in the report")
    run.add_argument("--mirror", metavar="DIR",
                     help="the committed mirror of the candidate skills; byte parity is checked (evidence 'parity')")
    run.add_argument("--gate", action="append", metavar="NAME",
                     help="a credential-free gate that passed elsewhere (e.g. in CI), recorded as deterministic-"
                          "check evidence (repeatable); a waiver needs command, cross-platform, lifecycle, "
                          "machine-api, parity and security")
    run.set_defaults(func=_run)

    res = commands.add_parser(
        "resume", help="verify a sealed stage and write the release report from the human's answers",
        description="Decode the stage (framing, canonical bytes, seal, bindings, every arm's raw evidence "
                    "re-digested and re-graded): a changed receipt, raw file, stage or seal is refused with the "
                    "reason. Then apply one answer per case (same/better/worse for complete pairs, "
                    "candidate-only without a baseline, inconclusive for missing evidence) and an optional "
                    "waiver, and write the report in the seed's field order.")
    res.add_argument("stage", metavar="STAGE", help="the folder `skill-eval run --out` wrote")
    res.add_argument("--answers", required=True, metavar="A.json", help="the answers exported from the worksheet")
    res.add_argument("--out", required=True, metavar="REPORT.json", help="where to write the report")
    res.add_argument("--waiver", metavar="W.json",
                     help="a maintainer's waiver; only over an incomplete outcome, covering exactly the "
                          "inconclusive cases and skills")
    for name, what in (("registry", "the registry"), ("candidate", "the candidate skills"),
                       ("baseline", "the baseline skills")):
        res.add_argument(f"--{name}", metavar="DIR",
                         help=f"{what} as they are now: refused unless identical to what the run used")
    res.set_defaults(func=_resume)
