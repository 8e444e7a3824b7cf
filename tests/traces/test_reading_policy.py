"""Nothing lost, nothing swapped, no traceback: what `traces import`, `traces stats` and `validate` do with
files that are almost right (issue #17's reproducers, each as a user would meet it)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from evalkit.cli import main
from evalkit.traces import load

TRACE = {"id": "tr-0001", "name": "run", "observations": [
    {"id": "o1", "type": "GENERATION", "name": "llm", "input": "hi", "output": "hello"}]}


def _run(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


# --- duplicate keys: refused by every reader, with file and line ------------------------------------


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
@pytest.mark.parametrize("command", ["import", "stats"])
def test_a_duplicate_trace_id_key_is_refused_not_imported_under_the_last_value(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, suffix: str, command: str) -> None:
    src = tmp_path / f"traces{suffix}"
    good = json.dumps(TRACE)
    evil = '{"id": "tr-0002", "id": "tr-EVIL", ' + good[len('{"id": "tr-0001", '):]
    src.write_text(f"{good}\n{evil}\n" if suffix == ".jsonl" else f"[{good},\n{evil}]\n")
    out = tmp_path / "out.jsonl"
    args = ["traces", "import", src, "--out", out] if command == "import" else ["traces", "stats", src]
    code, _, err = _run(capsys, *args)
    assert code == 1
    assert f"error: {src}:2: duplicate key 'id'" in err
    assert "Traceback" not in err and not out.exists()


def test_a_duplicate_key_written_with_spaces_or_escapes_is_still_found(tmp_path: Path) -> None:
    # the fast reader proves a record has no duplicate key by counting colons; escapes must not fool it
    src = tmp_path / "t.jsonl"
    src.write_text('{"id" : "tr-1", "observations": [], "id":"tr-\\u003aEVIL"}\n')
    with pytest.raises(ValueError, match="duplicate key 'id'"):
        load(src)


def test_validate_and_import_agree_on_a_duplicate_key(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    src = tmp_path / "traces.jsonl"
    src.write_text('{"id": "a", "id": "b", "observations": []}\n')
    code_v, out_v, err_v = _run(capsys, "validate", "--kind", "trace", src)
    code_i, _, err_i = _run(capsys, "traces", "import", src, "--out", tmp_path / "o.jsonl")
    assert (code_v, code_i) == (1, 1)
    assert "duplicate key 'id'" in out_v + err_v and "duplicate key 'id'" in err_i


# --- values kept exact or refused, the same way everywhere -----------------------------------------


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_integers_beyond_64_bits_are_kept_exact(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                suffix: str) -> None:
    src = tmp_path / "traces.jsonl"
    trace = dict(TRACE, metadata={"big": 123456789012345678901234567890, "neg": -(2**70), "u64": 2**64 - 1})
    src.write_text(json.dumps(trace) + "\n")
    out = tmp_path / f"out{suffix}"
    assert _run(capsys, "traces", "import", src, "--out", out)[0] == 0
    assert load(out)[0].metadata == trace["metadata"]
    if suffix == ".jsonl":
        assert "123456789012345678901234567890" in out.read_text()


@pytest.mark.parametrize(("number", "command"), [("1e400", "import"), ("1e400", "validate"),
                                                 ("-1e400", "import"), ("-1e400", "validate")])
def test_a_number_beyond_a_double_is_refused_by_import_and_validate_alike(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, number: str, command: str) -> None:
    src = tmp_path / "traces.jsonl"
    src.write_text(json.dumps(TRACE).replace('"hi"', number) + "\n")
    args = ["validate", "--kind", "trace", src] if command == "validate" else \
        ["traces", "import", src, "--out", tmp_path / "o.jsonl"]
    code, out, err = _run(capsys, *args)
    assert code == 1
    assert f"{src}:1: number {number} is too large for a double" in out + err


def test_an_otlp_kvlist_entry_without_a_key_is_an_error_not_the_key_none(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    span = {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331", "name": "chat",
            "attributes": [{"key": "config", "value": {"kvlistValue": {"values": [
                {"key": "temperature", "value": {"doubleValue": 0.2}}, {"value": {"stringValue": "lost"}}]}}}]}
    src = tmp_path / "spans.json"
    src.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}))
    code, _, err = _run(capsys, "traces", "import", src, "--out", tmp_path / "o.jsonl")
    assert code == 1
    assert "attributes[0].value.kvlistValue.values[1]: kvlistValue entry must be an object with a string key" in err


@pytest.mark.parametrize("command", ["import", "validate"])
def test_a_lone_surrogate_is_refused_not_a_write_crash(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                        command: str) -> None:
    src = tmp_path / "traces.jsonl"
    src.write_text(json.dumps(TRACE).replace('"hi"', '"broken \\ud800 text"') + "\n")
    args = ["validate", "--kind", "trace", src] if command == "validate" else \
        ["traces", "import", src, "--out", tmp_path / "o.jsonl"]
    code, out, err = _run(capsys, *args)
    assert code == 1
    assert "lone surrogate" in out + err and "Traceback" not in err


@pytest.mark.parametrize("command", ["import", "validate", "stats"])
def test_deep_nesting_is_one_clear_error_for_every_command(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                           command: str) -> None:
    src = tmp_path / "traces.jsonl"
    src.write_text(json.dumps(TRACE).replace('"hi"', "[" * 255 + "]" * 255) + "\n")
    args = {"validate": ["validate", "--kind", "trace", src], "stats": ["traces", "stats", src],
            "import": ["traces", "import", src, "--out", tmp_path / "o.jsonl"]}[command]
    code, out, err = _run(capsys, *args)
    assert code == 1
    assert f"{src}:1: nested too deeply" in out + err


# --- YAML that Python cannot or should not build ----------------------------------------------------


@pytest.mark.parametrize(("text", "message"), [
    ("id: " + "7" * 6000 + "\n", "integer with more than 4300 digits"),
    ("? [a, b]\n: x\n", "a list is used as a key; keys must be strings"),
    ("1: x\n", "key 1 is not a string"),
    ("x: .inf\n", "inf is not a JSON number"),
    ("x: !!binary aGVsbG8=\n", "bytes is not a JSON value"),
])
def test_yaml_that_json_cannot_hold_is_a_clear_error(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                     text: str, message: str) -> None:
    src = tmp_path / "human-label.yaml"
    src.write_text(text)
    code, out, err = _run(capsys, "validate", src)
    assert code == 1
    assert f"{src}:1" in out + err and message in out + err and "Traceback" not in err


def test_plain_yaml_still_validates(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    src = tmp_path / "x.yaml"
    src.write_text(yaml.safe_dump({"id": "t", "observations": []}))
    assert _run(capsys, "validate", "--kind", "trace", src)[0] == 0


# --- readers that met a value of the wrong type ----------------------------------------------------


def _jaeger(**span_fields: object) -> dict:
    span = {"traceID": "3f2a1b0c9d8e7f60a1b2c3d4e5f60718", "spanID": "a000000000000001",
            "operationName": "chat", "startTime": 1705000000000000, "duration": 1000, "tags": []}
    return {"data": [{"traceID": span["traceID"], "spans": [dict(span, **span_fields)], "processes": {}}]}


@pytest.mark.parametrize(("source", "message"), [
    (_jaeger(references=True), "data[0].spans[0].references: references must be a list"),
    (_jaeger(logs=5), "data[0].spans[0].logs: logs must be a list"),
    (_jaeger(operationName=["chat", "x"]), "data[0].spans[0].operationName: operationName must be a string"),
    ({"id": ["tr", "1"], "observations": [{"id": "o1", "traceId": "tr", "startTime": "2026-01-01T00:00:00Z"}],
      "scores": []}, "id: id must be a string"),
    ({"observations": [{"id": "o1", "traceId": ["a"], "startTime": "2026-01-01T00:00:00Z"}], "scores": []},
     "observations[0].traceId: id must be a string"),
])
@pytest.mark.parametrize("skip", [False, True])
def test_a_field_of_the_wrong_type_is_a_located_error_even_when_skipping(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, source: dict, message: str, skip: bool) -> None:
    src = tmp_path / "export.json"
    src.write_text(json.dumps(source))
    out = tmp_path / "o.jsonl"
    code, _, err = _run(capsys, "traces", "import", src, "--out", out, *(["--skip-invalid"] if skip else []))
    assert "Traceback" not in err
    if skip and "spans" not in json.dumps(source):  # Langfuse is read record by record: skipped, kept aside
        assert code == 1 and not out.exists()  # the only record was skipped: nothing imported is a failure
        record = json.loads(out.with_name("o.jsonl.quarantine.jsonl").read_text())
        assert message in record["error"]
    else:
        assert code == 1
        assert f"error: {src}: {message}" in err


# --- where the output goes ----------------------------------------------------------------------


@pytest.mark.parametrize("case", ["folder", "below-a-file", "proc"])
def test_an_out_that_cannot_be_written_is_refused_before_reading(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, case: str) -> None:
    src = tmp_path / "t.jsonl"
    src.write_text(json.dumps(TRACE) + "\n")
    if case == "folder":
        out = tmp_path / "out.jsonl"
        out.mkdir()
    elif case == "below-a-file":
        out = src / "out.jsonl"
    else:
        if not Path("/proc/self").is_dir():
            pytest.skip("needs /proc")
        out = Path("/proc/evalkit-nowhere/out.jsonl")
    code, _, err = _run(capsys, "traces", "import", src, "--out", out)
    assert code == 1
    refused = "is a device or process path" if case == "proc" else "cannot write"
    assert err.startswith(f"error: {out}: ") and refused in err and "Traceback" not in err


def test_a_fifo_as_input_is_refused_at_once(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    code, _, err = _run(capsys, "traces", "import", fifo, "--out", tmp_path / "o.jsonl")
    assert code == 1
    assert f"error: {fifo}: cannot read file: it is a FIFO (named pipe)" in err
    code, out, err = _run(capsys, "validate", "--kind", "trace", fifo)
    assert code == 1 and "FIFO" in out + err


def test_a_clean_import_removes_a_stale_quarantine_and_says_so(capsys: pytest.CaptureFixture[str],
                                                               tmp_path: Path) -> None:
    src = tmp_path / "t.jsonl"
    src.write_text(json.dumps(TRACE) + "\n" + '{"id": "x", "observations": [{"type": "NOPE"}]}\n')
    out = tmp_path / "out.jsonl"
    quarantine = tmp_path / "out.jsonl.quarantine.jsonl"
    assert _run(capsys, "traces", "import", src, "--out", out, "--skip-invalid")[0] == 0
    assert len(quarantine.read_text().splitlines()) == 1
    src.write_text(json.dumps(TRACE) + "\n")
    code, _, err = _run(capsys, "traces", "import", src, "--out", out, "--skip-invalid")
    assert code == 0
    assert not quarantine.exists()
    assert f"removed {quarantine} from an earlier import" in err


def test_an_out_that_is_also_a_source_is_refused_and_the_source_kept(capsys: pytest.CaptureFixture[str],
                                                                      tmp_path: Path) -> None:
    src = tmp_path / "t.jsonl"
    src.write_text(json.dumps(TRACE, indent=1).replace("\n", "") + "\n")
    before = src.read_bytes()
    code, _, err = _run(capsys, "traces", "import", src, "--out", tmp_path / "." / "t.jsonl")
    assert code == 1
    assert f"is also the input SRC ({src})" in err
    assert src.read_bytes() == before
