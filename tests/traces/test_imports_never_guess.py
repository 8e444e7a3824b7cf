"""Imports that never guess silently (issue 35 item 5): a native file gone wrong is refused, not re-read as
another format; a file whose records are of two formats is refused record by record; Jaeger's values are
checked, not dropped or mis-read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.cli import main

NATIVE = [{"id": f"tr-{i}", "input": "hi", "output": "done", "observations": [
    {"id": "o1", "type": "GENERATION", "name": "llm", "input": "hi", "output": "hello"},
    {"id": "o2", "type": "TOOL", "name": "search", "parentId": "o1", "input": {"q": 1}, "output": "x"}]}
    for i in range(3)]


def _import(capsys: pytest.CaptureFixture[str], tmp_path: Path, records: list | dict, *extra: str,
            name: str = "t.jsonl") -> tuple[int, str, Path]:
    src = tmp_path / name
    if isinstance(records, list) and name.endswith(".jsonl"):
        src.write_text("".join(json.dumps(r) + "\n" for r in records))
    else:
        src.write_text(json.dumps(records))
    out = tmp_path / "out.jsonl"
    code = main(["traces", "import", str(src), "--out", str(out), *extra])
    captured = capsys.readouterr()
    return code, captured.out + captured.err, out


@pytest.mark.parametrize("bad", [None, {}, 3, "x"])
def test_a_native_record_whose_observations_are_not_a_list_is_refused_not_read_as_single_turn(
        capsys, tmp_path, bad):
    records = [dict(NATIVE[0], observations=bad), *NATIVE[1:]]
    code, said, out = _import(capsys, tmp_path, records)
    assert code == 1 and not out.exists()
    assert f"{tmp_path / 't.jsonl'}:1: observations: Input should be a valid list" in said


@pytest.mark.parametrize("where", ["trace", "observation"])
def test_an_unknown_field_in_the_first_native_record_is_an_error_naming_it(capsys, tmp_path, where):
    first = json.loads(json.dumps(NATIVE[0]))
    (first if where == "trace" else first["observations"][1])["reviewerNote"] = "kept?"
    code, said, out = _import(capsys, tmp_path, [first, *NATIVE[1:]])
    assert code == 1 and not out.exists()
    field = "reviewerNote" if where == "trace" else "observations[1].reviewerNote"
    assert f"t.jsonl:1: {field}: unknown field" in said


def test_a_langfuse_trace_is_still_read_as_langfuse(capsys, tmp_path):
    trace = {"id": "lf-1", "timestamp": "2026-01-01T00:00:00Z", "name": "run", "observations": [
        {"id": "o1", "traceId": "lf-1", "type": "GENERATION", "name": "llm", "startTime": "2026-01-01T00:00:00Z"}]}
    code, said, out = _import(capsys, tmp_path, [trace])
    assert code == 0, said
    assert json.loads(out.read_text())["metadata"]["source"] == "langfuse"


def test_a_file_of_two_formats_is_refused_at_the_first_record_of_the_other(capsys, tmp_path):
    records = [{"id": "s1", "input": "hi", "output": "yo"}, NATIVE[0], {"id": "s2", "input": "a", "output": "b"}]
    code, said, out = _import(capsys, tmp_path, records)
    assert code == 1 and not out.exists()
    assert ("t.jsonl:2: record is in the 'evalkit' format, but the file's first record is 'single-turn'"
            in said)
    # skipped with --skip-invalid, counted and kept aside, never read as a prompt/response record
    code, said, out = _import(capsys, tmp_path, records, "--skip-invalid")
    assert code == 0
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ["s1", "s2"]
    assert "skipped 1 invalid record" in said
    quarantined = json.loads(out.with_name("out.jsonl.quarantine.jsonl").read_text())
    assert (quarantined["line"], quarantined["record"]["id"]) == (2, "tr-0")


def _jaeger(**span_fields: object) -> dict:
    span = {"traceID": "3f2a1b0c9d8e7f60a1b2c3d4e5f60718", "spanID": "a000000000000001",
            "operationName": "chat", "startTime": 1705000000000000, "duration": 1000, "tags": []}
    return {"data": [{"traceID": span["traceID"], "spans": [dict(span, **span_fields)], "processes": {}}]}


@pytest.mark.parametrize(("fields", "message"), [
    ({"duration": -5}, "data[0].spans[0].duration: a Jaeger span's duration is whole microseconds, 0 or more"),
    ({"duration": 1e308}, "data[0].spans[0].duration: a Jaeger span's duration is whole microseconds"),
    ({"duration": "5"}, "data[0].spans[0].duration: a Jaeger span's duration is whole microseconds"),
    ({"references": ["x"]}, "data[0].spans[0].references[0]: must be an object"),
    ({"references": [{"refType": "PARENT", "spanID": "a000000000000002"}]},
     "data[0].spans[0].references[0].refType: refType is CHILD_OF or FOLLOWS_FROM"),
    ({"tags": [{"key": "k", "type": "string", "value": {"nested": 1}}]},
     "data[0].spans[0].tags[0].value: a Jaeger tag's value is a string, number or boolean, not dict"),
    ({"tags": [{"key": "k", "type": "object", "value": "v"}]}, "data[0].spans[0].tags[0].type: a Jaeger tag's type"),
])
def test_jaeger_values_are_checked(capsys, tmp_path, fields, message):
    code, said, out = _import(capsys, tmp_path, _jaeger(**fields), name="jaeger.json")
    assert code == 1 and not out.exists(), said
    assert f"jaeger.json: {message}" in said and "Traceback" not in said


def test_a_good_jaeger_span_still_imports_with_its_end(capsys, tmp_path):
    parent = {"refType": "CHILD_OF", "traceID": "3f2a1b0c9d8e7f60a1b2c3d4e5f60718", "spanID": "a000000000000002"}
    code, said, out = _import(capsys, tmp_path, _jaeger(references=[parent],
                                                        tags=[{"key": "k", "type": "int64", "value": "7"}]),
                              name="jaeger.json")
    assert code == 0, said
    observation = json.loads(out.read_text())["observations"][0]
    assert observation["endTime"] == "2024-01-11T19:06:40.001000Z"
