"""What an import kept, mapped, skipped and why: the :class:`ImportReport` every importer fills in.

Nothing read from a source may disappear without a word. ``iter_traces(..., report=ImportReport())``
counts every trace and observation it yields (and notes traces left with no observations and files
with no records); importers record the rest themselves. An importer whose ``TraceFormat`` has
``takes_context=True`` is called as ``read(values, context)`` and records into ``context.report``:

- ``report.kept(what, kept_as)``: something known kept in a way the user may not expect, e.g.
  ``report.kept("user messages no assistant turn follows", "EVENT")``;
- ``report.mapped(what, to, hint)``: a value the user's mapping translated, e.g.
  ``report.mapped("messages with role 'agent'", "assistant")`` once per message;
- ``report.kept_unknown(what, kept_as, hint)``: something the importer does not know but kept, e.g.
  ``report.kept_unknown("messages with role 'agent'", "EVENT", "map them with --role-map agent=assistant")``;
- ``report.skipped(reason, hint)``: something left out on purpose, with the reason;
- ``report.warn(message)``: anything else the user must hear about.

Each call counts one occurrence (``n=`` for several); equal ``what``/``reason`` texts add up, so the
printed report says ``unknown: messages with role 'agent': 116, kept as EVENT``, not 116 lines. A hint is said
once per entry. ``render()`` gives the lines ``evalkit traces import`` prints, ``to_json_obj()`` the
same as data.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalkit.contracts.trace import Trace
    from evalkit.traces.chat_mapping import ChatMapping

# How many ids of empty traces the printed report names before it says "and N more".
_IDS_SHOWN = 5


@dataclass
class ImportReport:
    """Counts of what an import kept, mapped, kept without knowing it, and skipped (see module doc)."""

    traces: int = 0
    observations: int = 0
    by_type: Counter[str] = field(default_factory=Counter)
    by_format: Counter[str] = field(default_factory=Counter)
    empty_traces: list[str] = field(default_factory=list)
    empty_files: list[str] = field(default_factory=list)
    notes: Counter[tuple[str, str]] = field(default_factory=Counter)
    mappings: Counter[tuple[str, str]] = field(default_factory=Counter)
    unknown: Counter[tuple[str, str]] = field(default_factory=Counter)
    skips: Counter[str] = field(default_factory=Counter)
    warnings: list[str] = field(default_factory=list)
    hints: dict[str, str] = field(default_factory=dict)

    def add_trace(self, trace: Trace, format: str) -> None:
        """Count one trace handed to the user (``iter_traces`` calls this; importers need not)."""
        self.traces += 1
        self.by_format[format] += 1
        self.observations += len(trace.observations)
        self.by_type.update(o.type for o in trace.observations)
        if not trace.observations:
            self.empty_traces.append(trace.id)

    def kept(self, what: str, kept_as: str, n: int = 1) -> None:
        """Count ``n`` known items kept in a way the user might not expect (say why in ``what``)."""
        self.notes[(what, kept_as)] += n

    def mapped(self, what: str, to: str, hint: str | None = None, n: int = 1) -> None:
        """Count ``n`` source items the user's mapping turned into ``to``."""
        self.mappings[(what, to)] += n
        self._hint(f"mapped {what}", hint)

    def kept_unknown(self, what: str, kept_as: str, hint: str | None = None, n: int = 1) -> None:
        """Count ``n`` items the importer does not know but kept as ``kept_as``; say how to map them."""
        self.unknown[(what, kept_as)] += n
        self._hint(f"unknown {what}", hint)

    def skipped(self, reason: str, hint: str | None = None, n: int = 1) -> None:
        """Count ``n`` items left out on purpose, for ``reason``."""
        self.skips[reason] += n
        self._hint(f"skipped {reason}", hint)

    def warn(self, message: str) -> None:
        """Record a warning, said once however often it is raised."""
        if message not in self.warnings:
            self.warnings.append(message)

    def _hint(self, key: str, hint: str | None) -> None:
        if hint and key not in self.hints:
            self.hints[key] = hint

    @property
    def has_losses(self) -> bool:
        """True when something was skipped, kept without being understood, or came out empty."""
        return bool(self.unknown or self.skips or self.empty_traces or self.empty_files)

    def to_json_obj(self) -> dict[str, Any]:
        """The report as plain data (for ``--json`` and notebooks)."""
        return {
            "traces": self.traces,
            "observations": self.observations,
            "byType": dict(sorted(self.by_type.items())),
            "byFormat": dict(sorted(self.by_format.items())),
            "kept": [{"what": w, "keptAs": k, "count": n} for (w, k), n in sorted(self.notes.items())],
            "mapped": [{"what": w, "to": t, "count": n, **self._hint_obj(f"mapped {w}")}
                       for (w, t), n in sorted(self.mappings.items())],
            "keptUnknown": [{"what": w, "keptAs": k, "count": n, **self._hint_obj(f"unknown {w}")}
                            for (w, k), n in sorted(self.unknown.items())],
            "skipped": [{"reason": r, "count": n, **self._hint_obj(f"skipped {r}")}
                        for r, n in sorted(self.skips.items())],
            "emptyTraces": list(self.empty_traces),
            "emptyFiles": list(self.empty_files),
            "warnings": list(self.warnings),
        }

    def _hint_obj(self, key: str) -> dict[str, str]:
        return {"hint": self.hints[key]} if key in self.hints else {}

    def render(self) -> list[str]:
        """The report as lines for a person: kept, mapped, kept unknown, skipped, empty, warnings."""
        types = ", ".join(f"{n} {t}" for t, n in sorted(self.by_type.items()))
        lines = [f"kept: {_n(self.traces, 'trace')}, {_n(self.observations, 'observation')}"
                 + (f" ({types})" if types else "")]
        for (what, kept_as), n in sorted(self.notes.items()):
            lines.append(f"kept as {kept_as}: {what}: {n}")
        for (what, to), n in sorted(self.mappings.items()):
            lines.append(f"mapped: {what} -> {to}: {n}" + self._hint_text(f"mapped {what}"))
        for (what, kept_as), n in sorted(self.unknown.items()):
            lines.append(f"unknown: {what}: {n}, kept as {kept_as}" + self._hint_text(f"unknown {what}"))
        for reason, n in sorted(self.skips.items()):
            lines.append(f"skipped: {reason}: {n}" + self._hint_text(f"skipped {reason}"))
        if self.empty_traces:
            shown = ", ".join(self.empty_traces[:_IDS_SHOWN])
            more = len(self.empty_traces) - _IDS_SHOWN
            lines.append(f"empty: {_n(len(self.empty_traces), 'trace')} with no observations: {shown}"
                         + (f" and {more} more" if more > 0 else ""))
        for file in self.empty_files:
            lines.append(f"warning: {file} has no trace records")
        lines.extend(f"warning: {w}" for w in self.warnings)
        if not self.mappings and not self.unknown and not self.skips:
            lines.append("nothing mapped, nothing unknown, nothing skipped")
        return lines

    def _hint_text(self, key: str) -> str:
        return f" ({self.hints[key]})" if key in self.hints else ""


@dataclass(frozen=True)
class ImportContext:
    """What an importer with ``takes_context=True`` receives besides its values.

    One context serves one file. Attributes:
        report: where to record what was mapped, kept unknown or skipped.
        mapping: the user's description of chat records (messages key, id keys, kept fields, role map);
            chat importers honour it, other importers may ignore it.
    """

    report: ImportReport
    mapping: ChatMapping
    ids_seen: Counter[str] = field(default_factory=Counter)
    """Trace ids given so far in this file: readers called one record at a time (``--skip-invalid``)
    can still number a repeated id (``root``, ``root#2``) as a whole-file read would."""


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
