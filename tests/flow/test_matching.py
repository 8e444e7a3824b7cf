import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.flow.matching import REUSE_MIN_PREFIX, ValueFinder, common_prefix_len


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab", max_size=600), st.text(alphabet="ab", max_size=600),
       st.text(alphabet="ab", max_size=50))
def test_common_prefix_len(shared, a_tail, b_tail):
    a, b = shared + a_tail, shared + b_tail
    expected = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    assert common_prefix_len(a, b) == expected


def found(finder, text):
    return set(finder.find(text).ids)


def test_a_value_straddling_the_reused_prefix_is_found():
    prefix = "x" * (REUSE_MIN_PREFIX + 500)
    value = "xxxneedle-0123456789"
    finder = ValueFinder([value, "zz-unrelated-zz"])
    assert found(finder, prefix + "tail one") == set()
    # The value starts 3 characters before the end of what the two texts share.
    text = prefix[:-5] + value + " more"
    assert common_prefix_len(prefix + "tail one", text) == len(prefix) - 2
    assert found(finder, text) == {0}


def test_values_after_the_shared_prefix_are_not_inherited():
    head = "y" * (REUSE_MIN_PREFIX + 100)
    finder = ValueFinder(["early-value-AAA", "late-value-BBB"])
    assert found(finder, head + "early-value-AAA" + "z" * 50 + "late-value-BBB") == {0, 1}
    assert found(finder, head + "early-value-AAA" + "z" * 50) == {0}
    assert found(finder, head + "q" * 10) == set()


def test_overlapping_and_nested_values_are_all_found():
    values = ["abcabc", "bca", "cab", "abc", "c", "zzz"]
    finder = ValueFinder(values)
    assert found(finder, "xabcabcx") == {0, 1, 2, 3, 4}


def test_an_empty_value_is_refused():
    with pytest.raises(ValueError, match="empty"):
        ValueFinder(["ok-value", ""])


def test_no_values_finds_nothing():
    assert ValueFinder([]).find("anything at all").ids == []


def test_matches_naive_search_on_growing_and_interleaved_conversations():
    rng = random.Random(7)
    words = ["alpha", "beta", "gamma", "delta", "omega", "sigma"]
    values = sorted({" ".join(rng.choice(words) for _ in range(rng.randrange(2, 5))) for _ in range(60)})
    finder = ValueFinder(values)
    conversations = [["system prompt " * 200], ["system prompt " * 200, "a different second agent " * 50]]
    for step in range(120):
        conv = conversations[step % 2]
        conv.append(" ".join(rng.choice(words) for _ in range(rng.randrange(5, 40))))
        text = "|".join(conv) + ("]" if step % 3 else "] trailing")
        if step % 7 == 0:
            text = text[: len(text) // 2]  # a text that is a prefix of an earlier one
        assert found(finder, text) == {i for i, v in enumerate(values) if v in text}, step


def test_many_distinct_long_texts_stay_correct_when_old_groups_are_forgotten():
    values = ["needle-one-111", "needle-two-222"]
    finder = ValueFinder(values)
    texts = [f"head {i:03d} " + "filler " * 400 + ("needle-one-111" if i % 2 else "needle-two-222")
             for i in range(80)]
    for text in texts + texts[:3]:
        assert found(finder, text) == {i for i, v in enumerate(values) if v in text}
