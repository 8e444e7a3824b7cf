"""Verdicts and labels paired with the traces they judge: the one list both exporters render.

A verdict judges a whole trace, so its evaluation hangs off the trace's root observation; the
observations its refs cite are kept as links. Every verdict and label must name a trace in the
traces file: one that does not is an error, never an evaluation attached to nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from evalkit.contracts.labels import HumanLabel
from evalkit.contracts.trace import Trace
from evalkit.contracts.verdict import CriterionVerdict
from evalkit.errors import InputError

EvaluationKind = Literal["judge", "human"]
"""Who decided: an LLM judge or code check (a verdict), or a person (a human label)."""

HUMAN_SUFFIX = ".human"
"""Appended to the criterion id to name a human label's evaluation, so a backend shows the person's
label beside the judge's verdict on the same trace instead of one overwriting the other."""

UNNAMED_LABEL = "label"
"""The evaluation name of a human label that names no criterion."""

SCORE_VALUES = {"pass": 1.0, "fail": 0.0}
"""The numeric score of a decision; ``uncertain`` and ``defer`` have none (a label only)."""


@dataclass(frozen=True)
class JudgedTrace:
    """What an exporter needs of a trace: its id, its root observation, its observation ids and a time."""

    id: str
    root_observation_id: str | None
    observation_ids: frozenset[str]
    time: str | None
    """When the evaluated run ended (the root's end, else the latest time recorded): the evaluation is
    stamped with it so an export is the same bytes every time it is run."""


@dataclass(frozen=True)
class Evaluation:
    """One verdict or label, ready to render as an OTel evaluation event or a Langfuse score."""

    kind: EvaluationKind
    name: str
    criterion_id: str | None
    trace: JudgedTrace
    result: str
    explanation: str | None
    cited_observation_ids: tuple[str, ...] = ()
    annotator: str | None = None
    """Who labelled (human labels): two annotators' labels on one trace are two evaluations."""
    record: dict[str, Any] = field(default_factory=dict)
    """The verdict or label as evalkit writes it (camelCase JSON), carried along so evalkit can read
    its own export back without losing refs, confidence or assumptions."""

    @property
    def key(self) -> tuple[str, ...]:
        """What makes this evaluation one of a kind: trace, decider and name (and annotator, if any)."""
        base = (self.trace.id, self.kind, self.name)
        return base if self.annotator is None else (*base, self.annotator)

    @property
    def score(self) -> float | None:
        """1.0 for pass, 0.0 for fail, None for uncertain or defer."""
        return SCORE_VALUES.get(self.result)


def _latest_time(trace: Trace) -> str | None:
    root = trace.observations[0] if trace.observations else None
    if root is not None and root.parent_id is None and root.end_time:
        return root.end_time
    times = [t for o in trace.observations for t in (o.end_time, o.start_time) if t]
    return max(times, key=_sort_key) if times else None


def _sort_key(iso: str) -> datetime:
    dt = datetime.fromisoformat(iso)
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=UTC)  # a time without zone is UTC


def judged_trace(trace: Trace) -> JudgedTrace:
    """The exporter's view of one trace."""
    root = next((o.id for o in trace.observations if o.parent_id is None), None)
    return JudgedTrace(id=trace.id, root_observation_id=root,
                       observation_ids=frozenset(o.id for o in trace.observations),
                       time=_latest_time(trace))


def judged_traces(traces: Iterable[Trace]) -> dict[str, JudgedTrace]:
    """Every trace's exporter view by trace id, read once (observations are not kept)."""
    return {t.id: judged_trace(t) for t in traces}


def _missing(kind: str, file: str, ids: Sequence[str], traces_file: str) -> InputError:
    shown = ", ".join(repr(i) for i in ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
    traces = f"{len(ids)} trace{'' if len(ids) == 1 else 's'}"
    return InputError(f"{kind} name {traces} not in {traces_file}: {shown}; "
                      "export them with the traces file they were made on", file=file)


def evaluations_of(verdicts: Sequence[CriterionVerdict], labels: Sequence[HumanLabel],
                   traces: dict[str, JudgedTrace], *, verdicts_file: str = "verdicts",
                   labels_file: str = "labels", traces_file: str = "traces") -> list[Evaluation]:
    """Pair each verdict and label with its trace, verdicts first, each in file order.

    Args:
        verdicts: judge verdicts.
        labels: human labels (a ``defer`` label is exported too, as a label without a score).
        traces: the judged traces by id (:func:`judged_traces`).
        verdicts_file: named in errors.
        labels_file: named in errors.
        traces_file: named in errors.

    Raises:
        InputError: a verdict or label whose trace is not among ``traces``.
    """
    for kind, file, records in (("verdicts", verdicts_file, verdicts), ("labels", labels_file, labels)):
        missing = list(dict.fromkeys(r.trace_id for r in records if r.trace_id not in traces))
        if missing:
            raise _missing(kind, file, missing, traces_file)
    out = []
    for v in verdicts:
        trace = traces[v.trace_id]
        # The root is the evaluation's parent already; a link to it would say nothing more.
        cited = tuple(dict.fromkeys(r.obs for r in v.refs or ()
                                    if r.obs in trace.observation_ids and r.obs != trace.root_observation_id))
        explanation = v.critique
        if v.blocked_by is not None and not explanation:
            explanation = f"uncertain: {v.blocked_by.text}"
        out.append(Evaluation("judge", v.criterion_id, v.criterion_id, trace, v.result, explanation, cited,
                              record=v.to_json_obj()))
    for lb in labels:
        name = (lb.criterion_id or UNNAMED_LABEL) + HUMAN_SUFFIX
        out.append(Evaluation("human", name, lb.criterion_id, traces[lb.trace_id], lb.label, lb.notes,
                              annotator=lb.annotator, record=lb.to_json_obj()))
    _refuse_repeats(out, verdicts_file, labels_file)
    return out


def _refuse_repeats(evaluations: Sequence[Evaluation], verdicts_file: str, labels_file: str) -> None:
    """Two verdicts of one criterion on one trace would be one span and one score id, the second
    silently replacing the first in the backend: an error instead, naming both records."""
    first: dict[tuple[str, ...], int] = {}
    n_verdicts = sum(ev.kind == "judge" for ev in evaluations)
    for i, ev in enumerate(evaluations):
        j = first.setdefault(ev.key, i)
        if j != i:
            file, a, b = (verdicts_file, j + 1, i + 1) if ev.kind == "judge" else (
                labels_file, j + 1 - n_verdicts, i + 1 - n_verdicts)
            who = f" by {ev.annotator!r}" if ev.annotator else ""
            raise InputError(f"records {a} and {b} are both {ev.kind} results of {ev.name!r}{who} on trace "
                             f"{ev.trace.id!r}; keep one", file=file)


def check_time(value: str | None) -> str | None:
    """``--time`` as given, once it is known to be an ISO 8601 time.

    Raises:
        InputError: not an ISO 8601 time.
    """
    if value is not None:
        try:
            datetime.fromisoformat(value)
        except ValueError:
            raise InputError(f"{value!r} is not an ISO 8601 time (e.g. 2026-03-01T00:00:00Z)",
                             path="--time") from None
    return value
