"""`evalkit dataset expand|merge|derive|check` on a small suite: outputs, exit codes, the append-only file."""

from __future__ import annotations

import json

from evalkit.cli.main import main
from evalkit.suite import new_case


def _suite(shop):
    return json.loads((shop.parent / "dataset.json").read_text())


def test_expand_lists_every_tuple_or_only_the_missing(shop, capsys):
    assert main(["dataset", "expand", str(shop)]) == 0
    out = capsys.readouterr()
    assert [json.loads(line) for line in out.out.splitlines()] == [
        {"intent": "status"}, {"intent": "typo"}, {"intent": "refund"}]
    assert main(["dataset", "expand", str(shop), "--missing"]) == 0
    assert capsys.readouterr().out.splitlines() == ['{"intent":"refund"}']


def test_merge_appends_new_cases_and_reports_near_duplicates(shop, tmp_path, capsys):
    offered = [new_case({"intent": "refund"}, "I want my money back for ORD-2026-444444", "synthetic"),
               new_case({"intent": "status"}, "Where is my order ORD-2026-111111 ?", "synthetic")]
    cases = tmp_path / "offered.jsonl"
    cases.write_text("".join(json.dumps(c.to_json_obj()) + "\n" for c in offered))
    assert main(["dataset", "merge", str(shop), str(cases)]) == 0
    out = capsys.readouterr()
    assert "1 added, 0 already in the suite, 1 near-duplicates dropped; version 2" in out.out
    assert f"near-duplicate dropped: {offered[1].id}" in out.err
    suite = _suite(shop)
    assert suite["version"] == 2 and suite["cases"][-1]["id"] == offered[0].id
    assert main(["dataset", "check", str(shop)]) == 0
    assert "4 case(s) (3 seed, 1 synthetic): ok" in capsys.readouterr().out


def test_derive_makes_cases_from_failing_traces(shop, tmp_path, capsys):
    traces = tmp_path / "past.jsonl"
    traces.write_text(json.dumps({"id": "t1", "input": "Refund ORD-2026-555555 now", "observations": []}) + "\n"
                      + json.dumps({"id": "t2", "input": "Thanks!", "observations": []}) + "\n")
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps({"traceId": t, "criterionId": "polite", "label": v, "annotator": "a",
                                          "labeledAt": "2026-01-01T00:00:00Z"}) + "\n"
                              for t, v in (("t1", "fail"), ("t2", "pass"))))
    assert main(["dataset", "derive", str(shop), str(traces), "--labels", str(labels), "--only", "fail"]) == 0
    out = capsys.readouterr()
    assert "1 trace(s) left out: outcome 'pass' not selected" in out.err and "1 added" in out.out
    assert _suite(shop)["cases"][-1]["originTraceId"] == "t1"


def test_check_exits_1_and_names_the_bad_case(shop, capsys):
    path = shop.parent / "dataset.json"
    suite = _suite(shop)
    suite["cases"][1]["query"] += " (edited)"
    path.write_text(json.dumps(suite))
    assert main(["dataset", "check", str(path)]) == 1
    err = capsys.readouterr().err
    assert "cases[1].id" in err and "does not match its tuple and query" in err
