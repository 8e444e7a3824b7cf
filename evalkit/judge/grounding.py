"""Grounded adjudication: refs re-resolve against the trace, terms are bound before judging, and
verification after judging can only downgrade a verdict to ``uncertain``, never flip it.

A ref ``{obs, path, value}`` names a place and the exact text cited there. ``obs`` is the trace id (the
path is read from the trace root) or an observation id or name (read from that observation). The path
has dot segments and ``[n]`` list indexes; a string holding JSON is read into when the path goes on. The
ref resolves when the cited value occurs verbatim in the value at the path (serialized): whitespace
collapsed on both sides, case kept, no word cut at either end (the seed's "whitespace-normalized EXACT
value match"; :func:`evalkit.trace_paths.contains_exact`). Terms still bind case-insensitively: a term is
a spelling to look for, not a citation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import ValidationError

from evalkit.contracts.judge import JudgeSpec, Term
from evalkit.contracts.trace import Trace
from evalkit.contracts.verdict import BlockedBy, CriterionVerdict, Ref
from evalkit.judge.render import trace_view
from evalkit.trace_paths import (
    MISSING,
    contains,
    contains_exact,
    normalize,
    normalize_exact,
    parse_path,
    step_into,
    texts_of,
)


class _AboutTrace(Protocol):
    """What the verify hook reads of a prompt (a :class:`~evalkit.judge.JudgePrompt`): its trace. Typed by
    shape, so that grounding, which the prompt module uses, does not import it back."""

    @property
    def trace_id(self) -> str: ...


VERIFY_MARK = "[verify downgrade]"
"""Starts the note verification adds to a downgraded verdict's critique."""


@dataclass(frozen=True)
class RefResolution:
    """Whether a ref resolves and, when it does not, why not."""

    ref: Ref
    resolved: bool
    reason: str | None = None

    def __bool__(self) -> bool:
        return self.resolved


def _roots(trace: Trace, obs: str) -> tuple[list[Any], str]:
    """The values a ref's ``obs`` names, and how it was matched."""
    if obs == trace.id:
        return [trace.to_json_obj()], "trace"
    on_disk = trace.to_json_obj()["observations"]
    by_id = [raw for o, raw in zip(trace.observations, on_disk, strict=True) if o.id == obs]
    if by_id:
        return by_id, "observation id"
    return [raw for o, raw in zip(trace.observations, on_disk, strict=True) if o.name == obs], "observation name"


def resolve_ref(trace: Trace, ref: Ref) -> RefResolution:
    """Re-resolve a ref against a trace.

    Args:
        trace: the trace the verdict is about.
        ref: ``obs`` (trace id, observation id or observation name), ``path``, cited ``value``.

    Returns:
        A resolution that is true when the cited value is found at the path; otherwise its ``reason``
        says which step failed (unknown obs, path not present, value not there, empty value).
    """
    if not normalize(ref.value):
        return RefResolution(ref, False, "the cited value is empty")
    try:
        steps = parse_path(ref.path)
    except ValueError as exc:
        return RefResolution(ref, False, str(exc))
    roots, matched = _roots(trace, ref.obs)
    if not roots:
        return RefResolution(ref, False, f"no trace or observation {ref.obs!r} in trace {trace.id}")
    found_path = False
    for root in roots:
        value = root
        for step in steps:
            value = step_into(value, step)
            if value is MISSING:
                break
        if value is MISSING:
            continue
        found_path = True
        if contains_exact(value, ref.value):
            return RefResolution(ref, True)
    where = f"{ref.obs} ({matched})"
    if not found_path:
        return RefResolution(ref, False, f"path {ref.path!r} is not present in {where}")
    return RefResolution(ref, False, f"value {ref.value!r} is not at {ref.path!r} in {where}")


@dataclass(frozen=True)
class TermBinding:
    """A spec term and where the trace binds it (a ref that resolves), or None when it is unbound."""

    term: Term
    ref: Ref | None

    @property
    def bound(self) -> bool:
        return self.ref is not None


