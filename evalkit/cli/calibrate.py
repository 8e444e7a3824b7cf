"""``evalkit calibrate``: a judge's TPR/TNR on human labels and its corrected pass rate, for scripts.

Before a rate is corrected, the command checks that the calibration covers the verdicts to correct
(:func:`evalkit.calibration.calibration_applies`): an uncalibrated correction is withheld, never printed as
if it held. With repeated verdicts in the judge run record, the judge's noise and the interval widened
for it are printed beside the usual one.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from evalkit.calibration import DEFAULT_ITERATIONS, DEFAULT_METHOD, DEFAULT_POLICY_VERSION, GATES, METHODS
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
                                 seed=args.seed, source=args.unlabeled or args.verdicts, gate=args.gate)
    out = report.to_json_obj()
    applies = _applies(args, labels, report.criterion_id)
    out["calibration"] = {"status": applies.status, "changed": list(applies.changed), "reason": applies.reason,
                          "binding": applies.binding.model_dump(mode="json", by_alias=True)
                          if applies.binding else None}
    if applies.status == "uncalibrated":
        rate = out["correctedPassRate"]
        rate.update(theta=None, ci=None, valid=False, reason=f"uncalibrated: {applies.reason}")
    out["judgeNoise"] = _noise(args, report)
    if args.save_validation:
        _save_validation(args.save_validation, report, applies)
    return out


def _applies(args: argparse.Namespace, labels: list[Any], criterion_id: str) -> Any:
    from evalkit.calibration import calibration_applies
    from evalkit.contract_files import read_model
    from evalkit.contracts import ValidationResult
    from evalkit.judge import runs_path_of

    saved = read_model(args.validation, ValidationResult) if args.validation else None
    if saved is not None and saved.criterion_id != criterion_id:
        raise InputError(f"the saved validation is for criterion {saved.criterion_id!r}, not {criterion_id!r}",
                         file=args.validation, path="criterionId")
    return calibration_applies(labels, criterion_id=criterion_id, measured_runs=runs_path_of(args.verdicts),
                               corrected_runs=runs_path_of(args.unlabeled) if args.unlabeled else None,
                               policy_version=args.policy_version, saved=saved)


def _noise(args: argparse.Namespace, report: Any) -> dict[str, Any] | None:
    """Flip rate, unstable share and the widened interval, when the run record holds 2+ repeats of items."""
    from evalkit.compare import judge_noise, repeats_from_runs, widen_for_noise
    from evalkit.judge import runs_path_of

    runs = runs_path_of(args.unlabeled or args.verdicts)
    if not runs.exists():
        return None
    noise = judge_noise(repeats_from_runs(runs)).get(report.criterion_id)
    if noise is None or not noise.repeated_items:
        return None
    widened = widen_for_noise(report.rate, noise)
    return {"items": noise.items, "repeatedItems": noise.repeated_items, "unstableItems": noise.unstable_items,
            "flipRate": noise.flip_rate, "abstentions": noise.abstentions, "rateSd": noise.rate_sd,
            "widenedCi": None if widened is None else widened.model_dump(mode="json")}


def _save_validation(path: str, report: Any, applies: Any) -> None:
    from evalkit.contracts import ValidationResult
    from evalkit.io import atomic_write_text, canonical_dumps

    if applies.binding is None:
        raise InputError("cannot save a validation without knowing the judge: the verdicts have no judge run "
                         "record (<verdicts>.runs.jsonl, written by evalkit judge run)", path="--save-validation")
    rate = report.rate
    result = ValidationResult(
        criterion_id=report.criterion_id, judge_model=applies.binding.judge_model, status=report.status,
        label_count=report.test.total, tpr=report.test.tpr, tnr=report.test.tnr, observed_pass_rate=rate.p_obs,
        corrected_rate=rate.theta if rate.valid else None, correction_valid=rate.valid,
        ci=rate.ci if rate.valid else None, note="; ".join(report.shortfalls) or None, binding=applies.binding)
    atomic_write_text(path, canonical_dumps(result.model_dump(mode="json", by_alias=True)))


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
        rows.append(("corrected", f"{rate['theta']:.3f}  {level} CI [{rate['ci']['lo']:.3f}, {rate['ci']['hi']:.3f}]"))
    else:
        rows.append(("corrected", f"not valid: {rate['reason']}"))
    noise = report.get("judgeNoise")
    if noise:
        wide = noise["widenedCi"]
        rows.append(("judge noise", f"flip rate {_fmt(noise['flipRate'])}, {noise['unstableItems']} of "
                                    f"{noise['repeatedItems']} repeated items unstable, repeat sd {_fmt(noise['rateSd'])}"
                     + (f"; corrected CI widened for it [{wide['lo']:.3f}, {wide['hi']:.3f}]" if wide else "")))
    cal = report["calibration"]
    rows.append(("applies", cal["status"] + (f": {cal['reason']}" if cal["reason"] else "")))
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
    p.add_argument("--json", action="store_true", help="print canonical JSON instead of a table")
    p.set_defaults(func=_cmd_calibrate)
