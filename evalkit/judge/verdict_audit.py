"""The bias audit of a pass/fail judge on its own verdicts: does it favour long answers, or its own family?

:mod:`evalkit.judge.audit` holds the tests; this module feeds them from what a calibration already
has: the traces the judge read and the verdicts it wrote. The answer a verdict is about is the
trace's ``output`` when it has one, else the output of its last generation (what the agent said
last); its length is counted in characters of that text (a structured output as compact JSON).
The agent's model is the one its generations name most often; the judge's comes from the judge run
(or the subject's pin).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from evalkit.contracts.trace import Trace
from evalkit.contracts.verdict import CriterionVerdict
from evalkit.io.canonical import compact_sorted_json
from evalkit.judge.audit import DEFAULT_PERMUTATIONS, VerbosityAudit, same_family_warning, verbosity_audit

SIGNIFICANT = 0.05
"""A verbosity p-value below this is reported as a length bias worth a look."""


def _text(value: object) -> str:
    return value if isinstance(value, str) else compact_sorted_json(value)


def answer_text(trace: Trace) -> str | None:
    """What the agent answered in a trace: its ``output``, else its last generation's output, else None."""
    if trace.output is not None:
        return _text(trace.output)
    for obs in reversed(trace.observations):
        if obs.type == "GENERATION" and obs.output is not None:
            return _text(obs.output)
    return None


def answer_lengths(traces: Iterable[Trace]) -> dict[str, int]:
    """Characters of each trace's answer (:func:`answer_text`), by trace id; traces without one are left out."""
    out = {}
    for trace in traces:
        text = answer_text(trace)
        if text is not None:
            out[trace.id] = len(text)
    return out


def agent_model(traces: Iterable[Trace]) -> str | None:
    """The model the agent's generations name most often (ties: the first in sorted order), or None."""
    counts = Counter(obs.model for t in traces for obs in t.observations if obs.type == "GENERATION" and obs.model)
    if not counts:
        return None
    top = max(counts.values())
    return min(m for m, n in counts.items() if n == top)


@dataclass(frozen=True)
class CriterionVerbosity:
    """One criterion's pass/fail verdicts against the length of the answers they judged."""

    criterion_id: str
    audit: VerbosityAudit
    mean_length_pass: float | None
    mean_length_fail: float | None
    without_answer: int
    """Decided verdicts on traces with no answer to measure, left out."""

    @property
    def biased(self) -> bool:
        """The association is significant at :data:`SIGNIFICANT`."""
        return self.audit.p_value is not None and self.audit.p_value < SIGNIFICANT

    def row(self) -> dict[str, object]:
        """A table row: counts, mean lengths, the correlation, P(longer passes) and the p-value."""
        a = self.audit
        return {"criterion": self.criterion_id, "verdicts": a.n, "passes": a.passes,
                "mean chars (pass)": self.mean_length_pass, "mean chars (fail)": self.mean_length_fail,
                "point-biserial r": a.point_biserial, "P(longer passes)": a.longer_passes, "p": a.p_value,
                "length bias": "yes" if self.biased else "no" if a.p_value is not None else "n/a"}


def _mean(values: Sequence[int]) -> float | None:
    return sum(values) / len(values) if values else None


def verdict_verbosity(verdicts: Iterable[CriterionVerdict], lengths: dict[str, int], *,
                      permutations: int = DEFAULT_PERMUTATIONS, seed: int = 0) -> list[CriterionVerbosity]:
    """Per criterion, the verbosity audit of its pass/fail verdicts (uncertain ones left out), sorted by id."""
    by_criterion: dict[str, list[tuple[int, bool]]] = defaultdict(list)
    missing: Counter[str] = Counter()
    for v in verdicts:
        if v.result not in ("pass", "fail"):
            continue
        if v.trace_id not in lengths:
            missing[v.criterion_id] += 1
            continue
        by_criterion[v.criterion_id].append((lengths[v.trace_id], v.result == "pass"))
    out = []
    for crit in sorted(set(by_criterion) | set(missing)):
        pairs = by_criterion.get(crit, [])
        audit = verbosity_audit([n for n, _ in pairs], [p for _, p in pairs], permutations=permutations, seed=seed)
        out.append(CriterionVerbosity(crit, audit, _mean([n for n, p in pairs if p]),
                                      _mean([n for n, p in pairs if not p]), missing[crit]))
    return out


def bias_findings(verbosity: Sequence[CriterionVerbosity], *, judge_model: str | None,
                  agent: str | None) -> list[str]:
    """Sentences for a report: each criterion whose verdicts follow length, and the same-family warning."""
    found = []
    for v in verbosity:
        if v.biased:
            side = "longer" if (v.audit.point_biserial or 0) > 0 else "shorter"
            found.append(f"{v.criterion_id}: the judge passes {side} answers more often (r = "
                         f"{v.audit.point_biserial:.2f}, permutation p = {v.audit.p_value:.2g}); read a few "
                         "passing short and failing long answers before trusting its verdicts")
    warning = same_family_warning(judge_model, agent) if judge_model and agent else None
    if warning:
        found.append(warning)
    return found
