"""How many labels to collect: the passes and fails needed for a target interval width.

The corrected rate's variance (delta method, as in the adjusted Wald interval) is

    Var = [p(1-p)/n + (1-theta)^2 TNR(1-TNR)/m_fail + theta^2 TPR(1-TPR)/m_pass] / (TPR+TNR-1)^2

with ``p`` the judge's expected observed rate on ``n`` unlabeled traces. For a fixed number of labels
``m_fail + m_pass`` the variance is smallest when each class gets labels in proportion to the
square root of its term (the allocation Lee et al. 2025 adapt towards); the plan solves for the
smallest total that reaches the width.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from evalkit.calibration.metrics import DEFAULT_LEVEL, z_value
from evalkit.errors import InputError


@dataclass(frozen=True)
class LabelPlan:
    """Labelled passes and fails to collect, and what they buy.

    ``random_sample_size`` is how many traces to label at random to expect that many of each class
    (None when the expected pass rate is 0 or 1).
    """

    passes: int
    fails: int
    expected_width: float
    target_width: float
    level: float
    random_sample_size: int | None

    @property
    def total(self) -> int:
        return self.passes + self.fails

    def to_json_obj(self) -> dict[str, Any]:
        return {"passes": self.passes, "fails": self.fails, "total": self.total,
                "expectedWidth": self.expected_width, "targetWidth": self.target_width,
                "level": self.level, "randomSampleSize": self.random_sample_size}


def _unit(name: str, value: float) -> None:
    if not 0 <= value <= 1:
        raise InputError(f"must be between 0 and 1 (got {value!r})", path=name)


def expected_width(*, tpr: float, tnr: float, pass_rate: float, passes: int, fails: int,
                   n_unlabeled: int | None = None, level: float = DEFAULT_LEVEL) -> float:
    """The expected interval width (two z standard errors) for given label counts."""
    z = z_value(level)
    p = pass_rate * tpr + (1 - pass_rate) * (1 - tnr)
    var = ((p * (1 - p) / n_unlabeled if n_unlabeled else 0.0)
           + (1 - pass_rate) ** 2 * tnr * (1 - tnr) / fails + pass_rate ** 2 * tpr * (1 - tpr) / passes)
    return 2 * z * math.sqrt(var) / (tpr + tnr - 1)


def plan_labels(target_width: float, *, tpr: float, tnr: float, pass_rate: float,
                n_unlabeled: int | None = None, level: float = DEFAULT_LEVEL,
                min_per_class: int = 1) -> LabelPlan:
    """The fewest labelled passes and fails that give an interval of ``target_width`` or less.

    Args:
        target_width: the full width (upper - lower) wanted for the corrected pass rate.
        tpr: the judge's TPR from a pilot (dev) measurement.
        tnr: the judge's TNR from the pilot.
        pass_rate: the expected true pass rate.
        n_unlabeled: traces the judge will score; None for "many" (their sampling error ignored).
        level: confidence level.
        min_per_class: a floor for each class (a pilot rate of exactly 1 would otherwise ask for 1).

    Raises:
        InputError: out-of-range inputs, a judge no better than chance, or a width that the
            unlabeled sample alone already exceeds.
    """
    z = z_value(level)
    for name, value in (("tpr", tpr), ("tnr", tnr), ("pass_rate", pass_rate)):
        _unit(name, value)
    if not 0 < target_width <= 1:
        raise InputError(f"must be in (0, 1] (got {target_width!r})", path="target_width")
    if tpr + tnr <= 1:
        raise InputError(f"TPR + TNR = {tpr + tnr:.3f} <= 1: no number of labels corrects a judge no "
                         "better than chance; improve the judge on dev first", path="tpr")
    denom = tpr + tnr - 1
    p = pass_rate * tpr + (1 - pass_rate) * (1 - tnr)
    budget = (target_width / (2 * z) * denom) ** 2 - (p * (1 - p) / n_unlabeled if n_unlabeled else 0.0)
    if budget <= 0:
        floor = 2 * z * math.sqrt(p * (1 - p) / n_unlabeled) / denom
        raise InputError(f"out of reach: the {n_unlabeled} unlabeled traces alone give a width of "
                         f"{floor:.3f}; score more traces or accept a wider interval", path="target_width")
    a = math.sqrt((1 - pass_rate) ** 2 * tnr * (1 - tnr))
    b = math.sqrt(pass_rate ** 2 * tpr * (1 - tpr))
    fails = max(min_per_class, math.ceil(a * (a + b) / budget - 1e-9))
    passes = max(min_per_class, math.ceil(b * (a + b) / budget - 1e-9))
    sample = None
    if 0 < pass_rate < 1:
        sample = math.ceil(max(passes / pass_rate, fails / (1 - pass_rate)) - 1e-9)
    width = expected_width(tpr=tpr, tnr=tnr, pass_rate=pass_rate, passes=passes, fails=fails,
                           n_unlabeled=n_unlabeled, level=level)
    return LabelPlan(passes, fails, width, target_width, level, sample)
