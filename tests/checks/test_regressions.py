"""The regression set: each case derived from a past failure is fixed, fails again, is undecided or did not run;
the card names those not fixed."""

from __future__ import annotations

from evalkit.checks import regression_set, render_card
from evalkit.checks.router import Outcome, RoutedCriterion
from evalkit.contracts.dataset import CaseExpectation
from evalkit.contracts.scorecard import Scorecard
from evalkit.contracts.trace import Trace
from evalkit.suite import new_case


def _routed(*ids: str) -> list[RoutedCriterion]:
    return [RoutedCriterion("C1", "agent", cid, None, "deterministic", None) for cid in ids]  # type: ignore[arg-type]


def _trace(tid: str, case_id: str) -> Trace:
    return Trace.model_validate({"id": tid, "metadata": {"caseId": case_id}, "observations": []})


def _derived(query: str, trace: str, modes: list[str] | None = None, outcome: str = "fail"):
    expected = CaseExpectation(failure_modes=modes) if modes else None
    return new_case({"outcome": outcome}, query, "derived", origin_trace_id=trace, expected=expected)


def test_each_regression_case_is_fixed_failing_undecided_or_not_run():
    fixed, again, unsure, absent = (_derived("q fixed", "p1", ["order-id"]), _derived("q again", "p2"),
                                    _derived("q unsure", "p3", ["polite"]), _derived("q absent", "p4"))
    passed_before = _derived("q was fine", "p5", outcome="pass")
    seed = new_case({"intent": "status"}, "q seed", "seed")
    traces = [_trace("t1", fixed.id), _trace("t2", again.id), _trace("t3", unsure.id)]
    outcomes = [Outcome("C1", "order-id", "t1", "pass", "deterministic"),
                Outcome("C1", "polite", "t1", "fail", "deterministic"),      # not the criterion p1 failed
                Outcome("C1", "order-id", "t2", "pass", "deterministic"),
                Outcome("C1", "polite", "t2", "fail", "deterministic"),
                Outcome("C1", "order-id", "t3", "fail", "deterministic"),     # p3 failed polite, not order-id
                Outcome("C1", "polite", "t3", "skipped", "llm-judge")]
    reg = regression_set([seed, fixed, again, unsure, absent, passed_before], _routed("order-id", "polite"),
                         outcomes, traces)
    assert reg is not None
    got = {c.origin_trace_id: (c.result, c.criteria, c.failed_criteria, c.undecided_criteria) for c in reg.cases}
    assert got == {"p1": ("pass", ["order-id"], [], []),
                   "p2": ("fail", ["order-id", "polite"], ["polite"], []),
                   "p3": ("incomplete", ["polite"], [], ["polite"]),
                   "p4": ("not-run", ["order-id", "polite"], [], [])}
    assert (reg.passed, reg.failed, reg.incomplete, reg.not_run) == (1, 1, 1, 1)
    card = Scorecard(subject="s", matrix_version="v1", generated_at="t", trace_count=3, verdict="fail",
                     components=[], regressions=reg)
    text = render_card(card)
    assert "REGRESSIONS 4 case(s) from past failures" in text and "FAIL |" in text
    rows = [line for line in text.splitlines() if line.startswith("|  ") and "from p" in line]
    assert [r.split()[1] for r in rows] == ["FAIL", "?", "-"]        # failing again first, then undecided, not run
    assert all(len(line) == 60 for line in text.splitlines())


def test_a_suite_without_regression_cases_has_no_set():
    assert regression_set([new_case({"intent": "x"}, "q", "seed")], _routed("a"), [], []) is None
