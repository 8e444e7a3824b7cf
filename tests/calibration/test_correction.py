"""The corrected pass rate: agreement with judgy, the Lee et al. fixture, validity and bad input."""

from __future__ import annotations

import numpy as np
import pytest

from evalkit.calibration import METHODS, adjusted_wald_interval, corrected_pass_rate
from evalkit.errors import InputError

judgy = pytest.importorskip("judgy")

# Lee et al. (2025) adjusted-Wald bounds, typed from lee2025_confidence_interval_fixture.csv.
# (p, q0 = TNR, q1 = TPR, n unlabeled, m0 fails, m1 passes, alpha, lower, upper)
LEE_FIXTURE = [
    (0.4, 0.7, 0.9, 1000, 200, 200, 0.05, 0.05635072484160894, 0.2627330257859588),
    (0.5, 0.8, 0.8, 500, 100, 100, 0.05, 0.3799746588561528, 0.6200253411438469),
    (0.62, 0.85, 0.93, 2000, 150, 350, 0.05, 0.5544774781496563, 0.6456327845409667),
    (0.1, 0.95, 0.6, 300, 50, 80, 0.1, 0.0, 0.17813731660303905),
    (0.9, 0.6, 0.99, 10000, 1000, 1000, 0.01, 0.8273348478706124, 0.8686713102464316),
    (0.05, 0.9, 0.9, 1000, 200, 200, 0.05, 0.0, 0.0),
    (0.97, 0.9, 0.9, 1000, 200, 200, 0.05, 1.0, 1.0),
    (0.3333, 0.777, 0.888, 123, 45, 67, 0.2, 0.012521172499902977, 0.2816724189695818),
    (0.0, 1.0, 1.0, 50, 10, 10, 0.05, 0.0, 0.09568563633822108),
    (1.0, 1.0, 1.0, 50, 10, 10, 0.05, 0.9043143636617791, 1.0),
    (0.4, 0.7, 0.9, 1000, 1, 1, 0.05, 0.0, 1.0),
    (0.55, 0.75, 0.85, 1, 30, 40, 0.5, 0.0, 0.9666883803310964),
]


@pytest.mark.parametrize(("p", "q0", "q1", "n", "m0", "m1", "alpha", "lower", "upper"), LEE_FIXTURE)
def test_adjusted_wald_matches_lee_fixture(p, q0, q1, n, m0, m1, alpha, lower, upper):
    lo, hi = adjusted_wald_interval(p, q0, q1, n, m0, m1, level=1 - alpha)
    assert lo == pytest.approx(lower, abs=1e-12)
    assert hi == pytest.approx(upper, abs=1e-12)


def _scenario(rng: np.random.Generator):
    m = int(rng.integers(2, 300))
    labels = (rng.random(m) < rng.uniform(0.05, 0.95)).astype(int)
    tpr, tnr = rng.uniform(0.2, 1.0, size=2)
    preds = np.where(labels == 1, rng.random(m) < tpr, rng.random(m) >= tnr).astype(int)
    unlabeled = (rng.random(int(rng.integers(1, 5000))) < rng.uniform(0, 1)).astype(int)
    return labels, preds, unlabeled


@pytest.mark.slow
def test_point_estimate_equals_judgy_on_random_inputs():
    rng = np.random.default_rng(2024)
    compared = refused = 0
    for _ in range(400):
        labels, preds, unlabeled = _scenario(rng)
        ours = corrected_pass_rate(labels, preds, unlabeled, method="bootstrap", iterations=50)
        assert ours.p_obs == unlabeled.mean()
        np.random.seed(0)
        try:
            theta, _, _ = judgy.estimate_success_rate(labels, preds, unlabeled, bootstrap_iterations=200)
        except ValueError:  # judgy refuses: a class is missing or TPR + TNR <= 1
            assert not ours.valid and ours.theta is None
            refused += 1
            continue
        except RuntimeError:  # judgy: every resample skipped; its point estimate is not returned
            continue
        assert ours.valid, ours.reason
        assert ours.theta == pytest.approx(theta, abs=1e-12)
        compared += 1
    assert compared > 250 and refused > 10


def test_a_judge_exactly_at_chance_is_invalid():
    # TPR = 7/10 and TNR = 3/10: TPR + TNR is exactly 1, the boundary itself is refused.
    labels = [1] * 10 + [0] * 10
    preds = [1] * 7 + [0] * 3 + [0] * 3 + [1] * 7
    result = corrected_pass_rate(labels, preds, [1, 0, 1])
    assert not result.valid
    assert "no better than chance" in result.reason
    assert result.p_obs == pytest.approx(2 / 3)


def _mc_spread(labels, preds, unlabeled, seeds: int = 12) -> np.ndarray:
    bounds = np.array([[r.ci.lo, r.ci.hi] for r in (
        corrected_pass_rate(labels, preds, unlabeled, method="bootstrap", seed=s) for s in range(seeds))])
    return bounds.std(axis=0, ddof=1)


