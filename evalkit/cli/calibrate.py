"""``evalkit calibrate``: a judge's TPR/TNR on human labels and its corrected pass rate, for scripts.

Thin over :func:`evalkit.judge.calibrate_judge`, which checks that the calibration covers the verdicts to
correct (an uncalibrated correction is withheld, never printed as if it held) and, with repeated verdicts
in the judge run record, widens the interval for the judge's noise.
"""

from __future__ import annotations

import argparse
import sys

from evalkit.calibration import DEFAULT_ITERATIONS, DEFAULT_METHOD, DEFAULT_POLICY_VERSION, GATES, METHODS


def _cmd_calibrate(args: argparse.Namespace) -> int:
    from evalkit.io import canonical_dumps
    from evalkit.io.outputs import guard_outputs
    from evalkit.judge import calibrate_judge, render_calibration

    guard_outputs({"--save-validation": args.save_validation},
                  {"--labels": args.labels, "--verdicts": args.verdicts, "--unlabeled": args.unlabeled,
                   "--validation": args.validation, "--spec": args.spec})
    report = calibrate_judge(args.labels, args.verdicts, criterion=args.criterion, unlabeled=args.unlabeled,
                             observed=args.observed, n=args.n, method=args.method, level=args.level,
                             iterations=args.iterations, seed=args.seed, gate=args.gate,
                             policy_version=args.policy_version, validation=args.validation,
                             save_validation=args.save_validation)
    for note in report.warnings:
        print(f"warning: {note.render()}", file=sys.stderr)
    gaps = _example_gaps(args.spec, report.json["criterionId"]) if args.spec else []
    if args.spec:
        report.json["validation"]["exampleGaps"] = gaps
    sys.stdout.write(canonical_dumps(report.json) if args.json else render_calibration(report.json))
    if gaps and not args.json:
        print(f"{'examples':<12}warning: the judge spec has {', '.join(gaps)} (the seed's judge prompt needs one "
              "clear pass, one clear fail and one borderline example)")
    return 0


def _example_gaps(paths: list[str], criterion_id: str) -> list[str]:
    """What the judge spec of the criterion lacks of a clear pass, a clear fail and a borderline example."""
    from evalkit.errors import InputError
    from evalkit.judge import example_gaps, read_judge_specs

    specs = [s for path in paths for s in read_judge_specs(path) if s.id == criterion_id]
    if not specs:
        raise InputError(f"no judge spec for criterion {criterion_id!r} in {', '.join(paths)}", path="--spec")
    return example_gaps(specs[0])


def add_calibrate_parser(sub: argparse._SubParsersAction) -> None:
    """Add the ``calibrate`` command to the ``evalkit`` command's subparsers."""
    p = sub.add_parser(
        "calibrate", help="a judge's TPR/TNR on human labels and its corrected pass rate",
        description="Join human labels (HumanLabel JSONL) to judge verdicts (CriterionVerdict JSONL) on "
                    "trace id; report TPR and TNR with Wilson intervals, whether the judge is validated, and "
                    "the judge's pass rate on unlabeled traces (its verdicts, or --observed/--n) corrected "
                    "for its errors (Rogan-Gladen) with a confidence interval. "
                    "When labels name splits, only the test split is measured. The correction is given only "
                    "when the judge measured is the judge whose verdicts are corrected (from the judge run "
                    "records beside the verdicts, or a --validation saved earlier); otherwise the verdicts are "
                    "reported uncalibrated.")
    p.add_argument("--labels", required=True, metavar="FILE", help="human labels, HumanLabel JSONL")
    p.add_argument("--verdicts", required=True, metavar="FILE", help="judge verdicts, CriterionVerdict JSONL")
    p.add_argument("--unlabeled", metavar="FILE",
                   help="verdicts to correct (default: the verdicts on traces without a non-defer label)")
    p.add_argument("--observed", type=float, metavar="RATE",
                   help="instead of verdicts: the judge's pass rate on unlabeled traces, as published "
                        "or reported by another tool (with --n)")
    p.add_argument("--n", type=int, metavar="COUNT", help="how many traces --observed was measured on")
    p.add_argument("--method", choices=METHODS, default=DEFAULT_METHOD,
                   help=f"interval method (default: {DEFAULT_METHOD})")
    p.add_argument("--criterion", metavar="ID", help="the criterion, when the files hold several")
    p.add_argument("--level", type=float, default=0.95, help="confidence level (default: 0.95)")
    p.add_argument("--iterations", type=int, default=DEFAULT_ITERATIONS,
                   help=f"bootstrap resamples (default: {DEFAULT_ITERATIONS})")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default: 0)")
    p.add_argument("--gate", choices=GATES, default="point",
                   help="how TPR and TNR must reach 0.9 to validate: point (the estimates, default) or lower-bound "
                        "(the lower ends of their Wilson intervals, as awslabs' agent-evaluation gates)")
    p.add_argument("--policy-version", default=DEFAULT_POLICY_VERSION, metavar="V",
                   help="the labelling policy's version, part of the calibration's binding "
                        f"(default {DEFAULT_POLICY_VERSION}; bump it when the labelling guide changes)")
    p.add_argument("--save-validation", metavar="FILE",
                   help="write the validation result bound to this judge (prompt, model, temperature), label "
                        "set and policy, to check later verdicts against with --validation")
    p.add_argument("--validation", metavar="FILE",
                   help="a validation result saved earlier: the corrected rate is given only if it still covers "
                        "these verdicts (same judge, labels and policy), else they are reported uncalibrated")
    p.add_argument("--spec", action="append", metavar="FILE",
                   help="the judge spec file(s): the status then warns when the criterion's spec lacks a clear "
                        "pass, a clear fail or a borderline example")
    p.add_argument("--json", action="store_true", help="print canonical JSON instead of a table")
    p.set_defaults(func=_cmd_calibrate)
