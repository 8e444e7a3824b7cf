"""``evalkit edd run|status|history``: the bounded eval-driven-development loop (thin over evalkit.edd).

Exit codes: 0 when the loop reached full green (``run``) or the folder could be read (``status``,
``history``), 4 when ``run`` stopped for any other reason (the reason is printed), 1 on bad input.
"""

from __future__ import annotations

import argparse

from evalkit.cli.parsers import add_command_group, add_subject_run_arguments
from evalkit.contracts.edd_defaults import (
    DEFAULT_MAX_SWINGS,
    DEFAULT_MAX_WALLCLOCK_MS,
    DEFAULT_NO_IMPROVEMENT_STREAK_LIMIT,
)

STOPPED_EXIT = 4
"""Exit code of ``edd run`` when the loop stopped short of full green."""


def _budget(args: argparse.Namespace):
    """The budget the options ask for, or None (a resumed loop keeps its own; a new one takes the defaults)."""
    if args.max_swings is None and args.max_minutes is None and args.streak is None:
        return None
    from evalkit.contracts.edd import LoopBudget

    return LoopBudget(
        max_swings=args.max_swings if args.max_swings is not None else DEFAULT_MAX_SWINGS,
        max_wallclock_ms=round(args.max_minutes * 60000) if args.max_minutes is not None else DEFAULT_MAX_WALLCLOCK_MS,
        no_improvement_streak_limit=args.streak if args.streak is not None else DEFAULT_NO_IMPROVEMENT_STREAK_LIMIT)


def _cmd_run(args: argparse.Namespace) -> int:
    from evalkit.edd import render_status, run_subject_loop
    from evalkit.io.outputs import guard_outputs
    from evalkit.subjects import subject_inputs

    guard_outputs({"--out": args.out}, subject_inputs(args.subject), folders=["--out"])
    outcome = run_subject_loop(args.subject, args.out, budget=_budget(args), concurrency=args.concurrency,
                               case_ids=args.case)
    print(render_status(outcome.state))
    print(f"edd: {args.out} (edd-ledger.jsonl, swing-NNN/)")
    return 0 if outcome.stop_reason == "full-green" else STOPPED_EXIT


def _cmd_status(args: argparse.Namespace) -> int:
    from evalkit.edd import read_loop, render_status

    print(render_status(read_loop(args.dir), history=args.edd_command == "history"))
    return 0


def add_edd_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``edd run``, ``edd status`` and ``edd history`` to the ``evalkit`` command."""
    commands = add_command_group(sub, "edd",
                                 help="the bounded eval-driven-development loop: evaluate, request, re-evaluate")
    r = commands.add_parser(
        "run", help="run (or resume) the loop on a subject that names its remedy command",
        description="Evaluate the subject (variance swings with repeats until the repeats are stable, then "
                    "accuracy swings), hand a grounded change request to the subject's edd.remedy_command, "
                    "read its response and re-evaluate, until full green or a stop reason (max swings, max "
                    "wall clock, no-improvement streak, a failed or rejecting remedy). Everything is journaled "
                    "in DIR/edd-ledger.jsonl; running again on the same DIR resumes where it stopped. "
                    "Exit 0 on full green, 4 when it stopped short.")
    add_subject_run_arguments(r, out_help="the loop's folder (resumed when it has a ledger)", concurrency=2)
    r.add_argument("--max-swings", type=int, metavar="N",
                   help=f"stop after N swings (default {DEFAULT_MAX_SWINGS})")
    r.add_argument("--max-minutes", type=float, metavar="M",
                   help="stop after M minutes of wall clock "
                        f"(default {DEFAULT_MAX_WALLCLOCK_MS // 60000})")
    r.add_argument("--streak", type=int, metavar="K",
                   help="stop after K swings without improvement "
                        f"(default {DEFAULT_NO_IMPROVEMENT_STREAK_LIMIT})")
    r.set_defaults(func=_cmd_run)
    for name, text in (("status", "where a loop is, or why it stopped, one line per swing"),
                       ("history", "every swing: pass rates with intervals, the request and the reply")):
        s = commands.add_parser(name, help=text, description=text)
        s.add_argument("dir", metavar="DIR")
        s.set_defaults(func=_cmd_status)
