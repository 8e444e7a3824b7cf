"""``evalkit calibrate``: a judge's TPR/TNR on human labels and its corrected pass rate, for scripts."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from evalkit.errors import InputError


def _fmt(x: float | None, digits: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def calibrate(args: argparse.Namespace) -> dict[str, Any]:
    """The calibration report for the command's arguments, as camelCase JSON."""
    from evalkit.calibration import calibrate_criterion, read_labels, read_verdicts

    if (args.observed is None) != (args.n is None):
        raise InputError("--observed and --n go together: the judge's pass rate and how many traces it "
                         "was observed on (e.g. --observed 0.857 --n 2400)", path="--observed")
    if args.observed is not None and args.unlabeled:
        raise InputError("give --unlabeled or --observed/--n, not both", path="--unlabeled")
    notes: list[InputError] = []
    unlabeled = read_verdicts(args.unlabeled, notes=notes) if args.unlabeled else None
    observed = (args.observed, args.n) if args.observed is not None else None
    labels, verdicts = read_labels(args.labels, notes=notes), read_verdicts(args.verdicts, notes=notes)
    for note in notes:
        print(f"warning: {note.render()}", file=sys.stderr)
    report = calibrate_criterion(labels, verdicts,
                                 criterion_id=args.criterion, unlabeled=unlabeled, observed=observed,
                                 method=args.method, level=args.level, iterations=args.iterations,
                                 seed=args.seed, source=args.unlabeled or args.verdicts)
    return report.to_json_obj()


def _status(validation: dict[str, Any]) -> str:
    reasons = validation["shortfalls"]
    return validation["status"] + (f" ({'; '.join(reasons)})" if reasons else "")


def _print_table(report: dict[str, Any]) -> None:
    conf, rate, unl = report["confusion"], report["correctedPassRate"], report["unlabeled"]

    def rate_ci(name: str, n: int, cls: str) -> str:
        value, ci = conf[name], conf[name + "Ci"]
        if value is None:
            return f"n/a (no human {cls})"
        return f"{value:.3f}  [{ci['lo']:.3f}, {ci['hi']:.3f}]  on {n} human {cls}"

    scope = "test split" if report["labelScope"] == "test" else "all labels (no splits named)"
    abst = conf["abstentionRate"]
    rows = [
        ("criterion", str(report["criterionId"])),
        ("labels", f"{report['labelsMeasured']} of {report['labelsRead']} measured: {scope}"),
        ("paired", f"{conf['positives'] + conf['negatives']} "
                   f"(tp {conf['tp']}, fn {conf['fn']}, fp {conf['fp']}, tn {conf['tn']})"),
        ("excluded", f"{conf['deferred']} defer labels, {conf['uncertain']} uncertain verdicts, "
                     f"{conf['unjudged']} labels without a verdict"),
        ("TPR", rate_ci("tpr", conf["positives"], "passes")),
        ("TNR", rate_ci("tnr", conf["negatives"], "fails")),
        ("abstention", f"{conf['uncertain']} uncertain on labelled traces"
                       + (f" ({abst:.1%}: {conf['uncertainOnPass']} on passes, "
                          f"{conf['uncertainOnFail']} on fails)" if abst is not None else "")),
        ("status", _status(report["validation"])),
    ]
    if unl["observedFrom"] == "given":
        rows.append(("observed", f"{rate['pObs']:.3f} pass rate on {rate['nUnlabeled']} traces (given)"))
    elif unl["observedFrom"] == "verdicts":
        rows.append(("unlabeled", f"{unl['used']} verdicts used, {unl['uncertain']} uncertain left out"))
        rows.append(("observed", f"{rate['pObs']:.3f} pass rate"))
    else:
        rows.append(("observed", "none: give --unlabeled, or --observed RATE --n COUNT, to correct a pass rate"))
    level = f"{rate['level']:.0%}"
    if rate["valid"]:
        rows.append(("corrected", f"{rate['theta']:.3f}  {level} CI [{rate['lower']:.3f}, {rate['upper']:.3f}]"))
    else:
        rows.append(("corrected", f"not valid: {rate['reason']}"))
    method = rate["method"]
    if rate["iterations"]:
        method += f" ({rate['iterations']} resamples, {rate['skipped'] or 0} skipped)"
    rows.append(("method", method))
    for key, value in rows:
        print(f"{key:<12}{value}")


def _cmd_calibrate(args: argparse.Namespace) -> int:
    from evalkit.io import canonical_dumps

    report = calibrate(args)
    if args.json:
        sys.stdout.write(canonical_dumps(report))
    else:
        _print_table(report)
    return 0


def add_calibrate_parser(sub: argparse._SubParsersAction) -> None:
    """Add the ``calibrate`` command to the ``evalkit`` command's subparsers."""
    from evalkit.calibration import DEFAULT_ITERATIONS, DEFAULT_METHOD, METHODS

    p = sub.add_parser(
        "calibrate", help="a judge's TPR/TNR on human labels and its corrected pass rate",
        description="Join human labels (HumanLabel JSONL) to judge verdicts (CriterionVerdict JSONL) on "
                    "trace id; report TPR and TNR with Wilson intervals, whether the judge is validated, and "
                    "the judge's pass rate on unlabeled traces (its verdicts, or --observed/--n) corrected "
                    "for its errors (Rogan-Gladen) with a confidence interval. "
                    "When labels name splits, only the test split is measured.")
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
    p.add_argument("--json", action="store_true", help="print canonical JSON instead of a table")
    p.set_defaults(func=_cmd_calibrate)
