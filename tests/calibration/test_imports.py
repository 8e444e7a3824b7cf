"""``evalkit labels import`` and ``evalkit verdicts import`` on the tables people have: CSV, JSONL, 0/1 lists."""

from __future__ import annotations

import json

import pytest

from evalkit.calibration import read_labels, read_verdicts
from evalkit.cli import main

CSV_HEADER = "query,response,trace_id,label,reasoning,confidence,confidence\n"


def _csv(path, rows) -> str:
    path.write_text(CSV_HEADER + "".join(f'"{q}","multi\nline",{t},{lab},"why {t}",HIGH,x\n'
                                         for q, t, lab in rows), encoding="utf-8")
    return str(path)


def _labels_args(src, store, *extra):
    return ["labels", "import", src, "--into", store, "--criterion", "dietary-adherence", "--id-col", "trace_id",
            "--label-col", "label", *extra]


def test_csv_labels_per_split_file_with_a_value_map(tmp_path, capsys):
    store = str(tmp_path / "labels.jsonl")
    dev = _csv(tmp_path / "dev.csv", [("q1", "1_1", "PASS"), ("q2", "2_1", "FAIL")])
    test = _csv(tmp_path / "test.csv", [("q3", "3_1", "PASS"), ("q4", "4_1", "UNKNOWN")])
    maps = ["--map", "PASS=pass", "--map", "FAIL=fail", "--map", "UNKNOWN=defer"]
    assert main(_labels_args(dev, store, "--split", "dev", *maps)) == 0
    assert main(_labels_args(test, store, "--split", "test", *maps)) == 0
    assert "appended 2 labels for dietary-adherence" in capsys.readouterr().out
    labels = {lb.trace_id: lb for lb in read_labels(store)}
    assert [(t, lb.label, lb.split) for t, lb in sorted(labels.items())] == [
        ("1_1", "pass", "dev"), ("2_1", "fail", "dev"), ("3_1", "pass", "test"), ("4_1", "defer", "test")]
    assert {lb.criterion_id for lb in labels.values()} == {"dietary-adherence"}
    # the same file again changes nothing; the same traces under another split are refused, nothing appended
    before = (tmp_path / "labels.jsonl").read_bytes()
    assert main(_labels_args(test, store, "--split", "test", *maps)) == 0
    again = capsys.readouterr().out
    assert "appended 0 labels" in again and "(2 already there)" in again
    assert main(_labels_args(test, store, "--split", "dev", *maps)) == 1
    assert "split 'test' stored, 'dev' imported" in capsys.readouterr().err
    assert (tmp_path / "labels.jsonl").read_bytes() == before


def test_an_unmapped_value_names_file_line_row_and_column_and_nothing_is_written(tmp_path, capsys):
    src = _csv(tmp_path / "test.csv", [("q1", "1_1", "PASS"), ("q2", "2_1", "UNKNOWN")])
    store = tmp_path / "labels.jsonl"
    assert main(_labels_args(src, str(store), "--split", "test", "--map", "PASS=pass")) == 1
    err = capsys.readouterr().err
    # the first row spans lines 2-3 (a quoted newline), so the second row starts on line 4
    assert f"{src}:4: label: row 2: 'UNKNOWN' is not pass/fail/defer and not mapped (maps: PASS=pass)" in err
    assert "--map UNKNOWN=" in err
    assert not store.exists()


def test_lower_case_contract_words_need_no_map_and_a_split_column_is_read(tmp_path):
    src = tmp_path / "kf.csv"
    src.write_text("trace_id,label,split\na,pass,train\nb,fail,test\n")
    store = str(tmp_path / "labels.jsonl")
    assert main(["labels", "import", str(src), "--into", store, "--criterion", "c", "--id-col", "trace_id",
                 "--label-col", "label", "--split-col", "split"]) == 0
    assert [(lb.label, lb.split) for lb in read_labels(store)] == [("pass", "train"), ("fail", "test")]


@pytest.mark.parametrize(("extra", "message"), [
    (["--id-col", "trace"], "no column 'trace' (given by --id-col); columns: query, response, trace_id, label"),
    (["--id-col", "trace_id", "--split-col", "confidence"], "'confidence' (given by --split-col) appears more"),
    (["--split", "test", "--map", "PASS"], "'PASS' is not SOURCE=TARGET"),
    (["--split", "test", "--map", "PASS=ok"], "the target must be one of: pass, fail, defer"),
])
def test_bad_options_are_named(tmp_path, capsys, extra, message):
    src = _csv(tmp_path / "t.csv", [("q1", "1_1", "pass")])
    args = ["labels", "import", src, "--into", str(tmp_path / "l.jsonl"), "--criterion", "c", "--label-col", "label"]
    assert main(args + extra) == 1
    assert message in capsys.readouterr().err


