"""`evalkit dataset derive --from-review / --from-verdicts`: failing traces become regression cases (the prompt
as the case, the failure and critique as the expectation, the origin trace), and the next `eval run` shows
them on the card, fixed or failing again."""

from __future__ import annotations

import json
from pathlib import Path

from evalkit.cli.main import main

TYPO = "Order ORD-2026-777777 has a typo in the street name; can you check where it went?"   # still failed
STATUS = "Could you tell me when ORD-2026-888888 will arrive at my flat?"


def _past_traces(folder: Path) -> Path:
    path = folder / "past.jsonl"
    rows = [{"id": "p1", "input": TYPO, "observations": []}, {"id": "p2", "input": STATUS, "observations": []},
            {"id": "p3", "input": {"attachment": "scan.pdf"}, "observations": []}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _annotation(trace: str, label: str, at: str, annotator: str = "ana", **extra) -> dict:
    return {"traceId": trace, "annotator": annotator, "at": at, "label": label, **extra}


def _cases(shop: Path) -> list[dict]:
    return json.loads((shop.parent / "dataset.json").read_text())["cases"]


def test_derive_from_the_review_export_keeps_the_failure_as_the_expectation(shop, tmp_path, capsys):
    export = tmp_path / "review-export.json"
    export.write_text(json.dumps({"format": "evalkit-review-export", "version": 1, "annotator": "ana", "annotations": [
        _annotation("p1", "fail", "2026-03-01T09:00:00Z", modes=["wrong-tool-args"], note="Looked up the wrong order."),
        _annotation("p2", "fail", "2026-03-01T09:01:00Z", modes=["missed-escalation"]),
        _annotation("p2", "pass", "2026-03-01T09:05:00Z"),             # the reviewer changed their mind
        _annotation("p3", "fail", "2026-03-01T09:06:00Z", note="Ignored the attachment.")]}))
    assert main(["dataset", "derive", str(shop), str(_past_traces(tmp_path)), "--from-review", str(export),
                 "--only", "fail"]) == 0
    out = capsys.readouterr()
    assert "1 trace(s) left out: outcome 'pass' not selected" in out.err
    assert "1 trace(s) left out: its input holds no text prompt" in out.err
    assert "1 added" in out.out
    case = _cases(shop)[-1]
    assert case["query"] == TYPO and case["originTraceId"] == "p1" and case["source"] == "derived"
    assert case["tuple"] == {"outcome": "fail"}
    assert case["expected"] == {"failureModes": ["wrong-tool-args"], "critique": "Looked up the wrong order."}
    assert main(["dataset", "check", str(shop)]) == 0


def test_derive_from_judge_verdicts_only_fail_names_the_failed_criteria(shop, tmp_path, capsys):
    verdicts = tmp_path / "verdicts.jsonl"
    rows = [("p1", "order-id-matches", "fail", "order_lookup got ORD-2026-000000, the customer wrote ORD-2026-777777."),
            ("p1", "polite", "pass", "Courteous."), ("p2", "order-id-matches", "pass", "Same id."),
            ("p3", "polite", "fail", "Rude.")]
    verdicts.write_text("".join(json.dumps({"criterionId": c, "traceId": t, "result": r, "critique": text,
                                            "confidence": 1.0}) + "\n" for t, c, r, text in rows))
    uncertain = {"criterionId": "polite", "traceId": "p2", "result": "uncertain", "confidence": None,
                 "critique": "?", "blockedBy": {"kind": "scope", "text": "no reply"}}
    with verdicts.open("a") as f:
        f.write(json.dumps(uncertain) + "\n")
    assert main(["dataset", "derive", str(shop), str(_past_traces(tmp_path)), "--from-verdicts", str(verdicts),
                 "--only", "fail"]) == 0
    case = _cases(shop)[-1]
    assert case["originTraceId"] == "p1"
    assert case["expected"] == {"failureModes": ["order-id-matches"], "critique": "order-id-matches: order_lookup "
                                "got ORD-2026-000000, the customer wrote ORD-2026-777777."}
    assert "1 added" in capsys.readouterr().out


def test_derive_needs_exactly_one_source_of_outcomes(shop, tmp_path, capsys):
    traces = _past_traces(tmp_path)
    try:
        main(["dataset", "derive", str(shop), str(traces)])
    except SystemExit as exc:
        assert exc.code == 2
    assert "one of the arguments --labels --from-review --from-verdicts is required" in capsys.readouterr().err


def test_the_next_eval_run_shows_the_regression_set(shop, tmp_path, capsys):
    verdicts = tmp_path / "verdicts.jsonl"
    verdicts.write_text("".join(json.dumps({"criterionId": "order-id-matches", "traceId": t, "result": "fail",
                                            "critique": "wrong order id", "confidence": 1.0}) + "\n"
                                for t in ("p1", "p2")))
    assert main(["dataset", "derive", str(shop), str(_past_traces(tmp_path)), "--from-verdicts", str(verdicts),
                 "--only", "fail"]) == 0
    capsys.readouterr()
    out = tmp_path / "eval"
    assert main(["eval", "run", str(shop), "--out", str(out), "--concurrency", "3"]) == 0
    printed = capsys.readouterr().out
    assert "REGRESSIONS 2 case(s) from past failures" in printed
    assert "fixed 1, failing again 1, undecided 0, not run 0" in printed
    card = json.loads((out / "scorecard.json").read_text())
    by_origin = {c["originTraceId"]: c for c in card["regressions"]["cases"]}
    assert by_origin["p1"]["result"] == "fail" and by_origin["p1"]["failedCriteria"] == ["order-id-matches"]
    assert by_origin["p2"]["result"] == "pass" and by_origin["p2"]["criteria"] == ["order-id-matches"]
    assert f"FAIL {by_origin['p1']['caseId']} from p1 order-id-matches" in printed
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["regressions"] == {"cases": 2, "passed": 1, "failed": 1, "incomplete": 0, "notRun": 0}
