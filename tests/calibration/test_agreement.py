"""Cohen's kappa between annotators, with its interval."""

from __future__ import annotations

import numpy as np
import pytest

from evalkit.calibration import annotator_kappa, cohens_kappa
from evalkit.contracts.labels import HumanLabel
from evalkit.errors import InputError


def _table(pp: int, pf: int, fp: int, ff: int) -> tuple[list[str], list[str]]:
    first = ["pass"] * (pp + pf) + ["fail"] * (fp + ff)
    second = ["pass"] * pp + ["fail"] * pf + ["pass"] * fp + ["fail"] * ff
    return first, second


def test_kappa_discounts_chance_agreement():
    k = cohens_kappa(*_table(20, 5, 10, 15))
    assert k.observed_agreement == pytest.approx(0.7)
    assert k.chance_agreement == pytest.approx(0.5)
    assert k.kappa == pytest.approx(0.4)
    assert k.lower < 0.4 < k.upper


def test_kappa_interval_matches_the_bootstrap_spread():
    first, second = _table(300, 40, 60, 100)
    k = cohens_kappa(first, second)
    rng = np.random.default_rng(0)
    a, b = np.array(first), np.array(second)
    boots = []
    for _ in range(2000):
        idx = rng.integers(0, len(a), len(a))
        boots.append(cohens_kappa(a[idx].tolist(), b[idx].tolist()).kappa)
    se_formula = (k.upper - k.lower) / (2 * 1.959964)
    assert se_formula == pytest.approx(np.std(boots), rel=0.1)


def test_perfect_and_degenerate_agreement():
    perfect = cohens_kappa(*_table(10, 0, 0, 5))
    assert perfect.kappa == 1 and perfect.upper == 1
    same = cohens_kappa(["pass"] * 5, ["pass"] * 5)
    assert same.kappa is None and "chance agreement is 100%" in same.reason
    with pytest.raises(InputError, match="differ in length"):
        cohens_kappa(["pass"], [])


def test_annotator_kappa_joins_on_trace_and_counts_unpaired():
    labels = [HumanLabel(trace_id="a", label="pass", annotator="ann"),
              HumanLabel(trace_id="a", label="pass", annotator="bob"),
              HumanLabel(trace_id="b", label="fail", annotator="ann"),
              HumanLabel(trace_id="b", label="pass", annotator="bob"),
              HumanLabel(trace_id="c", label="fail", annotator="ann"),
              HumanLabel(trace_id="c", label="fail", annotator="bob"),
              HumanLabel(trace_id="d", label="defer", annotator="bob")]
    k = annotator_kappa(labels, "ann", "bob")
    assert k.n == 3 and k.unpaired == 1
    assert k.kappa == pytest.approx(cohens_kappa(["pass", "fail", "fail"], ["pass", "pass", "fail"]).kappa)