def bind_terms(spec: JudgeSpec, trace: Trace) -> list[TermBinding]:
    """Bind each of the spec's terms in what the judge is shown of the trace, before any judging.

    A term is bound at the first shown field (in view order) whose value contains one of its spellings;
    with ``obs``, only the observations of that id or name count.
    """
    parts = trace_view(trace, spec.input)
    bindings = []
    for term in spec.terms:
        ref = None
        for part in parts:
            if term.obs is not None and term.obs not in (part.obs, part.name):
                continue
            for field, value in part.fields:
                found = next((f for f in (_as_written(value, s) for s in term.spellings()) if f), None)
                if found is not None:
                    ref = Ref(obs=part.obs, path=field, value=found)
                    break
            if ref is not None:
                break
        bindings.append(TermBinding(term, ref))
    return bindings


def _as_written(value: Any, spelling: str) -> str | None:
    """The text a spelling matches in ``value`` (case-insensitively, whitespace collapsed), as the field
    writes it: what a binding's ref cites, so it re-resolves exactly. None when it is not there."""
    if not contains(value, spelling):
        return None
    needle = normalize(spelling)
    for text in texts_of(value):
        written = normalize_exact(text)
        at = written.lower().find(needle)
        if at >= 0 and len(written.lower()) == len(written):  # lower() kept the length: the slice lines up
            return written[at:at + len(needle)]
    return spelling


def unbound_verdict(spec: JudgeSpec, trace: Trace, bindings: list[TermBinding]) -> CriterionVerdict | None:
    """The abstain verdict when a term is unbound (no judge call is made), else None."""
    unbound = [b.term.text for b in bindings if not b.bound]
    if not unbound:
        return None
    names = ", ".join(repr(t) for t in unbound)
    return CriterionVerdict(
        criterion_id=spec.id, trace_id=trace.id, result="uncertain", confidence=0.0,
        critique=f"Not judged: the criterion presupposes {names}, which this trace never establishes "
                 f"in what the judge is shown. An unbound term is not a fault of the trace.",
        refs=[b.ref for b in bindings if b.ref is not None],
        blocked_by=BlockedBy(kind="factual-intent", text=f"unbound term: {names}"),
    )


def verify_verdict(trace: Trace, verdict: CriterionVerdict) -> CriterionVerdict:
    """Re-resolve a verdict's refs after judging; downgrade-only.

    ``uncertain`` is returned unchanged. A ``pass`` or ``fail`` with no refs, or with any ref that does
    not resolve, becomes ``uncertain`` (confidence 0, ``blockedBy`` factual-intent) with a
    ``[verify downgrade]`` note in the critique and the reason in ``verifyReason``; everything else is
    kept. Either way the verdict records ``verifiedBy: refs``. Pass never becomes fail nor fail pass.
    """
    if verdict.result == "uncertain":
        return verdict
    refs = verdict.refs or []
    if not refs:
        why = "no ref grounds it (an observed verdict needs at least one ref that resolves)"
    else:
        dead = [(i, r) for i, r in enumerate(resolve_ref(trace, ref) for ref in refs) if not r]
        if not dead:
            return verdict.model_copy(update={"verified_by": "refs"})
        why = "; ".join(f"refs[{i}] does not resolve: {r.reason}" for i, r in dead)
    return downgrade(verdict, BlockedBy(kind="factual-intent", text=why), by="refs", reason=why)


def downgrade(verdict: CriterionVerdict, blocked_by: BlockedBy, *, by: str, reason: str,
              independent: bool | None = None) -> CriterionVerdict:
    """``verdict`` turned ``uncertain`` by a verification (the only change a verifier may make): confidence 0,
    ``blockedBy`` saying what the verdict lacks, a ``[verify downgrade]`` note in the critique, and who
    verified it and why. Never a flip, never a fix."""
    note = f"{VERIFY_MARK} was {verdict.result}: {reason}."
    fields = verdict.model_dump(exclude_unset=True, by_alias=False)  # field names, as the update below
    fields.update(result="uncertain", confidence=0.0,
                  critique=f"{verdict.critique}\n{note}" if verdict.critique else note,
                  blocked_by=blocked_by, verified_by=by, verify_reason=reason)
    if independent is not None:
        fields["independent_verify"] = independent
    return CriterionVerdict(**fields)


def verifier(traces_by_id: Mapping[str, Trace]) -> Callable[[_AboutTrace, CriterionVerdict], CriterionVerdict]:
    """The runner's ``verify`` hook: :func:`verify_verdict` against the prompt's trace."""
    def verify(prompt: _AboutTrace, verdict: CriterionVerdict) -> CriterionVerdict:
        return verify_verdict(traces_by_id[prompt.trace_id], verdict)
    return verify


