"""``evalkit run`` and ``evalkit report``: a subject's notebooks executed, and the HTML report written.

Several subjects (or ``--jobs``) make a batch: each subject into its own folder, an index page over them
(``evalkit batch`` runs a batch file; see :mod:`evalkit.cli.batch`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evalkit.cli.parsers import add_history_arguments, history_folder
from evalkit.errors import InputError


def _cmd_run(args: argparse.Namespace) -> int:
    from evalkit.io.outputs import guard_outputs
    from evalkit.subjects import subject_inputs

    if len(args.subject) > 1 or args.jobs is not None:
        from evalkit.cli.batch import report_batch

        if args.out is None:
            raise InputError("several subjects need --out DIR: each runs into DIR/NAME, with DIR/index.html "
                             "over them", path="--out")
        from evalkit.batch import batch_history, run_subject_files

        guard_outputs({"--out": args.out}, {**{f"{label} of {subject}": path for subject in args.subject
                                               for label, path in subject_inputs(subject).items()},
                                            "--notebooks": args.notebooks}, folders=["--out"])
        result = run_subject_files(args.subject, args.out, only=args.only or (), jobs=args.jobs or 1, at=args.at,
                                   history=history_folder(args, batch_history(args.out)),
                                   notebooks_dir=args.notebooks, allow_outside=args.allow_outside,
                                   progress=sys.stderr)
        return report_batch(result)

    from evalkit.history import default_history
    from evalkit.pipeline import run_subject
    from evalkit.subjects import load_subject

    allow = args.allow_outside or None  # without the option, EVALKIT_ALLOW_OUTSIDE=1 still allows
    out = args.out
    if out is None:
        name = load_subject(args.subject[0], allow_outside=allow).subject.name
        stamp = "".join(ch if ch.isalnum() else "-" for ch in args.at) if args.at else "latest"
        out = str(Path("reports") / name / stamp)
    guard_outputs({"--out": out}, {**subject_inputs(args.subject[0]), "--notebooks": args.notebooks},
                  folders=["--out"])
    manifest = run_subject(args.subject[0], out, only=args.only, at=args.at, notebooks_dir=args.notebooks,
                           allow_outside=allow, history=history_folder(args, default_history(out)),
                           batch=args.batch_name)
    failed = [n for n in manifest.notebooks if n.status != "ok"]
    print(f"report: {Path(out) / 'index.html'}")
    if failed:
        print(f"{len(failed)} of {len(manifest.notebooks)} notebook(s) failed", file=sys.stderr)
        return 1
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from evalkit.io.outputs import guard_outputs
    from evalkit.pipeline import write_run_report
    from evalkit.report import INDEX_FILE

    guard_outputs({"RUN_DIR/index.html": Path(args.run_dir) / INDEX_FILE})
    print(f"report: {write_run_report(args.run_dir)}")
    return 0


def add_run_parsers(sub: argparse._SubParsersAction) -> None:
    """Add ``run`` and ``report`` to the ``evalkit`` command."""
    p = sub.add_parser("run", help="run a subject's notebooks with papermill and write the report",
                       description="Execute the subject's notebooks (papermill, this Python's kernel), one "
                                   "folder per notebook, then write RUN_DIR/index.html. A failing notebook is "
                                   "reported with its cell; the others still run; the exit code is then 1. "
                                   "The run is built beside RUN_DIR and replaces it whole when it ends: a run "
                                   "that is interrupted leaves the previous one as it was. The subject's input "
                                   "files must be inside its folder unless --allow-outside is given. The run's "
                                   "headline numbers are recorded in a run history (evalkit history). Several "
                                   "subjects make a batch, as evalkit batch: each into --out DIR/NAME, --jobs at "
                                   "once, DIR/index.html over them, finished ones not run again.")
    p.add_argument("subject", metavar="SUBJECT.yaml", nargs="+")
    p.add_argument("--out", metavar="DIR", help="run folder (default: reports/<subject>/<at or 'latest'>); with "
                                                "several subjects, the batch folder")
    p.add_argument("--only", nargs="+", metavar="NAME", help="run only these notebooks")
    p.add_argument("--at", metavar="TIMESTAMP",
                   help="the run's timestamp, recorded as given (default: none is recorded)")
    p.add_argument("--notebooks", metavar="DIR", help="notebook folder (default: the ones shipped with evalkit)")
    p.add_argument("--allow-outside", action="store_true",
                   help="let the subject name files outside its own folder (.., absolute paths, links out); "
                        "by default such a path is refused, so a subject file cannot read any file on the machine")
    p.add_argument("--jobs", type=int, metavar="N",
                   help="run the subjects as a batch, N at a time (each run is a process with its own kernel)")
    add_history_arguments(p, default="history/ beside the run folder (the batch folder's history/ for a batch)")
    p.add_argument("--batch-name", help=argparse.SUPPRESS)  # set by a batch: the history records it
    p.set_defaults(func=_cmd_run)

    p = sub.add_parser("report", help="(re)write RUN_DIR/index.html from a run folder",
                       description="Render the self-contained HTML report of a run folder.")
    p.add_argument("run_dir", metavar="RUN_DIR")
    p.set_defaults(func=_cmd_report)

