"""Strict JSON reading: no BOM, no duplicate keys, no trailing data, no NaN; errors name file and line."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.io import (
    InputError,
    StrictJSONError,
    canonical_line,
    iter_jsonl_strict,
    loads_strict,
    read_json_strict,
)
from evalkit.io.json_values import MAX_NESTING

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(), children, max_size=5),
    max_leaves=25,
)


# --- loads_strict ---------------------------------------------------------------------------------


def test_plain_json_parses_to_the_same_value() -> None:
    assert loads_strict('{"a": [1, 2.5, null, true, "x"], "b": {}}') == {
        "a": [1, 2.5, None, True, "x"], "b": {}}
    assert loads_strict(b'{"caf\xc3\xa9": "\xe2\x82\xac"}') == {"café": "€"}


def test_whitespace_after_the_value_is_not_trailing_data() -> None:
    assert loads_strict("{}\n\n  \t\n") == {}


@pytest.mark.parametrize("text", [
    '{"a": 1, "a": 2}',
    '{"outer": {"k": 1, "k": 1}}',
    '[{"x": 1}, {"y": 1, "y": 2}]',
])
def test_duplicate_keys_are_refused_at_any_depth(text: str) -> None:
    with pytest.raises(StrictJSONError, match="duplicate key"):
        loads_strict(text)


def test_duplicate_key_error_names_the_key_and_file() -> None:
    with pytest.raises(StrictJSONError) as info:
        loads_strict('{"traceId": "a", "traceId": "b"}', file="f.json")
    assert "'traceId'" in info.value.message
    assert info.value.render().startswith("f.json")


def test_same_key_in_sibling_objects_is_fine() -> None:
    assert loads_strict('[{"a": 1}, {"a": 2}]') == [{"a": 1}, {"a": 2}]


@pytest.mark.parametrize("data", [b"\xef\xbb\xbf{}", "\ufeff{}"])
def test_byte_order_mark_is_refused(data: bytes | str) -> None:
    with pytest.raises(StrictJSONError, match="byte-order mark"):
        loads_strict(data, file="bom.json")


@pytest.mark.parametrize("text", ["{} {}", '{"a": 1}x', "[1] [2]", "1 2", '{"a": 1}\n{"b": 2}\n'])
def test_trailing_data_is_refused(text: str) -> None:
    with pytest.raises(StrictJSONError, match="trailing data"):
        loads_strict(text)


def test_trailing_data_error_gives_the_line_it_starts_on() -> None:
    with pytest.raises(StrictJSONError) as info:
        loads_strict('{\n  "a": 1\n}\n{"b": 2}\n', file="two.json")
    assert info.value.line == 4
    assert info.value.render().startswith("two.json:4: ")


@pytest.mark.parametrize("text", ["NaN", "[Infinity]", '{"x": -Infinity}', '{"x": NaN}'])
def test_nan_and_infinity_are_refused(text: str) -> None:
    with pytest.raises(StrictJSONError, match="not JSON"):
        loads_strict(text)


def test_invalid_utf8_is_refused() -> None:
    with pytest.raises(StrictJSONError, match="UTF-8"):
        loads_strict(b'{"a": "\xff"}')


def test_syntax_error_reports_line_within_the_text() -> None:
    with pytest.raises(StrictJSONError) as info:
        loads_strict('{\n  "a": 1,\n  "b": \n}\n', file="s.json")
    assert info.value.line == 4
    assert info.value.file == "s.json"


def test_syntax_error_line_is_offset_by_the_starting_line() -> None:
    with pytest.raises(StrictJSONError) as info:
        loads_strict('{"a": }', file="r.jsonl", line=7)
    assert info.value.line == 7
    assert info.value.render().startswith("r.jsonl:7: ")


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, '{"a":' * 50_000 + "1" + "}" * 50_000])
def test_absurdly_deep_nesting_is_an_error_not_a_crash(text: str) -> None:
    with pytest.raises(StrictJSONError, match="nested too deeply") as info:
        loads_strict(text, file="deep.json")
    assert info.value.file == "deep.json"


def test_nesting_up_to_the_limit_is_kept_exactly() -> None:
    value = loads_strict("[" * MAX_NESTING + "]" * MAX_NESTING)
    depth = 0
    while value:
        assert value == [value[0]]
        value, depth = value[0], depth + 1
    assert (value, depth) == ([], MAX_NESTING - 1)


@pytest.mark.parametrize("text", ["[" * (MAX_NESTING + 1) + "]" * (MAX_NESTING + 1),
                                  '{"a":' * (MAX_NESTING + 1) + "1" + "}" * (MAX_NESTING + 1)])
def test_one_level_past_the_limit_is_refused(text: str) -> None:
    # orjson reads 1024 levels and pydantic writes about 255: the limit is one policy for every reader.
    with pytest.raises(StrictJSONError, match="nested too deeply") as info:
        loads_strict(text, file="deep.json", line=3)
    assert info.value.render().startswith("deep.json:3: ")


def test_empty_text_is_an_error() -> None:
    with pytest.raises(StrictJSONError):
        loads_strict("")


def test_strict_error_is_an_input_error_and_a_value_error() -> None:
    with pytest.raises(InputError):
        loads_strict("{")
    with pytest.raises(ValueError):
        loads_strict("{")


# --- read_json_strict -----------------------------------------------------------------------------


def test_read_json_strict_reads_a_file(tmp_path: Path) -> None:
    f = tmp_path / "doc.json"
    f.write_text('{"k": [1, 2]}\n', encoding="utf-8")
    assert read_json_strict(f) == {"k": [1, 2]}


def test_read_json_strict_names_the_file_on_duplicate_key(tmp_path: Path) -> None:
    f = tmp_path / "dup.json"
    f.write_text('{"k": 1,\n "k": 2}\n', encoding="utf-8")
    with pytest.raises(StrictJSONError) as info:
        read_json_strict(f)
    assert info.value.file == str(f)
    assert "duplicate key 'k'" in info.value.render()


def test_read_json_strict_refuses_bom_file(tmp_path: Path) -> None:
    f = tmp_path / "bom.json"
    f.write_bytes(b"\xef\xbb\xbf{}")
    with pytest.raises(StrictJSONError, match="byte-order mark"):
        read_json_strict(f)


@pytest.mark.parametrize("make", ["missing", "directory"])
def test_read_json_strict_unreadable_path_is_an_input_error(tmp_path: Path, make: str) -> None:
    target = tmp_path / "nothing.json"
    if make == "directory":
        target.mkdir()
    with pytest.raises(InputError) as info:
        read_json_strict(target)
    assert info.value.file == str(target)
    assert "cannot read file" in info.value.message


# --- iter_jsonl_strict ----------------------------------------------------------------------------


def test_jsonl_yields_line_numbers_and_skips_blank_lines(tmp_path: Path) -> None:
    f = tmp_path / "r.jsonl"
    f.write_bytes(b'{"a": 1}\n\n   \n[2]\r\n"three"\n')
    assert list(iter_jsonl_strict(f)) == [(1, {"a": 1}), (4, [2]), (5, "three")]


def test_jsonl_last_line_without_newline(tmp_path: Path) -> None:
    f = tmp_path / "r.jsonl"
    f.write_bytes(b'1\n2')
    assert list(iter_jsonl_strict(f)) == [(1, 1), (2, 2)]


@pytest.mark.parametrize(("third", "message"), [
    ('{"a": 1, "a": 2}', "duplicate key"),
    ('{"a": 1} {"b": 2}', "trailing data"),
    ('{"a": NaN}', "not JSON"),
    ('{"a": ', "Expecting"),
])
def test_jsonl_error_names_the_line(tmp_path: Path, third: str, message: str) -> None:
    f = tmp_path / "r.jsonl"
    f.write_text(f'{{"ok": 1}}\n{{"ok": 2}}\n{third}\n{{"ok": 4}}\n', encoding="utf-8")
    seen = []
    with pytest.raises(StrictJSONError) as info:
        for lineno, value in iter_jsonl_strict(f):
            seen.append((lineno, value))
    assert seen == [(1, {"ok": 1}), (2, {"ok": 2})]
    assert info.value.line == 3
    assert message in info.value.message
    assert info.value.render().startswith(f"{f}:3: ")


def test_jsonl_bom_is_refused_on_line_one(tmp_path: Path) -> None:
    f = tmp_path / "bom.jsonl"
    f.write_bytes(b'\xef\xbb\xbf{"a": 1}\n')
    with pytest.raises(StrictJSONError, match="byte-order mark") as info:
        list(iter_jsonl_strict(f))
    assert info.value.line == 1


def test_jsonl_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read file"):
        list(iter_jsonl_strict(tmp_path / "absent.jsonl"))


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(st.lists(JSON_VALUES, max_size=8))
def test_jsonl_round_trips_values_written_with_canonical_line(tmp_path_factory: pytest.TempPathFactory,
                                                              values: list[Any]) -> None:
    f = tmp_path_factory.mktemp("jsonl") / "values.jsonl"
    f.write_text("".join(canonical_line(v) for v in values), encoding="utf-8")
    read = list(iter_jsonl_strict(f))
    assert [value for _, value in read] == values
    assert [lineno for lineno, _ in read] == list(range(1, len(values) + 1))


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_finite_floats_read_back_exactly(x: float) -> None:
    back = loads_strict(canonical_line(x))
    assert back == x and math.copysign(1.0, back) == math.copysign(1.0, x)


# --- one policy, fast path included -----------------------------------------------------------------

EXACT_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4),
    max_leaves=20,
)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(EXACT_VALUES, st.sampled_from([None, 0, 2]), st.booleans())
def test_every_layout_reads_back_the_exact_value(value: Any, indent: int | None, ascii_only: bool) -> None:
    import json

    text = json.dumps(value, indent=indent, ensure_ascii=ascii_only)
    back = loads_strict(text.encode())
    assert back == value
    assert repr(back) == repr(value)  # an integer stays an integer, however large


@pytest.mark.parametrize("text", [
    '{"id":"a","id":"b"}', '{"id" : "a", "id" : "b"}', '{"id":"a","x":{"k":1,"k":1}}',
    '{"id":"a","id":"b\\u003a"}', '{"id":"a","id":"b\\u003A\\u003a"}', '[{"a":1},{"b":2,"b":2}]',
    '{"a":"x:y","a":"x:y:z"}',
])
def test_a_duplicate_key_is_found_however_the_text_is_written(text: str) -> None:
    with pytest.raises(StrictJSONError, match="duplicate key"):
        loads_strict(text.encode())


def test_huge_integers_are_exact_and_numbers_beyond_a_double_are_refused() -> None:
    assert loads_strict(b"[123456789012345678901234567890, -18446744073709551617]") == [
        123456789012345678901234567890, -18446744073709551617]
    assert loads_strict(b"1" + b"0" * 400) == 10**400
    with pytest.raises(StrictJSONError, match="too large for a double"):
        loads_strict(b'{"x": 1e400}', file="f.json")
    with pytest.raises(StrictJSONError, match="more than 4300 digits"):
        loads_strict(b"1" * 5000)


@pytest.mark.parametrize("text", ['"\\ud800"', '["ok", "\\udfff"]', '{"\\ud83d": 1}'])
def test_a_lone_surrogate_is_refused(text: str) -> None:
    with pytest.raises(StrictJSONError, match="lone surrogate"):
        loads_strict(text.encode())
    assert loads_strict(b'"\\ud83d\\ude00"') == "\U0001f600"  # a pair is one character
