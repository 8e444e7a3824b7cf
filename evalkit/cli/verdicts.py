"""``evalkit labels import FILE --label-col ...`` and ``evalkit verdicts import``: tables into contracts.

Thin over :mod:`evalkit.calibration.imports`; the ``labels`` group itself lives with the annotation
store's commands, which call :func:`import_labels_command` when a label column is named.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from evalkit.cli.parsers import add_command_group
from evalkit.cli.words import plural
from evalkit.errors import InputError

if TYPE_CHECKING:
    from evalkit.calibration import Appended


def _warn_cut_off(into: str, done: Appended) -> None:
    if done.cut_off_line is not None:
        fate = "dropped" if done.appended else "left out (nothing was appended)"
        print(f"warning: {into}: line {done.cut_off_line}, cut off by an interrupted write, was {fate}",
              file=sys.stderr)


def _ids_note(id_col: str | None) -> str:
    return "" if id_col else " (no --id-col: trace ids are row positions 1, 2, ...)"


def add_table_options(p: argparse.ArgumentParser) -> None:
    """The options every table import shares: criterion, id column, value map, a list of values."""
    p.add_argument("--criterion", metavar="ID", help="the criterion the labels or verdicts are for")
    p.add_argument("--id-col", metavar="COLUMN",
                   help="the trace-id column (default: none; the row position is the trace id)")
    p.add_argument("--map", action="append", metavar="VALUE=TARGET",
                   help="what a value in the file means, e.g. PASS=pass, 1=pass, UNKNOWN=defer (repeatable); "
                        "a value that is neither mapped nor the contract's own word is an error")
    p.add_argument("--values", metavar="KEY",
                   help="the file is a JSON object with a list of values under KEY (e.g. judgy's test_labels), "
                        "or '.' for a bare list; one record per position")


def import_labels_command(args: argparse.Namespace) -> int:
    """Read a table of per-criterion human labels and append them as HumanLabel records."""
    from evalkit.calibration import (
        LABEL_VALUES,
        LabelColumns,
        append_records,
        labels_from_table,
        parse_value_map,
        read_table,
    )
    from evalkit.contracts.labels import HumanLabel

    if not args.criterion:
        raise InputError("importing a table of labels needs the criterion they are for", path="--criterion")
    label_col = args.label_col or args.values
    table = read_table(args.export, values_key=args.values)
    labels = labels_from_table(
        table, LabelColumns(label=label_col, id=args.id_col, split=args.split_col, notes=args.notes_col),
        criterion_id=args.criterion, value_map=parse_value_map(args.map, LABEL_VALUES), split=args.split,
        annotator=args.annotator)
    done = append_records(args.into, labels, HumanLabel)
    _warn_cut_off(args.into, done)
    counts = {v: sum(lb.label == v for lb in labels) for v in LABEL_VALUES}
    splits = sorted({lb.split or "none" for lb in labels})
    print(f"appended {plural(done.appended, 'label')} for {args.criterion} to {args.into}"
          + (f" ({done.unchanged} already there)" if done.unchanged else "")
          + f": {counts['pass']} pass, {counts['fail']} fail, {counts['defer']} defer; split {', '.join(splits)}"
          + _ids_note(args.id_col))
    return 0


def _cmd_verdicts_import(args: argparse.Namespace) -> int:
    from evalkit.calibration import (
        VERDICT_VALUES,
        VerdictColumns,
        append_records,
        parse_value_map,
        read_table,
        verdicts_from_table,
    )
    from evalkit.cli.export import import_scores_command, refuse_score_options
    from evalkit.contracts.verdict import CriterionVerdict
    from evalkit.io.outputs import guard_outputs

    guard_outputs({"--into": args.into}, {"FILE": args.file})
    if args.source != "table":
        return import_scores_command(args)
    refuse_score_options(args)
    if not args.criterion:
        raise InputError("verdicts are for one criterion; name it", path="--criterion")
    result_col = args.result_col or args.values
    if not result_col:
        raise InputError("name the column holding the judge's result (or --values KEY for a list)",
                         path="--result-col")
    table = read_table(args.file, values_key=args.values)
    verdicts = verdicts_from_table(
        table, VerdictColumns(result=result_col, id=args.id_col, critique=args.critique_col,
                              confidence=args.confidence_col),
        criterion_id=args.criterion, value_map=parse_value_map(args.map, VERDICT_VALUES))
    done = append_records(args.into, verdicts, CriterionVerdict)
    _warn_cut_off(args.into, done)
    counts = {v: sum(x.result == v for x in verdicts) for v in VERDICT_VALUES}
    missing = [name for name, col in (("critique", args.critique_col), ("confidence", args.confidence_col))
               if not col]
    print(f"appended {plural(done.appended, 'verdict')} for {args.criterion} to {args.into}"
          + (f" ({done.unchanged} already there)" if done.unchanged else "")
          + f": {counts['pass']} pass, {counts['fail']} fail, {counts['uncertain']} uncertain"
          + (f"; {' and '.join(missing)} not recorded (null)" if missing else "") + _ids_note(args.id_col))
    return 0


def add_verdicts_parser(sub: argparse._SubParsersAction) -> None:
    """Add the ``verdicts`` command group to the ``evalkit`` command's subparsers."""
    vsub = add_command_group(sub, "verdicts", help="bring judge verdicts from other tools into CriterionVerdict JSONL",
                             description="Judge verdicts from CSV, JSONL or JSON tables.")
    p = vsub.add_parser(
        "import", help="read a CSV/JSONL/JSON table of judge results and append CriterionVerdict records",
        description="Map one column to pass/fail/uncertain (every other value must be mapped with --map) and "
                    "append one verdict per row. Critique and confidence are optional: without their columns "
                    "they are recorded as null (not recorded), never invented. A record equal to a stored one "
                    "is skipped; one that contradicts a stored verdict is an error.")
    p.add_argument("file", metavar="FILE", help="CSV (header row), JSONL of objects, or a JSON list of objects")
    p.add_argument("--into", required=True, metavar="FILE", help="CriterionVerdict JSONL (created when missing)")
    p.add_argument("--result-col", metavar="COLUMN", help="the column with the judge's result")
    p.add_argument("--critique-col", metavar="COLUMN", help="the judge's reasoning, when the file has it")
    p.add_argument("--confidence-col", metavar="COLUMN", help="a confidence in [0, 1], when the file has one")
    add_table_options(p)
    from evalkit.cli.export import add_import_options

    add_import_options(p)
    p.set_defaults(func=_cmd_verdicts_import)
