"""The sample's ground truth, counted from the generated traces, labels and verdicts (never the targets)."""

from __future__ import annotations

from typing import Any

from evalkit.contracts.annotation import Annotation
from evalkit.contracts.labels import HumanLabel
from evalkit.contracts.trace import Trace
from evalkit.contracts.verdict import CriterionVerdict
from evalkit.sample_subject.agent import applicable_failures
from evalkit.sample_subject.annotations import mode_id
from evalkit.sample_subject.catalog import (
    CRITERIA,
    FAILURE_APPLIES_TO,
    FAILURE_MODES,
    FAILURE_RATES,
    JUDGE_MODEL,
    JUDGE_TARGETS,
    JUDGE_UNCERTAIN_RATE,
    REVIEW_MISS_RATE,
    REVIEWERS,
    SPLIT_SHARES,
    SUBJECT,
)
from evalkit.sample_subject.judging import truly_passes

DIGITS = 4
"""Rates are rounded to this many decimals so the JSON and the README table show the same numbers."""


def _rate(num: int, den: int) -> float | None:
    return None if den == 0 else round(num / den, DIGITS)


def _failure_modes(traces: list[Trace]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for mode in FAILURE_MODES:
        applicable = [t for t in traces if mode in applicable_failures(t)]
        injected = [t for t in traces if mode in (t.metadata or {}).get("injected_failures", [])]
        out[mode] = {
            "appliesTo": FAILURE_APPLIES_TO[mode],
            "applicableTraces": len(applicable),
            "injectedTraces": len(injected),
            "targetRate": FAILURE_RATES[mode],
            "realisedRate": _rate(len(injected), len(applicable)),
            "realisedRateAllTraces": _rate(len(injected), len(traces)),
        }
    return out


def _judge(criterion_id: str, traces: list[Trace], verdicts: list[CriterionVerdict]) -> dict[str, Any]:
    truth = {t.id: truly_passes(t, criterion_id) for t in traces}
    mine = [v for v in verdicts if v.criterion_id == criterion_id]
    decided = [v for v in mine if v.result != "uncertain"]
    tp = sum(1 for v in decided if truth[v.trace_id] and v.result == "pass")
    pos = sum(1 for v in decided if truth[v.trace_id])
    tn = sum(1 for v in decided if not truth[v.trace_id] and v.result == "fail")
    neg = len(decided) - pos
    tpr_target, tnr_target = JUDGE_TARGETS[criterion_id]
    return {
        "model": JUDGE_MODEL,
        "verdicts": len(mine),
        "uncertain": len(mine) - len(decided),
        "uncertainRateTarget": JUDGE_UNCERTAIN_RATE,
        "uncertainRateRealised": _rate(len(mine) - len(decided), len(mine)),
        "tprTarget": tpr_target,
        "tnrTarget": tnr_target,
        "tprRealised": _rate(tp, pos),
        "tnrRealised": _rate(tn, neg),
        "observedPassRate": _rate(sum(1 for v in decided if v.result == "pass"), len(decided)),
    }


def _labels(criterion_id: str, labels: list[HumanLabel]) -> dict[str, Any]:
    mine = [lab for lab in labels if lab.criterion_id == criterion_id]
    splits = {split: {value: sum(1 for lab in mine if lab.split == split and lab.label == value)
                      for value in ("pass", "fail", "defer")}
              for split, _ in SPLIT_SHARES}
    return {"total": len(mine), "bySplit": splits}


def _annotations(traces: list[Trace], annotations: list[Annotation]) -> dict[str, Any]:
    """Per reviewer: traces reviewed, and per mode how many reviewed traces had it injected vs annotated."""
    by_id = {t.id: t for t in traces}
    out: dict[str, Any] = {}
    for reviewer in REVIEWERS:
        mine = [a for a in annotations if a.annotator == reviewer]
        modes = {}
        for mode in FAILURE_MODES:
            injected = sum(1 for a in mine if mode in (by_id[a.trace_id].metadata or {})["injected_failures"])
            annotated = sum(1 for a in mine if mode_id(mode) in a.modes)
            modes[mode_id(mode)] = {
                "injectedInReviewed": injected,
                "annotated": annotated,
                "missed": injected - annotated,
                "injectedRate": _rate(injected, len(mine)),
                "annotatedRate": _rate(annotated, len(mine)),
            }
        out[reviewer] = {
            "reviewedTraces": len(mine),
            "fail": sum(1 for a in mine if a.label == "fail"),
            "pass": sum(1 for a in mine if a.label == "pass"),
            "failureModes": modes,
        }
    first, second = REVIEWERS
    firsts = {a.trace_id: a for a in annotations if a.annotator == first}
    seconds = [a for a in annotations if a.annotator == second]
    return {
        "missRate": REVIEW_MISS_RATE,
        "reviewers": out,
        "sameLabel": sum(1 for a in seconds if firsts[a.trace_id].label == a.label),
        "sameModes": sum(1 for a in seconds if firsts[a.trace_id].modes == a.modes),
        "sharedTraces": len(seconds),
    }


def build_ground_truth(traces: list[Trace], labels: list[HumanLabel], verdicts: list[CriterionVerdict],
                       seed: int, annotations: list[Annotation]) -> dict[str, Any]:
    """The machine-readable ground truth the README's tables are rendered from."""
    criteria: dict[str, Any] = {}
    for criterion_id, mode in sorted(CRITERIA.items()):
        labelled = {lab.trace_id for lab in labels if lab.criterion_id == criterion_id}
        unlabelled = [t for t in traces if t.id not in labelled]
        passing = sum(1 for t in traces if truly_passes(t, criterion_id))
        passing_unlabelled = sum(1 for t in unlabelled if truly_passes(t, criterion_id))
        criteria[criterion_id] = {
            "failureMode": mode,
            "truePassRate": {"allTraces": _rate(passing, len(traces)),
                             "unlabelledTraces": _rate(passing_unlabelled, len(unlabelled))},
            "trueFailCount": len(traces) - passing,
            "unlabelledTraces": len(unlabelled),
            "judge": _judge(criterion_id, traces, verdicts),
            "labels": _labels(criterion_id, labels),
        }
    errors = [o for t in traces for o in t.observations if o.level == "ERROR"]
    return {
        "subject": SUBJECT,
        "seed": seed,
        "traces": len(traces),
        "observations": sum(len(t.observations) for t in traces),
        "errorObservations": {name: sum(1 for o in errors if o.name == name)
                              for name in sorted({o.name or "" for o in errors})},
        "dimensions": {key: _counts(traces, key) for key in ("intent", "customer_tier", "channel")},
        "needsEscalation": sum(1 for t in traces if (t.metadata or {}).get("needs_escalation")),
        "failureModes": _failure_modes(traces),
        "criteria": criteria,
        "annotations": _annotations(traces, annotations),
    }


def _counts(traces: list[Trace], key: str) -> dict[str, int]:
    values = [str((t.metadata or {}).get(key)) for t in traces]
    return {v: values.count(v) for v in sorted(set(values))}
