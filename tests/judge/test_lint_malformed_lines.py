"""``judge lint`` on lines that are not verdicts: each a located problem, never a traceback; an empty file an error."""

from __future__ import annotations

import pytest

from evalkit.cli import main

TRACES = '{"id": "t1", "observations": [{"id": "o1", "type": "GENERATION", "name": "reply", "output": "hi"}]}\n'


@pytest.mark.parametrize(("line", "said"), [
    ("3", "(record): not a verdict but 3"),
    ("[1, 2]", "(record): not a verdict but a JSON array"),
    ('"x"', "(record): not a verdict but 'x'"),
    ("null", "(record): not a verdict but null"),
    ('{"criterionId": 5, "traceId": "t1", "result": "pass", "refs": []}', "criterionId: must be a non-empty string, not 5"),
    ('{"criterionId": "c", "traceId": "t1", "result": "maybe"}', "result: must be pass, fail or uncertain, not 'maybe'"),
    ('{"criterionId": "c", "traceId": "t1", "result": "pass", "refs": "o1"}', "refs: must be a list of refs, not 'o1'"),
])
def test_each_malformed_line_is_a_located_problem(tmp_path, capsys, line, said):
    (tmp_path / "t.jsonl").write_text(TRACES, encoding="utf-8")
    verdicts = tmp_path / "v.jsonl"
    verdicts.write_text('{"criterionId": "c", "traceId": "t1", "result": "uncertain", "blockedBy": "x"}\n'
                        + line + "\n", encoding="utf-8")
    code = main(["judge", "lint", str(verdicts), "--traces", str(tmp_path / "t.jsonl")])
    out = capsys.readouterr()
    assert code == 1 and "Traceback" not in out.err
    assert f"{verdicts}:2: " in out.out and said in out.out, out


def test_an_empty_verdicts_file_is_an_error_not_a_clean_bill(tmp_path, capsys):
    (tmp_path / "t.jsonl").write_text(TRACES, encoding="utf-8")
    (tmp_path / "v.jsonl").write_text("", encoding="utf-8")
    assert main(["judge", "lint", str(tmp_path / "v.jsonl"), "--traces", str(tmp_path / "t.jsonl")]) == 1
    assert "no verdicts in the file: nothing to lint" in capsys.readouterr().err


def test_a_huge_id_is_named_short(tmp_path, capsys):
    (tmp_path / "t.jsonl").write_text(TRACES, encoding="utf-8")
    (tmp_path / "v.jsonl").write_text('{"criterionId": "' + "c" * 1_000_000 + '", "traceId": "t1", "result": "maybe"}\n',
                                      encoding="utf-8")
    main(["judge", "lint", str(tmp_path / "v.jsonl"), "--traces", str(tmp_path / "t.jsonl")])
    out = capsys.readouterr()
    assert len(out.out) + len(out.err) < 2000 and "(1000000 characters)" in out.out
