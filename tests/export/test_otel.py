"""``evalkit export otel``: the OTLP JSON file, its ids, re-reading it, and sending it to a collector."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest

from evalkit.calibration import read_verdicts
from evalkit.cli import main
from evalkit.export import verdicts_from_otel
from evalkit.traces import iter_traces

from .conftest import write_jsonl

HEX32 = re.compile(r"[0-9a-f]{32}")
HEX16 = re.compile(r"[0-9a-f]{16}")


def _export(files: dict[str, Path], out: Path, *extra: str) -> int:
    return main(["export", "otel", str(files["verdicts"]), "--traces", str(files["traces"]),
                 "--out", str(out), *extra])


def _spans(doc: dict) -> list[dict]:
    return [s for rs in doc["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]


def _event(span: dict) -> dict:
    (event,) = span["events"]
    assert event["name"] == "gen_ai.evaluation.result"
    return {a["key"]: next(iter(a["value"].values())) for a in event["attributes"]}


def _as_protobuf(doc: dict):
    """Parse the OTLP JSON with the OTLP protobuf schema itself (unknown fields are errors); OTLP JSON
    writes ids as hex where protobuf's JSON mapping expects base64, so they are converted first."""
    from google.protobuf.json_format import ParseDict
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    def b64(hex_id: str) -> str:
        return base64.b64encode(bytes.fromhex(hex_id)).decode()

    doc = json.loads(json.dumps(doc))
    for span in _spans(doc):
        for key in ("traceId", "spanId", "parentSpanId"):
            if key in span:
                span[key] = b64(span[key])
        for link in span.get("links", []):
            link["traceId"], link["spanId"] = b64(link["traceId"]), b64(link["spanId"])
    return ParseDict(doc, ExportTraceServiceRequest())


def test_one_semconv_event_per_verdict_in_valid_otlp_json(files, tmp_path, capsys):
    out = tmp_path / "eval.otlp.json"
    assert _export(files, out, "--labels", str(files["labels"])) == 0
    assert "derived from the evalkit ids" in capsys.readouterr().out
    doc = json.loads(out.read_text())
    request = _as_protobuf(doc)
    assert len(request.resource_spans[0].scope_spans[0].spans) == 5
    spans = _spans(doc)
    events = [_event(s) for s in spans]
    assert [e["gen_ai.evaluation.name"] for e in events] == [
        "refund-correct", "refund-correct", "tone", "refund-correct.human", "refund-correct.human"]
    labels = [e["gen_ai.evaluation.score.label"] for e in events]
    assert labels == ["pass", "fail", "uncertain", "pass", "defer"]
    assert [e.get("gen_ai.evaluation.score.value") for e in events] == [1.0, 0.0, None, 1.0, None]
    assert events[0]["gen_ai.evaluation.explanation"] == "The refund matches the order."
    assert events[2]["gen_ai.evaluation.explanation"] == "uncertain: no tone policy is given"
    for span in spans:
        assert HEX32.fullmatch(span["traceId"]) and HEX16.fullmatch(span["spanId"])
        assert HEX16.fullmatch(span["parentSpanId"])
        assert span["startTimeUnixNano"] == span["endTimeUnixNano"]
    # Both verdicts on tr-0001 hang off the same (derived) root span, in the same (derived) trace.
    assert spans[0]["traceId"] == spans[2]["traceId"] != spans[1]["traceId"]
    assert spans[0]["parentSpanId"] == spans[2]["parentSpanId"]
    # The evaluation is stamped with the judged run's end: 2026-03-02T09:01:42.500Z.
    assert spans[0]["startTimeUnixNano"] == "1772442102500000000"
    # The cited tool call is a link; the root (the parent) is not repeated as one.
    assert [link["spanId"] for link in spans[0]["links"]] != [spans[0]["parentSpanId"]]
    assert len(spans[0]["links"]) == 1


