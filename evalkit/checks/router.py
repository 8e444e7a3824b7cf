"""The router: each criterion of the matrix goes to code, to the judge, or to code then judge.

``checkMethod`` decides the track. Code-only methods need a ``check`` configured; ``hybrid`` runs its
code check first and a code fail is final (the judge is not asked). An unknown method, or a code
criterion without a check, is an error naming the component and the criterion: nothing falls back to
another track silently.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from evalkit.checks.base import Check
from evalkit.checks.catalog import build_check
from evalkit.contracts.matrix import (
    DETERMINISTIC_CHECK_METHODS,
    JUDGE_CHECK_METHODS,
    EvalMatrix,
    MatrixCriterion,
)
from evalkit.contracts.trace import Trace
from evalkit.contracts.verdict import BlockedBy, CriterionVerdict
from evalkit.errors import CheckError, RoutingError

Track = Literal["deterministic", "llm-judge", "hybrid"]
"""Where a criterion is decided."""

OutcomeStatus = Literal["pass", "fail", "uncertain", "error", "missing", "skipped"]
"""A criterion's outcome on one trace: a verdict's result, or why there is none (``missing``: the judge
should have answered and did not; ``skipped``: not run on purpose, e.g. no judge given)."""

METHOD_TRACKS: Mapping[str, Track] = {
    **{m: "deterministic" for m in DETERMINISTIC_CHECK_METHODS},
    **{m: "llm-judge" for m in JUDGE_CHECK_METHODS},
    "hybrid": "hybrid",
}
"""Each matrix ``checkMethod`` and its track."""

_ID_IN_EVIDENCE = re.compile(r"^criterion ([A-Za-z0-9][\w.:-]*)\.")




@dataclass(frozen=True)
class RoutedCriterion:
    """A criterion with its id, component and track, and the code check it runs (if any)."""

    component_id: str
    component_name: str
    criterion_id: str
    criterion: MatrixCriterion
    track: Track
    check: Check | None

    @property
    def severity(self) -> str:
        return self.criterion.severity


Judge = Callable[[RoutedCriterion, Trace], CriterionVerdict | None]
"""Decides one criterion on one trace; None when it has no verdict (counted as ``missing``)."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """What happened to one criterion on one trace."""

    component_id: str
    criterion_id: str
    trace_id: str
    status: OutcomeStatus
    track: Track
    verdict: CriterionVerdict | None = None
    note: str | None = None


def criterion_id_of(component_id: str, index: int, criterion: MatrixCriterion) -> str:
    """A criterion's id: its ``criterionId``; else the id an ``evidenceSource`` opens with
    (``criterion <id>. ...``, as the sample writes it); else ``<componentId>.<n>`` (1-based)."""
    if criterion.criterion_id:
        return criterion.criterion_id
    match = _ID_IN_EVIDENCE.match(criterion.evidence_source or "")
    return match.group(1) if match else f"{component_id}.{index + 1}"


def route(matrix: EvalMatrix) -> list[RoutedCriterion]:
    """Every criterion of the matrix with its track and built check.

    Raises:
        RoutingError: an unknown method, a code or hybrid criterion without a check, a duplicate
            criterion id; CheckError: a check that does not build (names the criterion's place).
    """
    out: list[RoutedCriterion] = []
    seen: dict[str, str] = {}
    for ci, component in enumerate(matrix.components):
        for ki, criterion in enumerate(component.criteria):
            where = f"components[{ci}].criteria[{ki}]"
            cid = criterion_id_of(component.component_id, ki, criterion)
            named = f"component {component.component_id} ({component.component_name}), criterion {cid}"
            if cid in seen:
                raise RoutingError(f"{named}: criterion id already used by component {seen[cid]}", path=where)
            seen[cid] = component.component_id
            track = METHOD_TRACKS.get(criterion.check_method)
            if track is None:
                raise RoutingError(f"{named}: unknown checkMethod {criterion.check_method!r} "
                                   f"(one of: {', '.join(METHOD_TRACKS)})", path=f"{where}.checkMethod")
            check = None
            if track in ("deterministic", "hybrid"):
                if criterion.check is None:
                    raise RoutingError(f"{named}: checkMethod {criterion.check_method} needs a code check; "
                                       "add check: {primitive, params}", path=f"{where}.check")
                try:
                    check = build_check(cid, criterion.check.primitive, criterion.check.params,
                                        where=f"{where}.check")
                except CheckError as exc:
                    raise CheckError(f"{named}: {exc.args[0]}", path=exc.path) from None
            out.append(RoutedCriterion(component.component_id, component.component_name, cid, criterion,
                                       track, check))
    return out


def _from_verdict(rc: RoutedCriterion, trace: Trace, verdict: CriterionVerdict | None,
                  track: Track) -> Outcome:
    if verdict is None:
        return Outcome(rc.component_id, rc.criterion_id, trace.id, "missing", track,
                       note="the judge gave no verdict")
    if verdict.criterion_id != rc.criterion_id or verdict.trace_id != trace.id:
        return Outcome(rc.component_id, rc.criterion_id, trace.id, "error", track, note=(
            f"the judge answered for criterion {verdict.criterion_id!r} on trace {verdict.trace_id!r}"))
    return Outcome(rc.component_id, rc.criterion_id, trace.id, verdict.result, track, verdict)


def decide(rc: RoutedCriterion, trace: Trace, judge: Judge | None) -> Outcome:
    """One criterion on one trace, on its track. Exceptions of a check or the judge become ``error``
    outcomes that carry the message (the run goes on; the scorecard counts them)."""
    if rc.check is not None:
        try:
            code = rc.check.decide(trace)
        except Exception as exc:  # noqa: BLE001 - a broken check on one trace is counted, not fatal
            return Outcome(rc.component_id, rc.criterion_id, trace.id, "error", rc.track,
                           note=f"{rc.check.primitive} raised {type(exc).__name__}: {exc}")
        if rc.track == "deterministic" or code.result == "fail":
            return Outcome(rc.component_id, rc.criterion_id, trace.id, code.result, rc.track, code)
    if judge is None:
        return Outcome(rc.component_id, rc.criterion_id, trace.id, "skipped", rc.track, note="no judge given")
    try:
        verdict = judge(rc, trace)
    except Exception as exc:  # noqa: BLE001 - a failed judge call on one trace is counted, not fatal
        return Outcome(rc.component_id, rc.criterion_id, trace.id, "error", rc.track,
                       note=f"judge raised {type(exc).__name__}: {exc}")
    return _from_verdict(rc, trace, verdict, rc.track)


def evaluate(matrix: EvalMatrix | Sequence[RoutedCriterion], traces: Iterable[Trace], judge: Judge | None = None,
             *, tracks: Iterable[Track] | None = None) -> Iterator[Outcome]:
    """Every criterion on every trace, trace by trace (streams: memory stays flat over many traces).

    Args:
        matrix: the eval matrix, or criteria already routed with :func:`route`.
        traces: the traces.
        judge: decides judge and hybrid criteria; None skips them (each skip is counted and says why).
        tracks: only these tracks (e.g. ``["deterministic"]``); criteria on others are not run at all.
    """
    routed = route(matrix) if isinstance(matrix, EvalMatrix) else list(matrix)
    if tracks is not None:
        keep = set(tracks)
        routed = [rc for rc in routed if rc.track in keep]
    for trace in traces:
        for rc in routed:
            yield decide(rc, trace, judge)


def judge_from_verdicts(verdicts: Iterable[CriterionVerdict]) -> Judge:
    """A judge that answers from verdicts already written (a judge run's output file); a pair it has
    no verdict for gets None (counted as ``missing``)."""
    table = {(v.criterion_id, v.trace_id): v for v in verdicts}

    def judge(rc: RoutedCriterion, trace: Trace) -> CriterionVerdict | None:
        return table.get((rc.criterion_id, trace.id))

    return judge


def uncertain(rc: RoutedCriterion, trace: Trace, why: str) -> CriterionVerdict:
    """An abstaining verdict for a judge wrapper to return when it could not decide."""
    return CriterionVerdict(criterion_id=rc.criterion_id, trace_id=trace.id, result="uncertain", confidence=None,
                            critique=why, blocked_by=BlockedBy(kind="scope", text=why))
