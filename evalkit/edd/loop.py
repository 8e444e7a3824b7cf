"""The bounded loop: evaluate, stop or ask for an amendment, read the reply, evaluate again.

A swing N: evaluate the subject (phase variance or accuracy), decide whether it improved on swing N-1,
run the stop test, and unless it stops, write change request N, hand it to the remedy command and read
the response. The next swing evaluates the amended subject. Every step is journaled in the ledger before
the next begins, so a loop killed anywhere resumes where it stopped and never repeats a recorded step.

The stop test, in the seed's order (success first): full green (repeats stable, accuracy met, and every
CRIT/HIGH criterion decided on every case and repeat), incomplete evidence (nothing failed, but a gating
criterion was skipped or undecided somewhere: never green, and nothing to ask for), max swings, max wall
clock, no-improvement streak; a budget stop records the convergence delta from the first swing to the
last. Beyond those the loop stops, recorded and without a crash,
when the remedy command fails (``remedy-crashed``, ``remedy-timeout``, ``remedy-invalid-response``),
rejects the request (``remedy-rejected``: an unchanged subject is not re-evaluated), or when no failing
case can be grounded (``nothing-to-ask``: the evaluator never asks for a fix it cannot ground).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from evalkit.contracts.edd import EddChangeRequest, LoopBudget
from evalkit.edd.evaluate import Evaluate
from evalkit.edd.ledger import Ledger, LedgerRecord, LedgerState
from evalkit.edd.remedy import RemedyOutcome, read_response
from evalkit.edd.requests import change_request
from evalkit.edd.results import EvalResult, carry_stability, improvement
from evalkit.errors import InputError

REMEDY_STOPS = ("remedy-crashed", "remedy-timeout", "remedy-invalid-response", "remedy-rejected", "nothing-to-ask")
"""Stop reasons beyond the budget's: the loop cannot go on without a usable amendment."""

Clock = Callable[[], int]
"""Milliseconds since the epoch (injected: tests and reruns pass their own)."""
Remedy = Callable[[EddChangeRequest, Path, Path], RemedyOutcome]
"""``remedy(request, request_file, response_file)``: hand the request over, return what came back."""


def wall_clock_ms() -> int:
    """The default clock: wall time in ms (a resumed loop counts the time since its first start)."""
    return int(time.time() * 1000)


def stop_test(result: EvalResult, *, swing: int, elapsed_ms: int, streak: int, budget: LoopBudget) -> str | None:
    """The first stop reason that holds, in the seed's order, or None to go on.

    Full green needs the evidence whole: a CRIT or HIGH criterion skipped, errored, uncertain or missing on
    any case or repeat is never green. With no failing outcome to ask about, such a swing stops
    ``incomplete-evidence`` at once (a remedy cannot supply a judge); with failures, the loop goes on.
    """
    if result.stable and result.accuracy_met and result.evidence_complete:
        return "full-green"
    if not result.evidence_complete and not result.failing:
        return "incomplete-evidence"
    if swing >= budget.max_swings:
        return "max-swings"
    if elapsed_ms >= budget.max_wallclock_ms:
        return "max-wallclock"
    if streak >= budget.no_improvement_streak_limit:
        return "no-improvement-streak"
    return None


def next_phase(result: EvalResult | None) -> str:
    """Variance while the repeats are not (known to be) stable, then accuracy: variance always comes first."""
    return "accuracy" if result is not None and result.stable else "variance"


@dataclass(frozen=True)
class LoopOutcome:
    """How the loop ended: the stop reason, the final phase (done or stopped) and the ledger."""

    stop_reason: str
    phase: str
    swings: int
    state: LedgerState


def swing_dir(out_dir: Path, swing: int) -> Path:
    """Where swing N's files go (eval run, change request, response)."""
    return out_dir / f"swing-{swing:03d}"


