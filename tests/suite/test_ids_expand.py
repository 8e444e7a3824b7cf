"""Case ids match the seed evaluator's (FNV-1a over UTF-16 code units) and expansion never truncates."""

import pytest

from evalkit.contracts.dataset import Dimension
from evalkit.suite import (
    MAX_TUPLES,
    TooManyTuples,
    case_id,
    expand_tuples,
    fnv1a32,
    tuple_key,
    uncovered_tuples,
)


def _ref_utf16le(text: str) -> str:
    """Reference: FNV-1a over the 16-bit code units read from the UTF-16LE bytes."""
    data = text.encode("utf-16-le", "surrogatepass")
    h = 0x811C9DC5
    for unit in (int.from_bytes(data[i:i + 2], "little") for i in range(0, len(data), 2)):
        h = ((h ^ unit) * 0x01000193) % 2**32
    return f"{h:08x}"


def _code_units(text: str) -> list[int]:
    """What JavaScript's charCodeAt yields, computed from code points by the surrogate formula."""
    units = []
    for ch in text:
        cp = ord(ch)
        if cp < 0x10000:
            units.append(cp)
        else:
            units += [0xD800 + ((cp - 0x10000) >> 10), 0xDC00 + ((cp - 0x10000) & 0x3FF)]
    return units


def _ref_units(text: str) -> str:
    h = 0x811C9DC5
    for unit in _code_units(text):
        h ^= unit
        h = (h * 16777619) & 0xFFFFFFFF
    return f"{h:08x}"


QUERIES = [
    "Where is my order ORD-2026-123456?",  # ASCII
    "Ich möchte eine Rückerstattung für die Kaffeemühle, bitte.",  # Latin-1 range
    "配送が遅れています。注文番号は ORD-2026-000001 です。",  # BMP, three UTF-8 bytes each
    "My parcel arrived 😡 and the mug was 🔨 broken",  # astral plane: surrogate pairs
    "𝒜𝒷𝒸 — 🧾 receipt",  # astral letters next to BMP punctuation
]


@pytest.mark.parametrize("query", QUERIES)
def test_case_id_hashes_utf16_code_units(query):
    key = tuple_key({"intent": "refund_request", "channel": "chat"})
    got = case_id({"channel": "chat", "intent": "refund_request"}, query)
    assert got == "case-" + _ref_utf16le(key + "::" + query) == "case-" + _ref_units(key + "::" + query)
    assert len(got) == len("case-") + 8


def test_known_values_checked_by_hand():
    # The empty string is the offset basis itself.
    assert fnv1a32("") == "811c9dc5"
    # "a" by hand: 0x811c9dc5 ^ 0x61 = 0x811c9da4. Times the prime 0x01000193 = 0x193 + (1 << 24):
    # 0x811c9da4 * 0x193 = 0xcb400c292c -> 0x400c292c mod 2**32; 0x811c9da4 << 24 -> 0xa4000000 mod 2**32;
    # 0x400c292c + 0xa4000000 = 0xe40c292c, the published FNV-1a 32-bit test vector for "a".
    h = 0x811C9DC5 ^ 0x61
    assert h == 0x811C9DA4
    assert (h * 0x01000193) % 2**32 == 0xE40C292C  # the published FNV-1a 32-bit test vector for "a"
    assert fnv1a32("a") == "e40c292c"
    # U+1F600 is the two code units 0xD83D 0xDE00: two steps, not one step over 0x1F600 or four UTF-8 bytes.
    step1 = ((0x811C9DC5 ^ 0xD83D) * 0x01000193) % 2**32
    step2 = ((step1 ^ 0xDE00) * 0x01000193) % 2**32
    assert fnv1a32("\U0001F600") == f"{step2:08x}"
    one_step = ((0x811C9DC5 ^ 0x1F600) * 0x01000193) % 2**32
    assert fnv1a32("\U0001F600") != f"{one_step:08x}"


def test_utf8_bytes_would_give_other_ids():
    def fnv_utf8(text: str) -> str:
        h = 0x811C9DC5
        for byte in text.encode("utf-8"):
            h = ((h ^ byte) * 0x01000193) % 2**32
        return f"{h:08x}"

    assert fnv1a32("plain ascii") == fnv_utf8("plain ascii")  # one unit per byte: same
    assert fnv1a32("naïve ☕ 😀") != fnv_utf8("naïve ☕ 😀")


def test_tuple_key_sorts_names_and_ids_ignore_dict_order():
    assert tuple_key({"b": "2", "a": "1"}) == "a=1\x01b=2"
    assert case_id({"b": "2", "a": "1"}, "q") == case_id({"a": "1", "b": "2"}, "q")
    assert case_id({"a": "1"}, "q") != case_id({"a": "1"}, "q ")


def test_sample_dataset_ids_are_the_suite_ids():
    from evalkit.sample_subject.specs import build_dataset

    for case in build_dataset(7).cases:
        assert case.id == case_id(case.tuple, case.query)


def _dims(*sizes: int) -> list[Dimension]:
    return [Dimension(name=f"d{i}", values=[f"v{j}" for j in range(n)]) for i, n in enumerate(sizes)]


def test_expand_is_the_cartesian_product_in_order():
    dims = [Dimension(name="intent", values=["refund", "status"]), Dimension(name="tier", values=["a", "b", "c"])]
    tuples = expand_tuples(dims)
    assert len(tuples) == 6
    assert tuples[0] == {"intent": "refund", "tier": "a"} and tuples[-1] == {"intent": "status", "tier": "c"}
    assert len({tuple_key(t) for t in tuples}) == 6


def test_expand_at_the_cap_is_allowed_past_it_raises_never_truncates():
    assert MAX_TUPLES == 5000
    assert len(expand_tuples(_dims(50, 100))) == 5000
    with pytest.raises(TooManyTuples, match=r"5,001 tuples, more than the cap of 5,000"):
        expand_tuples(_dims(3, 1667))
    with pytest.raises(TooManyTuples, match="d0 \\(10\\) x d1 \\(10\\) x d2 \\(10\\) x d3 \\(10\\)"):
        expand_tuples(_dims(10, 10, 10, 10))


def test_expand_refuses_a_dimension_named_twice():
    with pytest.raises(ValueError, match="d0 is named more than once"):
        expand_tuples([*_dims(2), *_dims(3)])


def test_uncovered_tuples_are_those_no_case_realises():
    dims = _dims(2, 2)
    left = uncovered_tuples(dims, [{"d0": "v0", "d1": "v1"}, {"d0": "v1", "d1": "v1", "outcome": "fail"}])
    assert left == [{"d0": "v0", "d1": "v0"}, {"d0": "v1", "d1": "v0"}]
