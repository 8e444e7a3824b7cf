"""What keeps a judge run you leave running in check: the budget, the watch on the transport, the tally
of what went wrong.

- :class:`Budget` reserves each call's estimated cost before the call is sent (its prompt's counted tokens
  and the reply's cap, at the model's price) and settles it with the real cost when the reply lands. A
  call starts only when what was spent plus what calls in flight reserved plus its own estimate stays
  within ``--max-cost``: the final spend stays within the budget unless a reply costs more than its
  estimate (a re-asked invalid reply), so within one call's cost of it.
- :class:`TransportWatch` stops a run whose calls keep failing for one transport reason (the server is
  down, it keeps timing out, it answers 5xx): after :data:`FAILURES_IN_A_ROW` such failures in a row, no
  call starts, instead of every item being retried in turn.
- :class:`ErrorTally` counts the error rows by cause and keeps one example of each, for the closing summary.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

FAILURES_IN_A_ROW = 5
"""Transport failures of one kind in a row (no call succeeding between them) that stop a run."""

STOPPING_KINDS = {"connection": "the judge's server cannot be reached", "timeout": "every call times out",
                  "server": "the server keeps failing (HTTP 5xx)"}
"""The transient failure kinds that stop a run when they repeat, and what they mean."""


@dataclass
class Budget:
    """``--max-cost``: money spent and reserved by calls in flight (US dollars)."""

    limit: float
    spent: float = 0.0
    reserved: float = 0.0

    def reserve(self, estimate: float) -> bool:
        """Reserve a call's estimated cost; False (nothing reserved) when it would pass the limit."""
        if self.spent + self.reserved + estimate > self.limit + 1e-12:
            return False
        self.reserved += estimate
        return True

    def settle(self, estimate: float, cost: float | None) -> None:
        """A reserved call landed: its reservation becomes what it really cost (the estimate when unknown)."""
        self.reserved = max(0.0, self.reserved - estimate)
        self.spent += estimate if cost is None else cost


@dataclass
class TransportWatch:
    """Transient failures in a row, by kind; a success resets the count."""

    limit: int = FAILURES_IN_A_ROW
    kind: str | None = None
    in_a_row: int = 0
    example: str = ""
    stopped: str | None = None

    def failed(self, kind: str, message: str) -> None:
        if kind not in STOPPING_KINDS:
            return
        if kind != self.kind:
            self.kind, self.in_a_row = kind, 0
        self.in_a_row += 1
        self.example = message
        if self.in_a_row >= self.limit and self.stopped is None:
            self.stopped = (f"{self.in_a_row} calls in a row failed the same way, {STOPPING_KINDS[kind]} "
                            f"({message})")

    def succeeded(self) -> None:
        self.kind, self.in_a_row = None, 0


CAUSES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("does not fit the context", re.compile(r"does not fit the model's context")),
    ("context overflow", re.compile(r"context (length|window)|maximum context|too many tokens|prompt is too long",
                                    re.I)),
    ("invalid reply after the correction", re.compile(r"^invalid reply after one correction")),
    ("run stopped", re.compile(r"^not judged: the run stopped")),
    ("connection", re.compile(r"connection failed", re.I)),
    ("timeout", re.compile(r"timed out", re.I)),
    ("rate limited", re.compile(r"HTTP 429")),
    ("server error", re.compile(r"HTTP 5\d\d|unreadable response|no choices")),
    ("credentials or model refused", re.compile(r"HTTP 40[134]")),
    ("no reply recorded", re.compile(r"no reply recorded")),
)
"""Error causes, tested in order against an error row's message; the first that matches names it."""


def cause_of(error: str) -> str:
    """The cause an error message names (``other`` when none of :data:`CAUSES` matches)."""
    return next((name for name, pattern in CAUSES if pattern.search(error)), "other")


@dataclass
class ErrorTally:
    """Error rows by cause, each with its first example ``(criterion, trace, message)``."""

    counts: dict[str, int] = field(default_factory=dict)
    examples: dict[str, tuple[str, str, str]] = field(default_factory=dict)

    def add(self, criterion: str, trace: str, error: str) -> None:
        cause = cause_of(error)
        self.counts[cause] = self.counts.get(cause, 0) + 1
        self.examples.setdefault(cause, (criterion, trace, error))

    def lines(self) -> list[str]:
        """One line per cause, most frequent first: count, cause, and its example."""
        out = []
        for cause, n in sorted(self.counts.items(), key=lambda item: (-item[1], item[0])):
            criterion, trace, error = self.examples[cause]
            out.append(f"  {n} {cause}, e.g. {criterion} on {trace}: {error}")
        return out


__all__ = ["CAUSES", "FAILURES_IN_A_ROW", "STOPPING_KINDS", "Budget", "ErrorTally", "TransportWatch", "cause_of"]