def test_a_duplicate_trace_id_names_both_rows(tmp_path, capsys):
    src = _csv(tmp_path / "t.csv", [("q1", "1_1", "pass"), ("q2", "1_1", "fail")])
    assert main(_labels_args(src, str(tmp_path / "l.jsonl"))) == 1
    assert "row 2: trace '1_1' again (first in row 1)" in capsys.readouterr().err


def test_review_export_mode_refuses_table_options(tmp_path, capsys):
    export = tmp_path / "export.json"
    export.write_text("{}")
    assert main(["labels", "import", str(export), "--into", str(tmp_path / "s.jsonl"), "--criterion", "c"]) == 1
    assert "--criterion need --label-col" in capsys.readouterr().err


def test_verdicts_without_critique_or_confidence_are_recorded_as_not_given(tmp_path, capsys):
    src = tmp_path / "preds.json"
    src.write_text(json.dumps([{"trace_id": "a", "predicted_label": "PASS", "reasoning": "fine"},
                               {"trace_id": "b", "predicted_label": "UNKNOWN", "reasoning": "?"}]))
    out = str(tmp_path / "v.jsonl")
    args = ["verdicts", "import", str(src), "--into", out, "--criterion", "c", "--id-col", "trace_id",
            "--result-col", "predicted_label", "--map", "PASS=pass"]
    assert main(args) == 1
    assert "row 2: 'UNKNOWN' is not pass/fail/uncertain and not mapped" in capsys.readouterr().err
    assert main([*args, "--map", "UNKNOWN=uncertain"]) == 0
    assert "critique and confidence not recorded (null)" in capsys.readouterr().out
    a, b = read_verdicts(out)
    assert (a.result, a.confidence, a.critique, a.blocked_by) == ("pass", None, None, None)
    assert b.result == "uncertain" and "recorded 'UNKNOWN' with no reason" in b.blocked_by.text
    assert json.loads((tmp_path / "v.jsonl").read_text().splitlines()[0]) == {
        "confidence": None, "criterionId": "c", "critique": None, "result": "pass", "traceId": "a"}


def test_a_confidence_that_is_not_a_number_is_refused(tmp_path, capsys):
    src = tmp_path / "run.csv"
    src.write_text("trace_id,llm_judge_label,conf\na,pass,high\n")
    assert main(["verdicts", "import", str(src), "--into", str(tmp_path / "v.jsonl"), "--criterion", "c",
                 "--id-col", "trace_id", "--result-col", "llm_judge_label", "--confidence-col", "conf"]) == 1
    assert f"{src}:2: conf: row 1: confidence 'high' is not a number in [0, 1]" in capsys.readouterr().err


def test_parallel_0_1_lists_pair_by_position_and_calibrate(tmp_path, capsys):
    src = tmp_path / "judgy.json"
    src.write_text(json.dumps({"test_labels": [1, 1, 0, 0, 1], "test_preds": [1, 0, 0, 0, 1]}))
    labels, verdicts = str(tmp_path / "l.jsonl"), str(tmp_path / "v.jsonl")
    assert main(["labels", "import", str(src), "--values", "test_labels", "--into", labels, "--criterion", "c",
                 "--split", "test", "--map", "1=pass", "--map", "0=fail"]) == 0
    assert main(["verdicts", "import", str(src), "--values", "test_preds", "--into", verdicts, "--criterion", "c",
                 "--map", "1=pass", "--map", "0=fail"]) == 0
    assert "trace ids are row positions" in capsys.readouterr().out
    assert main(["calibrate", "--labels", labels, "--verdicts", verdicts, "--observed", "0.6", "--n", "100"]) == 0
    out = capsys.readouterr().out
    assert "paired      5 (tp 2, fn 1, fp 0, tn 2)" in out
    assert main(["verdicts", "import", str(src), "--values", "preds", "--into", verdicts, "--criterion", "c"]) == 1
    assert "no list of values under 'preds'; lists: test_labels, test_preds" in capsys.readouterr().err
