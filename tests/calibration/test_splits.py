"""Label splits: deterministic, stratified, disjoint by trace, order-independent, respecting splits."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from evalkit.calibration import split_labels
from evalkit.contracts.labels import HumanLabel
from evalkit.errors import InputError


def _labels(passes: int, fails: int, defers: int = 0) -> list[HumanLabel]:
    out = [HumanLabel(trace_id=f"p{i:03d}", label="pass") for i in range(passes)]
    out += [HumanLabel(trace_id=f"f{i:03d}", label="fail") for i in range(fails)]
    out += [HumanLabel(trace_id=f"d{i:03d}", label="defer") for i in range(defers)]
    return out


def _ids(labels: list[HumanLabel]) -> list[str]:
    return [lb.trace_id for lb in labels]


def test_split_sizes_follow_the_fractions_within_each_label():
    splits = split_labels(_labels(60, 40))
    for split, share in zip(splits, (0.15, 0.40, 0.45), strict=True):
        counts = Counter(lb.label for lb in split)
        assert counts["pass"] == round(60 * share)
        assert counts["fail"] == round(40 * share)
    assert {lb.split for lb in splits.test} == {"test"}
    assert {lb.split for lb in splits.train} == {"train"}


def test_splits_are_disjoint_and_cover_every_label():
    labels = _labels(33, 17, 5)
    train, dev, test = split_labels(labels)
    ids = [set(_ids(s)) for s in (train, dev, test)]
    assert not (ids[0] & ids[1] or ids[0] & ids[2] or ids[1] & ids[2])
    assert len(train) + len(dev) + len(test) == len(labels)


def test_same_split_whatever_the_input_order_and_different_with_another_seed():
    labels = _labels(50, 30)
    shuffled = labels[:]
    random.Random(1).shuffle(shuffled)
    assert split_labels(labels) == split_labels(shuffled)
    assert _ids(split_labels(labels).test) != _ids(split_labels(labels, seed=1).test)


def test_existing_splits_are_kept_and_only_new_labels_are_placed():
    labels = _labels(20, 20)
    labels[0] = labels[0].model_copy(update={"split": "train"})
    labels[25] = labels[25].model_copy(update={"split": "test"})
    train, _, test = split_labels(labels)
    assert "p000" in _ids(train) and "f005" in _ids(test)
    again = split_labels([*train, *split_labels(labels).dev, *test])
    assert again == split_labels(labels)


def test_all_labels_of_a_trace_land_in_one_split():
    labels = [HumanLabel(trace_id=f"t{i}", label="pass", criterion_id="a") for i in range(30)]
    labels += [HumanLabel(trace_id=f"t{i}", label="fail", criterion_id="b") for i in range(30)]
    where = {}
    for split in split_labels(labels):
        for lb in split:
            assert where.setdefault(lb.trace_id, lb.split) == lb.split


def test_a_trace_named_in_two_splits_is_an_error():
    labels = [HumanLabel(trace_id="t1", label="pass", split="dev"),
              HumanLabel(trace_id="t1", label="fail", split="test", criterion_id="b")]
    with pytest.raises(InputError, match=r"labels\[1\]\.split: trace 't1' is in both 'dev' and 'test'"):
        split_labels(labels)


def test_without_stratification_the_overall_shares_still_hold():
    splits = split_labels(_labels(7, 93), stratify=False)
    assert [len(s) for s in splits] == [15, 40, 45]


@pytest.mark.parametrize("fractions", [(0.5, 0.5), (0.2, 0.2, 0.2), (-0.1, 0.6, 0.5)])
def test_bad_fractions_are_refused(fractions):
    with pytest.raises(InputError, match="fractions"):
        split_labels(_labels(5, 5), fractions=fractions)
