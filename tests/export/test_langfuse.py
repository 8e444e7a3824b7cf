
"""``evalkit export langfuse``: the ingestion batch, sending it, and Langfuse scores back in as verdicts."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from evalkit.calibration import read_verdicts
from evalkit.cli import main
from evalkit.export import ScoreReading, verdicts_from_langfuse

from .conftest import write_jsonl


def _export(files: dict[str, Path], out: Path, *extra: str) -> int:
    return main(["export", "langfuse", str(files["verdicts"]), "--traces", str(files["traces"]),
                 "--out", str(out), *extra])


def _bodies(path: Path) -> list[dict]:
    batch = json.loads(path.read_text())["batch"]
    assert {e["type"] for e in batch} == {"score-create"}
    assert len({e["id"] for e in batch}) == len(batch)
    return [e["body"] for e in batch]


def test_scores_boolean_where_every_verdict_is_pass_or_fail(files, tmp_path):
    out = tmp_path / "scores.json"
    assert _export(files, out, "--labels", str(files["labels"])) == 0
    bodies = _bodies(out)
    got = [(b["name"], b["traceId"], b["dataType"], b["value"], b.get("comment")) for b in bodies]
    assert got == [
        ("refund-correct", "tr-0001", "BOOLEAN", 1.0, "The refund matches the order."),
        ("refund-correct", "tr-0002", "BOOLEAN", 0.0, "Refunded the wrong amount."),
        ("tone", "tr-0001", "CATEGORICAL", "uncertain", "uncertain: no tone policy is given"),
        # The label 'defer' below makes every '.human' score of this name categorical.
        ("refund-correct.human", "tr-0001", "CATEGORICAL", "pass", None),
        ("refund-correct.human", "tr-0002", "CATEGORICAL", "defer", "unclear order"),
    ]
    assert all("observationId" not in b for b in bodies)  # a verdict judges the whole trace


def test_score_ids_are_stable_so_sending_again_updates(files, tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert _export(files, a) == 0 and _export(files, b) == 0
    assert a.read_bytes() == b.read_bytes()


@pytest.mark.slow
def test_missing_key_is_one_line_naming_the_variable(files, tmp_path, receiver, monkeypatch, capsys):
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", "pk-lf-1")
    monkeypatch.delenv("LANGFUSE_SECRET_KEY", raising=False)
    # the one credential error, as a judge's missing key: exit 2, nothing sent
    assert _export(files, tmp_path / "s.json", "--endpoint", receiver.url) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "LANGFUSE_SECRET_KEY is not set: sending scores to Langfuse needs it" in err
    assert receiver.requests == []
    assert not (tmp_path / "s.json").exists()  # checked before anything is written


@pytest.mark.slow
def test_sends_the_batch_with_basic_auth_in_chunks(files, tmp_path, receiver, monkeypatch, capsys):
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", "pk-lf-1")
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", "sk-lf-2")
    monkeypatch.setattr("evalkit.export.langfuse.BATCH_EVENTS", 2)
    receiver.status, receiver.reply = 207, b'{"successes": [], "errors": []}'
    out = tmp_path / "s.json"
    assert _export(files, out, "--endpoint", receiver.url + "/") == 0
    assert "sent 3 scores" in capsys.readouterr().out
    assert [r.path for r in receiver.requests] == ["/api/public/ingestion"] * 2
    assert {r.headers["authorization"] for r in receiver.requests} == {
        "Basic " + base64.b64encode(b"pk-lf-1:sk-lf-2").decode()}
    sent = [e for r in receiver.requests for e in json.loads(r.body)["batch"]]
    assert sent == json.loads(out.read_text())["batch"]


@pytest.mark.slow
def test_scores_langfuse_rejects_are_an_error(files, tmp_path, receiver, monkeypatch, capsys):
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", "pk")
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", "sk")
    receiver.status = 207
    receiver.reply = json.dumps({"successes": [{"id": "a", "status": 201}],
                                 "errors": [{"id": "b", "status": 400, "message": "invalid value"}]}).encode()
    assert _export(files, tmp_path / "s.json", "--endpoint", receiver.url) == 1
    assert "rejected 1 of 3 scores" in capsys.readouterr().err


def test_own_export_reads_back_exactly(files, tmp_path, capsys):
    out, into = tmp_path / "s.json", tmp_path / "back.jsonl"
    assert _export(files, out, "--labels", str(files["labels"])) == 0
    assert main(["verdicts", "import", str(out), "--from", "langfuse", "--into", str(into)]) == 0
    assert "2 human labels left out" in capsys.readouterr().out
    assert read_verdicts(into) == read_verdicts(files["verdicts"])  # refs, confidence, blockedBy all kept


def _trace_export(tmp_path: Path) -> Path:
    """The shape of a Langfuse trace download: {trace: {..., scores}, observations}, NUMERIC EVAL scores."""
    trace_id = "e1fde3efec57ce8a69bafd3fb928a7eb"
    score = {"projectId": "p", "source": "EVAL", "traceId": trace_id, "observationId": None,
             "dataType": "NUMERIC", "stringValue": None, "metadata": "{}"}
    doc = {"trace": {"id": trace_id, "name": "agent", "scores": [
        {**score, "id": "s1", "name": "hallucination", "value": 0.1, "comment": "matches the source"},
        {**score, "id": "s2", "name": "toxicity", "value": 0.9, "comment": "insults the user"}],
        "observations": []},
        "observations": [{"id": "7a8b9c0d1e2f3a4b", "traceId": trace_id, "type": "GENERATION", "name": "llm",
                          "startTime": "2025-08-22T09:39:30.000Z"}]}
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(doc))
    return path


def test_numeric_eval_scores_need_a_threshold(tmp_path, capsys):
    path, into = _trace_export(tmp_path), tmp_path / "v.jsonl"
    assert main(["verdicts", "import", str(path), "--from", "langfuse", "--into", str(into)]) == 1
    err = capsys.readouterr().err
    assert "trace.scores[0].value" in err and "--pass-at-most" in err
    assert main(["verdicts", "import", str(path), "--from", "langfuse", "--pass-at-most", "0.5",
                 "--into", str(into)]) == 0
    got = [(v.criterion_id, v.result, v.critique, v.confidence) for v in read_verdicts(into)]
    assert got == [("hallucination", "pass", "matches the source", None),
                   ("toxicity", "fail", "insults the user", None)]


def test_score_filter_and_value_map(tmp_path):
    found = verdicts_from_langfuse(_trace_export(tmp_path), ScoreReading(value_map={"0.9": "uncertain"},
                                                                          names=frozenset({"toxicity"})))
    (v,) = found.verdicts
    assert (v.criterion_id, v.result, found.other_names) == ("toxicity", "uncertain", 1)
    assert v.blocked_by is not None and "trace.scores[1]" in v.blocked_by.text


def test_two_different_scores_for_one_trace_are_an_error(tmp_path, capsys):
    batch = {"batch": [{"id": str(i), "type": "score-create", "timestamp": "2026-01-01T00:00:00Z",
                        "body": {"name": "c", "traceId": "t", "dataType": "BOOLEAN", "value": i}}
                       for i in (1, 0)]}
    path = tmp_path / "b.json"
    path.write_text(json.dumps(batch))
    into = tmp_path / "v.jsonl"
    assert main(["verdicts", "import", str(path), "--from", "langfuse", "--into", str(into)]) == 1
    assert "batch[1].body" in capsys.readouterr().err


def test_table_options_are_refused_for_score_files(tmp_path, capsys):
    path = _trace_export(tmp_path)
    assert main(["verdicts", "import", str(path), "--from", "langfuse", "--criterion", "x",
                 "--into", str(tmp_path / "v.jsonl")]) == 1
    assert "--criterion" in capsys.readouterr().err


def test_verdicts_without_any_trace_time_need_time(tmp_path, capsys):
    traces = write_jsonl(tmp_path / "t.jsonl", [{"id": "t1", "observations": [{"id": "o1", "type": "SPAN"}]}])
    verdicts = write_jsonl(tmp_path / "v.jsonl", [{"criterionId": "c", "traceId": "t1", "result": "pass",
                                                   "confidence": None, "critique": None}])
    args = ["export", "langfuse", str(verdicts), "--traces", str(traces), "--out", str(tmp_path / "o.json")]
    assert main(args) == 1
    assert "--time" in capsys.readouterr().err
    assert main([*args, "--time", "yesterday"]) == 1
    assert "'yesterday' is not an ISO 8601 time" in capsys.readouterr().err
    assert main([*args, "--time", "2026-03-01T00:00:00Z"]) == 0
    (event,) = json.loads((tmp_path / "o.json").read_text())["batch"]
    assert event["timestamp"] == "2026-03-01T00:00:00Z"


def test_two_annotators_are_two_scores_but_a_repeated_verdict_is_an_error(files, tmp_path, capsys):
    write_jsonl(files["labels"], [
        {"traceId": "tr-0001", "criterionId": "refund-correct", "label": "pass", "annotator": "qa-1"},
        {"traceId": "tr-0001", "criterionId": "refund-correct", "label": "fail", "annotator": "qa-2"}])
    out = tmp_path / "s.json"
    assert _export(files, out, "--labels", str(files["labels"])) == 0
    human = [b for b in _bodies(out) if b["name"].endswith(".human")]
    assert [b["value"] for b in human] == [1.0, 0.0] and human[0]["id"] != human[1]["id"]
    verdicts = files["verdicts"].read_text().splitlines()
    files["verdicts"].write_text("\n".join([*verdicts, verdicts[1]]) + "\n")
    assert _export(files, out) == 1
    err = capsys.readouterr().err
    assert "verdicts.jsonl" in err and "records 2 and 4" in err and "tr-0002" in err


def test_score_options_on_a_table_import_are_an_error(tmp_path, capsys):
    table = write_jsonl(tmp_path / "t.jsonl", [{"id": "t1", "score": 0.1}])
    assert main(["verdicts", "import", str(table), "--criterion", "c", "--id-col", "id",
                 "--result-col", "score", "--pass-at-most", "0.5", "--into", str(tmp_path / "v.jsonl")]) == 1
    assert "--from langfuse" in capsys.readouterr().err
