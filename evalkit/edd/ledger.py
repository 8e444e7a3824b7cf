"""The loop's ledger: an append-only JSONL of what each swing did, from which a killed loop resumes.

One record per event, through :mod:`evalkit.io.append_only` (a record lands whole or not at all, even
under ``kill -9``), so the ledger follows that module's one policy: a final record cut off by an
interrupted write (another tool's, or an older evalkit's) is left out of the replay and reported
(:attr:`LedgerState.cut_off`, said by ``edd status`` and ``edd run``), and the next append drops it; the
loop resumes from the records that landed, redoing the step whose record was cut. Any other line that
is not a record (a byte-order mark, a corrupted record, garbage) is an error naming ``LEDGER:LINE``,
and nothing is appended after it.

The events:

- ``started``: the subject, the budget and the clock reading the wall-clock budget counts from;
- ``evaluated``: swing, phase, the whole :class:`EvalResult`, the improvement call and the stop test's answer;
- ``requested``: the change request handed to the remedy command;
- ``responded``: the response, or the remedy's failure and reason;
- ``stopped``: the stop reason, with the phase the loop ended in (``done`` on full green, else ``stopped``).

:func:`replay` reads it back into a :class:`LedgerState`: which swing comes next and at which step.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import Field

from evalkit.contracts.base import CamelContract
from evalkit.contracts.edd import ChangeRequestResponse, EddChangeRequest, LoopBudget
from evalkit.edd.results import EvalResult
from evalkit.errors import InputError
from evalkit.io.append_only import Appended, AppendOnlyStore

LEDGER = "edd-ledger.jsonl"
"""The ledger's file name in the loop's folder."""


class LedgerRecord(CamelContract):
    """One event of the loop (see the module docstring for which fields each event carries)."""

    event: Literal["started", "evaluated", "requested", "responded", "stopped"]
    swing: int = Field(default=0, ge=0)
    subject: str | None = None
    budget: LoopBudget | None = None
    started_at_ms: int | None = None
    at_ms: int | None = None
    """The injected clock's reading when the event was recorded."""
    phase: str | None = None
    result: EvalResult | None = None
    improved: bool | None = None
    improvement_note: str | None = None
    streak: int | None = None
    """Consecutive swings without improvement, this one included."""
    stop: str | None = None
    """The stop test's answer after this evaluation (None: go on)."""
    request: EddChangeRequest | None = None
    response: ChangeRequestResponse | None = None
    failure: str | None = None
    reason: str | None = None
    stderr_tail: str | None = None


@dataclass
class LedgerState:
    """The loop as the ledger leaves it."""

    started: LedgerRecord | None = None
    evaluations: list[LedgerRecord] = field(default_factory=list)
    requests: dict[int, LedgerRecord] = field(default_factory=dict)
    responses: dict[int, LedgerRecord] = field(default_factory=dict)
    stopped: LedgerRecord | None = None
    cut_off: bool = False
    """The ledger ended in a record cut off by an interrupted write, left out of this state."""

    @property
    def last(self) -> LedgerRecord | None:
        return self.evaluations[-1] if self.evaluations else None

    def results(self) -> list[EvalResult]:
        return [r.result for r in self.evaluations if r.result is not None]


class Ledger:
    """The ledger of one loop folder."""

    def __init__(self, folder: str | Path) -> None:
        self.path = Path(folder) / LEDGER
        self.store = AppendOnlyStore(self.path, LedgerRecord)

    def append(self, record: LedgerRecord) -> Appended:
        """Add one record; what it returns names the cut-off final line it dropped, if there was one."""
        return self.store.append([record])

    def replay(self) -> LedgerState:
        """Read the ledger back; events out of order are an error naming the ledger.

        Raises:
            InputError: a record that does not follow from the ones before it.
        """
        read = self.store.read()
        state = LedgerState(cut_off=read.cut_off is not None)
        for i, rec in enumerate(read.records, start=1):
            problem = _apply(state, rec)
            if problem:
                raise InputError(f"record {i} ({rec.event}, swing {rec.swing}): {problem}", file=str(self.path))
        return state


def _apply(state: LedgerState, rec: LedgerRecord) -> str | None:
    if state.stopped is not None:
        return "the loop had already stopped"
    if rec.event == "started":
        if state.started is not None:
            return "a second start"
        state.started = rec
        return None
    if state.started is None:
        return "before the start record"
    if rec.event == "evaluated":
        want = len(state.evaluations) + 1
        if rec.swing != want:
            return f"expected swing {want} to be evaluated next"
        if state.last is not None and state.last.swing not in state.responses:
            return f"swing {state.last.swing} has no response yet"
        state.evaluations.append(rec)
    elif rec.event == "requested":
        if state.last is None or rec.swing != state.last.swing or rec.swing in state.requests:
            return "a request without its swing's evaluation"
        state.requests[rec.swing] = rec
    elif rec.event == "responded":
        if rec.swing not in state.requests or rec.swing in state.responses:
            return "a response without its request"
        state.responses[rec.swing] = rec
    elif rec.event == "stopped":
        state.stopped = rec
    return None
