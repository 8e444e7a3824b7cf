"""The value finder behind the flow build agrees with plain substring search on texts made to trip it:
long values that share their first characters (the automaton holds only a key), and conversations
whose texts share long prefixes, with values running across the end of the shared part."""

import random

from evalkit.flow.matching import KEY_LEN, REUSE_MIN_PREFIX, ValueFinder


def _expected(values, text):
    starts = {vid: text.find(value) for vid, value in enumerate(values)}
    ends = sorted((start + len(values[vid]) - 1, vid) for vid, start in starts.items() if start >= 0)
    return [end for end, _ in ends], {vid for _, vid in ends}


def _check(finder, values, text):
    found = finder.find(text)
    first_ends, ids = _expected(values, text)
    assert found.id_set == ids
    assert found.first_ends == first_ends
    assert sorted(zip(found.first_ends, found.ids, strict=True)) == list(zip(found.first_ends, found.ids,
                                                                           strict=True))
    assert {found.ids[k]: end for k, end in enumerate(found.first_ends)} == {
        vid: text.find(values[vid]) + len(values[vid]) - 1 for vid in ids}


def _values(rng):
    shared_key = "k" * (KEY_LEN - 3) + "key"
    values = {shared_key + rng.choice("ab") * n for n in (1, 5, 60, 400, 3000)}  # one key, five values
    values |= {"".join(rng.choice("abc") for _ in range(rng.randrange(3, 9))) for _ in range(40)}
    values |= {"".join(rng.choice("abc") for _ in range(rng.randrange(KEY_LEN, 4 * KEY_LEN))) for _ in range(60)}
    values.add(shared_key)  # a value that is its key exactly, and the key of the others
    return sorted(values)


def test_finder_agrees_with_substring_search_on_growing_conversations():
    rng = random.Random(11)
    values = _values(rng)
    finder = ValueFinder(values)
    head = "H" * 80  # texts of one conversation start alike, as a model input with its system prompt
    text = head
    for step in range(120):
        # A turn later: the conversation so far, cut a little before its end (a closing bracket), plus
        # new messages holding values whole, cut short, or only their first characters.
        cut = len(text) - rng.randrange(0, 3 * KEY_LEN) if len(text) > REUSE_MIN_PREFIX else len(text)
        parts = [text[:cut]]
        for _ in range(rng.randrange(1, 6)):
            value = rng.choice(values)
            parts.append(rng.choice([value, value[: rng.randrange(1, len(value) + 1)],
                                     "".join(rng.choice("abck") for _ in range(rng.randrange(1, 300)))]))
        text = "".join(parts)
        if step % 40 == 39:
            text = head + text[len(head) + rng.randrange(1, 50):]  # now and then a new conversation
        _check(finder, values, text)


def test_value_running_on_past_the_shared_prefix_is_found():
    long_value = "s" * KEY_LEN + "t" * 5000  # its key lies far before the end of the shared part
    values = [long_value, "short-value-xyz"]
    finder = ValueFinder(values)
    base = "x" * 3000 + long_value[:4000]
    _check(finder, values, base + "]")  # cut short: not there
    _check(finder, values, base + long_value[4000:] + "]")  # the same prefix, now it runs on to its end
    _check(finder, values, base + "short-value-xyz" + long_value[4000:])
