"""What the interview proposes: dimensions (the suite's, and trace metadata fields that look like one) and seed
tuples (those the traces realise most often, each with a real message as its query).

A metadata field is proposed as a dimension when it holds a plain value (text, a number, true/false) on at
least half of the traces and takes between 2 and :data:`MAX_PROPOSED_VALUES` values: a handful of discrete
values is what a dimension is; an id or a free-text field is not (a field whose every value occurs once is an
id). Values are listed most frequent first.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from evalkit.contracts.dataset import Dataset
from evalkit.contracts.trace import Trace
from evalkit.suite.derive import input_prompt

MAX_PROPOSED_VALUES = 12
"""Distinct values a metadata field may take and still be proposed as a dimension."""
MIN_SHARE = 0.5
"""Share of traces a metadata field must be set on to be proposed."""


@dataclass(frozen=True)
class ProposedDimension:
    """A dimension the interview proposes, where it comes from, and how often each value was seen."""

    name: str
    values: list[str]
    source: str
    """``suite`` (the suite has it) or ``metadata`` (seen in the traces)."""
    description: str | None = None
    counts: dict[str, int] = field(default_factory=dict)
    keep_by_default: bool = True


@dataclass(frozen=True)
class ProposedSeed:
    """A tuple the traces realise, how many traces do, and the first one's message."""

    tuple: dict[str, str]
    traces: int
    example_trace: str | None = None
    example_query: str | None = None


def _value_text(value: object) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float) and str(value).strip():
        return str(value)
    return None


@dataclass
class TraceSummary:
    """What the interview reads from the traces once: per metadata field, its plain values; and per trace, its
    metadata values and its message."""

    count: int = 0
    values: dict[str, Counter] = field(default_factory=dict)
    rows: list[tuple[str, dict[str, str], str | None]] = field(default_factory=list)


def summarise_traces(traces: Iterable[Trace]) -> TraceSummary:
    """One pass over the traces (streamed): metadata value counts and each trace's plain metadata and message."""
    summary = TraceSummary()
    for trace in traces:
        summary.count += 1
        plain: dict[str, str] = {}
        for key, value in (trace.metadata or {}).items():
            text = _value_text(value)
            if text is not None:
                plain[key] = text
                summary.values.setdefault(key, Counter())[text] += 1
        summary.rows.append((trace.id, plain, input_prompt(trace.input)))
    return summary


def propose_dimensions(dataset: Dataset | None, summary: TraceSummary) -> list[ProposedDimension]:
    """The suite's dimensions (kept by default), then metadata fields that look like dimensions (kept by default
    when the suite has none and their values are text; flags such as true/false are asked, defaulting to no)."""
    out: list[ProposedDimension] = []
    known = set()
    for d in dataset.dimensions if dataset else []:
        counts = summary.values.get(d.name, Counter())
        out.append(ProposedDimension(d.name, list(d.values), "suite", d.description,
                                     {v: counts[v] for v in d.values if counts[v]}))
        known.add(d.name)
    for key in sorted(summary.values):
        counts = summary.values[key]
        seen = sum(counts.values())
        if key in known or seen < MIN_SHARE * summary.count or not 2 <= len(counts) <= MAX_PROPOSED_VALUES \
                or len(counts) == seen:  # every value once: an id, not a dimension
            continue
        values = [v for v, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
        flag = set(values) <= {"true", "false"}
        out.append(ProposedDimension(key, values, "metadata", None, dict(counts),
                                     keep_by_default=not flag and not (dataset and dataset.dimensions)))
    return out


def propose_seeds(dimensions: Sequence[tuple[str, Sequence[str]]], summary: TraceSummary,
                  realised: Iterable[dict[str, str]], limit: int) -> list[ProposedSeed]:
    """The tuples (over ``dimensions``: ``(name, values)``) the traces realise most often, leaving out those a
    suite case realises already; each with the first such trace's message."""
    names = [n for n, _ in dimensions]
    allowed = {n: set(vs) for n, vs in dimensions}
    done = {tuple(t.get(n) for n in names) for t in realised}
    counts: Counter = Counter()
    first: dict[tuple[str, ...], tuple[str, str | None]] = {}
    for trace_id, plain, query in summary.rows:
        key = tuple(plain.get(n) for n in names)
        if None in key or any(v not in allowed[n] for n, v in zip(names, key, strict=True)) or key in done:
            continue
        counts[key] += 1
        if key not in first or (first[key][1] is None and query is not None):
            first[key] = (trace_id, query)
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
    return [ProposedSeed(dict(zip(names, key, strict=True)), n, *first[key]) for key, n in ranked]
