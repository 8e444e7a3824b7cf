"""The expected UI slots against an HTML page: a value the run computed for a slot the page should render,
but absent from it, is a missing-data leak (the seed's expected-flow ``expectedUiSlots``: "a value computed
but absent from the HTML is a missing-data leak").

For each trace and each expected slot, the value is the last one the trace produced under that name: an
observation output (or the trace output) that is an object with the slot as a key. The page is read as a
person sees it: its text, HTML entities decoded, scripts and styles left out, whitespace collapsed; a value
is shown when its text (whitespace collapsed, case kept) occurs in the page's text.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

from evalkit.contracts.flow import ExpectedFlow
from evalkit.contracts.trace import Trace
from evalkit.io.canonical import compact_sorted_json
from evalkit.trace_paths import normalize_exact

SHOWN_CHARS = 80
"""How much of a missing value a finding quotes."""


class _PageText(HTMLParser):
    """The text of a page as displayed: data outside ``script`` and ``style``, entities decoded."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag in ("script", "style", "template"):
            self._hidden += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "template") and self._hidden:
            self._hidden -= 1

    def handle_data(self, data: str) -> None:
        if not self._hidden:
            self.parts.append(data)


def page_text(html: str) -> str:
    """What a reader of ``html`` sees, as one whitespace-collapsed string."""
    parser = _PageText()
    parser.feed(html)
    parser.close()
    return normalize_exact(" ".join(parser.parts))


@dataclass(frozen=True)
class MissingSlot:
    """A value a trace computed for an expected UI slot that the page does not show."""

    trace_id: str
    slot: str
    obs: str
    """Where the value was produced: the observation id, or the trace id for the trace's own output."""
    value: str


@dataclass(frozen=True)
class UiSlotCheck:
    """Every expected slot's values looked for in the page, and the ones it lacks."""

    slots: tuple[str, ...]
    looked_for: int
    """(trace, slot) values the traces computed and the page was searched for."""
    missing: list[MissingSlot] = field(default_factory=list)
    never_computed: list[str] = field(default_factory=list)
    """Expected slots no trace produced: nothing to look for (said, not counted as shown)."""

    @property
    def ok(self) -> bool:
        return not self.missing

    def lines(self) -> list[str]:
        """The check as lines for a person: counts, each missing value, each slot never computed."""
        out = [f"ui slots {', '.join(self.slots) or '(none expected)'}: {self.looked_for - len(self.missing)} of "
               f"{self.looked_for} computed value(s) shown on the page"]
        out += [f"missing: {m.trace_id} {m.slot} (from {m.obs}): {m.value[:SHOWN_CHARS]!r}" for m in self.missing]
        out += [f"never computed: slot {s!r} is produced by no trace (nothing to look for)"
                for s in self.never_computed]
        return out


def _text(value: Any) -> str:
    return value if isinstance(value, str) else compact_sorted_json(value)


def slot_values(trace: Trace, slot: str) -> tuple[str, str] | None:
    """``(producer, value text)`` of the last value ``trace`` produced under ``slot``, or None."""
    found: tuple[str, str] | None = None
    for obs in trace.observations:
        if isinstance(obs.output, dict) and obs.output.get(slot) is not None:
            found = (obs.id, _text(obs.output[slot]))
    if isinstance(trace.output, dict) and trace.output.get(slot) is not None:
        found = (trace.id, _text(trace.output[slot]))
    return found


def check_ui_slots(expected: ExpectedFlow, traces: Iterable[Trace], html: str) -> UiSlotCheck:
    """Look for every expected UI slot's computed values in an HTML page.

    Args:
        expected: the expected flow; its ``expectedUiSlots`` name what the page should render.
        traces: the traces whose computed values the page should show.
        html: the page.
    """
    text = page_text(html)
    slots = tuple(expected.expected_ui_slots)
    looked, missing, computed = 0, [], set()
    for trace in traces:
        for slot in slots:
            found = slot_values(trace, slot)
            if found is None:
                continue
            computed.add(slot)
            obs, value = found
            wanted = normalize_exact(value)
            if not wanted:
                continue
            looked += 1
            if wanted not in text:
                missing.append(MissingSlot(trace.id, slot, obs, wanted))
    return UiSlotCheck(slots, looked, missing, [s for s in slots if s not in computed])
