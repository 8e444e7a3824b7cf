"""What notebook 04_scorecard shows, computed here: the scorecard's tables, rates, repeats, tree and review.

:func:`scorecard_story` reads an ``evalkit eval run`` folder, or (without one) scores the subject's own
traces with the verdicts it has; the ``*_frame``/``*_rows`` functions turn the results into the tables
and chart rows the notebook draws. No policy lives in the notebook.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from evalkit.checks.tree import DecisionCheck, ForkCount, compare_tree
from evalkit.checks.variance import RepeatStability, case_of_metadata, outcome_results, repeat_stability
from evalkit.contracts.behavior_tree import BehaviorTree
from evalkit.contracts.methodology import MethodologyReview
from evalkit.contracts.scorecard import Scorecard
from evalkit.contracts.trace import Trace
from evalkit.contracts.verdict import CriterionVerdict
from evalkit.io import InputError


@dataclass(frozen=True)
class ScorecardStory:
    """Everything the scorecard notebook shows, from one eval run (or the subject's traces)."""

    scorecard: Scorecard
    traces: list[Trace]
    verdicts: list[CriterionVerdict]
    source: str
    """``eval run`` or ``subject traces``: where the scorecard came from."""
    manifest: dict[str, Any] | None
    stability: RepeatStability | None
    """None when the traces name no case (not from an eval run): repeats cannot be grouped."""
    tree: BehaviorTree | None
    decisions: list[DecisionCheck]
    forks: list[ForkCount]
    review: MethodologyReview
    note: str | None = None
    """Said in the report when the eval-run folder named was not there and the subject's traces were scored."""


def _stability(traces: list[Trace], verdicts: list[CriterionVerdict], threshold: float) -> RepeatStability | None:
    try:
        case_of = {t.id: case_of_metadata(t) for t in traces}
    except InputError:
        return None
    return repeat_stability(outcome_results((v for v in verdicts if v.trace_id in case_of), case_of),
                            threshold=threshold)


def scorecard_story(subject_file: str | Path, eval_run_dir: str | Path | None = None, *,
                    generated_at: str | None = None, max_variance: float = 0.0) -> ScorecardStory:
    """The scorecard of an eval-run folder (or of the subject's traces and verdicts), with repeats,
    the behavior tree against the traces and the methodology review.

    Raises:
        InputError: the folder is not an eval run, or the subject has no eval matrix to score with.
    """
    from evalkit.checks.eval_run import NOT_RECORDED, read_eval_run
    from evalkit.checks.review import review_runs
    from evalkit.contract_files import read_model
    from evalkit.subjects import load_subject

    resolved = load_subject(subject_file)
    subject = resolved.subject
    manifest, note = None, None
    if eval_run_dir is not None and not Path(eval_run_dir).exists():
        note = (f"The eval-run folder {Path(eval_run_dir).name} does not exist (write it with `evalkit eval run "
                f"SUBJECT --out DIR`): the subject's own traces were scored instead.")
        eval_run_dir = None
    if eval_run_dir is not None:
        card, traces, verdicts, manifest = read_eval_run(eval_run_dir)
        source = "eval run"
    else:
        card, traces, verdicts = _score_subject(resolved, generated_at or NOT_RECORDED)
        source = "subject traces"
    tree = read_model(resolved.resolve(subject.behavior_tree), BehaviorTree) if subject.behavior_tree else None
    decisions, forks = compare_tree(tree, traces) if tree is not None else ([], [])
    stability = _stability(traces, verdicts, max_variance)
    review = review_runs(tree, checks=decisions, forks=forks, stability=stability, subject=subject.name,
                         version=card.matrix_version, generated_at=card.generated_at)
    return ScorecardStory(card, traces, verdicts, source, manifest, stability, tree, decisions, forks, review, note)


def _score_subject(resolved: Any, generated_at: str) -> tuple[Scorecard, list[Trace], list[CriterionVerdict]]:
    from evalkit.checks.eval_run import judge_calibrations, score_outcomes
    from evalkit.checks.router import judge_from_verdicts, route
    from evalkit.checks.scorecard import build_scorecard, tally_outcomes
    from evalkit.contract_files import read_model, read_models
    from evalkit.contracts.labels import HumanLabel
    from evalkit.contracts.matrix import EvalMatrix
    from evalkit.traces import load

    subject = resolved.subject
    if subject.eval_matrix is None:
        raise InputError("the subject names no eval_matrix: there is no scorecard to compute",
                         file=str(resolved.path), path="eval_matrix")
    matrix = read_model(resolved.resolve(subject.eval_matrix), EvalMatrix)
    routed = route(matrix)
    traces = list(load(resolved.resolve(subject.traces)))
    given = read_models(resolved.resolve(subject.verdicts), CriterionVerdict) if subject.verdicts else []
    judged = {v.criterion_id for v in given}
    outcomes = score_outcomes(routed, traces, judge_from_verdicts(given), judged,
                              "no verdicts for this criterion in the subject")
    labels = read_models(resolved.resolve(subject.labels), HumanLabel) if subject.labels else []
    card = build_scorecard(routed, tally_outcomes(routed, outcomes), subject=subject.name,
                           matrix_version=matrix.version, generated_at=generated_at, trace_count=len(traces),
                           calibrations=judge_calibrations(labels, given, judged))
    if subject.verdicts:
        from evalkit.checks.judges import read_judges, with_judges

        card = with_judges(card, read_judges(resolved.resolve(subject.verdicts)),
                           "no run records beside the subject's verdicts")
    verdicts = sorted((o.verdict for o in outcomes if o.verdict is not None),
                      key=lambda v: (v.criterion_id, v.trace_id))
    return card, traces, verdicts


def component_frame(card: Scorecard) -> pl.DataFrame:
    """One row per component: its gate verdict, gating criteria and why."""
    return pl.DataFrame([{
        "component": f"{c.component_id} {c.component_name}", "verdict": c.verdict,
        "gating criteria": sum(1 for k in c.criteria if k.gating),
        "failed criteria": sum(1 for k in c.criteria if k.counts.failed),
        "why": "; ".join(c.reasons) or "every CRIT/HIGH criterion passed"} for c in card.components],
        schema={"component": pl.String, "verdict": pl.String, "gating criteria": pl.Int64,
                "failed criteria": pl.Int64, "why": pl.String})


def criterion_frame(card: Scorecard) -> pl.DataFrame:
    """One row per criterion: counts, the observed and corrected pass rates, the judge that decided it
    (provider, model, temperature, prompt digest), and notes."""
    rows = []
    for comp in card.components:
        for k in comp.criteria:
            rows.append({"component": comp.component_id, "criterion": k.criterion_id, "severity": k.severity,
                         "track": k.track, "pass": k.counts.passed, "fail": k.counts.failed,
                         "uncertain": k.counts.uncertain, "error": k.counts.errored,
                         "missing": k.counts.missing, "skipped": k.counts.skipped,
                         "pass rate": k.pass_rate.rate if k.pass_rate else None,
                         "corrected": k.corrected.rate if k.corrected else None,
                         "judge": "; ".join(f"{j.provider} {j.model} t={j.temperature:g} {j.prompt_digest or ''}"
                                            .strip() for j in k.judges),
                         "note": k.corrected_note or ""})
    return pl.DataFrame(rows, schema={"component": pl.String, "criterion": pl.String, "severity": pl.String,
                                      "track": pl.String, "pass": pl.Int64, "fail": pl.Int64,
                                      "uncertain": pl.Int64, "error": pl.Int64, "missing": pl.Int64,
                                      "skipped": pl.Int64, "pass rate": pl.Float64, "corrected": pl.Float64,
                                      "judge": pl.String, "note": pl.String})


REGRESSION_RESULTS = {"pass": "fixed", "fail": "failing again", "incomplete": "undecided", "not-run": "not run"}
"""How the page names each regression case's result, as the card does."""


def regression_frame(card: Scorecard) -> pl.DataFrame:
    """One row per regression case (a case derived from a failing past trace), those not fixed first: the trace
    it came from, what that trace failed, the criteria it was judged on now, and what failed or stayed
    undecided. Empty when the run's suite has no regression case."""
    cases = card.regressions.cases if card.regressions is not None else []
    order = {"fail": 0, "incomplete": 1, "not-run": 2, "pass": 3}
    rows = [{"case": c.case_id, "from trace": c.origin_trace_id or "", "now": REGRESSION_RESULTS.get(c.result, c.result),
             "failed then": ", ".join(c.failure_modes), "failing now": ", ".join(c.failed_criteria),
             "undecided": ", ".join(c.undecided_criteria), "traces": c.traces, "judged on": ", ".join(c.criteria)}
            for c in sorted(cases, key=lambda c: (order.get(c.result, 4), c.case_id))]
    return pl.DataFrame(rows, schema={"case": pl.String, "from trace": pl.String, "now": pl.String,
                                      "failed then": pl.String, "failing now": pl.String, "undecided": pl.String,
                                      "traces": pl.Int64, "judged on": pl.String})


def rate_rows(card: Scorecard) -> list[dict[str, Any]]:
    """Rows for :func:`evalkit.report.charts.intervals`: each decided criterion's observed pass rate
    (Wilson) and, for a validated judge, its corrected rate."""
    rows = []
    for comp in card.components:
        for k in comp.criteria:
            label = f"{k.severity} {k.criterion_id}"
            if k.pass_rate:
                rows.append({"label": label, "value": k.pass_rate.rate, "lo": k.pass_rate.lo,
                             "hi": k.pass_rate.hi, "kind": "observed (Wilson)"})
            if k.corrected:
                rows.append({"label": label, "value": k.corrected.rate, "lo": k.corrected.lo,
                             "hi": k.corrected.hi, "kind": "corrected (validated judge)"})
    return rows


def variance_frame(stability: RepeatStability) -> pl.DataFrame:
    """One row per case and criterion over its repeats: pass, fail, undecided (uncertain, errored, missing),
    variance, flipped, and steady (no flip beyond the threshold and no undecided repeat)."""
    return pl.DataFrame([{"case": c.case_id, "criterion": c.criterion_id, "repeats": c.repeats,
                          "pass": c.passed, "fail": c.failed, "undecided": c.undecided, "uncertain": c.uncertain,
                          "errored": c.errored, "missing": c.missing, "variance": c.variance,
                          "flipped": bool(c.spread), "steady": stability.steady(c)} for c in stability.cells],
                        schema={"case": pl.String, "criterion": pl.String, "repeats": pl.Int64, "pass": pl.Int64,
                                "fail": pl.Int64, "undecided": pl.Int64, "uncertain": pl.Int64, "errored": pl.Int64,
                                "missing": pl.Int64, "variance": pl.Float64, "flipped": pl.Boolean,
                                "steady": pl.Boolean})


def decision_frame(checks: list[DecisionCheck]) -> pl.DataFrame:
    """Per node and scenario, how many traces matched the expected decision, mismatched, or were not seen."""
    table: dict[tuple[str, str], Counter] = {}
    for c in checks:
        table.setdefault((c.node_id, c.scenario_id or "(none)"), Counter())[c.status] += 1
    statuses = ("match", "mismatch", "not-observed", "no-scenario", "judge-skipped")
    return pl.DataFrame([{"node": n, "scenario": s, **{k: cnt.get(k, 0) for k in statuses}}
                         for (n, s), cnt in table.items()],
                        schema={"node": pl.String, "scenario": pl.String, **dict.fromkeys(statuses, pl.Int64)})


def mismatch_frame(checks: list[DecisionCheck], limit: int = 200) -> pl.DataFrame:
    """The decisions that differ from the expected one: node, scenario, trace, what is lacking or extra."""
    return pl.DataFrame([{"node": c.node_id, "scenario": c.scenario_id, "trace": c.trace_id, "why": c.note,
                          "expected": c.expected} for c in checks if c.status == "mismatch"][:limit],
                        schema={"node": pl.String, "scenario": pl.String, "trace": pl.String, "why": pl.String,
                                "expected": pl.String})


def fork_frame(forks: list[ForkCount]) -> pl.DataFrame:
    """One row per fork: taken of reached, share, and whether it is dead or rare."""
    return pl.DataFrame([{"node": f.node_id, "fork": f.edge_id, "to": f.to, "taken": f.taken, "reached": f.reached,
                          "share": f.share, "dead or rare": "dead" if f.dead else "rare" if f.rare else ""}
                         for f in forks],
                        schema={"node": pl.String, "fork": pl.String, "to": pl.String, "taken": pl.Int64,
                                "reached": pl.Int64, "share": pl.Float64, "dead or rare": pl.String})


def review_frame(review: MethodologyReview) -> pl.DataFrame:
    """The methodology review's items: id, title, finding (advisory) and its evidence."""
    return pl.DataFrame([{"item": i.id, "title": i.title, "finding": i.finding or "not reviewed",
                          "evidence": "; ".join(i.evidence or [])} for i in review.items],
                        schema={"item": pl.String, "title": pl.String, "finding": pl.String, "evidence": pl.String})
