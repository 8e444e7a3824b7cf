"""Reading records from JSON, JSONL and YAML files, each with the line it starts on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalkit.errors import InputError
from evalkit.io.documents import Record, document_format, read_document, read_records

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(), children, max_size=5),
    max_leaves=25,
)


@pytest.mark.parametrize(("name", "fmt"), [
    ("a.json", "json"), ("a.JSON", "json"), ("noext", "json"), ("a.schema.json", "json"),
    ("a.jsonl", "jsonl"), ("a.ndjson", "jsonl"), ("A.JSONL", "jsonl"),
    ("a.yaml", "yaml"), ("a.yml", "yaml"), ("dir/b.YML", "yaml"),
])
def test_document_format_from_extension(name: str, fmt: str) -> None:
    assert document_format(name) == fmt


# --- JSON -----------------------------------------------------------------------------------------


def test_json_file_is_one_record_without_line(tmp_path: Path) -> None:
    f = tmp_path / "d.json"
    f.write_text('{"a": [1, 2]}\n')
    assert read_records(f) == [Record({"a": [1, 2]}, None)]


@pytest.mark.parametrize(("content", "message"), [
    (b'{"a": 1, "a": 2}', "duplicate key 'a'"),
    (b"\xef\xbb\xbf{}", "byte-order mark"),
    (b"{}\n[]\n", "trailing data"),
    (b"\xff{}", "UTF-8"),
])
def test_json_file_errors_are_input_errors_naming_the_file(tmp_path: Path, content: bytes, message: str) -> None:
    f = tmp_path / "bad.json"
    f.write_bytes(content)
    with pytest.raises(InputError) as info:
        read_records(f)
    assert info.value.file == str(f)
    assert message in info.value.message


def test_fmt_argument_overrides_the_extension(tmp_path: Path) -> None:
    f = tmp_path / "records.txt"
    f.write_text('{"a": 1}\n{"a": 2}\n')
    assert read_records(f, "jsonl") == [Record({"a": 1}, 1), Record({"a": 2}, 2)]
    with pytest.raises(InputError, match="trailing data"):
        read_records(f)


# --- JSONL ----------------------------------------------------------------------------------------


def test_jsonl_records_carry_their_line(tmp_path: Path) -> None:
    f = tmp_path / "r.jsonl"
    f.write_text('{"n": 1}\n\n{"n": 3}\n{"n": 4}\n')
    assert read_records(f) == [Record({"n": 1}, 1), Record({"n": 3}, 3), Record({"n": 4}, 4)]


@pytest.mark.parametrize(("bad", "message"), [
    ('{"n": 1, "n": 2}', "duplicate key"),
    ('{"n": 1}{"n": 2}', "trailing data"),
    ("{not json}", "Expecting"),
])
def test_jsonl_error_has_the_line_number(tmp_path: Path, bad: str, message: str) -> None:
    f = tmp_path / "r.jsonl"
    f.write_text(f'{{"n": 1}}\n{{"n": 2}}\n\n{{"n": 4}}\n{bad}\n')
    with pytest.raises(InputError) as info:
        read_records(f)
    assert info.value.line == 5
    assert message in info.value.message
    assert info.value.render().startswith(f"{f}:5: ")


def test_jsonl_bom_is_an_error_on_line_one(tmp_path: Path) -> None:
    f = tmp_path / "r.jsonl"
    f.write_bytes(b'\xef\xbb\xbf{"n": 1}\n')
    with pytest.raises(InputError, match="byte-order mark") as info:
        read_records(f)
    assert info.value.line == 1


# --- YAML -----------------------------------------------------------------------------------------


def test_yaml_single_document(tmp_path: Path) -> None:
    f = tmp_path / "m.yaml"
    f.write_text("subject: s\nitems:\n  - 1\n  - two\n")
    assert read_records(f) == [Record({"subject": "s", "items": [1, "two"]}, 1)]


def test_yaml_documents_carry_their_starting_line(tmp_path: Path) -> None:
    f = tmp_path / "m.yaml"
    f.write_text("# leading comment\n"   # 1
                 "a: 1\n"                # 2
                 "---\n"                 # 3
                 "b: 2\n"                # 4
                 "c: 3\n"                # 5
                 "--- \n"                # 6
                 "\n"                    # 7
                 "- x\n")                # 8
    records = read_records(f)
    assert [r.value for r in records] == [{"a": 1}, {"b": 2, "c": 3}, ["x"]]
    assert [r.line for r in records] == [2, 4, 8]


def test_yaml_timestamps_stay_strings(tmp_path: Path) -> None:
    f = tmp_path / "t.yaml"
    f.write_text("generatedAt: 2025-03-04T10:15:00Z\nday: 2025-03-04\n")
    assert read_records(f)[0].value == {"generatedAt": "2025-03-04T10:15:00Z", "day": "2025-03-04"}


def test_yaml_empty_file_has_no_records(tmp_path: Path) -> None:
    f = tmp_path / "e.yaml"
    f.write_text("# only a comment\n")
    assert read_records(f) == []


@pytest.mark.parametrize(("text", "line"), [
    ("a: 1\nb: 2\na: 3\n", 3),
    ("outer:\n  k: 1\n  j: 2\n  k: 3\n", 4),
    ("ok: 1\n---\nx: 1\ny:\n  - p: 1\n    p: 2\n", 6),
    ("{a: 1, a: 2}\n", 1),
])
def test_yaml_duplicate_keys_are_errors_with_line(tmp_path: Path, text: str, line: int) -> None:
    f = tmp_path / "dup.yaml"
    f.write_text(text)
    with pytest.raises(InputError) as info:
        read_records(f)
    assert "duplicate key" in info.value.message
    assert info.value.line == line
    assert info.value.render().startswith(f"{f}:{line}: ")


def test_yaml_same_key_in_sibling_mappings_is_fine(tmp_path: Path) -> None:
    f = tmp_path / "ok.yaml"
    f.write_text("- k: 1\n- k: 2\n")
    assert read_records(f)[0].value == [{"k": 1}, {"k": 2}]


def test_yaml_merge_keys_work_and_explicit_duplicates_are_still_caught(tmp_path: Path) -> None:
    f = tmp_path / "merge.yaml"
    f.write_text("base: &b {x: 1, y: 2}\nchild:\n  <<: *b\n  y: 3\n")
    assert read_records(f)[0].value == {"base": {"x": 1, "y": 2}, "child": {"x": 1, "y": 3}}
    f.write_text("base: &b {x: 1}\nchild:\n  <<: *b\n  y: 3\n  y: 4\n")
    with pytest.raises(InputError, match="duplicate key 'y'") as info:
        read_records(f)
    assert info.value.line == 5


def test_yaml_bom_is_an_error(tmp_path: Path) -> None:
    f = tmp_path / "bom.yaml"
    f.write_bytes(b"\xef\xbb\xbfa: 1\n")
    with pytest.raises(InputError, match="byte-order mark") as info:
        read_records(f)
    assert info.value.file == str(f)


def test_yaml_syntax_error_has_the_line(tmp_path: Path) -> None:
    f = tmp_path / "bad.yml"
    f.write_text("a: 1\nb: [1, 2\nc: 3\n")
    with pytest.raises(InputError, match="invalid YAML") as info:
        read_records(f)
    assert info.value.line is not None and info.value.line >= 2


def test_yaml_unsafe_tags_are_refused(tmp_path: Path) -> None:
    f = tmp_path / "unsafe.yaml"
    f.write_text("a: !!python/object/apply:os.system ['true']\n")
    with pytest.raises(InputError, match="invalid YAML") as info:
        read_records(f)
    assert info.value.line == 1


@pytest.mark.slow
def test_yaml_absurdly_deep_nesting_is_an_input_error(tmp_path: Path) -> None:
    f = tmp_path / "deep.yaml"
    f.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(InputError, match="nested too deeply") as info:
        read_records(f)
    assert info.value.file == str(f)


def test_yaml_invalid_utf8_is_an_error(tmp_path: Path) -> None:
    f = tmp_path / "latin.yaml"
    f.write_bytes(b"a: caf\xe9\n")
    with pytest.raises(InputError, match="UTF-8"):
        read_records(f)


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(JSON_VALUES)
def test_safe_dumped_yaml_reads_back_equal(tmp_path_factory: pytest.TempPathFactory, value: Any) -> None:
    f = tmp_path_factory.mktemp("yaml") / "v.yaml"
    f.write_text(yaml.safe_dump(value), encoding="utf-8")
    records = read_records(f)
    assert len(records) == 1
    assert records[0].value == value


@pytest.mark.slow
@settings(max_examples=50, deadline=None)
@given(st.lists(st.dictionaries(st.text(min_size=1), JSON_VALUES, max_size=4), min_size=1, max_size=4))
def test_safe_dumped_multi_document_yaml_reads_back_equal(tmp_path_factory: pytest.TempPathFactory,
                                                          values: list[dict[str, Any]]) -> None:
    f = tmp_path_factory.mktemp("yaml") / "v.yaml"
    f.write_text(yaml.safe_dump_all(values, explicit_start=True), encoding="utf-8")
    assert [r.value for r in read_records(f)] == values


# --- unreadable paths and read_document -----------------------------------------------------------


@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".yaml"])
@pytest.mark.parametrize("make", ["missing", "directory"])
def test_unreadable_path_is_an_input_error(tmp_path: Path, suffix: str, make: str) -> None:
    target = tmp_path / f"thing{suffix}"
    if make == "directory":
        target.mkdir()
    with pytest.raises(InputError) as info:
        read_records(target)
    assert info.value.file == str(target)
    assert "cannot read file" in info.value.message


def test_read_document_returns_the_single_value(tmp_path: Path) -> None:
    f = tmp_path / "one.yaml"
    f.write_text("a: 1\n")
    assert read_document(f) == {"a": 1}


def test_read_document_refuses_several_documents(tmp_path: Path) -> None:
    f = tmp_path / "two.yaml"
    f.write_text("a: 1\n---\nb: 2\n")
    with pytest.raises(InputError, match="expected one document, found 2"):
        read_document(f)
