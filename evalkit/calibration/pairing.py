"""Joining human labels to judge verdicts on trace id, counting everything that is left out.

``defer`` labels carry no ground truth and ``uncertain`` verdicts carry no decision, so neither enters
a confusion matrix; both are counted so a report can say how many there were.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from evalkit.contracts.labels import HumanLabel
from evalkit.contracts.verdict import CriterionVerdict
from evalkit.errors import InputError

_OUTCOME = {"pass": 1, "fail": 0}


@dataclass(frozen=True, eq=False)
class Pairing:
    """Labelled traces with a decisive verdict, and the counts of what was excluded.

    Attributes:
        trace_ids: the paired traces, sorted.
        human: 0/1 human labels, aligned with ``trace_ids``.
        judge: 0/1 judge verdicts, aligned with ``trace_ids``.
        deferred: labels that were ``defer`` (excluded).
        uncertain_on_pass: human-pass traces the judge called ``uncertain`` (excluded).
        uncertain_on_fail: human-fail traces the judge called ``uncertain`` (excluded).
        unjudged: non-defer labels whose trace has no verdict (excluded).
    """

    trace_ids: tuple[str, ...]
    human: np.ndarray
    judge: np.ndarray
    deferred: int
    uncertain_on_pass: int
    uncertain_on_fail: int
    unjudged: int

    @property
    def uncertain(self) -> int:
        return self.uncertain_on_pass + self.uncertain_on_fail


def _one_criterion(labels: Sequence[HumanLabel], verdicts: Sequence[CriterionVerdict],
                   criterion_id: str | None) -> str | None:
    found = sorted({v.criterion_id for v in verdicts} | {lb.criterion_id for lb in labels
                                                         if lb.criterion_id is not None})
    if criterion_id is None and len(found) > 1:
        raise InputError(f"labels and verdicts cover several criteria ({', '.join(found)}); "
                         "choose one (criterion_id / --criterion)")
    if criterion_id is not None and found and criterion_id not in found:
        raise InputError(f"unknown criterion {criterion_id!r}; the labels and verdicts name: {', '.join(found)}",
                         path="criterion")
    return criterion_id if criterion_id is not None else (found[0] if found else None)


def select_criterion(labels: Sequence[HumanLabel], verdicts: Sequence[CriterionVerdict],
                     criterion_id: str | None = None
                     ) -> tuple[str | None, list[HumanLabel], list[CriterionVerdict]]:
    """The labels and verdicts of one criterion.

    A label without ``criterionId`` applies to whichever criterion is chosen.

    Args:
        labels: human labels.
        verdicts: judge verdicts.
        criterion_id: the criterion; may be None when the inputs hold at most one.

    Returns:
        ``(criterion id, its labels, its verdicts)``.

    Raises:
        InputError: when the inputs hold several criteria and none was chosen.
    """
    chosen = _one_criterion(labels, verdicts, criterion_id)
    return (chosen,
            [lb for lb in labels if lb.criterion_id is None or lb.criterion_id == chosen],
            [v for v in verdicts if v.criterion_id == chosen])


def _by_trace(items: Sequence, what: str) -> dict:
    out: dict = {}
    for item in items:
        if item.trace_id in out:
            raise InputError(f"trace {item.trace_id!r} has more than one {what}; keep one per trace "
                             "(for labels: the adjudicated one)", path="traceId")
        out[item.trace_id] = item
    return out


def pair_labels(labels: Sequence[HumanLabel], verdicts: Sequence[CriterionVerdict],
                *, criterion_id: str | None = None) -> Pairing:
    """Join labels to verdicts on trace id for one criterion.

    Args:
        labels: human labels, at most one per trace.
        verdicts: judge verdicts, at most one per trace; verdicts on unlabelled traces are ignored.
        criterion_id: the criterion; may be None when the inputs hold at most one.

    Raises:
        InputError: several criteria without a choice, or two labels (or verdicts) for one trace.
    """
    _, labels, verdicts = select_criterion(labels, verdicts, criterion_id)
    by_label = _by_trace(labels, "label")
    by_verdict = _by_trace(verdicts, "verdict")
    ids: list[str] = []
    human: list[int] = []
    judge: list[int] = []
    deferred = unjudged = uncertain_pass = uncertain_fail = 0
    for trace_id in sorted(by_label):
        label = by_label[trace_id].label
        if label == "defer":
            deferred += 1
            continue
        verdict = by_verdict.get(trace_id)
        if verdict is None:
            unjudged += 1
        elif verdict.result == "uncertain":
            uncertain_pass += label == "pass"
            uncertain_fail += label == "fail"
        else:
            ids.append(trace_id)
            human.append(_OUTCOME[label])
            judge.append(_OUTCOME[verdict.result])
    return Pairing(tuple(ids), np.array(human, dtype=np.int8), np.array(judge, dtype=np.int8),
                   deferred=deferred, uncertain_on_pass=uncertain_pass, uncertain_on_fail=uncertain_fail,
                   unjudged=unjudged)


def unlabeled_verdicts(verdicts: Sequence[CriterionVerdict],
                       labels: Sequence[HumanLabel]) -> list[CriterionVerdict]:
    """The verdicts on traces that have no non-``defer`` label (in any split)."""
    labelled = {lb.trace_id for lb in labels if lb.label != "defer"}
    return [v for v in verdicts if v.trace_id not in labelled]


def decisive_predictions(verdicts: Sequence[CriterionVerdict]) -> tuple[np.ndarray, int]:
    """0/1 predictions of the ``pass``/``fail`` verdicts, and how many were ``uncertain``."""
    preds = [_OUTCOME[v.result] for v in verdicts if v.result != "uncertain"]
    return np.array(preds, dtype=np.int8), len(verdicts) - len(preds)
