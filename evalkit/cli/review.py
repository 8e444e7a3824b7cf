"""``evalkit review build``: the self-contained labelling page, a thin wrapper over :func:`evalkit.analysis.write_review`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from evalkit.cli.annotations import read_annotations, read_taxonomy_option
from evalkit.cli.parsers import add_command_group, add_trace_format_option
from evalkit.cli.words import plural


def _verdicts(path: str | None) -> tuple[list[Any], list[dict[str, Any]]]:
    """The judge's verdicts and, when the run left them beside the file, its run records."""
    if not path:
        return [], []
    from evalkit.calibration import read_verdicts
    from evalkit.io.documents import read_records
    from evalkit.judge import runs_path_of

    runs = runs_path_of(path)
    return read_verdicts(path), [r.value for r in read_records(runs, "jsonl")] if Path(runs).is_file() else []


def _cmd_review_build(args: argparse.Namespace) -> int:
    from evalkit.analysis import read_draft, write_review
    from evalkit.io.outputs import guard_outputs
    from evalkit.traces import load

    guard_outputs({"--out": args.out}, {"TRACES": args.traces, "--labels": args.labels,
                                        "--taxonomy": args.taxonomy, "--draft": args.draft,
                                        "--verdicts": args.verdicts, "--others": args.others})
    traces = load(args.traces, args.format)
    annotations = read_annotations(args.labels).annotations if args.labels else []
    others = [a for path in args.others or () for a in read_annotations(path).annotations]
    verdicts, runs = _verdicts(args.verdicts)
    path = write_review(args.out, traces, annotations=annotations, taxonomy=read_taxonomy_option(args.taxonomy),
                        annotator=args.annotator, title=args.title or Path(args.traces).name,
                        hide_metadata=args.hide_metadata or (), draft=read_draft(args.draft) if args.draft else None,
                        verdicts=verdicts, verdict_runs=runs, others=others, blind=args.blind)
    print(f"review page for {plural(len(traces), 'trace')}: {path}")
    return 0


def add_review_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``review build`` to the ``evalkit`` command."""
    rsub = add_command_group(sub, "review", help="build a self-contained HTML page for labelling traces",
                             description="Review traces in a browser, offline.")
    p = rsub.add_parser("build", help="write review.html for a trace file",
                        description="Write one self-contained HTML file: each trace readable, pass/fail/defer, "
                                    "notes, failure-mode tags, keyboard shortcuts, autosave in the browser and "
                                    "an export for `evalkit labels import`.")
    p.add_argument("traces", metavar="TRACES", help="trace file, in the order to review")
    p.add_argument("--labels", metavar="STORE", help="annotation store whose latest labels are preloaded")
    p.add_argument("--taxonomy", metavar="FILE", help="failure modes offered as tags")
    p.add_argument("--draft", metavar="FILE",
                   help="a drafted taxonomy (from `analysis draft-modes`) to ratify: the page opens on its modes, "
                        "a decision on each (accept, rename, merge, split, reject), exported for `analysis ratify`")
    p.add_argument("--annotator", help="your name, on exported labels (default: the store's main annotator)")
    p.add_argument("--title", help="page title (default: the trace file's name)")
    p.add_argument("--hide-metadata", action="append", metavar="KEY",
                   help="leave this trace metadata field off the page (repeatable), e.g. ground truth")
    p.add_argument("--verdicts", metavar="FILE",
                   help="judge verdicts (criterion-verdict JSONL) shown beside each trace: confirm (c) or override "
                        "(o) each; the export's human labels name the verdict they override")
    p.add_argument("--others", action="append", metavar="STORE",
                   help="another reviewer's labels, shown beside yours, with a queue of the traces where labels "
                        "differ (q): for an adjudicator (repeatable)")
    p.add_argument("--blind", action="store_true", help="leave --others off the page: label without seeing them")
    add_trace_format_option(p)
    p.add_argument("--out", required=True, metavar="FILE", help="the HTML file to write")
    p.set_defaults(func=_cmd_review_build)
