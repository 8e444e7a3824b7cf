"""``evalkit sample``, ``evalkit analysis rates|saturation|agreement``, ``evalkit review build``,
``evalkit labels import``: thin wrappers over :mod:`evalkit.analysis`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evalkit.cli.words import plural
from evalkit.errors import InputError


def _read_verdicts(path: str):
    from evalkit.contract_files import read_models
    from evalkit.contracts.verdict import CriterionVerdict

    return read_models(path, CriterionVerdict)


def _read_annotations(path: str):
    from evalkit.analysis import read_store

    if not Path(path).exists():
        raise InputError("annotation store not found", file=path)
    contents = read_store(path)
    if contents.torn:
        lines = ", ".join(str(n) for n in contents.torn_lines)
        print(f"warning: {path}: skipped {plural(contents.torn, 'line')} cut short by an interrupted write "
              f"(line {lines})", file=sys.stderr)
    return contents.annotations


def _taxonomy(path: str | None):
    from evalkit.analysis import read_taxonomy

    return read_taxonomy(path) if path else None


def _cmd_sample(args: argparse.Namespace) -> int:
    from evalkit.analysis import sample_traces
    from evalkit.traces import load, write_jsonl

    if Path(args.out).suffix.lower() != ".jsonl":
        raise InputError("output must end in .jsonl", file=args.out)
    traces = load(args.traces, args.format)
    verdicts = _read_verdicts(args.verdicts) if args.verdicts else None
    chosen = sample_traces(traces, args.n, args.strategy, args.seed, by=args.by, verdicts=verdicts)
    write_jsonl(chosen, args.out)
    print(f"sampled {len(chosen)} of {plural(len(traces), 'trace')} ({args.strategy}, seed {args.seed}) "
          f"into {args.out}, in review order")
    if len(chosen) < min(args.n, len(traces)):
        print(f"note: only {len(chosen)} traces qualify for {args.strategy} sampling (asked for {args.n})",
              file=sys.stderr)
    return 0


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _cmd_rates(args: argparse.Namespace) -> int:
    from evalkit.analysis import failure_mode_rates
    from evalkit.io import canonical_dumps

    rates = failure_mode_rates(_read_annotations(args.store), _taxonomy(args.taxonomy), args.annotator, args.level)
    if args.json:
        sys.stdout.write(canonical_dumps(rates.to_json_obj()))
        return 0
    print(f"annotator {rates.annotator}: {rates.reviewed} reviewed ({rates.failed} fail, {rates.passed} pass), "
          f"{rates.deferred} deferred")
    width = max([len("failure mode"), *(len(r.mode) for r in rates.modes)])
    level = f"{round(100 * rates.level)}% CI"
    print(f"  {'failure mode':<{width}}  {'count':>5}  {'rate':>6}  {level}")
    for r in rates.modes:
        print(f"  {r.mode:<{width}}  {r.count:>5}  {_pct(r.rate):>6}  [{_pct(r.lo)}, {_pct(r.hi)}]")
    if rates.untagged_fails:
        print(f"{plural(rates.untagged_fails, 'fail')} name no failure mode yet")
    return 0


def _cmd_saturation(args: argparse.Namespace) -> int:
    from evalkit.analysis import saturation_curve
    from evalkit.io import canonical_dumps

    curve = saturation_curve(_read_annotations(args.store), args.annotator, args.window)
    if args.json:
        sys.stdout.write(canonical_dumps(curve.to_json_obj()))
        return 0
    distinct = curve.points[-1].distinct if curve.points else 0
    print(f"annotator {curve.annotator}: {plural(distinct, 'failure mode')} in "
          f"{plural(len(curve.points), 'trace')} reviewed; last new mode at trace {curve.last_new_at}")
    for p in curve.points:
        if p.new:
            print(f"  {p.reviewed:>5}  {p.trace_id}  +{', '.join(p.new)}")
    verdict = "saturated" if curve.saturated else "not saturated"
    print(f"{verdict}: {curve.since_last_new} traces since the last new mode (window {curve.window})")
    return 0


def _kappa(x: float | None) -> str:
    return "undefined" if x is None else f"{x:.3f}"


def _cmd_agreement(args: argparse.Namespace) -> int:
    from evalkit.analysis import annotator_agreement
    from evalkit.io import canonical_dumps

    result = annotator_agreement(_read_annotations(args.store), args.first, args.second, _taxonomy(args.taxonomy))
    if args.json:
        sys.stdout.write(canonical_dumps(result.to_json_obj()))
        return 0
    print(f"{args.first} and {args.second}: {plural(result.shared_traces, 'shared trace')}, "
          f"{result.deferred} left out for a defer")
    width = max([len("pass/fail"), *(len(k.about) for k in result.modes)])
    for name, k in (("pass/fail", result.label), *((k.about, k) for k in result.modes)):
        print(f"  {name:<{width}}  kappa {_kappa(k.kappa):>9}  (agree on {_pct(k.observed)})")
    return 0


def _cmd_review_build(args: argparse.Namespace) -> int:
    from evalkit.analysis import write_review
    from evalkit.traces import load

    traces = load(args.traces, args.format)
    annotations = _read_annotations(args.labels) if args.labels else []
    path = write_review(args.out, traces, annotations=annotations, taxonomy=_taxonomy(args.taxonomy),
                        annotator=args.annotator, title=args.title or Path(args.traces).name,
                        hide_metadata=args.hide_metadata or ())
    print(f"review page for {plural(len(traces), 'trace')}: {path}")
    return 0


def _cmd_labels_import(args: argparse.Namespace) -> int:
    from evalkit.analysis import import_review_export, read_review_export

    if args.label_col or args.values:  # a table of per-criterion labels, not a review-page export
        from evalkit.cli.verdicts import import_labels_command

        return import_labels_command(args)
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
    result = import_review_export(export, args.into, _taxonomy(args.taxonomy), source=args.export)
    if result.torn_lines:
        done = "dropped" if result.torn_dropped else "left out (nothing was appended)"
        print(f"warning: {args.into}: line {result.torn_lines[0]}, cut off by an interrupted write, was {done}",
              file=sys.stderr)
    print(f"appended {plural(result.appended, 'annotation')} by {export.annotator} to {args.into}"
          + (f" ({result.unchanged} already there)" if result.unchanged else ""))
    return 0


def add_analysis_parsers(sub: argparse._SubParsersAction) -> None:
    """Add ``sample``, ``analysis``, ``review`` and ``labels`` to the ``evalkit`` command."""
    from evalkit.analysis import SATURATION_WINDOW, STRATEGIES
    from evalkit.traces import FORMATS

    formats = ["auto", *FORMATS]

    p = sub.add_parser("sample", help="pick traces to review: random, stratified, outlier, failure-driven, uncertainty",
                       description="Choose N traces to read first and write them, in review order, as evalkit "
                                   "JSONL. The same seed always picks the same traces.")
    p.add_argument("traces", metavar="TRACES", help="trace file (any format evalkit reads)")
    p.add_argument("--n", type=int, required=True, metavar="N", help="how many traces to pick")
    p.add_argument("--strategy", choices=STRATEGIES, default="random", help="how to pick (default: random)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--by", metavar="FIELD", help="stratified: a metadata field, or tools, name, tool_calls, has_error")
    p.add_argument("--verdicts", metavar="FILE", help="judge verdicts (JSONL): required for uncertainty, "
                                                      "counted by failure-driven")
    p.add_argument("--format", choices=formats, default="auto", help="trace format (default: sniffed)")
    p.add_argument("--out", required=True, metavar="FILE", help="output .jsonl")
    p.set_defaults(func=_cmd_sample)

    analysis = sub.add_parser("analysis", help="failure-mode rates, saturation and annotator agreement",
                              description="Analyse an annotation store (JSONL of annotations).")
    asub = analysis.add_subparsers(dest="analysis_command", metavar="COMMAND", required=True)
    p = asub.add_parser("rates", help="failure rate per mode with Wilson intervals, most frequent first",
                        description="The share of reviewed traces showing each failure mode (latest label per "
                                    "trace; defer left out), with Wilson score intervals.")
    p.add_argument("store", metavar="STORE")
    p.add_argument("--taxonomy", metavar="FILE", help="failure-mode taxonomy: list every mode, roll up parents")
    p.add_argument("--annotator", help="whose labels (default: the annotator with the most)")
    p.add_argument("--level", type=float, default=0.95, help="confidence level (default 0.95)")
    p.add_argument("--json", action="store_true", help="print the rates as JSON")
    p.set_defaults(func=_cmd_rates)

    p = asub.add_parser("saturation", help="distinct failure modes against traces reviewed",
                        description="Whether new traces still reveal new failure modes; saturated when none "
                                    f"appeared in the last {SATURATION_WINDOW} traces reviewed.")
    p.add_argument("store", metavar="STORE")
    p.add_argument("--annotator", help="whose labels (default: the annotator with the most)")
    p.add_argument("--window", type=int, default=SATURATION_WINDOW,
                   help=f"traces without a new mode that count as saturation (default {SATURATION_WINDOW})")
    p.add_argument("--json", action="store_true", help="print the curve as JSON")
    p.set_defaults(func=_cmd_saturation)

    p = asub.add_parser("agreement", help="Cohen's kappa between two annotators on the traces both labelled",
                        description="Agreement on pass/fail and on each failure mode, corrected for chance.")
    p.add_argument("store", metavar="STORE")
    p.add_argument("first", metavar="ANNOTATOR")
    p.add_argument("second", metavar="OTHER")
    p.add_argument("--taxonomy", metavar="FILE", help="failure-mode taxonomy: report every mode")
    p.add_argument("--json", action="store_true", help="print the agreement as JSON")
    p.set_defaults(func=_cmd_agreement)

    review = sub.add_parser("review", help="build a self-contained HTML page for labelling traces",
                            description="Review traces in a browser, offline.")
    rsub = review.add_subparsers(dest="review_command", metavar="COMMAND", required=True)
    p = rsub.add_parser("build", help="write review.html for a trace file",
                        description="Write one self-contained HTML file: each trace readable, pass/fail/defer, "
                                    "notes, failure-mode tags, keyboard shortcuts, autosave in the browser and "
                                    "an export for `evalkit labels import`.")
    p.add_argument("traces", metavar="TRACES", help="trace file, in the order to review")
    p.add_argument("--labels", metavar="STORE", help="annotation store whose latest labels are preloaded")
    p.add_argument("--taxonomy", metavar="FILE", help="failure modes offered as tags")
    p.add_argument("--annotator", help="your name, on exported labels (default: the store's main annotator)")
    p.add_argument("--title", help="page title (default: the trace file's name)")
    p.add_argument("--hide-metadata", action="append", metavar="KEY",
                   help="leave this trace metadata field off the page (repeatable), e.g. ground truth")
    p.add_argument("--format", choices=formats, default="auto", help="trace format (default: sniffed)")
    p.add_argument("--out", required=True, metavar="FILE", help="the HTML file to write")
    p.set_defaults(func=_cmd_review_build)

    labels = sub.add_parser("labels", help="bring review-page exports or tables of human labels into a store",
                            description="Manage the append-only annotation store and human-label files.")
    lsub = labels.add_subparsers(dest="labels_command", metavar="COMMAND", required=True)
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
    from evalkit.cli.verdicts import add_table_options

    p.add_argument("--label-col", metavar="COLUMN", help="import a table: the column with the human label")
    p.add_argument("--split-col", metavar="COLUMN", help="the column naming each row's split (train/dev/test)")
    p.add_argument("--split", choices=("train", "dev", "test"), help="the split of every row of this file")
    p.add_argument("--notes-col", metavar="COLUMN", help="the reviewer's notes, when the table has them")
    p.add_argument("--annotator", metavar="NAME", help="who labelled (recorded on every label)")
    add_table_options(p)
    p.set_defaults(func=_cmd_labels_import)
