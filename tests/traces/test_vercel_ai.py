"""Vercel AI SDK spans (``ai.*`` attributes) as the OTel JS SDK holds them: no parent ids."""

import json

from evalkit.traces import detect_format, load
from evalkit.traces.report import ImportReport

_n = iter(range(1, 1000))


def _span(name, start, end, trace_id=None, function="haiku", **attrs):
    """A JS SDK span: spanContext ids, HrTime [seconds, nanos] times, plain attributes, no parent."""
    k = next(_n)
    return {"name": name, "spanContext": {"traceId": trace_id or f"{k:032x}", "spanId": f"{k:016x}"},
            "attributes": {"ai.operationId": name, "ai.telemetry.functionId": function,
                           "ai.model.id": "gpt-4o-mini", **attrs},
            "status": {"code": 0}, "startTime": start, "endTime": end, "events": []}


def _generate_text(t0, function="haiku"):
    wrapper = _span("ai.generateText", [t0, 0], [t0 + 2, 500_000_000], function=function,
                    **{"ai.prompt": '{"prompt":"Write a haiku."}', "ai.response.text": "Code flows.",
                       "ai.usage.promptTokens": 14, "ai.usage.completionTokens": 20})
    call = _span("ai.generateText.doGenerate", [t0, 1_000_000], [t0 + 2, 400_000_000], function=function,
                 **{"ai.prompt.messages": '[{"role":"user","content":[{"type":"text","text":"Write a haiku."}]}]',
                    "gen_ai.system": "openai.responses", "gen_ai.request.model": "gpt-4o-mini",
                    "ai.response.text": "Code flows.", "ai.response.model": "gpt-4o-mini-2024-07-18",
                    "ai.usage.promptTokens": 14, "ai.usage.completionTokens": 20,
                    "ai.response.toolCalls": '[{"toolCallId":"c1","toolName":"weather","input":"{}"}]'})
    return wrapper, call


def test_each_span_maps_prompt_response_usage_and_model(tmp_path):
    wrapper, call = _generate_text(1_770_131_992)
    path = tmp_path / "spans.json"
    path.write_text(json.dumps([call, wrapper]))
    assert detect_format(path) == "otel"
    (trace,) = load(path)
    chain, gen = trace.observations
    assert (chain.type, chain.name) == ("CHAIN", "ai.generateText")  # wrapper: not a second model call
    assert chain.input == {"prompt": "Write a haiku."} and chain.output == "Code flows."
    assert gen.type == "GENERATION"
    assert gen.model == "gpt-4o-mini-2024-07-18"
    assert gen.input == [{"role": "user", "content": [{"type": "text", "text": "Write a haiku."}]}]
    assert gen.output == {"text": "Code flows.", "toolCalls": [{"toolCallId": "c1", "toolName": "weather",
                                                                "input": "{}"}]}
    assert gen.usage == {"input": 14, "output": 20, "total": 34}
    assert gen.start_time == "2026-02-03T15:19:52.001000Z"  # HrTime [seconds, nanoseconds]


def test_a_provider_call_is_joined_to_its_wrapper_by_name_and_timing(tmp_path):
    wrapper, call = _generate_text(1_770_131_992)
    embed = _span("ai.embed", [1_770_132_006, 0], [1_770_132_006, 300_000_000], function="embed",
                  **{"ai.value": '"fox"', "ai.embedding": "[0.5,-0.25]", "ai.usage.tokens": 3})
    do_embed = _span("ai.embed.doEmbed", [1_770_132_006, 10_000_000], [1_770_132_006, 290_000_000],
                     function="embed", **{"ai.values": ['"fox"'], "ai.embeddings": ["[0.5,-0.25]"],
                                          "ai.usage.tokens": 3})
    path = tmp_path / "spans.json"
    path.write_text(json.dumps([call, wrapper, do_embed, embed]))
    report = ImportReport()
    traces = {t.id: t for t in load(path, report=report)}
    assert set(traces) == {wrapper["spanContext"]["traceId"], embed["spanContext"]["traceId"]}
    gen_trace = traces[wrapper["spanContext"]["traceId"]]
    chain, gen = gen_trace.observations
    assert gen.parent_id == chain.id == wrapper["spanContext"]["spanId"]
    assert gen.metadata["sourceTraceId"] == call["spanContext"]["traceId"]
    assert gen_trace.metadata["joinedTraceIds"] == [call["spanContext"]["traceId"]]
    emb_chain, emb = traces[embed["spanContext"]["traceId"]].observations
    assert emb.type == "EMBEDDING" and emb.parent_id == emb_chain.id and emb.usage == {"input": 3}
    assert emb_chain.output == [0.5, -0.25]
    assert sum(n for (what, _), n in report.mappings.items() if what.startswith("Vercel")) == 2


def test_an_ambiguous_match_is_left_as_recorded(tmp_path):
    # Two concurrent calls of the same function: the provider call fits inside both wrappers.
    first, call = _generate_text(1_770_131_992)
    second, _ = _generate_text(1_770_131_992)
    path = tmp_path / "spans.json"
    path.write_text(json.dumps([first, second, call]))
    traces = load(path)
    assert len(traces) == 3
    assert all(o.parent_id is None for t in traces for o in t.observations)


def test_a_call_of_another_function_is_not_joined(tmp_path):
    wrapper, _ = _generate_text(1_770_131_992, function="haiku")
    _, call = _generate_text(1_770_131_992, function="summary")
    path = tmp_path / "spans.json"
    path.write_text(json.dumps([wrapper, call]))
    assert len(load(path)) == 2


def test_a_tool_call_span_is_a_tool_under_its_wrapper(tmp_path):
    wrapper, _ = _generate_text(1_770_131_992)
    tool = _span("ai.toolCall", [1_770_131_993, 0], [1_770_131_993, 5_000_000],
                 **{"ai.toolCall.name": "weather", "ai.toolCall.id": "c1", "ai.toolCall.args": '{"city":"Oslo"}',
                    "ai.toolCall.result": '{"temp":3}'})
    path = tmp_path / "spans.json"
    path.write_text(json.dumps([wrapper, tool]))
    (trace,) = load(path)
    chain, tool_obs = trace.observations
    assert (tool_obs.type, tool_obs.name, tool_obs.parent_id) == ("TOOL", "weather", chain.id)
    assert tool_obs.input == {"city": "Oslo"} and tool_obs.output == {"temp": 3}
