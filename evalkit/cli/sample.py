"""``evalkit sample``: pick the traces to read first, a thin wrapper over :func:`evalkit.analysis.sample_traces`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evalkit.analysis import STRATEGIES
from evalkit.cli.parsers import add_trace_format_option
from evalkit.cli.words import plural
from evalkit.errors import InputError


def _cmd_sample(args: argparse.Namespace) -> int:
    from evalkit.analysis import detect_outcome, parse_outcome, sample_traces
    from evalkit.contract_files import read_models
    from evalkit.contracts.verdict import CriterionVerdict
    from evalkit.io.outputs import guard_outputs
    from evalkit.traces import dataset_trace_ids, is_trace_dataset, load, require_traces, write_jsonl

    if Path(args.out).suffix.lower() != ".jsonl":
        raise InputError("output must end in .jsonl", file=args.out)
    guard_outputs({"--out": args.out}, {"TRACES": args.traces, "--verdicts": args.verdicts})
    verdicts = read_models(args.verdicts, CriterionVerdict) if args.verdicts else None
    outcome = parse_outcome(args.outcome) if args.outcome else None
    if is_trace_dataset(args.traces):  # a partitioned Parquet dataset: sampled a file at a time, never whole
        if args.format not in ("auto", "evalkit"):
            raise InputError(f"a trace dataset folder is evalkit's own format, not {args.format!r}",
                             file=args.traces)
        chosen = sample_traces(args.traces, args.n, args.strategy, args.seed, by=args.by, verdicts=verdicts,
                               outcome=outcome)
        total = len(dataset_trace_ids(args.traces))
    else:
        require_traces(args.traces)
        traces = load(args.traces, args.format)
        if outcome is None and args.strategy == "failure-driven" and (outcome := detect_outcome(traces)):
            print(f"outcome: {outcome.describe()} (recorded in the traces' metadata; --outcome to choose "
                  "another)", file=sys.stderr)
        chosen = sample_traces(traces, args.n, args.strategy, args.seed, by=args.by, verdicts=verdicts,
                               outcome=outcome)
        total = len(traces)
    write_jsonl(chosen, args.out)
    print(f"sampled {len(chosen)} of {plural(total, 'trace')} ({args.strategy}, seed {args.seed}) "
          f"into {args.out}, in review order")
    if len(chosen) < min(args.n, total):
        print(f"note: only {plural(len(chosen), 'trace')} {'qualifies' if len(chosen) == 1 else 'qualify'} for "
              f"{args.strategy} sampling (asked for {args.n})", file=sys.stderr)
    return 0


def add_sample_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``sample`` to the ``evalkit`` command."""
    p = sub.add_parser("sample", help="pick traces to review: random, stratified, outlier, failure-driven, uncertainty",
                       description="Choose N traces to read first and write them, in review order, as evalkit "
                                   "JSONL. The same seed always picks the same traces.")
    p.add_argument("traces", metavar="TRACES", help="trace file (any format evalkit reads), or a trace dataset "
                                                    "folder (evalkit traces import --partition-by)")
    p.add_argument("--n", type=int, required=True, metavar="N", help="how many traces to pick")
    p.add_argument("--strategy", choices=STRATEGIES, default="random", help="how to pick (default: random)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--by", metavar="FIELD", help="stratified: a metadata field, or tools, name, tool_calls, has_error")
    p.add_argument("--verdicts", metavar="FILE", help="judge verdicts (JSONL): required for uncertainty, "
                                                      "counted by failure-driven")
    p.add_argument("--outcome", metavar="EXPR", help="failure-driven: the recorded outcome that says a trace "
                                                     "failed, a metadata field compared, e.g. reward<1, "
                                                     "success==false, scores.includes.value!=C (default: "
                                                     "found in the metadata when the traces record one)")
    add_trace_format_option(p)
    p.add_argument("--out", required=True, metavar="FILE", help="output .jsonl")
    p.set_defaults(func=_cmd_sample)
