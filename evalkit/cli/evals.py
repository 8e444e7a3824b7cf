"""``evalkit eval run`` and ``evalkit scorecard``: from the eval matrix to the gate (thin over evalkit.checks).

Exit codes: 0 when the command ran (whatever the card says), 1 on bad input; with ``--gate`` a card that
is not ``pass`` exits 3, for CI.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

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


def _cmd_eval_run(args: argparse.Namespace) -> int:
    from evalkit.checks import eval_subject

    run = eval_subject(args.subject, args.out, repeats=args.repeats, concurrency=args.concurrency,
                       case_ids=args.case, generated_at=args.at, provider=_provider(args),
                       use_judge=not args.no_judge, judge_concurrency=args.judge_concurrency,
                       progress=sys.stderr.isatty())
    counts = ", ".join(f"{n} {s}" for s, n in run.run_counts.items() if n)
    print(f"agent runs: {counts} ({run.reused_runs} reused from an earlier run)", file=sys.stderr)
    if run.judged_pairs:
        print(f"judge: {run.judged_pairs} (criterion, trace) pair(s) in one batch", file=sys.stderr)
    print(Path(args.out, "card.txt").read_text(encoding="utf-8"), end="")
    print(f"eval run: {args.out} (scorecard.json, verdicts.jsonl, manifest.json)")
    return _gate(args, run.scorecard.verdict)


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
    from evalkit.checks import NOT_RECORDED, judge_from_verdicts, score_traces, write_scorecard
    from evalkit.contract_files import read_model, read_models
    from evalkit.contracts.labels import ValidationResult
    from evalkit.contracts.matrix import EvalMatrix
    from evalkit.contracts.verdict import CriterionVerdict
    from evalkit.traces import iter_traces

    matrix = read_model(args.matrix, EvalMatrix)
    judge = judge_from_verdicts(read_models(args.verdicts, CriterionVerdict)) if args.verdicts else None
    calibrations = None
    if args.calibration:
        calibrations = {v.criterion_id: v for v in read_models(args.calibration, ValidationResult)}
    tracks = [args.only] if args.only else None
    card = score_traces(matrix, iter_traces(args.traces), judge=judge, calibrations=calibrations, tracks=tracks,
                        generated_at=args.at or NOT_RECORDED)
    if judge is None and not args.only:
        card = card.model_copy(update={"warnings": [
            *card.warnings, "judge criteria skipped: no --verdicts given"]})
    if args.out:
        write_scorecard(args.out, card)
    print(render_card(card))
    if args.out:
        print(f"scorecard: {args.out}")
    return _gate(args, card.verdict)


def add_eval_parsers(sub: argparse._SubParsersAction) -> None:
    """Add ``eval run`` and ``scorecard`` to the ``evalkit`` command."""
    p = sub.add_parser("eval", help="run the agent on the suite and score it against the eval matrix")
    groups = p.add_subparsers(dest="eval_command", metavar="ACTION", required=True)
    r = groups.add_parser(
        "run", help="agent on every case, then code checks, judge and the scorecard",
        description="Run the subject's agent on its dataset's cases, then decide every criterion of its eval "
                    "matrix on the traces: code checks for the deterministic track, the subject's judge specs "
                    "for the judge track (all pairs in one judge run; criteria without a spec are skipped, "
                    "and the card says so). Writes runs.jsonl, traces.jsonl, verdicts.jsonl, scorecard.json, "
                    "card.txt and manifest.json in --out; a rerun reuses finished runs and judge replies and "
                    "writes the same bytes.")
    r.add_argument("subject", metavar="SUBJECT.yaml")
    r.add_argument("--out", required=True, metavar="DIR", help="the eval-run folder (reused on a rerun)")
    r.add_argument("--repeats", type=int, default=1, metavar="N", help="runs per case (default 1)")
    r.add_argument("--concurrency", type=int, default=4, metavar="N", help="agent processes at once (default 4)")
    r.add_argument("--case", nargs="+", metavar="ID", help="only these case ids")
    r.add_argument("--at", metavar="TIMESTAMP", help="the time recorded on the scorecard (default: none)")
    r.add_argument("--no-judge", action="store_true", help="skip every judge criterion (the card says so)")
    r.add_argument("--provider", help="judge provider (openai, anthropic, replay); default: the specs' pin")
    r.add_argument("--model", help="judge model (with --provider)")
    r.add_argument("--base-url", help="an OpenAI- or Anthropic-compatible server")
    r.add_argument("--cassette", metavar="FILE", help="replay the judge from this cassette (offline)")
    r.add_argument("--judge-concurrency", type=int, default=8, metavar="N", help="judge calls at once")
    r.add_argument("--gate", action="store_true", help=f"exit {GATE_EXIT} when the card does not pass")
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
    s.set_defaults(func=_cmd_scorecard)
