"""``evalkit analysis rates|saturation|agreement``: thin wrappers over :mod:`evalkit.analysis`.

``--json`` prints the result's ``to_json_obj()`` as canonical JSON (the field-name convention of every
``--json`` output is the library's, camelCase).
"""

from __future__ import annotations

import argparse
import sys

from evalkit.analysis import SATURATION_WINDOW
from evalkit.cli.annotations import read_annotations, read_taxonomy_option
from evalkit.cli.parsers import add_command_group
from evalkit.cli.words import plural
from evalkit.errors import InputError


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _cmd_rates(args: argparse.Namespace) -> int:
    from evalkit.analysis import check_modes, failure_mode_rates, labels_of
    from evalkit.io import canonical_dumps

    contents = read_annotations(args.store, need_some=True)
    taxonomy = read_taxonomy_option(args.taxonomy)
    if taxonomy is not None:  # the labels the rates count, checked here so the error names STORE:LINE
        check_modes(labels_of(contents.annotations, args.annotator)[1], taxonomy, file=args.store,
                    line_of=contents.line_of)
    rates = failure_mode_rates(contents.annotations, taxonomy, args.annotator, args.level)
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

    if args.window < 1:  # the library raises ValueError for it, which would end in a traceback
        raise InputError(f"--window must be at least 1, got {args.window}")
    curve = saturation_curve(read_annotations(args.store, need_some=True).annotations, args.annotator, args.window)
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

    result = annotator_agreement(read_annotations(args.store, need_some=True).annotations, args.first, args.second,
                                 read_taxonomy_option(args.taxonomy))
    if args.json:
        sys.stdout.write(canonical_dumps(result.to_json_obj()))
        return 0
    print(f"{args.first} and {args.second}: {plural(result.shared_traces, 'shared trace')}, "
          f"{result.deferred} left out for a defer")
    width = max([len("pass/fail"), *(len(k.about) for k in result.modes)])
    for name, k in (("pass/fail", result.label), *((k.about, k) for k in result.modes)):
        print(f"  {name:<{width}}  kappa {_kappa(k.kappa):>9}  (agree on {_pct(k.observed)})")
    return 0


def add_analysis_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``analysis rates|saturation|agreement`` to the ``evalkit`` command."""
    asub = add_command_group(sub, "analysis", help="failure-mode rates, saturation and annotator agreement",
                             description="Analyse an annotation store (JSONL of annotations).")
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

    from evalkit.cli.modes import add_modes_parsers

    add_modes_parsers(asub)
