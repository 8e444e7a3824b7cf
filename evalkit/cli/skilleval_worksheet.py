"""``evalkit skill-eval worksheet`` and ``report-page``: the human review page of a stopped run and the
page of a finished report (thin over :mod:`evalkit.skilleval.worksheet` and ``report_view``)."""

from __future__ import annotations

import argparse
import sys


def _cmd_worksheet(args: argparse.Namespace) -> int:
    from evalkit.io.outputs import guard_outputs
    from evalkit.skilleval import write_worksheet

    guard_outputs({"--out": args.out}, {"STAGE": args.stage})
    path = write_worksheet(args.stage, args.out, title=args.title)
    print(f"wrote {path}: answer every case, export, then "
          f"`evalkit skill-eval resume {args.stage} --answers ANSWERS.json --out report.json`")
    return 0


def _cmd_report_page(args: argparse.Namespace) -> int:
    from evalkit.io.outputs import guard_outputs
    from evalkit.skilleval import write_report_page_of_file

    guard_outputs({"--out": args.out}, {"REPORT": args.report})
    path, why, code = write_report_page_of_file(args.report, args.out)
    print(f"wrote {path}: {why}")
    return code


def _cmd_propose(args: argparse.Namespace) -> int:
    from evalkit.io.outputs import guard_outputs
    from evalkit.skilleval import propose_patch

    guard_outputs({"--out": args.out}, {"STAGE": args.stage, "--candidate": args.candidate})
    proposal = propose_patch(args.stage, args.candidate, args.agent_command, args.out, timeout=args.agent_timeout,
                             say=lambda line: print(line, file=sys.stderr, flush=True))
    if proposal.patch is None:
        print("no failing case: nothing to propose, no patch written")
        return 0
    status = "timed out" if proposal.timed_out else f"exit {proposal.exit_code}"
    print(f"wrote {proposal.patch}: {len(proposal.changed)} file(s) changed by the agent ({status}); nothing was "
          f"applied. Review it, then apply it yourself: patch -p1 -d {args.candidate} < {proposal.patch}")
    return 0


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Add this module's `evalkit skill-eval` subcommands."""
    p = commands.add_parser(
        "worksheet", help="write the human review page of a stopped run (worksheet.html)",
        description="Write one self-contained HTML page for the human review of a sealed stage: per case the "
                    "prompt and expected observation, the deterministic assertions and their grades, both "
                    "arms' commands, exit codes, outputs and transcripts side by side, the human review "
                    "questions, a same/better/worse choice (candidate-only or inconclusive where the evidence "
                    "leaves no choice) and a note. Answers autosave in the browser; the export is the answers "
                    "file `evalkit skill-eval resume --answers` reads.")
    p.add_argument("stage", metavar="STAGE", help="the folder `evalkit skill-eval run --out` wrote")
    p.add_argument("--out", required=True, metavar="FILE", help="the HTML file to write")
    p.add_argument("--title", help="page title (default: the session id)")
    p.set_defaults(func=_cmd_worksheet)

    p = commands.add_parser(
        "report-page", help="write a skill-eval report as a self-contained HTML page",
        description="Render the report `evalkit skill-eval resume` wrote: the outcome and why, comparison counts, "
                    "each case with both arms and the human review, the deterministic checks and the waiver.")
    p.epilog = "exit status: as `resume`: 0 pass or waived, 1 fail, 3 incomplete, 4 not releasable"
    p.add_argument("report", metavar="REPORT", help="the report JSON (`evalkit skill-eval resume --out`)")
    p.add_argument("--out", required=True, metavar="FILE", help="the HTML file to write")
    p.set_defaults(func=_cmd_report_page)

    p = commands.add_parser(
        "propose", help="let an agent propose a patch to the candidate skills from the failing cases (applies nothing)",
        description="Step 5 of a release: copy the candidate skills into a workspace of their own with the evidence of "
                    "every case whose candidate arm did not pass (case, facts, outputs, transcript, failures.md) and "
                    "TASK.md, run your agent there, and write what it changed under skills/ as a unified diff. The "
                    "agent never sees the fixtures or the shipped skills; a change to either is an error. Nothing is "
                    "applied: a maintainer reviews the diff, applies it, reruns the checks and the final case set.",
        epilog="placeholders in --agent-command: {task} (TASK.md), {skills}, {evidence}, {workspace}\n"
               "example:\n  evalkit skill-eval propose build/stage --candidate skills/ "
               "--agent-command './bin/agent --task {task}' --out proposal.diff",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("stage", metavar="STAGE", help="the folder `evalkit skill-eval run --out` wrote")
    p.add_argument("--candidate", required=True, metavar="DIR", help="the candidate skills the stage ran")
    p.add_argument("--agent-command", required=True, metavar="ARGV",
                   help="the agent, its path first (split like a shell would, never run by one)")
    p.add_argument("--agent-timeout", type=float, default=900.0, metavar="S",
                   help="seconds before the agent is stopped (default 900)")
    p.add_argument("--out", required=True, metavar="PATCH", help="where to write the unified diff")
    p.set_defaults(func=_cmd_propose)
