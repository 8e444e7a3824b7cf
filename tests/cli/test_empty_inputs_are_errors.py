"""An input with nothing in it is an error naming the file, never an empty output with exit 0 (issue 35)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.cli import main

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"
TRACE = {"id": "tr-1", "observations": [{"id": "o1", "type": "GENERATION", "name": "llm", "input": "hi",
                                         "output": "hello"}]}


@pytest.fixture
def empty(tmp_path) -> Path:
    path = tmp_path / "empty.jsonl"
    path.write_text("\n  \n")  # blank lines only: no record
    return path


def _said(capsys) -> str:
    captured = capsys.readouterr()
    return captured.out + captured.err


@pytest.mark.parametrize("argv", [
    ["traces", "stats", "{empty}"],
    ["flow", "build", "{empty}", "--out", "{tmp}/flows.jsonl"],
    ["scorecard", str(SAMPLE / "eval-matrix.yaml"), "{empty}", "--out", "{tmp}/card.json"],
    ["scorecard", str(SAMPLE / "eval-matrix.yaml"), str(SAMPLE / "traces.jsonl"), "--verdicts", "{empty}",
     "--out", "{tmp}/card.json"],
    ["export", "otel", "{empty}", "--traces", str(SAMPLE / "traces.jsonl"), "--out", "{tmp}/otel.json"],
    ["judge", "lint", "{empty}", "--traces", str(SAMPLE / "traces.jsonl")],
    ["analysis", "rates", "{empty}"],
    ["analysis", "saturation", "{empty}"],
    ["sample", "{empty}", "--n", "3", "--out", "{tmp}/picked.jsonl"],
], ids=["traces stats", "flow build", "scorecard traces", "scorecard --verdicts", "export otel", "judge lint",
        "analysis rates", "analysis saturation", "sample"])
def test_an_empty_input_is_an_error_and_nothing_is_written(capsys, tmp_path, empty, argv):
    code = main([a.format(empty=empty, tmp=tmp_path) for a in argv])
    said = _said(capsys)
    assert code == 1, said
    assert f"{empty}: no " in said and "in the file" in said
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.jsonl"]  # no output, empty or not


def test_an_import_that_skipped_every_record_writes_nothing_and_fails(capsys, tmp_path):
    src = tmp_path / "t.jsonl"
    src.write_text(json.dumps({**TRACE, "observations": 3}) + "\n" + json.dumps({**TRACE, "id": 5}) + "\n")
    out = tmp_path / "out.jsonl"
    code = main(["traces", "import", str(src), "--out", str(out), "--skip-invalid"])
    said = _said(capsys)
    assert code == 1
    assert "every record was invalid" in said and not out.exists()
    # the reasons are kept for the user, as for a partial import
    assert len(out.with_name("out.jsonl.quarantine.jsonl").read_text().splitlines()) == 2
    # a file no format fits, with --skip-invalid: the same
    src.write_text('{"x": 1}\n')
    assert main(["traces", "import", str(src), "--out", str(out), "--skip-invalid"]) == 1
    assert not out.exists()
    # one good record among them: imported, exit 0
    src.write_text(json.dumps(TRACE) + "\n" + json.dumps({**TRACE, "id": "tr-2", "observations": 3}) + "\n")
    assert main(["traces", "import", str(src), "--out", str(out), "--skip-invalid"]) == 0
    assert len(out.read_text().splitlines()) == 1