def run_loop(subject: str, out_dir: str | Path, evaluate: Evaluate, remedy: Remedy, *,
             budget: LoopBudget | None = None, clock: Clock = wall_clock_ms,
             remedy_target: str = "agentspec") -> LoopOutcome:
    """Run (or resume) the loop in ``out_dir`` until a stop reason holds.

    Args:
        subject: the subject's name (written into every request).
        out_dir: the loop's folder: the ledger and one folder per swing.
        evaluate: ``evaluate(swing, phase) -> EvalResult`` of the subject as it is now.
        remedy: hands a request to whoever amends the subject (see :func:`evalkit.edd.remedy.run_remedy`).
        budget: the bounds; None takes the ledger's (a resumed loop) or the defaults (6 swings, 30 min, 2).
        clock: ms since the epoch; the wall-clock budget counts from the ledger's start reading.
        remedy_target: where requests ask for the fix (agentspec or impl).

    Raises:
        InputError: the ledger belongs to another subject or budget, or is out of order.
    """
    out = Path(out_dir)
    ledger = Ledger(out)
    state = ledger.replay()
    if state.started is None:
        ledger.append(LedgerRecord(event="started", subject=subject, budget=budget or LoopBudget(),
                                   started_at_ms=clock()))
        state = ledger.replay()
    assert state.started is not None and state.started.budget is not None
    if state.started.subject != subject:
        raise InputError(f"this loop folder belongs to subject {state.started.subject!r}, not {subject!r}",
                         file=str(ledger.path))
    if budget is not None and budget != state.started.budget:
        raise InputError(f"this loop was started with budget {state.started.budget.to_json_obj()}; resume it "
                         "without budget options, or start a new loop in another folder", file=str(ledger.path))
    if state.stopped is not None:
        return _outcome(state)
    budget = state.started.budget
    started_at = state.started.started_at_ms or 0

    while True:
        last = state.last
        if last is None or last.swing in state.responses:
            record = _evaluate(state, evaluate, budget, clock, started_at)
            ledger.append(record)
            state.evaluations.append(record)
            if record.stop is not None:
                return _stop(ledger, state, record.swing, record.stop, stop_detail(record.stop, state.results()))
            last = record
        swing = last.swing
        assert last.result is not None
        if swing not in state.requests:
            request, _ = change_request(last.result, swing=swing, subject=subject, phase=last.phase or "variance",
                                        remedy_target=remedy_target)
            if request is None:
                return _stop(ledger, state, swing, "nothing-to-ask", _nothing_to_ask(last.result))
            rec = LedgerRecord(event="requested", swing=swing, request=request, at_ms=clock())
            ledger.append(rec)
            state.requests[swing] = rec
        request = state.requests[swing].request
        assert request is not None
        folder = swing_dir(out, swing)
        folder.mkdir(parents=True, exist_ok=True)
        request_file, response_file = folder / "change-request.json", folder / "response.json"
        done = read_response(response_file, request.request_id) if response_file.exists() else None
        outcome = done if done is not None and done.response is not None else remedy(request, request_file,
                                                                                       response_file)
        rec = LedgerRecord(event="responded", swing=swing, response=outcome.response, failure=outcome.failure,
                           reason=outcome.reason, stderr_tail=outcome.stderr_tail, at_ms=clock())
        ledger.append(rec)
        state.responses[swing] = rec
        if outcome.response is None:
            return _stop(ledger, state, swing, f"remedy-{outcome.failure}", outcome.reason)
        if outcome.response.status == "rejected":
            return _stop(ledger, state, swing, "remedy-rejected", outcome.response.note)


def _evaluate(state: LedgerState, evaluate: Evaluate, budget: LoopBudget, clock: Clock,
              started_at: int) -> LedgerRecord:
    last = state.last
    swing = last.swing + 1 if last is not None else 1
    phase = next_phase(last.result if last is not None else None)
    previous = state.results()
    result = carry_stability(evaluate(swing, phase), previous)
    if previous:
        improved, note = improvement(previous[-1], result)
        streak = 0 if improved else (last.streak or 0) + 1 if last is not None else 1
    else:
        improved, note, streak = None, "the first swing: the baseline", 0
    now = clock()
    stop = stop_test(result, swing=swing, elapsed_ms=now - started_at, streak=streak, budget=budget)
    return LedgerRecord(event="evaluated", swing=swing, phase=phase, result=result, improved=improved,
                        improvement_note=note, streak=streak, stop=stop, at_ms=now)


def convergence_delta(results: list[EvalResult]) -> str:
    """How far the loop got from its first swing to its last: failing and unsteady (case, criterion)
    pairs, and each criterion's pass rate, first -> last (what a budget stop reports)."""
    first, last = results[0], results[-1]

    def pairs(r: EvalResult) -> int:
        return len({(f.case_id, f.criterion_id) for f in r.failing})

    before = {c.criterion_id: c.rate for c in first.criteria}
    rates = []
    for c in last.criteria:
        old = before.get(c.criterion_id)
        if old is None or c.rate is None:
            continue
        rates.append(f"{c.criterion_id} {old:.3f} -> {c.rate:.3f} ({c.rate - old:+.3f})")
    text = (f"convergence delta over {len(results)} swing(s): failing (case, criterion) pairs {pairs(first)} -> "
            f"{pairs(last)}, unsteady pairs {len(first.unstable)} -> {len(last.unstable)}")
    return text + ("; pass rates " + ", ".join(rates) if rates else "")


def stop_detail(reason: str, results: list[EvalResult]) -> str | None:
    """What a stop record says beside its reason: the evidence gaps, or the convergence delta of a budget stop."""
    if not results:
        return None
    if reason == "incomplete-evidence":
        return ("not green, gating criteria not decided everywhere: " + "; ".join(results[-1].evidence_gaps)
                + " (give each a judge spec, or rerun what errored)")
    if reason in ("max-swings", "max-wallclock", "no-improvement-streak"):
        return convergence_delta(results)
    return None


def _nothing_to_ask(result: EvalResult) -> str:
    if result.failing:
        return f"{len(result.failing)} failing outcome(s), none with a ref to ground a request"
    return (f"no failing outcome, but the gate is {result.verdict} and stable={result.stable}: uncertain, "
            "errored or missing outcomes need a judge or a rerun, not an amendment")


def _stop(ledger: Ledger, state: LedgerState, swing: int, reason: str, detail: str | None) -> LoopOutcome:
    rec = LedgerRecord(event="stopped", swing=swing, stop=reason, reason=detail,
                       phase="done" if reason == "full-green" else "stopped")
    ledger.append(rec)
    state.stopped = rec
    return _outcome(state)


def _outcome(state: LedgerState) -> LoopOutcome:
    assert state.stopped is not None
    return LoopOutcome(state.stopped.stop or "", state.stopped.phase or "stopped", len(state.evaluations), state)
