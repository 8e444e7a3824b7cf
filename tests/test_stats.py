import pytest

from evalkit.errors import InputError
from evalkit.stats import cohens_kappa, wilson_bounds, z_value


def test_z_value_is_the_two_sided_quantile():
    assert z_value(0.95) == pytest.approx(1.959964, abs=1e-6)
    with pytest.raises(InputError):
        z_value(1.0)


def test_wilson_matches_newcombe_and_is_exact_at_the_ends():
    lo, hi = wilson_bounds(81, 263)  # Newcombe (1998), example: 0.2553 to 0.3662
    assert (round(lo, 4), round(hi, 4)) == (0.2553, 0.3662)
    assert wilson_bounds(0, 10)[0] == 0.0 and wilson_bounds(10, 10)[1] == 1.0
    assert wilson_bounds(0, 0) is None


def test_kappa_discounts_chance_agreement():
    # Both raters pass 9 of 10 items and agree on 8: 80% agreement but little better than chance.
    first = ["pass"] * 9 + ["fail"]
    second = ["pass"] * 8 + ["fail", "pass"]
    k = cohens_kappa(first, second)
    assert k.observed_agreement == pytest.approx(0.8)
    assert k.chance_agreement == pytest.approx(0.82)
    assert k.kappa == pytest.approx((0.8 - 0.82) / (1 - 0.82))
    assert k.lower < k.kappa < k.upper
    perfect = cohens_kappa(["a", "b", "a"], ["a", "b", "a"])
    assert perfect.kappa == pytest.approx(1.0)
    assert cohens_kappa(["a", "a"], ["a", "a"]).kappa is None  # one category only: undefined
