"""``evalkit eval run`` and ``evalkit scorecard``: from the eval matrix to the gate (thin over evalkit.checks).

Exit codes: 0 when the command ran (whatever the card says), 1 on bad input; with ``--gate`` a card that
is not ``pass`` exits 3, for CI.
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

from evalkit.cli.cluster import add_cluster_arguments
from evalkit.cli.parsers import (
    add_command_group,
    add_history_arguments,
    add_subject_run_arguments,
    history_folder,
)
from evalkit.errors import InputError

GATE_EXIT = 3
"""Exit code of ``--gate`` when the card's verdict is fail or incomplete."""


def _gate(args: argparse.Namespace, verdict: str) -> int:
    return GATE_EXIT if getattr(args, "gate", False) and verdict != "pass" else 0


def _provider(args: argparse.Namespace):
    """The judge named on the command line (a cassette, or --provider/--model), or None for the specs' pin."""
    if args.cassette:
        from evalkit.judge import ReplayProvider

        return ReplayProvider(args.cassette, model=args.model)
    if not args.provider:
        return None
    if not args.model:
        raise InputError("--provider needs --model", path="--model")
    from evalkit.contracts.judge import JudgePin
    from evalkit.judge import make_provider

    return make_provider(JudgePin(provider=args.provider, model=args.model), base_url=args.base_url)


def _default_history(out: str) -> Path:
    from evalkit.history import default_history

    return default_history(out)


def _cmd_eval_run(args: argparse.Namespace) -> int:
    from evalkit.checks import eval_subject
    from evalkit.io.outputs import guard_outputs
    from evalkit.subjects import subject_inputs

    guard_outputs({"--out": args.out}, {**subject_inputs(args.subject), "--cassette": args.cassette},
                  folders=["--out"])
    run = eval_subject(args.subject, args.out, repeats=args.repeats, concurrency=args.concurrency,
                       case_ids=args.case, generated_at=args.at, provider=_provider(args),
                       use_judge=not args.no_judge, judge_concurrency=args.judge_concurrency,
                       progress=sys.stderr.isatty(), history=history_folder(args, _default_history(args.out)))
    counts = ", ".join(f"{n} {s}" for s, n in run.run_counts.items() if n)
    print(f"agent runs: {counts} ({run.reused_runs} reused from an earlier run)", file=sys.stderr)
    if run.judged_pairs:
        print(f"judge: {run.judged_pairs} (criterion, trace) pair(s) in one batch", file=sys.stderr)
    print(Path(args.out, "card.txt").read_text(encoding="utf-8"), end="")
    print(f"eval run: {args.out} (scorecard.json, verdicts.jsonl, manifest.json)")
    return _gate(args, run.scorecard.verdict)


def _score(args: argparse.Namespace):
    """The scorecard of ``evalkit scorecard MATRIX TRACES``, in this process or on Dask (the same bytes)."""
    from tqdm import tqdm

    from evalkit.checks import NOT_RECORDED, judge_from_verdicts
    from evalkit.cli.cluster import check_partition_size, cluster_client, on_cluster
    from evalkit.contract_files import read_model, read_models
    from evalkit.contracts.labels import ValidationResult
    from evalkit.contracts.matrix import EvalMatrix
    from evalkit.contracts.verdict import CriterionVerdict
    from evalkit.distributed import (
        CheckOptions,
        check_work,
        run_partitions,
        run_partitions_here,
        scorecard_of,
        source_partitions,
    )
    from evalkit.io.empty_inputs import refuse_empty
    from evalkit.io.outputs import guard_outputs
    from evalkit.traces import require_traces

    check_partition_size(args)
    guard_outputs({"--out": args.out, "--verdicts-out": args.verdicts_out},
                  {"MATRIX": args.matrix, "TRACES": args.traces, "--verdicts": args.verdicts,
                   "--calibration": args.calibration})
    options = CheckOptions(read_model(args.matrix, EvalMatrix), (args.only,) if args.only else None,
                           verdict_lines=bool(args.verdicts_out))
    options.routed()  # a criterion that cannot be routed fails here, before any trace is read
    require_traces(args.traces)
    judge = None
    if args.verdicts:
        verdicts = read_models(args.verdicts, CriterionVerdict)
        refuse_empty(len(verdicts), file=args.verdicts, what="verdicts",
                     next_step="the judge's criteria would all be missing; give the verdicts file a judge run wrote")
        judge = judge_from_verdicts(verdicts)
    calibrations = None
    if args.calibration:
        calibrations = {v.criterion_id: v for v in read_models(args.calibration, ValidationResult)}
    task = functools.partial(check_work, options=options)
    shared = {"judge": judge} if judge is not None else None  # to each worker once, not with every partition
    with tqdm(desc="checking", unit=" traces", disable=None, file=sys.stderr) as bar:
        if not on_cluster(args):  # this process reads its runs of lines as a worker would
            work = source_partitions([args.traces], size=args.partition_size, workers_read_files=True)
            tallies = run_partitions_here(task, work, args.verdicts_out, on_done=bar.update, shared=shared)
        else:
            with cluster_client(args) as client:
                local = args.workers is not None  # local workers read the file and write their parts
                work = source_partitions([args.traces], size=args.partition_size, workers_read_files=local)
                tallies = run_partitions(client, task, work, args.verdicts_out, on_done=bar.update,
                                         workers_write=local, shared=shared)
    card = scorecard_of(options, tallies, generated_at=args.at or NOT_RECORDED, calibrations=calibrations)
    if judge is None and not args.only and any(rc.track != "deterministic" for rc in options.routed()):
        card = card.model_copy(update={"warnings": [
            *card.warnings, "judge criteria skipped: no --verdicts given"]})
    if args.verdicts:
        from evalkit.checks import read_judges, with_judges

        card = with_judges(card, read_judges(args.verdicts), "no run records (.runs.jsonl) beside --verdicts")
    return card


