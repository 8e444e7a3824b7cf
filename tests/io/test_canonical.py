"""Canonical JSON: two-space indent, sorted keys, final newline, UTF-8 text, no NaN; one line per record."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.io import canonical_dumps, canonical_line, loads_strict

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(), children, max_size=5),
    max_leaves=30,
)


def test_document_layout_is_exact() -> None:
    obj = {"b": [1, {"z": None, "a": True}], "a": "x"}
    assert canonical_dumps(obj) == (
        "{\n"
        '  "a": "x",\n'
        '  "b": [\n'
        "    1,\n"
        "    {\n"
        '      "a": true,\n'
        '      "z": null\n'
        "    }\n"
        "  ]\n"
        "}\n"
    )


def test_keys_are_sorted_at_every_level() -> None:
    text = canonical_dumps({"b": 1, "a": {"d": 1, "c": 2}, "C": 0})
    assert text.index('"C"') < text.index('"a"') < text.index('"b"')
    assert text.index('"c"') < text.index('"d"')


def test_insertion_order_does_not_change_the_bytes() -> None:
    assert canonical_dumps({"x": 1, "y": {"p": 1, "q": 2}}) == canonical_dumps({"y": {"q": 2, "p": 1}, "x": 1})
    assert canonical_line({"x": 1, "y": 2}) == canonical_line({"y": 2, "x": 1})


def test_document_ends_with_exactly_one_newline() -> None:
    for obj in ({}, [], {"a": 1}, "s", 0, None):
        text = canonical_dumps(obj)
        assert text.endswith("\n") and not text.endswith("\n\n")


def test_indent_is_two_spaces() -> None:
    lines = canonical_dumps({"a": {"b": 1}}).splitlines()
    assert lines[1] == '  "a": {'
    assert lines[2] == '    "b": 1'


def test_non_ascii_is_kept_as_utf8_text() -> None:
    assert canonical_dumps({"k": "café €"}) == '{\n  "k": "café €"\n}\n'
    assert canonical_line(["ü"]) == '["ü"]\n'


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf"), {"x": [float("nan")]}])
def test_nan_and_infinity_are_refused(bad: Any) -> None:
    with pytest.raises(ValueError):
        canonical_dumps(bad)
    with pytest.raises(ValueError):
        canonical_line(bad)


def test_line_is_compact_sorted_and_newline_terminated() -> None:
    assert canonical_line({"b": [1, 2], "a": {"y": None, "x": "s"}}) == '{"a":{"x":"s","y":null},"b":[1,2]}\n'


def test_line_escapes_newlines_inside_strings() -> None:
    line = canonical_line({"t": "one\ntwo\r\nthree"})
    assert line.count("\n") == 1 and line.endswith("\n")
    assert "\r" not in line
    assert json.loads(line) == {"t": "one\ntwo\r\nthree"}


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(JSON_VALUES)
def test_dumps_then_strict_load_returns_an_equal_value(value: Any) -> None:
    assert loads_strict(canonical_dumps(value)) == value


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(JSON_VALUES)
def test_dumps_is_idempotent(value: Any) -> None:
    once = canonical_dumps(value)
    assert canonical_dumps(loads_strict(once)) == once


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(JSON_VALUES)
def test_line_has_no_newline_inside_and_round_trips(value: Any) -> None:
    line = canonical_line(value)
    assert line.endswith("\n")
    body = line[:-1]
    assert "\n" not in body and "\r" not in body
    assert loads_strict(line) == value
    assert canonical_line(loads_strict(line)) == line


@settings(max_examples=100, deadline=None)
@given(JSON_VALUES)
def test_line_and_document_carry_the_same_value(value: Any) -> None:
    assert loads_strict(canonical_line(value)) == loads_strict(canonical_dumps(value))


@pytest.mark.parametrize("value", [
    {"b": 1e-05, "a": [1.5e-07, 2.5, -0.0, 1e16]},   # floats orjson writes differently
    {"big": 2**70, "neg": -(2**65)},                 # integers beyond 64 bits
    {"s": "lone \ud800 surrogate"},                  # orjson refuses lone surrogates
    {"text": "0.00001 looks like a float"},          # a marker inside a string: still identical
    {"k": "東京 🚀", "n": None, "t": True, "x": [{"z": 1, "y": 2}]},
])
def test_the_fast_compact_writer_gives_json_s_bytes(value):
    import json

    from evalkit.io.canonical import compact_sorted_json

    assert compact_sorted_json(value) == json.dumps(value, sort_keys=True, separators=(",", ":"),
                                                    ensure_ascii=False)


def test_canonical_line_refuses_non_finite_floats_and_non_json_types():
    import datetime

    with pytest.raises(ValueError):
        canonical_line({"x": float("nan")})
    with pytest.raises(TypeError):
        canonical_line({"when": datetime.datetime(2026, 1, 1)})