@pytest.mark.slow
@pytest.mark.parametrize("case", range(3))
def test_bootstrap_interval_within_monte_carlo_error_of_judgy(case):
    rng = np.random.default_rng(100 + case)
    m = int(rng.integers(60, 200))
    labels = (rng.random(m) < 0.7).astype(int)
    preds = np.where(labels == 1, rng.random(m) < 0.9, rng.random(m) >= 0.85).astype(int)
    unlabeled = (rng.random(1500) < 0.72).astype(int)
    np.random.seed(case)
    theta, lo, hi = judgy.estimate_success_rate(labels, preds, unlabeled)
    ours = corrected_pass_rate(labels, preds, unlabeled, method="bootstrap")
    # Two independent 20,000-resample estimates differ by sqrt(2) standard deviations on average.
    tolerance = 4 * np.sqrt(2) * _mc_spread(labels, preds, unlabeled) + 2e-3
    assert ours.theta == pytest.approx(theta, abs=1e-12)
    assert abs(ours.ci.lo - lo) <= tolerance[0]
    assert abs(ours.ci.hi - hi) <= tolerance[1]


def test_bootstrap_counts_skipped_resamples_and_is_reproducible():
    labels, preds, unlabeled = [1, 0, 0, 0, 0, 0], [1, 0, 0, 0, 0, 1], [1, 0, 1, 0]
    first = corrected_pass_rate(labels, preds, unlabeled, method="bootstrap", iterations=5000, seed=3)
    again = corrected_pass_rate(labels, preds, unlabeled, method="bootstrap", iterations=5000, seed=3)
    assert first == again
    # With one labelled pass, about (5/6)^6 = 33% of resamples have no pass at all.
    assert 0.25 < first.skipped / first.iterations < 0.45


def test_full_bootstrap_widens_the_interval_for_a_small_unlabeled_set():
    rng = np.random.default_rng(5)
    labels = (rng.random(200) < 0.7).astype(int)
    preds = np.where(labels == 1, rng.random(200) < 0.95, rng.random(200) >= 0.95).astype(int)
    unlabeled = (rng.random(60) < 0.7).astype(int)
    fixed = corrected_pass_rate(labels, preds, unlabeled, method="bootstrap")
    full = corrected_pass_rate(labels, preds, unlabeled, method="bootstrap-full")
    assert full.theta == fixed.theta
    assert full.ci.hi - full.ci.lo > 1.3 * (fixed.ci.hi - fixed.ci.lo)


@pytest.mark.parametrize("method", METHODS)
def test_invalid_correction_still_reports_the_observed_rate(method):
    result = corrected_pass_rate([1, 1, 0, 0], [0, 1, 1, 0], [1, 1, 1, 0], method=method)
    assert not result.valid
    assert result.theta is None and result.ci is None
    assert result.p_obs == 0.75
    assert result.tpr == 0.5 and result.tnr == 0.5
    assert "TPR + TNR = 1.000 <= 1" in result.reason


def test_a_test_set_without_fails_is_invalid_with_reason():
    result = corrected_pass_rate([1, 1, 1], [1, 1, 0], [1, 0])
    assert not result.valid
    assert "no human fails" in result.reason


def test_pass_fail_words_and_booleans_are_accepted():
    words = corrected_pass_rate(["pass", "fail", "PASS", "fail"], [True, False, True, True], ["pass", "fail"])
    numbers = corrected_pass_rate([1, 0, 1, 0], [1, 0, 1, 1], [1, 0])
    assert words == numbers


@pytest.mark.parametrize(("field", "args"), [
    ("test_preds[2]", ([1, 0, 1], [1, 0, 0.7], [1])),
    ("test_labels[1]", ([1, 2, 1], [1, 0, 1], [1])),
    ("unlabeled_preds[0]", ([1, 0], [1, 0], ["yes"])),
    ("unlabeled_preds[1]", ([1, 0], [1, 0], [1.0, float("nan")])),
])
def test_non_binary_values_are_an_error_never_truncated(field, args):
    with pytest.raises(InputError) as err:
        corrected_pass_rate(*args)
    assert err.value.render().startswith(f"{field}: must be 0/1 or 'pass'/'fail'")


def test_length_mismatch_empty_unlabeled_and_unknown_method_are_errors():
    with pytest.raises(InputError, match="differ in length"):
        corrected_pass_rate([1, 0], [1], [1])
    with pytest.raises(InputError, match="no unlabeled predictions"):
        corrected_pass_rate([1, 0], [1, 0], [])
    with pytest.raises(InputError, match="unknown method 'wald'"):
        corrected_pass_rate([1, 0], [1, 0], [1], method="wald")
    with pytest.raises(InputError, match="level"):
        corrected_pass_rate([1, 0], [1, 0], [1], level=95)


def test_adjusted_wald_result_carries_counts_and_an_ordered_interval():
    labels = [1] * 40 + [0] * 20
    preds = [1] * 38 + [0] * 2 + [0] * 18 + [1] * 2
    r = corrected_pass_rate(labels, preds, [1] * 70 + [0] * 30)
    assert r.method == "adjusted-wald" and r.valid
    assert (r.n_test, r.n_test_pass, r.n_test_fail, r.n_unlabeled) == (60, 40, 20, 100)
    assert r.theta == pytest.approx((0.7 + 0.9 - 1) / (0.95 + 0.9 - 1))
    assert 0 <= r.ci.lo < r.theta < r.ci.hi <= 1
    assert r.to_json_obj()["nTestPass"] == 40
