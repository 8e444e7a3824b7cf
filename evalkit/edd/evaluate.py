"""The default evaluation of a swing: run the agent on the suite's cases and score the traces.

It is ``evalkit eval run`` (:func:`evalkit.checks.eval_run.eval_subject`) into the swing's folder, with
``variance_repeats`` repeats per case in a variance swing and one in an accuracy swing, read back as an
:class:`~evalkit.edd.results.EvalResult`. Any callable ``evaluate(swing, phase) -> EvalResult`` can
replace it (a test, another harness).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from evalkit.edd.results import EvalResult, FailingOutcome, criteria_from_counts, scorecard_digest

Evaluate = Callable[[int, str], EvalResult]
"""``evaluate(swing, phase)``: evaluate the subject as it is now."""


def result_from_run(scorecard: Any, outcomes: Sequence[Any], traces: Sequence[Any], routed: Sequence[Any],
                    repeats: int, eval_dir: str | None = None,
                    run_counts: dict[str, int] | None = None) -> EvalResult:
    """An :class:`EvalResult` from a scorecard, its router outcomes, the traces and the routed criteria.

    Args:
        scorecard: the ``Scorecard`` of the run.
        outcomes: the router ``Outcome``s behind it (their verdicts give critiques and refs).
        traces: the traces scored; each names its case in ``metadata.caseId``.
        routed: the routed criteria (for the statement and evidence of each).
        repeats: repeats per case in this run; stability is measured when it is 2 or more, and a case
            with fewer outcomes than ``repeats`` counts the rest as missing repeats.
        eval_dir: where the eval run was written.
        run_counts: agent runs by status (``EvalRun.run_counts``); errored and timed-out runs gave no trace.
    """
    from evalkit.checks import case_of_metadata, outcome_results, repeat_stability

    case_of = {t.id: case_of_metadata(t) for t in traces}
    info = {rc.criterion_id: (rc.criterion.statement or "", rc.criterion.evidence_source or "") for rc in routed}
    rows = []
    for component in scorecard.components:
        for c in component.criteria:
            n = c.counts
            rows.append((c.criterion_id, c.severity, n.passed, n.failed, n.uncertain + n.errored + n.missing,
                         n.skipped))
    failing = [FailingOutcome(case_id=case_of.get(o.trace_id, o.trace_id), trace_id=o.trace_id,
                              criterion_id=o.criterion_id,
                              critique=(o.verdict.critique if o.verdict is not None else o.note) or "",
                              refs=list(o.verdict.refs or []) if o.verdict is not None else [])
               for o in outcomes if o.status == "fail"]
    failing.sort(key=lambda f: (f.criterion_id, f.case_id, f.trace_id))
    measured = repeats >= 2
    stability = repeat_stability(outcome_results(outcomes, case_of), repeats=repeats) if measured else None
    cells = stability.unstable if stability else []
    counts = run_counts or {}
    return EvalResult(repeats=repeats, verdict=scorecard.verdict, criteria=criteria_from_counts(rows, info),
                      failing=failing, stability_measured=measured,
                      stable=bool(stability.stable) if stability else False,
                      max_variance=stability.max_variance if stability else 0.0,
                      unstable=[[c.case_id, c.criterion_id] for c in cells],
                      unsteady=[c.describe() for c in cells],
                      missing_runs=counts.get("error", 0) + counts.get("timeout", 0),
                      scorecard_digest=scorecard_digest(scorecard.to_json_obj()), eval_dir=eval_dir,
                      warnings=list(scorecard.warnings))


class SuiteEvaluation:
    """``evaluate(swing, phase)`` over the subject's suite, eval matrix and judge specs.

    Args:
        subject_file: the subject (needs ``agent``, ``dataset`` and ``eval_matrix``).
        out_dir: the loop's folder; swing N is written to ``OUT/swing-NNN/eval``.
        variance_repeats: repeats per case in a variance swing (accuracy swings run each case once).
        concurrency: agent runs at a time.
        case_ids: only these cases (default: all).
        provider: the judge provider for the subject's judge specs (default: their pin).
    """

    def __init__(self, subject_file: str | Path, out_dir: str | Path, *, variance_repeats: int = 5,
                 concurrency: int = 2, case_ids: Sequence[str] | None = None, provider: Any = None) -> None:
        self.subject_file = Path(subject_file)
        self.out_dir = Path(out_dir)
        self.variance_repeats = variance_repeats
        self.concurrency = concurrency
        self.case_ids = list(case_ids) if case_ids else None
        self.provider = provider

    def __call__(self, swing: int, phase: str) -> EvalResult:
        from evalkit.checks import eval_subject, route
        from evalkit.contract_files import read_model
        from evalkit.contracts.matrix import EvalMatrix
        from evalkit.subjects import load_subject

        repeats = self.variance_repeats if phase == "variance" else 1
        folder = self.out_dir / f"swing-{swing:03d}" / "eval"
        run = eval_subject(self.subject_file, folder, repeats=repeats, concurrency=self.concurrency,
                           case_ids=self.case_ids, provider=self.provider)
        resolved = load_subject(self.subject_file)
        routed = route(read_model(resolved.resolve(resolved.subject.eval_matrix), EvalMatrix))
        return result_from_run(run.scorecard, run.outcomes, run.traces, routed, repeats,
                               eval_dir=str(folder.relative_to(self.out_dir)), run_counts=run.run_counts)
