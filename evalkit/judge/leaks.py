"""A label kept in trace metadata under a name that does not say so, found from the labels themselves.

The name checks of ``evalkit.judge.render`` catch ``label``, ``true_label``, ``groundTruth`` and the
like; a dataset may keep its answer under any other name (the leasing set's
``all_responses_substantiated``). When the human labels of the criterion are at hand, a metadata field
is a proxy for them when its value gives the label on almost every labelled trace: predicted from the
other traces with the same value (leave one out, so a value seen once predicts nothing and free text or
ids never count), on at least :data:`MIN_LABELLED` traces with both verdicts among them. A judge shown
such a field agrees with the labels for the wrong reason, and its TPR and TNR measure the field.

Only the whole metadata is looked at: a field the spec names (``metadata.KEY``) is shown as chosen. Inside
it, every nested field counts as one (``metadata.info.reward_info.reward``), and so does the observations'
metadata when the spec shows it (a field's values over a trace's observations, together).
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
    where: str = "metadata"
    """``metadata`` (the trace's) or ``observation metadata``."""

    def describe(self) -> str:
        """``metadata.KEY (gives the label on 97 of 100 labelled traces)``."""
        return f"{self.where}.{self.field} (gives the label on {self.agreeing} of {self.labelled} labelled traces)"


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


_DEPTH = 4
"""How deep nested metadata is looked into (a proxy sits near the top; deeper lies the payload)."""


def _fields(metadata: Any, where: str = "", depth: int = 0) -> Iterable[tuple[str, Any]]:
    """``(path, value)`` of a metadata object and of each object nested in it, down to :data:`_DEPTH`."""
    if not isinstance(metadata, dict):
        return
    for key, value in metadata.items():
        path = f"{where}.{key}" if where else str(key)
        yield path, value
        if depth + 1 < _DEPTH:
            yield from _fields(value, path, depth + 1)


def label_proxies(spec: JudgeSpec, traces: Iterable[Trace], labels: Iterable[HumanLabel]) -> list[LabelProxy]:
    """The metadata fields that stand for the criterion's human labels (see the module docstring), when
    the spec shows the judge the whole trace metadata or the observations' metadata; none otherwise.
    Sorted by where they are, then field name."""
    trace_metadata, observation_metadata = "metadata" in spec.input.trace, "metadata" in spec.input.fields
    if not trace_metadata and not observation_metadata:
        return []
    verdicts = _verdicts(spec, labels)
    if not verdicts:
        return []
    pairs: dict[tuple[str, str], list[tuple[Any, str]]] = {}
    for trace in traces:
        verdict = verdicts.get(trace.id)
        if verdict is None:
            continue
        if trace_metadata:
            for path, value in _fields(trace.metadata):
                pairs.setdefault(("metadata", path), []).append((_key(value), verdict))
        if observation_metadata:
            per_trace: dict[str, list[Any]] = {}
            for obs in trace.observations:
                for path, value in _fields(obs.metadata):
                    per_trace.setdefault(path, []).append(_key(value))
            for path, values in per_trace.items():
                pairs.setdefault(("observation metadata", path), []).append((tuple(values), verdict))
    found = []
    for (where, field), seen in sorted(pairs.items()):
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
            found.append(LabelProxy(field, agreeing, len(seen), where))
    return found
