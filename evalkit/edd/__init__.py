"""Eval-driven development: the bounded loop from failing cases to an amended agent (docs/edd.md).

The evaluator never edits the subject: each swing evaluates it, and unless a stop reason holds, writes a
grounded change request and hands it to the subject's remedy command, then re-evaluates what came back.
Everything is journaled in an append-only ledger, so a killed loop resumes at the swing where it stopped.
"""

from evalkit.edd.evaluate import Evaluate, SuiteEvaluation, result_from_run
from evalkit.edd.history import rate_rows, read_loop, render_status, swing_rows
from evalkit.edd.ledger import LEDGER, Ledger, LedgerRecord, LedgerState
from evalkit.edd.loop import (
    REMEDY_STOPS,
    Clock,
    LoopOutcome,
    Remedy,
    next_phase,
    run_loop,
    stop_test,
    swing_dir,
    wall_clock_ms,
)
from evalkit.edd.remedy import RemedyOutcome, read_response, run_remedy, write_request
from evalkit.edd.requests import (
    MAX_CASES_PER_REQUEST,
    Picked,
    change_request,
    pick_failing_cases,
    proposed_remedy,
)
from evalkit.edd.results import (
    CriterionRate,
    EvalResult,
    FailingOutcome,
    carry_stability,
    improvement,
    scorecard_digest,
)
from evalkit.edd.run import run_subject_loop

__all__ = [
    "LEDGER",
    "MAX_CASES_PER_REQUEST",
    "REMEDY_STOPS",
    "Clock",
    "CriterionRate",
    "EvalResult",
    "Evaluate",
    "FailingOutcome",
    "Ledger",
    "LedgerRecord",
    "LedgerState",
    "LoopOutcome",
    "Picked",
    "Remedy",
    "RemedyOutcome",
    "SuiteEvaluation",
    "carry_stability",
    "change_request",
    "improvement",
    "next_phase",
    "pick_failing_cases",
    "proposed_remedy",
    "rate_rows",
    "read_loop",
    "read_response",
    "render_status",
    "result_from_run",
    "run_loop",
    "run_remedy",
    "run_subject_loop",
    "scorecard_digest",
    "stop_test",
    "swing_dir",
    "swing_rows",
    "wall_clock_ms",
    "write_request",
]
