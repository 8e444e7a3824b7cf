"""calibration.agreement: kappa between annotators' human labels (the statistic is tested in tests/test_stats.py)."""

from __future__ import annotations

import pytest

from evalkit.calibration import annotator_kappa, cohens_kappa
from evalkit.contracts.labels import HumanLabel


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
