import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.contracts.trace import Observation
from evalkit.flow.slots import (
    consumer_text,
    draft_consumer_text,
    output_slots,
    slot_names,
    sorted_json,
    value_string,
)


def reference(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def obs(**fields):
    return Observation.model_validate({"id": "o", "type": "TOOL", **fields})


FLOATS_ORJSON_WRITES_DIFFERENTLY = [1e-05, 6e-05, -3.2e-07, 5e-324, float("nan"), float("inf"), float("-inf")]


def test_sorted_json_matches_json_where_orjson_would_not():
    for f in FLOATS_ORJSON_WRITES_DIFFERENTLY:
        value = {"z": [f, {"b": 1, "a": None}], "a": "x"}
        assert sorted_json(value) == reference(value)
    for value in ({"n": 2**70}, {"n": -(2**64)}, ["\ud800 lone surrogate"], {"\udfff": 1}, {1: "int key"}):
        assert sorted_json(value) == reference(value)


def test_sorted_json_keeps_non_ascii_and_sorts_nested_keys():
    value = {"b": {"y": "東京 🚀", "x": [{"d": 1, "c": "café"}]}, "a": 0.5}
    assert sorted_json(value) == '{"a":0.5,"b":{"x":[{"c":"café","d":1}],"y":"東京 🚀"}}'


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=8),
    lambda children: (st.lists(children, max_size=4)
                      | st.dictionaries(st.text(max_size=4), children, max_size=4)),
    max_leaves=20,
)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(json_values)
def test_sorted_json_is_json_dumps(value):
    assert sorted_json(value) == reference(value)


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_draft_consumer_text_is_final_or_flags_small_floats(value):
    text, final = draft_consumer_text(obs(input=value))
    expected = value if isinstance(value, str) else reference(value)
    if final or not any(m in text for m in ("0.0000", *(f"{d}e-" for d in range(10)))):
        assert text == expected


def test_value_string_is_trimmed_string_or_sorted_json():
    assert value_string("  padded value \n") == "padded value"
    assert value_string({"b": 2, "a": [1, 2]}) == '{"a":[1,2],"b":2}'
    assert value_string(12345678901234) == "12345678901234"
    assert value_string(math.pi) == "3.141592653589793"


def test_slots_of_objects_primitives_arrays_and_missing_payloads():
    assert output_slots(obs(output={"b": 1, "a": 2})) == [("a", 2), ("b", 1)]
    assert output_slots(obs(output="text")) == [("_value", "text")]
    assert output_slots(obs(output=[1, 2])) == [("_value", [1, 2])]
    assert output_slots(obs(output=None)) == []
    assert output_slots(obs()) == []
    assert output_slots(obs(output={})) == []
    assert slot_names({"q": 1, "a": 2}, "_text") == ["a", "q"]
    assert slot_names("question", "_text") == ["_text"]
    assert slot_names(0, "_text") == ["_text"]
    assert slot_names(None, "_text") == []


def test_consumer_text_is_the_string_itself_or_json():
    assert consumer_text(obs(input='say "hi"')) == 'say "hi"'
    assert consumer_text(obs(input={"q": 'say "hi"'})) == '{"q":"say \\"hi\\""}'
    assert consumer_text(obs(input=None)) == "null"
