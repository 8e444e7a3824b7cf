"""McNemar's exact test against hand-computed tables; the paired bootstrap against brute-force enumeration."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from evalkit.compare import PairedTable, mcnemar_exact, paired_bootstrap, resampled_differences, sign_test
from evalkit.errors import InputError


def test_all_concordant_pairs_give_no_evidence_of_change():
    t = PairedTable(both_pass=40, pass_to_fail=0, fail_to_pass=0, both_fail=60)
    m = mcnemar_exact(t)
    assert (m.discordant, m.p_two_sided, m.p_drop) == (0, 1.0, 1.0)
    assert t.difference == 0 and t.old_rate == t.new_rate == 0.4


@pytest.mark.parametrize(("b", "c", "two", "drop"), [
    # b pass->fail, c fail->pass; X ~ Bin(b+c, 1/2). Two-sided 2 P(X <= min), drop P(X <= c).
    (5, 0, Fraction(2, 32), Fraction(1, 32)),
    (0, 5, Fraction(2, 32), Fraction(1, 1)),
    (3, 1, Fraction(2 * 5, 16), Fraction(5, 16)),      # P(X<=1) = (1+4)/16
    (1, 3, Fraction(2 * 5, 16), Fraction(15, 16)),     # P(X<=3) = 15/16
    (2, 2, Fraction(1), Fraction(11, 16)),             # two-sided capped at 1; P(X<=2) = 11/16
    (10, 2, Fraction(2 * 79, 4096), Fraction(79, 4096)),  # P(X<=2) = (1+12+66)/4096
])
def test_mcnemar_exact_matches_hand_computed_tables(b, c, two, drop):
    m = mcnemar_exact(PairedTable(7, b, c, 3))
    assert m.p_two_sided == pytest.approx(float(two), rel=1e-12)
    assert m.p_drop == pytest.approx(float(drop), rel=1e-12)


def test_sign_test_and_its_bounds():
    assert sign_test(0, 0) == 1.0
    assert sign_test(10, 10) == pytest.approx(2 / 1024)
    assert sign_test(5, 10) == 1.0
    with pytest.raises(InputError, match="successes"):
        sign_test(11, 10)


def _enumerated(cells: list[tuple[int, int]]) -> np.ndarray:
    """new - old over every one of the n^n equally likely resamples of n paired items."""
    n = len(cells)
    diff = np.array([new - old for old, new in cells])
    return np.array([diff[list(idx)].mean() for idx in itertools.product(range(n), repeat=n)])


@pytest.mark.parametrize("table", [PairedTable(2, 2, 1, 1), PairedTable(1, 0, 3, 2), PairedTable(0, 3, 0, 0)])
def test_paired_bootstrap_matches_brute_force_enumeration(table):
    cells = ([(1, 1)] * table.both_pass + [(1, 0)] * table.pass_to_fail + [(0, 1)] * table.fail_to_pass
             + [(0, 0)] * table.both_fail)
    exact = _enumerated(cells)
    boot = resampled_differences(table, iterations=200_000, seed=3)
    assert boot.mean() == pytest.approx(exact.mean(), abs=0.005)
    assert boot.var() == pytest.approx(exact.var(), abs=0.005)
    for value in np.unique(exact):  # the whole distribution, not only two moments
        assert np.mean(boot <= value) == pytest.approx(np.mean(exact <= value), abs=0.005)


def test_paired_bootstrap_interval_is_seeded_and_brackets_the_difference():
    t = PairedTable(60, 12, 4, 24)
    a = paired_bootstrap(t, seed=1)
    assert a == paired_bootstrap(t, seed=1)
    assert a.difference == pytest.approx(-0.08)
    assert a.ci.lo < a.difference < a.ci.hi < 0.01
    narrow = paired_bootstrap(t, level=0.5, seed=1)
    assert a.ci.lo < narrow.ci.lo <= narrow.ci.hi < a.ci.hi


def test_no_paired_items_gives_no_interval_and_bad_options_are_refused():
    empty = paired_bootstrap(PairedTable(0, 0, 0, 0))
    assert (empty.difference, empty.ci) == (None, None)
    with pytest.raises(InputError, match="level"):
        paired_bootstrap(PairedTable(1, 0, 0, 0), level=1.5)
    with pytest.raises(InputError, match="iterations"):
        paired_bootstrap(PairedTable(1, 0, 0, 0), iterations=0)
