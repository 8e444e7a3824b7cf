"""``evalkit labels import``: review-page exports, or tables of human labels, appended to a store."""

from __future__ import annotations

import argparse
import sys

from evalkit.cli.annotations import read_taxonomy_option
from evalkit.cli.parsers import add_command_group
from evalkit.cli.words import plural
from evalkit.errors import InputError


def _cmd_labels_import(args: argparse.Namespace) -> int:
    from evalkit.analysis import import_review_export, read_review_export
    from evalkit.io.outputs import guard_outputs

    guard_outputs({"--into": args.into}, {"EXPORT": args.export, "--taxonomy": args.taxonomy})
    if args.label_col or args.values:  # a table of per-criterion labels, not a review-page export
        from evalkit.cli.verdicts import import_labels_command

        return import_labels_command(args)
    if args.notes_col and args.at:  # open-coding notes kept in a table: fail annotations, modes to come
        return _import_notes(args)
    tabular = [o for o, v in (("--criterion", args.criterion), ("--split", args.split), ("--map", args.map),
                              ("--id-col", args.id_col), ("--split-col", args.split_col)) if v]
    if tabular:
        raise InputError(f"{', '.join(tabular)} need --label-col (or --values): they describe a table of labels, "
                         "and without a label column EXPORT is read as a review-page export", file=args.export)
    export, problems = read_review_export(args.export)
    for problem in problems:
        print(problem.render(), file=sys.stderr)
    if export is None:
        print(f"{args.export}: not imported ({plural(len(problems), 'problem')})", file=sys.stderr)
        return 1
    if export.human_labels and not args.labels_into:
        raise InputError(f"the export holds {plural(len(export.human_labels), 'label')} given beside judge verdicts: "
                         "pass --labels-into FILE (this reviewer's human-label file) to keep them", file=args.export)
    result = import_review_export(export, args.into, read_taxonomy_option(args.taxonomy), source=args.export)
    if result.torn_lines:
        done = "dropped" if result.torn_dropped else "left out (nothing was appended)"
        print(f"warning: {args.into}: line {result.torn_lines[0]}, cut off by an interrupted write, was {done}",
              file=sys.stderr)
    print(f"appended {plural(result.appended, 'annotation')} by {export.annotator} to {args.into}"
          + (f" ({result.unchanged} already there)" if result.unchanged else ""))
    if export.human_labels:
        from evalkit.calibration import append_records
        from evalkit.contracts import HumanLabel

        done = append_records(args.labels_into, export.human_labels, HumanLabel)
        overrides = sum(1 for label in export.human_labels if label.overrides is not None)
        print(f"appended {plural(done.appended, 'human label')} by {export.annotator} to {args.labels_into} "
              f"({overrides} overriding the judge's verdict)" + (f", {done.unchanged} already there" if done.unchanged else ""))
    return 0


def _import_notes(args: argparse.Namespace) -> int:
    from evalkit.analysis import append_annotations, notes_from_table

    if not (args.id_col and args.annotator):
        raise InputError("notes from a table need --id-col (the trace id) and --annotator (who wrote them)",
                         file=args.export, path="--notes-col")
    notes, empty = notes_from_table(args.export, note_col=args.notes_col, id_col=args.id_col,
                                    annotator=args.annotator, at=args.at, values_key=args.values)
    added = append_annotations(args.into, notes)
    print(f"appended {plural(added, 'note')} by {args.annotator} to {args.into} as fail annotations without "
          f"modes ({plural(empty, 'row')} without a note left out)")
    return 0


def add_labels_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``labels import`` to the ``evalkit`` command."""
    from evalkit.cli.verdicts import add_table_options

    lsub = add_command_group(sub, "labels", help="bring review-page exports or tables of human labels into a store",
                             description="Manage the append-only annotation store and human-label files.")
    p = lsub.add_parser("import", help="append a review export, or a CSV/JSONL table of labels, to a store",
                        description="Check a review page's export against its contract and append its "
                                    "annotations to the store; records equal to the latest stored ones are "
                                    "skipped, nothing stored is ever rewritten. With --label-col, EXPORT is a "
                                    "table (CSV, JSONL, JSON list) of human labels for one criterion, appended "
                                    "as HumanLabel records; every value that is not pass/fail/defer must be "
                                    "mapped with --map.")
    p.add_argument("export", metavar="EXPORT", help="the JSON file the review page downloaded, or a table of labels")
    p.add_argument("--into", required=True, metavar="STORE",
                   help="annotation store, or HumanLabel JSONL with --label-col (created when missing)")
    p.add_argument("--taxonomy", metavar="FILE", help="refuse failure modes this taxonomy lacks")
    p.add_argument("--labels-into", metavar="FILE",
                   help="the reviewer's human-label file for the labels given beside judge verdicts (an override "
                        "keeps the verdict it overrides): what `evalkit calibrate --labels` reads")
    p.add_argument("--label-col", metavar="COLUMN", help="import a table: the column with the human label")
    p.add_argument("--split-col", metavar="COLUMN", help="the column naming each row's split (train/dev/test)")
    p.add_argument("--split", choices=("train", "dev", "test"), help="the split of every row of this file")
    p.add_argument("--notes-col", metavar="COLUMN", help="the reviewer's notes, when the table has them")
    p.add_argument("--annotator", metavar="NAME", help="who labelled (recorded on every label)")
    p.add_argument("--at", metavar="TIME", help="with --notes-col and no --label-col: the table holds open-coding "
                                                "notes; each row with a note is appended as a fail annotation "
                                                "stamped TIME (ISO 8601), ready for `analysis draft-modes`")
    add_table_options(p)
    p.set_defaults(func=_cmd_labels_import)
