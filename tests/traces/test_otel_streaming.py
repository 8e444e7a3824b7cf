"""The OTel importer reads a JSONL file sorted by trace id one trace at a time, and any other input
whole, with the same traces either way; its short path for collector-style spans agrees with the
general one."""

import base64
import json
import random

import pytest

from evalkit.errors import InputError
from evalkit.traces import iter_traces
from evalkit.traces.native import trace_line
from evalkit.traces.report import ImportReport


def _sv(text):
    return {"stringValue": text}


def _attributes(i, t):
    """A different instrumentation per span: GenAI, tool, OpenInference, legacy GenAI, plain, Vercel."""
    kind = i % 6
    if kind == 0:
        return [{"key": "gen_ai.operation.name", "value": _sv("chat")},
                {"key": "gen_ai.request.model", "value": _sv("m1")},
                {"key": "gen_ai.usage.input_tokens", "value": {"intValue": str(10 + i)}},
                {"key": "gen_ai.usage.output_tokens", "value": {"intValue": 5}},
                {"key": "gen_ai.input.messages", "value": _sv(json.dumps([{"role": "user", "content": f"q{t}"}]))}]
    if kind == 1:
        return [{"key": "gen_ai.operation.name", "value": _sv("execute_tool")},
                {"key": "gen_ai.tool.name", "value": _sv(f"tool{i}")},
                {"key": "gen_ai.tool.call.arguments", "value": _sv('{"a": 1, "a": 2}')},
                {"key": "gen_ai.tool.call.result", "value": _sv("not json")}]
    if kind == 2:
        return [{"key": "openinference.span.kind", "value": _sv("LLM")},
                {"key": "llm.input_messages.0.message.content", "value": _sv("q")},
                {"key": "llm.output_messages.0.message.content", "value": _sv("a")},
                {"key": "llm.token_count.prompt", "value": {"doubleValue": 3.0}}]
    if kind == 3:
        return [{"key": "gen_ai.system", "value": _sv("openai")},
                {"key": "gen_ai.prompt.0.content", "value": _sv("p")},
                {"key": "gen_ai.usage.prompt_tokens", "value": {"intValue": "NaN"}},
                {"key": "list", "value": {"arrayValue": {"values": [_sv("x"), {"intValue": "3"}]}}}]
    if kind == 4:
        return [{"key": "input.value", "value": _sv('{"q": [1, 2]}')}, {"key": "output.value", "value": _sv("plain")}]
    return [{"key": "ai.operationId", "value": _sv("ai.generateText.doGenerate")},
            {"key": "ai.response.text", "value": _sv("t")}, {"key": "ai.usage.promptTokens", "value": {"intValue": 4}}]


def _span(t, i):
    """Span ``i`` of trace ``t``, as a collector writes it (hex ids, decimal-string nanoseconds)."""
    start = (1_767_225_600_000 + t * 1000 + (i * 37) % 11) * 1_000_000 + i
    span = {"traceId": f"{t:032x}", "spanId": f"{t * 64 + i + 1:016x}", "name": f"op {i}", "kind": i % 4,
            "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + 5_000_000),
            "attributes": _attributes(i, t)}
    if i:
        span["parentSpanId"] = f"{t * 64 + 1:016x}"
    elif t % 2:
        span["parentSpanId"] = "0" * 16  # a root written with an all-zero parent; even traces leave it out
    if i == 5:
        span["events"] = [{"name": "gen_ai.user.message", "timeUnixNano": str(start),
                           "attributes": [{"key": "content", "value": _sv("ev")}]}]
    if i == 6:
        span["status"] = {"code": 2, "message": "boom"}
    return span


def _respelled(span):
    """The same span in other spellings the importer accepts, which its short path leaves to the general one."""
    out = dict(span)
    out["traceId"] = "0x" + span["traceId"].upper()
    out["spanId"] = base64.b64encode(bytes.fromhex(span["spanId"])).decode()
    out["startTimeUnixNano"] = int(span["startTimeUnixNano"])
    out.pop("endTimeUnixNano")
    out["end_time_unix_nano"] = span["endTimeUnixNano"]
    if "parentSpanId" in out:
        out["parent_span_id"] = out.pop("parentSpanId")
    return out


TRACES = {t: [_span(t, i) for i in range(1 + t % 8)] for t in range(24)}


def _line(spans):
    return json.dumps({"resourceSpans": [{"resource": {"attributes": [{"key": "service.name", "value": _sv("s")}]},
                                          "scopeSpans": [{"scope": {"name": "sc"}, "spans": spans}]}]}) + "\n"


def _import(path):
    report = ImportReport()
    return [trace_line(t) for t in iter_traces(path, "otel", report=report)], report


