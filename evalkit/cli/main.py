"""The `evalkit` parser: every command group registered in one place, and the one error boundary."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from evalkit import __version__
from evalkit.io.errors import InputError


def _cmd_schema(args: argparse.Namespace) -> int:
    from evalkit.schema import write_schemas

    paths = write_schemas(args.out)
    print(f"wrote {len(paths)} schemas to {args.out}")
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    from evalkit.validation import validate_file

    failed = 0
    for path in args.files:
        notes: list = []
        kind, count, problems = validate_file(path, args.kind, notes=notes)
        for note in notes:
            print(f"warning: {note.render()}", file=sys.stderr)
        for problem in problems:
            print(problem.render(), file=sys.stderr)
        if problems:
            failed += 1
        elif not args.quiet:
            print(f"{path}: ok ({count} {kind} record{'s' if count != 1 else ''})")
    if failed:
        print(f"{failed} of {len(args.files)} file(s) invalid", file=sys.stderr)
        return 1
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from evalkit.pipeline import load_subject, run_subject

    out = args.out
    if out is None:
        name = load_subject(args.subject).subject.name
        stamp = "".join(ch if ch.isalnum() else "-" for ch in args.at) if args.at else "latest"
        out = str(Path("reports") / name / stamp)
    manifest = run_subject(args.subject, out, only=args.only, at=args.at, notebooks_dir=args.notebooks)
    failed = [n for n in manifest.notebooks if n.status != "ok"]
    print(f"report: {Path(out) / 'index.html'}")
    if failed:
        print(f"{len(failed)} of {len(manifest.notebooks)} notebook(s) failed", file=sys.stderr)
        return 1
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from evalkit.report import write_report

    print(f"report: {write_report(args.run_dir)}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    from evalkit.contracts.registry import CONTRACTS

    parser = argparse.ArgumentParser(
        prog="evalkit",
        description="Evaluate LLM agents offline: contracts, traces, error analysis, judge calibration, "
                    "flow graphs and self-contained HTML reports.",
    )
    parser.add_argument("--version", action="version", version=f"evalkit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("schema", help="write one JSON Schema per contract",
                       description="Write <kind>.schema.json for every contract into a folder.")
    p.add_argument("--out", required=True, metavar="DIR", help="folder to write the schemas into")
    p.set_defaults(func=_cmd_schema)

    p = sub.add_parser("validate", help="check JSON, JSONL or YAML files against their contract",
                       description="Check files against a contract. Exits 0 when every record is valid, "
                                   "else 1 with one line per problem: FILE[:LINE]: field.path: message.",
                       epilog="kinds: " + ", ".join(CONTRACTS))
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--kind", choices=list(CONTRACTS), metavar="KIND",
                   help="the contract to check against (default: told from the file name or content)")
    p.add_argument("-q", "--quiet", action="store_true", help="print problems only")
    p.set_defaults(func=_cmd_validate)

    from evalkit.traces.cli import add_traces_parser

    add_traces_parser(sub)

    from evalkit.analysis.cli import add_analysis_parsers

    add_analysis_parsers(sub)

    from evalkit.calibration.cli import add_calibrate_parser

    add_calibrate_parser(sub)

    from evalkit.calibration.import_cli import add_verdicts_parser

    add_verdicts_parser(sub)

    from evalkit.flow.cli import add_flow_parser

    add_flow_parser(sub)

    p = sub.add_parser("run", help="run a subject's notebooks with papermill and write the report",
                       description="Execute the subject's notebooks (papermill, this Python's kernel), one "
                                   "folder per notebook, then write RUN_DIR/index.html. A failing notebook is "
                                   "reported with its cell; the others still run; the exit code is then 1.")
    p.add_argument("subject", metavar="SUBJECT.yaml")
    p.add_argument("--out", metavar="DIR", help="run folder (default: reports/<subject>/<at or 'latest'>)")
    p.add_argument("--only", nargs="+", metavar="NAME", help="run only these notebooks")
    p.add_argument("--at", metavar="TIMESTAMP",
                   help="the run's timestamp, recorded as given (default: none is recorded)")
    p.add_argument("--notebooks", metavar="DIR", help="notebook folder (default: the ones shipped with evalkit)")
    p.set_defaults(func=_cmd_run)

    p = sub.add_parser("report", help="(re)write RUN_DIR/index.html from a run folder",
                       description="Render the self-contained HTML report of a run folder.")
    p.add_argument("run_dir", metavar="RUN_DIR")
    p.set_defaults(func=_cmd_report)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return args.func(args)
    except InputError as exc:
        print(f"error: {exc.render()}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
