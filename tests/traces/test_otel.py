import json
from collections import Counter
from pathlib import Path

import pytest

from evalkit.errors import InputError
from evalkit.traces.otel import looks_like_otel, read_otel
from evalkit.traces.source import iter_source_values

FIXTURES = Path(__file__).parent / "fixtures"


def _read(path):
    return list(read_otel(iter_source_values(path)))


def _one(name):
    traces = _read(FIXTURES / name)
    assert len(traces) == 1
    return traces[0]


def _types(trace):
    return dict(Counter(o.type for o in trace.observations))


def _by_name(trace, name):
    return next(o for o in trace.observations if o.name == name)


def _write(tmp_path, doc, name="spans.json"):
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def test_current_genai_conventions():
    trace = _one("otlp_genai.json")
    assert trace.id == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert trace.name == "invoke_agent weather_agent"
    assert trace.metadata == {"source": "otel"}
    assert _types(trace) == {"AGENT": 1, "GENERATION": 2, "TOOL": 2, "SPAN": 1}
    # parents first, siblings by start time, whatever the order in the file
    assert [o.id[-2:] for o in trace.observations] == ["01", "02", "06", "04", "05", "03"]
    root = trace.observations[0]
    assert root.type == "AGENT" and root.parent_id is None
    assert all(o.parent_id == root.id for o in trace.observations if o.id[-2:] in ("02", "03", "04", "05"))

    first_chat = trace.observations[1]
    assert first_chat.type == "GENERATION"  # its tool-call request does not make it a tool
    assert first_chat.model == "gpt-4o-mini-2024-07-18"
    assert first_chat.usage == {"input": 50, "output": 10, "total": 60}
    assert first_chat.input == [{"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]}]
    assert first_chat.output[0]["parts"][0] == {"type": "tool_call", "id": "call_1", "name": "get_weather",
                                                 "arguments": {"city": "Paris"}}
    assert first_chat.metadata["attributes"]["gen_ai.response.finish_reasons"] == ["tool_call"]
    assert first_chat.metadata["resource"] == {"service.name": "weather-agent", "service.version": "1.2.0"}
    assert first_chat.metadata["scope"] == "example.genai.instrumentation"
    assert first_chat.metadata["spanKind"] == 3
    assert trace.observations[5].model == "gpt-4o-mini"  # request model when no response model

    tool = _by_name(trace, "get_weather")
    assert tool.type == "TOOL"
    assert tool.input == {"city": "Paris"}
    assert tool.output == {"temp_c": 18, "sky": "cloudy"}
    assert tool.metadata["spanName"] == "execute_tool get_weather"

    failed = _by_name(trace, "lookup_timezone")  # no gen_ai.tool.name: the span name without its prefix
    assert failed.type == "TOOL"
    assert failed.input == {"city": "Paris"}
    assert failed.has_output is False
    assert failed.level == "ERROR" and failed.status_message == "timezone service unavailable"

    http = _by_name(trace, "POST /v1/chat/completions")
    assert http.type == "SPAN" and http.parent_id == first_chat.id
    assert http.has_input is False and http.has_output is False
    assert http.level is None and http.usage is None
    assert http.metadata["attributes"] == {"http.request.method": "POST", "http.response.status_code": 200,
                                           "http.request.resend": False}
    assert "input" not in http.to_json_obj() and "level" not in http.to_json_obj()


def test_legacy_genai_prompts_completions_and_events():
    trace = _one("otlp_legacy.json")
    assert _types(trace) == {"SPAN": 1, "GENERATION": 2}
    openai = _by_name(trace, "openai.chat")
    assert openai.input == [
        {"role": "system", "content": "You answer weather questions."},
        {"role": "user", "content": "Weather in Bergen?"},
        {"role": "user", "content": "And in Oslo?"},
    ]
    assert openai.output == [{"role": "assistant", "finish_reason": "tool_calls",
                              "tool_calls": [{"name": "get_weather", "arguments": '{"city": "Oslo"}'}]}]
    assert openai.usage == {"input": 42, "output": 7, "total": 49}
    assert openai.model == "gpt-4"
    assert openai.level is None

    anthropic = _by_name(trace, "anthropic.chat")
    assert anthropic.input == [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    assert anthropic.output == [{"index": 0, "finish_reason": "end_turn",
                                 "message": {"role": "assistant", "content": "Hello!"}}]
    assert anthropic.level == "ERROR" and anthropic.status_message == "overloaded, retried"
    assert anthropic.usage is None
    assert [e["name"] for e in anthropic.metadata["events"]] == [
        "gen_ai.system.message", "gen_ai.user.message", "gen_ai.choice"]


def test_openinference_flat_span_list():
    values = list(iter_source_values(FIXTURES / "openinference_spans.json"))
    assert len(values) == 7 and all(looks_like_otel(v.value) for v in values)
    trace = _one("openinference_spans.json")
    assert _types(trace) == {"AGENT": 1, "CHAIN": 1, "GENERATION": 1, "TOOL": 1, "RETRIEVER": 1,
                             "EMBEDDING": 1, "GUARDRAIL": 1}
    assert [o.name for o in trace.observations] == [
        "calculator_agent", "turn", "ChatCompletion", "multiply", "rerank", "embed", "moderation"]
    agent, chain, llm, tool = trace.observations[:4]
    assert agent.input == "What is 6 times 7?" and agent.output == "6 times 7 is 42."
    assert chain.input == {"question": "What is 6 times 7?"} and chain.has_output is False
    assert llm.model == "gpt-4o"
    assert llm.usage == {"input": 30, "output": 5, "total": 35}
    assert llm.input == [{"role": "system", "content": "You are a calculator."},
                         {"role": "user", "content": "What is 6 times 7?"}]
    assert llm.output[0]["tool_calls"][0]["tool_call"]["function"]["name"] == "multiply"
    assert tool.parent_id == chain.id and llm.parent_id == chain.id
    assert tool.input == {"a": 6, "b": 7} and tool.output == "42"
    assert trace.observations[-1].level == "ERROR"
    assert llm.metadata["scope"] == "openinference.instrumentation.example"


def test_tempo_batches_keep_nanoseconds_exact():
    trace = _one("tempo_batches.json")
    assert trace.id == "0af7651916cd43dd8448eb211c80319c"
    assert [o.name for o in trace.observations] == [
        "POST /ask", "generate_content gemini-2.0-flash", "search_docs"]
    http, model, tool = trace.observations
    assert http.parent_id == "ffffffffffff0000"  # parent not in the export: still a root
    assert model.parent_id == http.id and tool.parent_id == model.id
    # 1700000000000000999 ns: a float would round it up to ...001024 and show .000001
    assert model.start_time == "2023-11-14T22:13:20.000000Z"
    assert model.end_time == "2023-11-14T22:13:20.400000Z"
    assert model.usage == {"input": 300, "output": 20, "total": 320}
    assert tool.type == "TOOL" and tool.has_input is False
    assert http.metadata["resource"] == {"service.name": "docs-gateway"}
    assert http.metadata["scope"] == "example.http"
    assert http.metadata["spanKind"] == "SPAN_KIND_SERVER"


def test_jaeger_export():
    trace = _one("jaeger.json")
    assert trace.id == "3f2a1b0c9d8e7f60a1b2c3d4e5f60718"
    assert trace.name == "POST /"
    assert [o.name for o in trace.observations] == [
        "POST /", "invoke_agent helper", "openai.chat", "read_file", "GET /health"]
    root, agent, chat, tool, health = trace.observations
    assert (root.type, agent.type, chat.type, tool.type, health.type) == (
        "SPAN", "AGENT", "GENERATION", "TOOL", "SPAN")
    assert agent.parent_id == root.id and chat.parent_id == agent.id and tool.parent_id == agent.id
    assert root.start_time == "2024-01-11T19:06:40.000000Z" and root.end_time == "2024-01-11T19:06:41.000000Z"
    assert chat.usage == {"input": 12, "output": 3, "total": 15}
    assert chat.input == [{"role": "user", "content": "Read notes.txt"}]
    assert chat.metadata["resource"] == {"service.name": "llm-proxy"}
    assert tool.input == {"path": "notes.txt"}
    assert tool.metadata["events"] == [{"name": "cache miss", "time": "2024-01-11T19:06:40.620000Z",
                                        "attributes": {"size": 512}}]
    assert agent.metadata["scope"] == "example.agent" and agent.metadata["spanKind"] == "internal"
    assert health.level == "ERROR" and health.status_message == "connection refused"
    assert root.level is None


def test_spans_of_two_traces_are_grouped_and_sorted():
    traces = _read(FIXTURES / "otlp_two_traces.json")
    assert [t.id for t in traces] == ["a" * 32, "b" * 32]
    first, second = traces
    assert first.name == "first run" and [o.name for o in first.observations] == ["first run", "add"]
    assert second.name == "second run"
    assert _types(second) == {"SPAN": 1, "GENERATION": 1, "EMBEDDING": 1}
    assert first.observations[0].metadata["resource"] == {"service.name": "svc-b"}


def test_anyagent_decimal_ids_and_spans_record():
    trace = _one("anyagent_style.json")
    assert trace.id == "0af7651916cd43dd8448eb211c80319c"  # beyond 64 bits, still exact
    root = trace.observations[0]
    assert root.id == format(13235353014750950193, "016x") and root.parent_id is None
    assert root.type == "AGENT" and trace.name == "invoke_agent [demo]"
    llm, tool = trace.observations[1:]
    assert llm.id == "000000000000002a" and llm.parent_id == root.id
    assert llm.type == "GENERATION" and llm.usage == {"input": 20, "output": 4, "total": 24}
    assert llm.input == [{"role": "user", "content": "What time is it?"}] and llm.has_output is False
    assert tool.name == "get_time" and tool.level == "ERROR" and tool.status_message == "clock unavailable"
    assert root.metadata["resource"] == {"service.name": "unknown_service"}


def test_jsonl_spans_spread_over_lines(tmp_path):
    spans = [
        {"traceId": "c" * 32, "spanId": "c2", "parentSpanId": "c1", "name": "chat",
         "attributes": {"gen_ai.operation.name": "chat"}},
        {"traceId": "d" * 32, "spanId": "d1", "name": "other"},
        {"traceId": "c" * 32, "spanId": "c1", "name": "root", "attributes": {}},
    ]
    path = tmp_path / "spans.jsonl"
    path.write_text("\n".join(json.dumps(s) for s in spans) + "\n")
    traces = _read(path)
    assert [(t.id, [o.name for o in t.observations]) for t in traces] == [
        ("c" * 32, ["root", "chat"]), ("d" * 32, ["other"])]


def test_base64_ids_are_decoded_to_hex(tmp_path):
    doc = {"resourceSpans": [{"scopeSpans": [{"spans": [
        {"traceId": "S/kvNXezTaajzpKdDg5HNg==", "spanId": "APBnqgupAgE=", "name": "root"}]}]}]}
    trace = _read(_write(tmp_path, doc))[0]
    assert trace.id == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert trace.observations[0].id == "00f067aa0ba90201"


def test_identical_duplicate_spans_are_read_once(tmp_path):
    span = {"traceId": "e" * 32, "spanId": "e1", "name": "root"}
    trace = _read(_write(tmp_path, [span, span]))[0]
    assert len(trace.observations) == 1


def test_span_without_span_id_is_a_located_error(tmp_path):
    doc = {"resourceSpans": [{"scopeSpans": [{"spans": [
        {"traceId": "f" * 32, "spanId": "f1", "name": "ok"},
        {"traceId": "f" * 32, "name": "broken"}]}]}]}
    path = _write(tmp_path, doc)
    with pytest.raises(InputError) as exc:
        _read(path)
    assert exc.value.path == "resourceSpans[0].scopeSpans[0].spans[1].spanId"
    assert exc.value.file == str(path)
    assert "span id" in exc.value.message


def test_flat_span_without_ids_is_located_by_index(tmp_path):
    spans = [{"trace_id": "f" * 32, "span_id": "f1", "name": "ok", "attributes": {}},
             {"trace_id": "f" * 32, "name": "broken", "attributes": {}}]
    with pytest.raises(InputError) as exc:
        _read(_write(tmp_path, spans))
    assert exc.value.path == "[1].span_id"
    spans[1] = {"span_id": "f2", "name": "no trace", "attributes": {}}
    with pytest.raises(InputError) as exc:
        _read(_write(tmp_path, spans))
    assert exc.value.path == "[1].trace_id"


def test_non_object_attributes_are_a_located_error(tmp_path):
    doc = {"resourceSpans": [{"scopeSpans": [{"spans": [
        {"traceId": "f" * 32, "spanId": "f1", "name": "bad", "attributes": "gen_ai.system=openai"}]}]}]}
    with pytest.raises(InputError) as exc:
        _read(_write(tmp_path, doc))
    assert exc.value.path == "resourceSpans[0].scopeSpans[0].spans[0].attributes"


def test_conflicting_duplicate_span_id_is_an_error(tmp_path):
    spans = [{"traceId": "e" * 32, "spanId": "e1", "name": "a"}, {"traceId": "e" * 32, "spanId": "e1", "name": "b"}]
    with pytest.raises(InputError) as exc:
        _read(_write(tmp_path, spans))
    assert exc.value.path == "[1].spanId"


@pytest.mark.parametrize("value", [
    {"resourceSpans": []},
    {"batches": [{"instrumentationLibrarySpans": []}]},
    {"data": [{"traceID": "ab", "spans": []}]},
    {"traceId": "ab", "spanId": "cd", "name": "x", "attributes": [{"key": "k", "value": {"stringValue": "v"}}]},
    {"context": {"trace_id": 1, "span_id": 2}, "name": "x", "attributes": {}},
    {"spans": [{"trace_id": "ab", "span_id": "cd", "name": "x"}]},
])
def test_looks_like_otel(value):
    assert looks_like_otel(value)


@pytest.mark.parametrize("value", [
    {"id": "t1", "observations": []},
    {"trace": {"id": "t1"}, "observations": []},
    {"id": "o1", "traceId": "t1", "type": "GENERATION", "name": "chat", "startTime": "2024-01-01T00:00:00Z"},
    {"messages": [{"role": "user", "content": "hi"}]},
    [1, 2],
    "span",
])
def test_does_not_look_like_otel(value):
    assert not looks_like_otel(value)
