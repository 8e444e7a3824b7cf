"""Reading a loop folder back: one row per swing and criterion, and the text ``evalkit edd status`` prints."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evalkit.edd.ledger import Ledger, LedgerState
from evalkit.errors import InputError

UNSTEADY_SHOWN = 10
"""Unsteady (case, criterion) pairs ``edd history`` lists per swing, worst first; the rest are counted."""


def read_loop(folder: str | Path) -> LedgerState:
    """The ledger of a loop folder, replayed.

    Raises:
        InputError: the folder has no ledger, or the ledger is out of order.
    """
    ledger = Ledger(folder)
    if not ledger.path.is_file():
        raise InputError("not an EDD loop folder: no edd-ledger.jsonl (start one with evalkit edd run)",
                         file=str(folder))
    return ledger.replay()


def rate_rows(state: LedgerState) -> list[dict[str, Any]]:
    """Per swing and criterion: passed, decided, the pass rate and its 95% Wilson interval (None if undecided)."""
    rows = []
    for rec in state.evaluations:
        assert rec.result is not None
        for c in rec.result.criteria:
            ci = c.interval
            lo, hi = (None, None) if ci is None else (ci.lo, ci.hi)
            rows.append({"swing": rec.swing, "phase": rec.phase, "criterion": c.criterion_id, "severity": c.severity,
                         "passed": c.passed, "decided": c.decided, "rate": c.rate, "lo": lo, "hi": hi})
    return rows


def swing_rows(state: LedgerState) -> list[dict[str, Any]]:
    """Per swing: phase, repeats, stability, the improvement call, the stop test, the request and its reply."""
    rows = []
    for rec in state.evaluations:
        assert rec.result is not None
        req = state.requests.get(rec.swing)
        resp = state.responses.get(rec.swing)
        reply = None
        if resp is not None:
            reply = (f"{resp.response.status}: {resp.response.note}" if resp.response is not None
                     else f"{resp.failure}: {resp.reason}")
        rows.append({
            "swing": rec.swing, "phase": rec.phase, "repeats": rec.result.repeats, "verdict": rec.result.verdict,
            "stable": rec.result.stable, "flipping": len(rec.result.unstable),
            "failing": len({(f.case_id, f.criterion_id) for f in rec.result.failing}),
            "improved": rec.improved, "why": rec.improvement_note, "streak": rec.streak, "stop": rec.stop,
            "request": req.request.request_id if req is not None and req.request is not None else None,
            "cases_asked": len(req.request.failing_cases) if req is not None and req.request is not None else 0,
            "reply": reply, "scorecard": rec.result.scorecard_digest,
        })
    return rows


def _fmt_rate(c: Any) -> str:
    if c.rate is None:
        return "   -  "
    ci = c.interval
    lo, hi = (0.0, 1.0) if ci is None else (ci.lo, ci.hi)
    return f"{c.rate:.3f} [{lo:.2f}-{hi:.2f}]"


def render_status(state: LedgerState, *, history: bool = False) -> str:
    """Where the loop is (or why it stopped); with ``history``, every swing, its rates, request and reply."""
    lines = []
    subject = state.started.subject if state.started else "?"
    budget = state.started.budget if state.started else None
    if budget is not None:
        lines.append(f"EDD loop on {subject}: budget {budget.max_swings} swings, "
                     f"{budget.max_wallclock_ms / 60000:g} min, no-improvement streak {budget.no_improvement_streak_limit}")
    if state.stopped is not None:
        detail = f" ({state.stopped.reason})" if state.stopped.reason else ""
        lines.append(f"{state.stopped.phase}: {state.stopped.stop} after swing {state.stopped.swing}{detail}")
    elif state.last is None:
        lines.append("started; no swing evaluated yet (resume with evalkit edd run)")
    else:
        step = "response" if state.last.swing in state.requests else "change request"
        lines.append(f"in progress: swing {state.last.swing} evaluated, waiting for its {step} "
                     "(resume with evalkit edd run)")
    for row in swing_rows(state):
        lines.append(f"swing {row['swing']} {row['phase']:<8} x{row['repeats']} {row['verdict']:<10} "
                     f"stable={'yes' if row['stable'] else 'no'} flipping={row['flipping']} failing={row['failing']} "
                     f"improved={'-' if row['improved'] is None else 'yes' if row['improved'] else 'no'} "
                     f"streak={row['streak']}")
        if history:
            rec = next(r for r in state.evaluations if r.swing == row["swing"])
            assert rec.result is not None
            for c in rec.result.criteria:
                lines.append(f"    {c.severity:<4} {c.criterion_id:<28} {c.passed:>4}/{c.decided:<4} {_fmt_rate(c)}"
                             + (f" skipped {c.skipped}" if c.skipped else ""))
            for text in rec.result.unsteady[:UNSTEADY_SHOWN]:
                lines.append(f"    unsteady {text}")
            if len(rec.result.unsteady) > UNSTEADY_SHOWN:
                lines.append(f"    unsteady ... and {len(rec.result.unsteady) - UNSTEADY_SHOWN} more pair(s)")
            for gap in rec.result.evidence_gaps:
                lines.append(f"    not decided: {gap}")
            lines.append(f"    {row['why']}")
            if row["request"]:
                lines.append(f"    request {row['request']}: {row['cases_asked']} case(s)")
            if row["reply"]:
                lines.append(f"    reply {row['reply']}")
    if state.cut_off:
        lines.append("note: the ledger ends in a cut-off record (an interrupted write); it was left out")
    return "\n".join(lines)
