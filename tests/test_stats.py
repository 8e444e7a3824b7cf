"""evalkit.stats: the worked examples of the shared statistics, tested here once (callers test their use)."""

import numpy as np
import pytest

from evalkit.contracts import ConfidenceInterval
from evalkit.errors import InputError
from evalkit.stats import cohens_kappa, wilson_bounds, wilson_interval, z_value


def _table(pp: int, pf: int, fp: int, ff: int) -> tuple[list[str], list[str]]:
    """Two raters' labels from a 2x2 table: both pass, first pass/second fail, the reverse, both fail."""
    first = ["pass"] * (pp + pf) + ["fail"] * (fp + ff)
    second = ["pass"] * pp + ["fail"] * pf + ["pass"] * fp + ["fail"] * ff
    return first, second


def test_z_value_is_the_two_sided_quantile():
    assert z_value(0.95) == pytest.approx(1.959964, abs=1e-6)
    with pytest.raises(InputError):
        z_value(1.0)


def test_wilson_matches_newcombe_and_is_exact_at_the_ends():
    lo, hi = wilson_bounds(81, 263)  # Newcombe (1998), example: 81/263 -> 0.2553 to 0.3662
    assert (round(lo, 4), round(hi, 4)) == (0.2553, 0.3662)
    lo, hi = wilson_bounds(0, 10)
    assert lo == 0.0 and round(hi, 4) == 0.2775  # does not collapse at zero successes
    assert wilson_bounds(10, 10)[1] == 1.0
    assert wilson_bounds(0, 0) is None
    with pytest.raises(InputError, match="level"):
        wilson_bounds(1, 2, level=1.5)


def test_wilson_interval_is_the_one_interval_type():
    ci = wilson_interval(8, 10)
    assert isinstance(ci, ConfidenceInterval) and ci.level == 0.95
    assert (ci.lo, ci.hi) == (pytest.approx(0.49016, abs=1e-5), pytest.approx(0.94332, abs=1e-5))
    assert ci.to_json_obj() == {"lo": ci.lo, "hi": ci.hi, "level": 0.95}
    assert wilson_interval(0, 0) is None


def test_kappa_discounts_chance_agreement_worked_example():
    # 50 items: both pass 20, both fail 15, pass/fail 5, fail/pass 10 -> po 0.7, pe 0.5, kappa 0.4
    k = cohens_kappa(*_table(20, 5, 10, 15))
    assert k.n == 50 and k.observed_agreement == pytest.approx(0.7)
    assert k.chance_agreement == pytest.approx(0.5)
    assert k.kappa == pytest.approx(0.4)
    assert k.ci is not None and k.ci.lo < 0.4 < k.ci.hi and k.ci.level == 0.95
    # Both raters pass 9 of 10 and agree on 8: 80% agreement, yet no better than chance.
    k = cohens_kappa(["pass"] * 9 + ["fail"], ["pass"] * 8 + ["fail", "pass"])
    assert (k.observed_agreement, k.chance_agreement) == (pytest.approx(0.8), pytest.approx(0.82))
    assert k.kappa == pytest.approx((0.8 - 0.82) / (1 - 0.82)) and k.ci.lo < 0 < k.ci.hi


@pytest.mark.slow
def test_kappa_interval_matches_the_bootstrap_spread():
    first, second = _table(300, 40, 60, 100)
    k = cohens_kappa(first, second)
    rng = np.random.default_rng(0)
    a, b = np.array(first), np.array(second)
    boots = []
    for _ in range(2000):
        idx = rng.integers(0, len(a), len(a))
        boots.append(cohens_kappa(a[idx].tolist(), b[idx].tolist()).kappa)
    se_formula = (k.ci.hi - k.ci.lo) / (2 * 1.959964)
    assert se_formula == pytest.approx(np.std(boots), rel=0.1)


def test_perfect_and_degenerate_agreement():
    perfect = cohens_kappa(*_table(10, 0, 0, 5))
    assert perfect.kappa == 1 and perfect.ci.hi == 1
    same = cohens_kappa(["pass"] * 5, ["pass"] * 5)
    assert same.kappa is None and same.ci is None and "chance agreement is 100%" in same.reason
    assert same.to_json_obj()["ci"] is None
    assert cohens_kappa([], []).kappa is None
    with pytest.raises(InputError, match="differ in length"):
        cohens_kappa(["pass"], [])


def test_kappa_json_spells_the_interval_once():
    obj = cohens_kappa(*_table(20, 5, 10, 15)).to_json_obj()
    assert set(obj["ci"]) == {"lo", "hi", "level"} and "lower" not in obj and "upper" not in obj
    assert obj["observedAgreement"] == pytest.approx(0.7)
