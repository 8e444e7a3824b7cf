"""``evalkit skill-eval worksheet`` and ``report-page``: the human review page of a stopped run and the
page of a finished report (thin over :mod:`evalkit.skilleval.worksheet` and ``report_view``)."""

from __future__ import annotations

import argparse


def _cmd_worksheet(args: argparse.Namespace) -> int:
    from evalkit.skilleval import write_worksheet

    path = write_worksheet(args.stage, args.out, title=args.title)
    print(f"wrote {path}: answer every case, export, then "
          f"`evalkit skill-eval resume {args.stage} --answers ANSWERS.json --out report.json`")
    return 0


def _cmd_report_page(args: argparse.Namespace) -> int:
    from evalkit.skilleval import write_report_page_of_file

    path, why = write_report_page_of_file(args.report, args.out)
    print(f"wrote {path}: {why}")
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
    p.add_argument("report", metavar="REPORT", help="the report JSON (`evalkit skill-eval resume --out`)")
    p.add_argument("--out", required=True, metavar="FILE", help="the HTML file to write")
    p.set_defaults(func=_cmd_report_page)
