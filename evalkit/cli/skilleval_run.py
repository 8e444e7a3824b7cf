"""``evalkit skill-eval run`` and ``evalkit skill-eval resume``: run the arms to a sealed stage, then report.

Thin over :mod:`evalkit.skilleval`: ``run`` validates the registry, binds every executable once, runs each
case's arms through the chosen adapter (progress on stderr, one line per arm) and stops at the sealed
stage; ``resume`` verifies the stage and writes the report from the human's answers.
"""

from __future__ import annotations

import argparse
import re
import sys
from datetime import datetime

GATES = ("command", "cross-platform", "lifecycle", "machine-api", "parity", "security")
"""The gate names ``--gate`` accepts (evalkit.skilleval.gates.GATES, kept here so ``--help`` loads no package)."""

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
    from evalkit.io.outputs import guard_outputs
    from evalkit.skilleval import RunRequest, run_release

    bound = [spec.partition("=")[2] for spec in (args.bin or []) + (args.baseline_bin or [])]
    guard_outputs({"--out": args.out}, {"REGISTRY": args.registry, "--candidate": args.candidate,
                                        "--baseline": args.baseline, "--product": args.product,
                                        "--mirror": args.mirror, "--bin": [b for b in bound if b]},
                  folders=["--out"])
    request = RunRequest(
        args.registry, args.candidate, args.baseline, args.out, args.adapter, bin=args.bin or [],
        baseline_bin=args.baseline_bin or [], agent_command=args.agent_command, agent_env=args.agent_env or [],
        agent_timeout=args.agent_timeout, timeout=args.timeout, session_id=args.session_id,
        generated_at=args.generated_at, tested_head=args.tested_head, product=args.product,
        candidate_version=args.candidate_version, baseline_version=args.baseline_version,
        adapter_version=args.adapter_version, model=args.model, mirror=args.mirror, gates=args.gate or [],
        allow_dirty=args.allow_dirty, same_baseline_bin=args.same_baseline_bin, allow_uncovered=args.allow_uncovered)
    sealed = run_release(request, _say)
    print(f"stage sealed: {sealed.stage_file} (outcome so far: {sealed.outcome})")
    print(f"stopped for human review: evalkit skill-eval worksheet {args.out} --out worksheet.html")
    return sealed.exit_code


def _resume(args: argparse.Namespace) -> int:
    from evalkit.io.outputs import guard_outputs
    from evalkit.skilleval import exit_code, outcome_line, resume

    guard_outputs({"--out": args.out}, {"STAGE": args.stage, "--answers": args.answers, "--waiver": args.waiver,
                                        "--registry": args.registry, "--candidate": args.candidate,
                                        "--baseline": args.baseline})
    current = {name: value for name, value in
               (("registry", args.registry), ("candidate", args.candidate), ("baseline", args.baseline)) if value}
    report = resume(args.stage, args.answers, args.out, args.waiver, current=current)
    print(f"report: {outcome_line(report)} -> {args.out}")
    return exit_code(report)


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
               "      --bin tasknote=PRODUCT/tool/tasknote --bin git=/usr/bin/git --same-baseline-bin \\\n"
               "      --product PRODUCT --tested-head SHA\n"
               "reruns with the same --generated-at and --session-id write byte-identical stages.\n\n"
               "exit status: 0 stopped for review, 1 the outcome is already fail (a gate or a candidate arm failed)\n"
               "or the run was refused, 3 it can only end incomplete (skills without cases), 2 usage error")
    run.add_argument("registry", metavar="REGISTRY", help="the case registry (policy.json and cases/)")
    run.add_argument("--candidate", required=True, metavar="DIR", help="the candidate skills: DIR/<skill>/SKILL.md")
    run.add_argument("--baseline", required=True, metavar="DIR", help="the prior release's skills")
    run.add_argument("--adapter", required=True, choices=("script", "command"),
                     help="script: run setup and actions directly (deterministic, for CI); command: run "
                          "--agent-command with the case prompt first, then the actions")
    run.add_argument("--out", required=True, metavar="STAGE", help="a new or empty folder for the stage")
    run.add_argument("--bin", action="append", metavar="NAME=PATH",
                     help="bind a policy program to this file (repeatable): every program the policy allows, git "
                          "included; nothing is looked up on PATH")
    run.add_argument("--baseline-bin", action="append", metavar="NAME=PATH",
                     help="the prior release's binary for the baseline arm (required where a baseline arm runs, "
                          "unless --same-baseline-bin); programs not named take their --bin")
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
                     help="the product commit under test: must be the HEAD of --product, a clean worktree on a "
                          "branch (default: that HEAD)")
    run.add_argument("--product", metavar="DIR", help="the product tree digested as product_sha256 (default REGISTRY)")
    run.add_argument("--candidate-version", default="candidate", metavar="V", help="the candidate's version label")
    run.add_argument("--baseline-version", default="baseline", metavar="V", help="the baseline's version label")
    run.add_argument("--adapter-version", metavar="V",
                     help="the adapter's version in the report (default: evalkit's; give your agent's version "
                          "with --adapter command)")
    run.add_argument("--model", metavar="NAME", help="the model the agent used, recorded in the report")
    run.add_argument("--mirror", metavar="DIR",
                     help="the committed mirror of the candidate skills; byte parity is checked (evidence 'parity')")
    run.add_argument("--gate", action="append", metavar="NAME", choices=GATES,
                     help="a gate that must run (repeatable; one of %(choices)s): evalkit runs every gate itself and "
                          "records what each found; this refuses to start when one cannot run (parity needs "
                          "--mirror). A waiver needs all six as evidence")
    run.add_argument("--allow-dirty", action="store_true",
                     help="run although the product is not a clean worktree on an attached HEAD equal to "
                          "--tested-head; the report is then marked not releasable")
    run.add_argument("--same-baseline-bin", action="store_true",
                     help="the baseline arm runs the candidate's tool on purpose (this release does not change it); "
                          "without it, a baseline arm needs --baseline-bin with a different binary")
    run.add_argument("--allow-uncovered", action="store_true",
                     help="run although candidate skills have no cases; the outcome is then incomplete (never pass)")
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
    res.epilog = ("exit status: 0 pass or waived, 1 fail (or a refused stage, answers or waiver), 3 incomplete,\n"
                  "4 pass or waived but not releasable (run with --allow-dirty), 2 usage error")
    res.formatter_class = argparse.RawDescriptionHelpFormatter
    res.add_argument("--waiver", metavar="W.json",
                     help="a maintainer's waiver; only over an incomplete outcome, covering exactly the "
                          "inconclusive cases and skills")
    for name, what in (("registry", "the registry"), ("candidate", "the candidate skills"),
                       ("baseline", "the baseline skills")):
        res.add_argument(f"--{name}", metavar="DIR",
                         help=f"{what} as they are now (default: the folder the run used); always digested "
                              "again and refused unless identical to what the run used")
    res.set_defaults(func=_resume)
