"""One criterion's calibration, start to finish: the measurement the CLI prints and the notebook draws."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from evalkit.calibration.correction import (
    DEFAULT_ITERATIONS,
    DEFAULT_METHOD,
    CorrectedRate,
    correct_observed_rate,
    corrected_pass_rate,
)
from evalkit.calibration.metrics import DEFAULT_LEVEL, Confusion
from evalkit.calibration.pairing import (
    decisive_predictions,
    pair_labels,
    select_criterion,
    unlabeled_verdicts,
)
from evalkit.calibration.status import (
    GATES,
    MIN_LABELS,
    MIN_PER_CLASS,
    MIN_RATE,
    judge_shortfalls,
    judge_status,
)
from evalkit.contracts.labels import HumanLabel
from evalkit.contracts.verdict import CriterionVerdict
from evalkit.errors import InputError


@dataclass(frozen=True)
class CriterionCalibration:
    """A judge measured on one criterion: splits, dev and test confusion, and the corrected rate."""

    criterion_id: str
    label_scope: str
    """``test`` when the labels name splits (only test is measured), else ``all``."""
    labels_read: int
    labels_measured: int
    split_counts: dict[str, dict[str, int]]
    """split (or ``none``) -> label -> count."""
    dev: Confusion | None
    test: Confusion
    test_trace_ids: tuple[str, ...]
    """The test traces paired with a decisive verdict (what TPR and TNR were measured on)."""
    unlabeled_verdicts: int
    unlabeled_uncertain: int
    rate: CorrectedRate
    observed_from: str | None = None
    """Where the observed pass rate came from: ``verdicts`` (judged unlabeled traces), ``given`` (a rate
    and its count reported elsewhere), or None when there was none to correct."""
    gate: str = "point"
    """How TPR and TNR meet the threshold: ``point`` or ``lower-bound`` (``evalkit.calibration.status.GATES``)."""

    @property
    def shortfalls(self) -> list[str]:
        """Why the judge is not validated on this test split (empty when it is)."""
        return judge_shortfalls(self.test, self.gate)

    @property
    def status(self) -> str:
        """``validated`` or ``unvalidated``: the one verdict on the judge, for every surface to show."""
        return judge_status(self.test, self.gate)

    @property
    def status_text(self) -> str:
        """The status with its reasons, e.g. ``unvalidated (only 46 usable test labels (need at least 60))``."""
        return self.status + (f" ({'; '.join(self.shortfalls)})" if self.shortfalls else "")

    def to_json_obj(self) -> dict[str, Any]:
        return {"criterionId": self.criterion_id, "labelScope": self.label_scope,
                "labelsRead": self.labels_read, "labelsMeasured": self.labels_measured,
                "splits": self.split_counts, "confusion": self.test.to_json_obj(),
                "devConfusion": self.dev.to_json_obj() if self.dev else None,
                "unlabeled": {"verdicts": self.unlabeled_verdicts, "uncertain": self.unlabeled_uncertain,
                              "used": self.rate.n_unlabeled if self.observed_from == "verdicts" else 0,
                              "observedFrom": self.observed_from},
                "validation": {"status": self.status, "shortfalls": self.shortfalls, "gate": self.gate,
                               "minRate": MIN_RATE, "minLabels": MIN_LABELS, "minPerClass": MIN_PER_CLASS},
                "correctedPassRate": self.rate.to_json_obj()}


def _nothing_to_correct(conf: Confusion, reason: str, method: str, level: float) -> CorrectedRate:
    """The rate when no observed pass rate was given: TPR and TNR still reported, nothing corrected."""
    return CorrectedRate(None, None, p_obs=None, tpr=conf.tpr, tnr=conf.tnr, n_test=conf.total,
                         n_test_pass=conf.positives, n_test_fail=conf.negatives, n_unlabeled=0, method=method,
                         level=level, valid=False, reason=reason)


def calibrate_criterion(labels: Sequence[HumanLabel], verdicts: Sequence[CriterionVerdict], *,
                        criterion_id: str | None = None,
                        unlabeled: Sequence[CriterionVerdict] | None = None,
                        observed: tuple[float, int] | None = None,
                        method: str = DEFAULT_METHOD, level: float = DEFAULT_LEVEL,
                        iterations: int = DEFAULT_ITERATIONS, seed: int = 0,
                        source: str | None = None, gate: str = "point") -> CriterionCalibration:
    """Measure a judge on one criterion and correct its pass rate on unlabeled traces.

    Args:
        labels: human labels; when they name splits only ``test`` is measured (``dev`` is reported).
        verdicts: the judge's verdicts on labelled (and, usually, unlabeled) traces.
        criterion_id: the criterion; may be None when the inputs hold one.
        unlabeled: the verdicts to correct; default: verdicts on traces without a non-defer label.
        observed: ``(pass rate, count)`` of the judge on traces judged elsewhere (a published result),
            instead of ``unlabeled``.
        method, level, iterations, seed: see :func:`corrected_pass_rate`.
        source: a file name for error messages.
        gate: ``point`` (TPR and TNR >= 0.9) or ``lower-bound`` (the lower ends of their Wilson intervals
            >= 0.9, as awslabs' agent-evaluation gates); see ``evalkit.calibration.status.GATES``.

    Returns:
        The calibration. Without unlabeled verdicts or an observed rate, TPR, TNR and the status are
        still measured; the rate is then marked not valid with the reason.

    Raises:
        InputError: no verdicts, an unknown criterion, no test labels, or both ``unlabeled`` and
            ``observed``.
    """
    if unlabeled is not None and observed is not None:
        raise InputError("give the verdicts to correct or an observed pass rate with its count, not both",
                         path="observed")
    if gate not in GATES:
        raise InputError(f"one of {', '.join(GATES)} (got {gate!r})", path="gate")
    criterion, labels, verdicts = select_criterion(labels, verdicts, criterion_id)
    if not verdicts:
        raise InputError(f"no verdicts for criterion {criterion!r}", file=source)
    split_aware = any(lb.split is not None for lb in labels)
    measured = [lb for lb in labels if lb.split == "test"] if split_aware else list(labels)
    if not measured:
        raise InputError("the labels name splits but none is 'test'; the judge is measured on test",
                         file=source)
    pairing = pair_labels(measured, verdicts, criterion_id=criterion)
    dev_labels = [lb for lb in labels if lb.split == "dev"]
    dev = Confusion.from_pairing(pair_labels(dev_labels, verdicts, criterion_id=criterion), level) \
        if dev_labels else None
    test = Confusion.from_pairing(pairing, level)
    to_correct = [] if observed is not None else [v for v in unlabeled if v.criterion_id == criterion] \
        if unlabeled is not None else unlabeled_verdicts(verdicts, labels)
    preds, uncertain = decisive_predictions(to_correct)
    observed_from: str | None = "verdicts"
    if observed is not None:
        observed_from = "given"
        rate = correct_observed_rate(pairing.human, pairing.judge, observed[0], observed[1], method=method,
                                     level=level, iterations=iterations, seed=seed)
    elif len(preds):
        rate = corrected_pass_rate(pairing.human, pairing.judge, preds, method=method, level=level,
                                   iterations=iterations, seed=seed)
    else:
        observed_from = None
        rate = _nothing_to_correct(test, f"nothing to correct: no pass/fail verdicts on unlabeled traces "
                                         f"({uncertain} uncertain) and no observed pass rate given; give the "
                                         "verdicts to correct (--unlabeled, unlabeled_verdicts_file) or the "
                                         "judge's observed rate and its count (--observed/--n, "
                                         "observed_pass_rate/observed_count)", method, level)
    counts: dict[str, Counter] = {}
    for lb in labels:
        counts.setdefault(lb.split or "none", Counter())[lb.label] += 1
    split_counts = {s: dict(sorted(c.items())) for s, c in sorted(counts.items())}
    return CriterionCalibration(criterion, "test" if split_aware else "all", len(labels), len(measured),
                                split_counts, dev, test, pairing.trace_ids, len(to_correct), uncertain, rate,
                                observed_from, gate)


def sensitivity(p_obs: float, tpr: float, tnr: float, *, spread: float = 0.1,
                steps: int = 21) -> list[dict[str, float]]:
    """How the corrected rate moves when TPR or TNR is off by up to ``spread`` (one at a time).

    Returns rows ``{rate: "TPR"|"TNR", assumed, theta}`` (theta None where TPR + TNR <= 1), the
    material of the "what if the judge is a little better or worse" chart.
    """
    from evalkit.calibration.correction import rogan_gladen

    rows = []
    for i in range(steps):
        delta = -spread + 2 * spread * i / (steps - 1)
        for name, t_pr, t_nr in (("TPR", tpr + delta, tnr), ("TNR", tpr, tnr + delta)):
            assumed = t_pr if name == "TPR" else t_nr
            if not 0 <= assumed <= 1:
                continue
            theta = float(rogan_gladen(p_obs, t_pr, t_nr)) if t_pr + t_nr > 1 else None
            rows.append({"rate": name, "assumed": round(assumed, 6),
                         "theta": None if theta is None else round(theta, 6)})
    return rows


def dev_history(labels: Sequence[HumanLabel], runs: Sequence[tuple[str, Sequence[CriterionVerdict]]], *,
                criterion_id: str, level: float = DEFAULT_LEVEL) -> list[dict[str, Any]]:
    """TPR and TNR on the dev split for each judge-prompt iteration, oldest first.

    Args:
        labels: human labels with splits; only ``dev`` ones are used (test is measured once, elsewhere).
        runs: ``(prompt name, verdicts)`` per iteration, in the order the prompts were written.
        criterion_id: the criterion.
        level: confidence level of the Wilson intervals.

    Returns:
        Rows ``{iteration, prompt, rate ("TPR"|"TNR"), value, lo, hi, n}``; a rate without labels
        of its class is left out.
    """
    dev = [lb for lb in labels if lb.split == "dev" and lb.criterion_id in (criterion_id, None)]
    rows = []
    for i, (prompt, verdicts) in enumerate(runs, start=1):
        mine = [v for v in verdicts if v.criterion_id == criterion_id]
        conf = Confusion.from_pairing(pair_labels(dev, mine, criterion_id=criterion_id), level)
        for name, value, ci, n in (("TPR", conf.tpr, conf.tpr_ci, conf.positives),
                                   ("TNR", conf.tnr, conf.tnr_ci, conf.negatives)):
            if value is not None and ci is not None:
                rows.append({"iteration": i, "prompt": prompt, "rate": name, "value": value,
                             "lo": ci.lo, "hi": ci.hi, "n": n})
    return rows
