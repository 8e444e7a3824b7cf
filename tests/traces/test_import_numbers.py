"""Numbers that must be right: tokens counted once per model call, tool spans known as tools, stats of
one-sided token counts, and spans without ids nested by their timing."""

import json
import subprocess
import sys
from pathlib import Path

from evalkit.traces import ImportReport, load, to_frame, trace_stats

MASTRA = Path(__file__).parent / "fixtures" / "mastra" / "weatherAgentSpans.json"


def _otlp_span(span_id, parent, name, attrs, start):
    attributes = [{"key": k, "value": {"intValue": v} if isinstance(v, int) else {"stringValue": v}}
                  for k, v in attrs.items()]
    span = {"traceId": "dd547580319ab0312cee07f1def50dad", "spanId": span_id, "name": name,
            "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + 1000), "attributes": attributes}
    if parent:
        span["parentSpanId"] = parent
    return span


def _adk_call(n, tokens_in, tokens_out, start):
    """Google ADK's three records of one model call: call_llm > generate_content > openai.chat, same usage."""
    usage = {"gen_ai.usage.input_tokens": tokens_in, "gen_ai.usage.output_tokens": tokens_out}
    ids = [f"{n}a00000000000000", f"{n}b00000000000000", f"{n}c00000000000000"]
    return [
        _otlp_span(ids[0], "0000000000000001", "call_llm", {"gen_ai.operation.name": "call_llm",
                                                             "gen_ai.request.model": "gpt-4.1-mini", **usage}, start),
        _otlp_span(ids[1], ids[0], "generate_content gpt-4.1-mini", {"gen_ai.operation.name": "generate_content",
                                                                     "gen_ai.request.model": "gpt-4.1-mini", **usage},
                   start + 1),
        _otlp_span(ids[2], ids[1], "openai.chat", {"gen_ai.system": "openai", "gen_ai.request.model": "gpt-4.1-mini",
                                                   **usage}, start + 2),
    ]


def test_a_model_call_recorded_by_its_wrappers_too_counts_its_tokens_once(tmp_path):
    spans = [_otlp_span("0000000000000001", None, "invoke_agent", {"gen_ai.operation.name": "invoke_agent"}, 1000),
             *_adk_call(1, 2256, 13, 2000), *_adk_call(2, 2392, 116, 5000)]
    path = tmp_path / "kagent.otlp.json"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}))
    report = ImportReport()
    traces = load(path, report=report)
    stats = trace_stats(to_frame(traces))
    assert stats["tokens"]["total_sum"] == 2256 + 13 + 2392 + 116  # 4,777, not three times over
    assert stats["coverage"]["generations_with_tokens"] == stats["coverage"]["generations"] == 6
    assert report.notes[("token usage a wrapper repeats from the model calls inside it (counted once, at the "
                         "innermost generation)", "metadata.usageFolded")] == 4
    wrapper = next(o for o in traces[0].observations if o.name == "call_llm")
    assert wrapper.usage is None and wrapper.metadata["usageFolded"] == {"input": 2256, "output": 13, "total": 2269}


def _beeai_langfuse_trace():
    def obs(obs_id, obs_type, name, parent=None, **extra):
        return {"id": obs_id, "traceId": "beeai-1", "type": obs_type, "name": name, "parentObservationId": parent,
                "startTime": "2026-01-01T00:00:00.000Z", "endTime": "2026-01-01T00:00:01.000Z", **extra}
    return {"id": "beeai-1", "name": "beeai-framework-main", "observations": [
        obs("root", "SPAN", "beeai-framework-main"),
        obs("llm-1", "GENERATION", "chat", "root", model="granite3.3", usageDetails={"input": 812}),
        obs("search", "SPAN", "tool.search.duckduckgo", "root", input={"query": "weather"}, output={"results": []}),
        obs("weather", "SPAN", "open_meteo", "root", metadata={"attributes": {"tool.name": "OpenMeteoTool"}}),
        obs("llm-2", "GENERATION", "chat", "root", model="granite3.3", usageDetails={"input": 1020}),
    ]}


def test_tool_spans_are_known_by_the_conventions_frameworks_use_and_the_mapping_is_reported(tmp_path):
    path = tmp_path / "beeai.json"
    path.write_text(json.dumps(_beeai_langfuse_trace()))
    report = ImportReport()
    (trace,) = load(path, report=report)
    tools = [(o.id, o.name) for o in trace.observations if o.type == "TOOL"]
    assert tools == [("search", "tool.search.duckduckgo"), ("weather", "OpenMeteoTool")]
    assert report.mappings[("SPANs marked as tool calls by a tool.* span name", "TOOL")] == 1
    assert report.mappings[("SPANs marked as tool calls by a tool.name attribute", "TOOL")] == 1
    assert "nothing mapped" not in "\n".join(report.render())


def test_stats_of_generations_with_input_tokens_only_say_what_is_counted(tmp_path):
    path = tmp_path / "beeai.json"
    path.write_text(json.dumps(_beeai_langfuse_trace()))
    done = subprocess.run([sys.executable, "-m", "evalkit.cli", "traces", "stats", str(path)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "tokens per generation: input p50 916.0\n" in done.stdout  # no total: no generation counts both sides
    assert done.stdout.startswith("1 trace, 5 observations, 0 traces with errors")
    assert "  tool.search.duckduckgo" in done.stdout  # among the tools


def test_spans_without_ids_are_one_trace_nested_by_their_timing():
    report = ImportReport()
    (trace,) = load(MASTRA, report=report)
    parent = {o.name: next((p.name for p in trace.observations if p.id == o.parent_id), None)
              for o in trace.observations}
    assert parent == {"POST /api/agents/weatherAgent/stream": None, "agent.stream": "POST /api/agents/weatherAgent/stream",
                      "agent.getMemoryTools": "agent.stream", "ai.streamText": "agent.stream",
                      "ai.streamText.doStream": "ai.streamText", "weatherTool": "ai.streamText.doStream"}
    types = sorted(o.type for o in trace.observations)
    assert types == ["CHAIN", "GENERATION", "GENERATION", "SPAN", "SPAN", "SPAN", "TOOL"]
    assert trace_stats(to_frame([trace]))["tokens"]["total_sum"] == 194 + 310  # the wrapper's sum folded
    assert any("spans recorded without trace or span ids" in what for what, _ in report.notes)