def test_export_is_byte_identical_on_rerun(files, tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert _export(files, a) == 0 and _export(files, b) == 0
    assert a.read_bytes() == b.read_bytes()


def test_traces_from_opentelemetry_keep_their_ids(tmp_path, capsys):
    trace_id, root, child = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", "b7ad6b7169203331"
    otlp = {"resourceSpans": [{"scopeSpans": [{"spans": [
        {"traceId": trace_id, "spanId": root, "name": "invoke_agent",
         "startTimeUnixNano": "1700000000000000000", "endTimeUnixNano": "1700000002000000000"},
        {"traceId": trace_id, "spanId": child, "parentSpanId": root, "name": "chat",
         "startTimeUnixNano": "1700000000500000000", "endTimeUnixNano": "1700000001000000000",
         "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}]}]}]}]}
    traces = tmp_path / "spans.otlp.json"
    traces.write_text(json.dumps(otlp))
    verdicts = write_jsonl(tmp_path / "v.jsonl", [{"criterionId": "c", "traceId": trace_id, "result": "pass",
                                                   "confidence": None, "critique": None,
                                                   "refs": [{"obs": child, "path": "output", "value": "x"}]}])
    out = tmp_path / "out.json"
    assert main(["export", "otel", str(verdicts), "--traces", str(traces), "--out", str(out)]) == 0
    assert "OpenTelemetry ids kept for 1 of 1 trace" in capsys.readouterr().out
    (span,) = _spans(json.loads(out.read_text()))
    assert (span["traceId"], span["parentSpanId"]) == (trace_id, root)
    assert span["links"] == [{"traceId": trace_id, "spanId": child}]
    # Where the collector holds both, the evaluation is part of the judged trace, under its root.
    both = tmp_path / "both.jsonl"
    both.write_text(json.dumps(otlp) + "\n" + json.dumps(json.loads(out.read_text())) + "\n")
    (merged,) = list(iter_traces(both))
    assert merged.id == trace_id
    assert [(o.id, o.parent_id) for o in merged.observations if o.name == "evaluation c"] == [
        (span["spanId"], root)]


def test_evalkit_reads_the_export_back_as_traces_and_as_verdicts(files, tmp_path):
    out = tmp_path / "eval.otlp.json"
    assert _export(files, out, "--labels", str(files["labels"])) == 0
    traces = list(iter_traces(out))
    assert len(traces) == 2 and sum(len(t.observations) for t in traces) == 5
    assert all(o.metadata["events"][0]["name"] == "gen_ai.evaluation.result"
               for t in traces for o in t.observations)
    found = verdicts_from_otel(out)
    assert found.verdicts == read_verdicts(files["verdicts"])  # refs, confidence, blockedBy all kept
    assert found.human_labels == 2


def test_foreign_evaluation_events_need_an_explicit_reading(tmp_path):
    """Log-based events from another tool: a numeric score is read only through a threshold."""
    doc = {"resourceLogs": [{"scopeLogs": [{"logRecords": [{
        "eventName": "gen_ai.evaluation.result", "traceId": "4bf92f3577b34da6a3ce929d0e0e4736",
        "spanId": "00f067aa0ba902b7", "attributes": [
            {"key": "gen_ai.evaluation.name", "value": {"stringValue": "relevance"}},
            {"key": "gen_ai.evaluation.score.value", "value": {"doubleValue": 0.8}},
            {"key": "gen_ai.evaluation.explanation", "value": {"stringValue": "on topic"}}]}]}]}]}
    path = tmp_path / "logs.json"
    path.write_text(json.dumps(doc))
    into = tmp_path / "v.jsonl"
    assert main(["verdicts", "import", str(path), "--from", "otel", "--into", str(into)]) == 1
    assert not into.exists()
    assert main(["verdicts", "import", str(path), "--from", "otel", "--pass-at-least", "0.7",
                 "--into", str(into)]) == 0
    (v,) = read_verdicts(into)
    assert (v.trace_id, v.criterion_id, v.result, v.critique, v.confidence) == (
        "4bf92f3577b34da6a3ce929d0e0e4736", "relevance", "pass", "on topic", None)


def test_verdict_on_a_trace_not_in_the_traces_file_is_an_error(files, tmp_path, capsys):
    write_jsonl(files["verdicts"], [{"criterionId": "c", "traceId": "tr-9999", "result": "pass",
                                     "confidence": None, "critique": None}])
    assert _export(files, tmp_path / "out.json") == 1
    err = capsys.readouterr().err
    assert "tr-9999" in err and "traces.jsonl" in err
    assert not (tmp_path / "out.json").exists()


@pytest.mark.slow
def test_sends_the_file_spans_over_otlp_http(files, tmp_path, receiver, capsys):
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    out = tmp_path / "eval.otlp.json"
    assert _export(files, out, "--endpoint", receiver.url) == 0
    assert "sent 3 spans" in capsys.readouterr().out
    (request,) = receiver.requests
    assert request.path == "/v1/traces"
    assert request.headers["content-type"] == "application/x-protobuf"
    got = ExportTraceServiceRequest.FromString(request.body)
    sent = [s for rs in got.resource_spans for ss in rs.scope_spans for s in ss.spans]
    want = _spans(json.loads(out.read_text()))
    got = [(s.trace_id.hex(), s.span_id.hex(), s.parent_span_id.hex(), s.start_time_unix_nano) for s in sent]
    assert got == [(w["traceId"], w["spanId"], w["parentSpanId"], int(w["startTimeUnixNano"])) for w in want]
    names = [{a.key: a.value for a in s.events[0].attributes}["gen_ai.evaluation.score.label"].string_value
             for s in sent]
    assert names == ["pass", "fail", "uncertain"]


@pytest.mark.slow
def test_a_collector_that_refuses_is_an_error(files, tmp_path, receiver, capsys):
    receiver.status, receiver.reply = 400, b"bad request"
    assert _export(files, tmp_path / "out.json", "--endpoint", receiver.url) == 1
    assert "did not accept spans 1-3 of 3" in capsys.readouterr().err


@pytest.mark.parametrize("url", ["127.0.0.1:4318", "ftp://127.0.0.1/"])
def test_endpoint_must_be_an_http_url(files, tmp_path, url, capsys):
    assert _export(files, tmp_path / "out.json", "--endpoint", url) == 1
    assert "--endpoint" in capsys.readouterr().err


def test_evaluation_time_is_the_latest_time_when_the_root_has_none(tmp_path):
    """Mixed zone-less and zoned times are compared as UTC; the latest one stamps the evaluation."""
    traces = write_jsonl(tmp_path / "t.jsonl", [{"id": "t1", "observations": [
        {"id": "o1", "type": "AGENT", "startTime": "2026-03-02T09:00:00"},
        {"id": "o2", "type": "TOOL", "parentId": "o1", "endTime": "2026-03-02T09:00:05Z"}]}])
    verdicts = write_jsonl(tmp_path / "v.jsonl", [{"criterionId": "c", "traceId": "t1", "result": "pass",
                                                   "confidence": None, "critique": None}])
    out = tmp_path / "o.json"
    assert main(["export", "otel", str(verdicts), "--traces", str(traces), "--out", str(out)]) == 0
    (span,) = _spans(json.loads(out.read_text()))
    assert span["startTimeUnixNano"] == "1772442005000000000"
