"""``evalkit batch``: a batch file's subjects run in parallel into one folder, with an index page."""

from __future__ import annotations

import argparse
import sys

from evalkit.cli.parsers import add_history_arguments, history_folder


def report_batch(result) -> int:
    """Print where the index is and how the runs went; exit 1 when a run failed."""
    states = result.states
    ok = sum(1 for s in states.values() if s.status == "ok")
    print(f"index: {result.index}")
    print(f"{len(states)} run(s): {ok} ok ({len(result.reused)} up to date, not run again), "
          f"{len(result.failed)} failed", file=sys.stderr)
    for name in result.failed:
        print(f"  {name}: {states[name].error}", file=sys.stderr)
    return 1 if result.failed else 0


def _cmd_batch(args: argparse.Namespace) -> int:
    from evalkit.batch import batch_history, run_batch_file

    result = run_batch_file(args.batch, args.out, jobs=args.jobs, at=args.at,
                            history=history_folder(args, batch_history(args.out)), notebooks_dir=args.notebooks,
                            allow_outside=args.allow_outside, progress=sys.stderr)
    return report_batch(result)


def add_batch_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``batch`` to the ``evalkit`` command."""
    p = sub.add_parser(
        "batch", help="run a batch file's subjects (or one subject over a grid of values) with an index page",
        description="Run every subject of BATCH.yaml (kind batch: subjects, each with override values and a sweep "
                    "grid over subject fields and NOTEBOOK.PARAMETER values) as evalkit run does, each into "
                    "DIR/NAME, --jobs at a time, and write DIR/index.html: one row per run with its headline "
                    "numbers, sortable, each linking to its report. A run that fails is shown failed with its "
                    "error and the others go on (exit code 1). Run it again after a kill: finished runs whose "
                    "inputs, values and --at are unchanged are not run again.")
    p.add_argument("batch", metavar="BATCH.yaml")
    p.add_argument("--out", required=True, metavar="DIR", help="the batch folder")
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="runs at once (default 1; each is a process with its own kernel, about a core)")
    p.add_argument("--at", metavar="TIMESTAMP", help="every run's timestamp, recorded as given")
    p.add_argument("--notebooks", metavar="DIR", help="notebook folder (default: the ones shipped with evalkit)")
    p.add_argument("--allow-outside", action="store_true",
                   help="let subjects name files outside their own folder")
    add_history_arguments(p, default="DIR/history")
    p.set_defaults(func=_cmd_batch)