@dataclass(frozen=True)
class GroundingProblem:
    """One grounding defect in a list of verdicts, located by record index and field."""

    index: int
    criterion_id: str | None
    trace_id: str | None
    field: str
    message: str

    def render(self) -> str:
        return f"verdicts[{self.index}] ({self.criterion_id} on {self.trace_id}): {self.field}: {self.message}"


def _as_record(verdict: CriterionVerdict | Mapping[str, Any]) -> dict[str, Any]:
    return verdict.to_json_obj() if isinstance(verdict, CriterionVerdict) else dict(verdict)


def _kind(value: Any) -> str:
    """A value as a message shows it: short, whatever its size (a 10 MB id is not echoed whole)."""
    if value is None:
        return "null"
    if isinstance(value, str):
        return repr(value) if len(value) <= 60 else f"{value[:60]!r}... ({len(value)} characters)"
    if isinstance(value, bool | int | float):
        return repr(value)
    return f"a JSON {'array' if isinstance(value, list) else 'object' if isinstance(value, dict) else 'value'}"


def _shown(value: Any) -> Any:
    """An id as a problem names it: itself when it is a short string, else :func:`_kind`."""
    return value if isinstance(value, str) and len(value) <= 60 else _kind(value)


def lint_verdicts(verdicts: Iterable[CriterionVerdict | Mapping[str, Any]],
                  traces: Mapping[str, Trace] | Iterable[Trace]) -> list[GroundingProblem]:
    """Grounding defects: an abstain with no ``blockedBy``, a decided verdict with no ref, a dead ref.

    Args:
        verdicts: verdict models, or raw records (camelCase, as on disk) from tools that skip validation.
        traces: the traces, by id or as a list.

    Returns:
        Every problem found, in record order; empty when the verdicts are grounded.
    """
    by_id = dict(traces) if isinstance(traces, Mapping) else {t.id: t for t in traces}
    problems: list[GroundingProblem] = []
    for index, verdict in enumerate(verdicts):
        if not isinstance(verdict, CriterionVerdict | Mapping):
            problems.append(GroundingProblem(index, "?", "?", "(record)", f"not a verdict but {_kind(verdict)}: "
                                             "each record must be an object with criterionId, traceId and result"))
            continue
        record = _as_record(verdict)
        criterion, trace_id, result = record.get("criterionId"), record.get("traceId"), record.get("result")

        shown = _shown(criterion), _shown(trace_id)

        def problem(field: str, message: str, *, _i: int = index, _c: Any = shown[0], _t: Any = shown[1]) -> None:
            problems.append(GroundingProblem(_i, _c, _t, field, message))

        for name, value in (("criterionId", criterion), ("traceId", trace_id)):
            if not isinstance(value, str) or not value:
                problem(name, f"must be a non-empty string, not {_kind(value)}")
        if result not in ("pass", "fail", "uncertain"):
            problem("result", f"must be pass, fail or uncertain, not {_kind(result)}")
        if not isinstance(record.get("refs", []), list | type(None)):
            problem("refs", f"must be a list of refs, not {_kind(record.get('refs'))}")
            continue

        if result == "uncertain" and not record.get("blockedBy"):
            problem("blockedBy", "an uncertain verdict must say what blocked it (an unrouted abstain)")
        raw_refs = record.get("refs") or []
        if result in ("pass", "fail") and not raw_refs:
            problem("refs", f"a {result} verdict has no ref; an observed verdict needs at least one")
        trace = by_id.get(trace_id) if isinstance(trace_id, str) else None
        if trace is None:
            if raw_refs:
                problem("traceId", f"trace {trace_id!r} is not among the traces; its refs cannot be checked")
            continue
        for j, raw in enumerate(raw_refs):
            try:
                ref = raw if isinstance(raw, Ref) else Ref.model_validate(raw)
            except ValidationError:
                problem(f"refs[{j}]", "not a ref: needs string obs, path and value")
                continue
            resolution = resolve_ref(trace, ref)
            if not resolution:
                problem(f"refs[{j}]", f"does not resolve: {resolution.reason}")
    return problems
