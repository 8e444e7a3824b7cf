"""Agreement between two annotators: Cohen's kappa with its large-sample interval.

Two reviewers who agree 90% of the time on a criterion that passes 90% of traces agree no better
than chance; kappa discounts that chance agreement. The interval uses the asymptotic variance of
Fleiss, Cohen & Everitt (1969), "Large sample standard errors of kappa and weighted kappa".

This is kappa on :class:`~evalkit.contracts.HumanLabel` records, per (trace, criterion), to check the ground
truth a judge is validated on; :func:`evalkit.analysis.annotator_agreement` is kappa on error-analysis
annotations (pass/fail and each failure mode). Both compute it with :func:`evalkit.stats.cohens_kappa`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from evalkit.contracts.labels import HumanLabel
from evalkit.errors import InputError
from evalkit.stats import DEFAULT_LEVEL, Kappa, cohens_kappa


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
