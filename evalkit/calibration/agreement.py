"""Agreement between two annotators: Cohen's kappa with its large-sample interval.

Two reviewers who agree 90% of the time on a criterion that passes 90% of traces agree no better
than chance; kappa discounts that chance agreement. The interval uses the asymptotic variance of
Fleiss, Cohen & Everitt (1969), "Large sample standard errors of kappa and weighted kappa".
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from evalkit.calibration.metrics import DEFAULT_LEVEL, z_value
from evalkit.contracts.labels import HumanLabel
from evalkit.io.errors import InputError


@dataclass(frozen=True)
class Kappa:
    """Cohen's kappa; ``kappa`` is None (with ``reason``) when chance agreement is total."""

    kappa: float | None
    lower: float | None
    upper: float | None
    level: float
    n: int
    observed_agreement: float | None
    chance_agreement: float | None
    unpaired: int = 0
    reason: str | None = None

    def to_json_obj(self) -> dict[str, Any]:
        return {"kappa": self.kappa, "lower": self.lower, "upper": self.upper, "level": self.level,
                "n": self.n, "observedAgreement": self.observed_agreement,
                "chanceAgreement": self.chance_agreement, "unpaired": self.unpaired, "reason": self.reason}


def cohens_kappa(first: Sequence[Hashable], second: Sequence[Hashable], *,
                 level: float = DEFAULT_LEVEL) -> Kappa:
    """Cohen's kappa between two raters' aligned labels, with a confidence interval.

    Args:
        first: one rater's labels (any categories, e.g. ``pass``/``fail``/``defer``).
        second: the other rater's labels for the same items, in the same order.
        level: confidence level of the interval.

    Raises:
        InputError: when the two sequences differ in length.
    """
    z = z_value(level)
    if len(first) != len(second):
        raise InputError(f"the raters' labels differ in length ({len(first)} vs {len(second)})",
                         path="second")
    n = len(first)
    if n == 0:
        return Kappa(None, None, None, level, 0, None, None, reason="no items rated by both")
    cats = sorted(set(first) | set(second), key=repr)
    index = {c: i for i, c in enumerate(cats)}
    table = np.zeros((len(cats), len(cats)))
    np.add.at(table, ([index[a] for a in first], [index[b] for b in second]), 1)
    p = table / n
    rows, cols = p.sum(axis=1), p.sum(axis=0)
    po = float(np.trace(p))
    pe = float(rows @ cols)
    if pe >= 1:
        return Kappa(None, None, None, level, n, po, pe,
                     reason="both raters used one and the same category: chance agreement is 100%")
    kappa = (po - pe) / (1 - pe)
    weight = rows[:, None] + cols[None, :]  # p_i. + p_.j
    diag = float(np.sum(np.diag(p) * (1 - np.diag(weight) * (1 - kappa)) ** 2))
    off = p * weight.T ** 2  # p_ij (p_.i + p_j.)^2
    off_sum = float(off.sum() - np.trace(off)) * (1 - kappa) ** 2
    var = max(0.0, diag + off_sum - (kappa - pe * (1 - kappa)) ** 2) / (n * (1 - pe) ** 2)
    half = z * math.sqrt(var)
    return Kappa(kappa, max(-1.0, kappa - half), min(1.0, kappa + half), level, n, po, pe)


def annotator_kappa(labels: Sequence[HumanLabel], first: str, second: str, *,
                    level: float = DEFAULT_LEVEL) -> Kappa:
    """Cohen's kappa between two annotators' labels, joined on trace and criterion.

    Items labelled by only one of the two are counted in ``unpaired``.

    Args:
        labels: human labels carrying ``annotator``.
        first: one annotator's name.
        second: the other annotator's name.
        level: confidence level of the interval.

    Raises:
        InputError: when an annotator labelled the same trace and criterion twice.
    """
    def by_item(name: str) -> dict[tuple[str, str | None], str]:
        out: dict[tuple[str, str | None], str] = {}
        for label in labels:
            if label.annotator != name:
                continue
            key = (label.trace_id, label.criterion_id)
            if key in out:
                raise InputError(f"annotator {name!r} labelled trace {label.trace_id!r} twice",
                                 path="traceId")
            out[key] = label.label
        return out

    a, b = by_item(first), by_item(second)
    shared = sorted(a.keys() & b.keys(), key=repr)
    result = cohens_kappa([a[k] for k in shared], [b[k] for k in shared], level=level)
    return replace(result, unpaired=len(a.keys() ^ b.keys()))
