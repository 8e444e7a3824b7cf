"""plan_labels: labelled passes and fails for a target interval width."""

from __future__ import annotations

import numpy as np
import pytest

from evalkit.calibration import corrected_pass_rate, expected_width, plan_labels
from evalkit.errors import InputError


def test_plan_reaches_the_width_with_fewer_labels_than_an_even_split():
    plan = plan_labels(0.1, tpr=0.9, tnr=0.85, pass_rate=0.8, n_unlabeled=5000)
    assert plan.expected_width <= 0.1
    half = plan.total // 2
    assert expected_width(tpr=0.9, tnr=0.85, pass_rate=0.8, passes=half, fails=plan.total - half,
                          n_unlabeled=5000) > 0.1
    # at a pass rate of 0.8, a random sample must hold fails / 0.2 traces to expect enough fails
    assert plan.random_sample_size == max(-(-plan.passes * 10 // 8), -(-plan.fails * 10 // 2))


def test_one_label_fewer_misses_the_width():
    plan = plan_labels(0.15, tpr=0.92, tnr=0.88, pass_rate=0.7)
    for passes, fails in ((plan.passes - 1, plan.fails), (plan.passes, plan.fails - 1)):
        assert expected_width(tpr=0.92, tnr=0.88, pass_rate=0.7, passes=passes, fails=fails) > 0.15


def test_planned_labels_give_about_the_target_width_in_practice():
    plan = plan_labels(0.2, tpr=0.9, tnr=0.9, pass_rate=0.7, n_unlabeled=2000)
    rng = np.random.default_rng(0)
    widths = []
    for _ in range(40):
        labels = np.array([1] * plan.passes + [0] * plan.fails)
        preds = np.where(labels == 1, rng.random(len(labels)) < 0.9, rng.random(len(labels)) >= 0.9)
        unlabeled = rng.random(2000) < 0.7 * 0.9 + 0.3 * 0.1
        r = corrected_pass_rate(labels, preds.astype(int), unlabeled.astype(int))
        widths.append(r.ci.hi - r.ci.lo)
    assert np.mean(widths) == pytest.approx(0.2, abs=0.03)


def test_unreachable_width_and_useless_judge_are_errors():
    with pytest.raises(InputError, match="out of reach: the 100 unlabeled traces alone"):
        plan_labels(0.05, tpr=0.9, tnr=0.9, pass_rate=0.5, n_unlabeled=100)
    with pytest.raises(InputError, match="no better than chance"):
        plan_labels(0.1, tpr=0.5, tnr=0.5, pass_rate=0.5)
    with pytest.raises(InputError, match="tnr"):
        plan_labels(0.1, tpr=0.9, tnr=1.2, pass_rate=0.5)