def test_sorted_unsorted_and_whole_document_give_the_same_traces(tmp_path):
    sorted_file = tmp_path / "sorted.jsonl"
    sorted_file.write_text("".join(_line(TRACES[t]) for t in sorted(TRACES)))
    spans = [s for t in TRACES for s in TRACES[t]]
    random.Random(3).shuffle(spans)
    shuffled = tmp_path / "shuffled.jsonl"
    shuffled.write_text("".join(_line(spans[i:i + 5]) for i in range(0, len(spans), 5)))
    document = tmp_path / "doc.json"
    document.write_text(_line(spans))

    streamed, streamed_report = _import(sorted_file)
    held, held_report = _import(shuffled)
    whole, whole_report = _import(document)

    assert len(streamed) == len(TRACES)
    assert streamed == held == whole
    assert streamed_report.warnings == whole_report.warnings == []
    (warning,) = held_report.warnings
    assert "is not sorted by trace id (line " in warning and f"the spans of {len(TRACES)} traces were held" in warning


def test_short_path_and_general_path_agree(tmp_path):
    plain = tmp_path / "plain.jsonl"
    plain.write_text("".join(_line(TRACES[t]) for t in sorted(TRACES)))
    respelled = tmp_path / "respelled.jsonl"
    respelled.write_text("".join(_line([_respelled(s) for s in TRACES[t]]) for t in sorted(TRACES)))
    assert _import(plain)[0] == _import(respelled)[0]


def test_a_sorted_file_hands_on_each_trace_before_reading_the_rest(tmp_path):
    bad = dict(TRACES[4][0], startTimeUnixNano="12x")
    lines = [_line(TRACES[1]), _line(TRACES[2]), _line(TRACES[3]), _line([bad])]
    path = tmp_path / "sorted.jsonl"
    path.write_text("".join(lines))
    traces = iter_traces(path, "otel")
    assert next(traces).id == f"{1:032x}"
    assert next(traces).id == f"{2:032x}"  # complete once trace 3 starts, on line 3
    with pytest.raises(InputError, match=r"sorted.jsonl:4: .*startTimeUnixNano: not a timestamp"):
        next(traces)

    # Not sorted: every span is read before the first trace is given, so the error comes first.
    path.write_text("".join([lines[1], lines[0], lines[2], lines[3]]))
    with pytest.raises(InputError, match="not a timestamp"):
        next(iter_traces(path, "otel"))


def test_spans_of_one_trace_over_consecutive_lines_are_one_trace(tmp_path):
    path = tmp_path / "split.jsonl"
    path.write_text("".join(_line(TRACES[t][:2]) + _line(TRACES[t][2:] + TRACES[t][:1]) for t in (5, 6, 7)))
    traces, report = _import(path)
    assert [len(json.loads(t)["observations"]) for t in traces] == [len(TRACES[t]) for t in (5, 6, 7)]
    assert report.warnings == []


def _vercel(trace_id, span_id, op, start, end):
    return {"traceId": trace_id, "spanId": span_id, "name": op, "startTimeUnixNano": str(start),
            "endTimeUnixNano": str(end), "attributes": [{"key": "ai.operationId", "value": _sv(op)},
                                                        {"key": "ai.telemetry.functionId", "value": _sv("f")}]}


def test_vercel_spans_without_parents_are_still_joined_in_a_sorted_file(tmp_path):
    base = 1_767_225_600_000_000_000
    path = tmp_path / "vercel.jsonl"
    path.write_text(_line(TRACES[0]) + _line([_vercel("a" * 32, "1" * 16, "ai.generateText", base, base + 10**9)])
                    + _line([_vercel("b" * 32, "2" * 16, "ai.generateText.doGenerate", base + 10, base + 10**8)]))
    report = ImportReport()
    traces = list(iter_traces(path, "otel", report=report))
    assert [t.id for t in traces] == [f"{0:032x}", "a" * 32]
    child = traces[1].observations[1]
    assert child.parent_id == "1" * 16 and child.metadata["sourceTraceId"] == "b" * 32
    (warning,) = report.warnings
    assert warning.startswith(f"{path}:2: from this Vercel AI SDK span") and "2 traces were held" in warning


def test_fast_times_and_ids_agree_with_the_general_helpers():
    from evalkit.traces.otel_ids import BadField, is_null_id, time_from_nanos
    from evalkit.traces.tree import iso_from_unix_nanos

    rng = random.Random(5)
    samples = [0, 1, 999, 1000, 10**9 - 1, 10**9, -1, -1001, -(10**18), 253402300799999999999,
               253402300800 * 10**9, -62135596800 * 10**9, -62135596801 * 10**9]
    samples += [rng.randrange(-(10**20), 10**20) for _ in range(2000)]
    for nanos in samples:
        for spelling in (nanos, str(nanos)) if nanos >= 0 else (nanos,):  # "-1" is no decimal string
            try:
                expected = iso_from_unix_nanos(spelling)
            except (OverflowError, ValueError):
                with pytest.raises(BadField, match="time out of range"):
                    time_from_nanos(spelling, "t")
            else:
                assert time_from_nanos(spelling, "t") == expected, spelling
    assert [is_null_id(v) for v in ("", None, "0", "0000", "0a00", "a")] == [True, True, True, True, False, False]
