"""Cases distilled from past traces: what a real user asked, tagged with how the agent did on it.

A derived case has the tuple ``{outcome: ...}`` and the trace's input prompt as its query, so a failure seen
in production becomes a test the agent is run on again. Where the outcome came from a review or a judge,
the case keeps why the trace failed as its expectation (the failure modes or failed criteria, and the
critique) and the origin trace id: a derived ``fail`` case is a **regression case**, and an eval run shows
whether the agent still fails it.

Outcomes come from human labels (:func:`outcomes_from_labels`), the review page's annotations
(:func:`findings_from_review`) or judge verdicts (:func:`findings_from_verdicts`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from evalkit.contracts.annotation import Annotation
from evalkit.contracts.dataset import Case, CaseExpectation
from evalkit.contracts.labels import HumanLabel
from evalkit.contracts.trace import Trace
from evalkit.contracts.verdict import CriterionVerdict
from evalkit.suite.merge import new_case

OUTCOME_DIMENSION = "outcome"


def input_prompt(value: Any) -> str | None:
    """The prompt a trace's input carries: the text itself, ``prompt``/``query``/``input``, or the last user message.

    Returns None when the input holds no text prompt.
    """
    if isinstance(value, str):
        return value if value.strip() else None
    if isinstance(value, Mapping):
        for key in ("prompt", "query", "input", "message", "messages"):
            if key in value:
                return input_prompt(value[key])
        return None
    if isinstance(value, list):
        for message in reversed(value):
            if isinstance(message, Mapping) and message.get("role") == "user":
                return input_prompt(message.get("content"))
        texts = [part.get("text") for part in value if isinstance(part, Mapping) and part.get("type") == "text"]
        joined = "\n".join(t for t in texts if isinstance(t, str))
        return joined or None
    return None


@dataclass(frozen=True)
class Finding:
    """How a past trace came out, and, for a failure, why: the failure modes (or failed criteria) and the
    critique that a reviewer or a judge wrote."""

    outcome: str
    failure_modes: tuple[str, ...] = ()
    critique: str | None = None

    def expectation(self) -> CaseExpectation | None:
        """The case's expectation: the failure it must not show again (None for a plain outcome)."""
        if not self.failure_modes and not self.critique:
            return None
        return CaseExpectation(failure_modes=list(self.failure_modes), critique=self.critique)


def outcomes_from_labels(labels: Iterable[HumanLabel]) -> dict[str, str]:
    """Per trace: ``fail`` when any label fails it, else ``pass`` when one passes it; deferrals decide nothing."""
    out: dict[str, str] = {}
    for label in labels:
        if label.label == "fail":
            out[label.trace_id] = "fail"
        elif label.label == "pass":
            out.setdefault(label.trace_id, "pass")
    return out


def _joined(parts: Iterable[str]) -> str | None:
    kept = [p.strip() for p in parts if p and p.strip()]
    return " | ".join(dict.fromkeys(kept)) or None


def findings_from_review(annotations: Iterable[Annotation]) -> dict[str, Finding]:
    """Per trace, from the review page's labels (its export, or the annotation store): ``fail`` when any
    reviewer's latest label fails it, with every failing reviewer's failure modes and notes; else ``pass``
    when one passes it. A reviewer's later label replaces their earlier one; deferrals decide nothing."""
    latest: dict[tuple[str, str], Annotation] = {}
    for a in annotations:
        latest[(a.trace_id, a.annotator)] = a
    by_trace: dict[str, list[Annotation]] = {}
    for (trace_id, _), a in sorted(latest.items()):
        by_trace.setdefault(trace_id, []).append(a)
    out: dict[str, Finding] = {}
    for trace_id, given in by_trace.items():
        failed = [a for a in given if a.label == "fail"]
        if failed:
            modes = tuple(dict.fromkeys(m for a in failed for m in a.modes))
            out[trace_id] = Finding("fail", modes, _joined(a.note or "" for a in failed))
        elif any(a.label == "pass" for a in given):
            out[trace_id] = Finding("pass")
    return out


def findings_from_verdicts(verdicts: Iterable[CriterionVerdict]) -> dict[str, Finding]:
    """Per trace, from judge verdicts: ``fail`` when any criterion failed it, with the failed criteria and
    their critiques (``criterion: critique``); else ``pass`` when one passed it; ``uncertain`` decides
    nothing. Verdicts are taken in criterion order, so the same file gives the same expectation."""
    failed: dict[str, list[CriterionVerdict]] = {}
    passed: set[str] = set()
    for v in sorted(verdicts, key=lambda v: (v.trace_id, v.criterion_id)):
        if v.result == "fail":
            failed.setdefault(v.trace_id, []).append(v)
        elif v.result == "pass":
            passed.add(v.trace_id)
    out = {t: Finding("pass") for t in sorted(passed - set(failed))}
    for trace_id, vs in failed.items():
        out[trace_id] = Finding("fail", tuple(dict.fromkeys(v.criterion_id for v in vs)),
                                _joined(f"{v.criterion_id}: {v.critique}" for v in vs if v.critique))
    return out


@dataclass(frozen=True)
class Derived:
    """The derived cases, and the traces left out with the reason (counted, never silently)."""

    cases: list[Case]
    skipped: dict[str, str] = field(default_factory=dict)
    """trace id -> why no case was derived from it."""


def derive_cases(traces: Iterable[Trace], outcomes: Mapping[str, str | Finding], *,
                 only: Iterable[str] | None = None) -> Derived:
    """One derived case per trace that has an outcome and a text prompt, in trace order.

    Args:
        traces: the past traces.
        outcomes: trace id -> outcome (``pass``/``fail``, or any name the designer uses), or a
            :class:`Finding` whose failure modes and critique become the case's expectation.
        only: when given, keep only traces with one of these outcomes (e.g. ``["fail"]``).
    """
    wanted = None if only is None else set(only)
    cases: list[Case] = []
    skipped: dict[str, str] = {}
    for trace in traces:
        found = outcomes.get(trace.id)
        if found is None:
            skipped[trace.id] = "no outcome (no label or verdict for this trace)"
            continue
        finding = found if isinstance(found, Finding) else Finding(found)
        if wanted is not None and finding.outcome not in wanted:
            skipped[trace.id] = f"outcome {finding.outcome!r} not selected"
            continue
        prompt = input_prompt(trace.input)
        if prompt is None:
            skipped[trace.id] = "its input holds no text prompt"
            continue
        cases.append(new_case({OUTCOME_DIMENSION: finding.outcome}, prompt, "derived", expected=finding.expectation(),
                              origin_trace_id=trace.id, selected_by=f"{OUTCOME_DIMENSION}={finding.outcome}"))
    return Derived(cases, skipped)


def is_regression(case: Case) -> bool:
    """A case derived from a past failure: the agent must not fail it again."""
    return case.source == "derived" and case.tuple.get(OUTCOME_DIMENSION) == "fail"