def _cmd_scorecard(args: argparse.Namespace) -> int:
    from evalkit.checks import render_card

    if args.matrix == "show":
        if not args.traces:
            raise InputError("scorecard show needs the scorecard file: evalkit scorecard show FILE")
        from evalkit.contract_files import read_model
        from evalkit.contracts.scorecard import Scorecard

        card = read_model(args.traces, Scorecard)
        print(render_card(card))
        return _gate(args, card.verdict)
    if not args.traces:
        raise InputError("scorecard needs the traces: evalkit scorecard MATRIX TRACES")
    from evalkit.checks import write_scorecard

    card = _score(args)
    if args.out:
        write_scorecard(args.out, card)
    print(render_card(card))
    if args.out:
        print(f"scorecard: {args.out}")
    return _gate(args, card.verdict)


def add_eval_parsers(sub: argparse._SubParsersAction) -> None:
    """Add ``eval run`` and ``scorecard`` to the ``evalkit`` command."""
    commands = add_command_group(sub, "eval", help="run the agent on the suite and score it against the eval matrix")
    r = commands.add_parser(
        "run", help="agent on every case, then code checks, judge and the scorecard",
        description="Run the subject's agent on its dataset's cases, then decide every criterion of its eval "
                    "matrix on the traces: code checks for the deterministic track, the subject's judge specs "
                    "for the judge track (all pairs in one judge run; criteria without a spec are skipped, "
                    "and the card says so). Writes runs.jsonl, traces.jsonl, verdicts.jsonl, scorecard.json, "
                    "card.txt and manifest.json in --out; a rerun reuses finished runs and judge replies and "
                    "writes the same bytes.")
    add_subject_run_arguments(r, out_help="the eval-run folder (reused on a rerun)", concurrency=4)
    r.add_argument("--repeats", type=int, default=1, metavar="N", help="runs per case (default 1)")
    r.add_argument("--at", metavar="TIMESTAMP", help="the time recorded on the scorecard (default: none)")
    r.add_argument("--no-judge", action="store_true", help="skip every judge criterion (the card says so)")
    r.add_argument("--provider", help="judge provider (openai, anthropic, replay); default: the specs' pin")
    r.add_argument("--model", help="judge model (with --provider)")
    r.add_argument("--base-url", help="an OpenAI- or Anthropic-compatible server")
    r.add_argument("--cassette", metavar="FILE", help="replay the judge from this cassette (offline)")
    r.add_argument("--judge-concurrency", type=int, default=8, metavar="N", help="judge calls at once")
    r.add_argument("--gate", action="store_true", help=f"exit {GATE_EXIT} when the card does not pass")
    add_history_arguments(r, default="history/ beside the --out folder")
    r.set_defaults(func=_cmd_eval_run)

    s = sub.add_parser(
        "scorecard", help="gate traces against an eval matrix, or show a scorecard file",
        description="evalkit scorecard MATRIX TRACES [--verdicts V] [--calibration C] [--only TRACK] [--out F]: "
                    "decide every criterion (code checks; judge criteria from the verdicts a judge run "
                    "wrote) and print the 60-column card. evalkit scorecard show F: print a scorecard file.")
    s.add_argument("matrix", metavar="MATRIX|show")
    s.add_argument("traces", nargs="?", metavar="TRACES|FILE")
    s.add_argument("--verdicts", metavar="FILE", help="criterion verdicts of a judge run (judge criteria)")
    s.add_argument("--calibration", metavar="FILE",
                   help="validation-result records: corrected rates for validated judges")
    s.add_argument("--only", choices=("deterministic", "llm-judge", "hybrid"), help="only this track")
    s.add_argument("--out", metavar="FILE", help="write the scorecard (canonical JSON)")
    s.add_argument("--at", metavar="TIMESTAMP", help="the time recorded on the scorecard (default: none)")
    s.add_argument("--gate", action="store_true", help=f"exit {GATE_EXIT} when the card does not pass")
    s.add_argument("--verdicts-out", metavar="FILE",
                   help="also write every verdict behind the card (code checks, and judge verdicts from "
                        "--verdicts) as JSONL, trace by trace in input order")
    add_cluster_arguments(s)
    s.set_defaults(func=_cmd_scorecard)
