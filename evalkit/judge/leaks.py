"""A label kept in trace metadata under a name that does not say so, found from the labels themselves.

The name checks of ``evalkit.judge.render`` catch ``label``, ``true_label``, ``groundTruth`` and the
like; a dataset may keep its answer under any other name (the leasing set's
``all_responses_substantiated``). When the human labels of the criterion are at hand, a metadata field
is a proxy for them when its value gives the label on almost every labelled trace: predicted from the
other traces with the same value (leave one out, so a value seen once predicts nothing and free text or
ids never count), on at least :data:`MIN_LABELLED` traces with both verdicts among them. A judge shown
such a field agrees with the labels for the wrong reason, and its TPR and TNR measure the field.

Only the whole metadata is looked at: a field the spec names (``metadata.KEY``) is shown as chosen.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from evalkit.contracts.judge import JudgeSpec
from evalkit.contracts.labels import HumanLabel
from evalkit.contracts.trace import Trace

__all__ = ["AGREEMENT", "MIN_EACH", "MIN_LABELLED", "LabelProxy", "label_proxies"]

MIN_LABELLED = 10
"""Labelled traces with the field that a proxy needs, at least."""
MIN_EACH = 3
"""Of each verdict (pass and fail) among them, at least: a field cannot stand for a label that never varies."""
AGREEMENT = 0.95
"""Share of those traces whose label the field's value gives, at least."""


@dataclass(frozen=True)
class LabelProxy:
    """A metadata field whose value gives the criterion's human label on ``agreeing`` of ``labelled`` traces."""

    field: str
    agreeing: int
    labelled: int

    def describe(self) -> str:
        """``metadata.KEY (gives the label on 97 of 100 labelled traces)``."""
        return f"metadata.{self.field} (gives the label on {self.agreeing} of {self.labelled} labelled traces)"


def _verdicts(spec: JudgeSpec, labels: Iterable[HumanLabel]) -> dict[str, str]:
    """Trace id -> pass/fail for this criterion; a label for no particular criterion counts unless one
    for this criterion is given."""
    general: dict[str, str] = {}
    own: dict[str, str] = {}
    for label in labels:
        if label.label == "defer":
            continue
        if label.criterion_id == spec.id:
            own[label.trace_id] = label.label
        elif label.criterion_id is None:
            general[label.trace_id] = label.label
    return general | own


def _key(value: Any) -> Any:
    """A metadata value as a key to count by (scalars as they are, others as their text)."""
    if value is None or isinstance(value, str | int | float | bool):
        return (type(value).__name__, value)
    return ("json", repr(value))


def label_proxies(spec: JudgeSpec, traces: Iterable[Trace], labels: Iterable[HumanLabel]) -> list[LabelProxy]:
    """The metadata fields that stand for the criterion's human labels (see the module docstring), when
    the spec shows the judge the whole trace metadata; none otherwise. Sorted by field name."""
    if "metadata" not in spec.input.trace:
        return []
    verdicts = _verdicts(spec, labels)
    if not verdicts:
        return []
    pairs: dict[str, list[tuple[Any, str]]] = {}
    for trace in traces:
        verdict = verdicts.get(trace.id)
        if verdict is None or not isinstance(trace.metadata, dict):
            continue
        for key, value in trace.metadata.items():
            pairs.setdefault(str(key), []).append((_key(value), verdict))
    found = []
    for field, seen in sorted(pairs.items()):
        by_verdict = Counter(verdict for _, verdict in seen)
        if len(seen) < MIN_LABELLED or min(by_verdict["pass"], by_verdict["fail"]) < MIN_EACH:
            continue
        counts = Counter(seen)
        agreeing = 0
        for value, verdict in seen:
            other = "fail" if verdict == "pass" else "pass"
            same, differ = counts[value, verdict] - 1, counts[value, other]  # the other traces with this value
            agreeing += same > differ
        if agreeing >= AGREEMENT * len(seen):
            found.append(LabelProxy(field, agreeing, len(seen)))
    return found
