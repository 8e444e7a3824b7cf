"""The regression set of an eval run: each suite case derived from a failing past trace, fixed or not.

A regression case is judged on the criteria its origin failed (``expected.failureModes`` that are criterion
ids of the matrix, as ``dataset derive --from-verdicts`` records them), else on every criterion (a review's
failure modes name no criterion). Over every trace the case ran to (all repeats): ``fail`` when one of those
criteria failed, else ``incomplete`` when one was not decided (uncertain, errored, missing or skipped),
else ``pass``; ``not-run`` when the case gave no trace. Nothing undecided counts as fixed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from evalkit.checks.router import Outcome, RoutedCriterion
from evalkit.checks.variance import case_of_metadata
from evalkit.contracts.dataset import Case
from evalkit.contracts.scorecard import RegressionCase, RegressionSet
from evalkit.contracts.trace import Trace

UNDECIDED = ("uncertain", "error", "missing", "skipped")


def regression_set(cases: Iterable[Case], routed: Sequence[RoutedCriterion], outcomes: Iterable[Outcome],
                   traces: Iterable[Trace]) -> RegressionSet | None:
    """The regression cases among ``cases`` (``evalkit.suite.is_regression``), each with its result in this
    run; None when the suite has none.

    Args:
        cases: the suite's cases (those run and those not).
        routed: the matrix's criteria.
        outcomes: every criterion's outcome on every trace of the run.
        traces: the run's traces (``metadata.caseId`` names each one's case).
    """
    from evalkit.suite import is_regression

    regressions = [c for c in cases if is_regression(c)]
    if not regressions:
        return None
    case_of = {t.id: case_of_metadata(t) for t in traces}
    by_case: dict[str, list[Outcome]] = {}
    for o in outcomes:
        by_case.setdefault(case_of.get(o.trace_id) or "", []).append(o)
    ran = {case_of[t] for t in case_of}
    all_ids = [rc.criterion_id for rc in routed]
    out: list[RegressionCase] = []
    for case in regressions:
        modes = list(case.expected.failure_modes) if case.expected else []
        criteria = [cid for cid in all_ids if cid in modes] or all_ids
        mine = [o for o in by_case.get(case.id, []) if o.criterion_id in criteria]
        failed = sorted({o.criterion_id for o in mine if o.status == "fail"})
        undecided = sorted({o.criterion_id for o in mine if o.status in UNDECIDED})
        traces_run = len({o.trace_id for o in mine})
        if case.id not in ran:
            result = "not-run"
        elif failed:
            result = "fail"
        elif undecided:
            result = "incomplete"
        else:
            result = "pass"
        out.append(RegressionCase(case_id=case.id, origin_trace_id=case.origin_trace_id, failure_modes=modes,
                                  criteria=criteria, result=result, failed_criteria=failed,
                                  undecided_criteria=undecided, traces=traces_run))
    count = {r: sum(1 for c in out if c.result == r) for r in ("pass", "fail", "incomplete", "not-run")}
    return RegressionSet(cases=out, passed=count["pass"], failed=count["fail"], incomplete=count["incomplete"],
                         not_run=count["not-run"])
