"""The trajectory checks on every format evalkit imports: one agent run (look the order up, refund it, say so)
written as each source writes it, imported, and held to the same expectations under the tool names the
importer gives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalkit.checks import build_check
from evalkit.traces import detect_format, load

LOOKUP = {"order_id": "ORD-1"}
REFUND = {"order_id": "ORD-1", "amount": 79}


def _openai_chat() -> str:
    return json.dumps({"id": "run-1", "messages": [
        {"role": "user", "content": "Refund ORD-1 please"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "order_lookup", "arguments": json.dumps(LOOKUP)}}]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"total": 79}'},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c2", "type": "function", "function": {"name": "issue_refund", "arguments": json.dumps(REFUND)}}]},
        {"role": "tool", "tool_call_id": "c2", "content": '{"status": "approved"}'},
        {"role": "assistant", "content": "Refunded 79 USD."}]}) + "\n"


def _anthropic() -> str:
    def use(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
        return {"role": "assistant", "content": [{"type": "tool_use", "id": call_id, "name": name, "input": args}]}

    def result(call_id: str, text: str) -> dict[str, Any]:
        return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": text}]}

    return json.dumps({"id": "run-1", "system": "Be brief.", "model": "claude-test", "messages": [
        {"role": "user", "content": [{"type": "text", "text": "Refund ORD-1 please"}]},
        use("t1", "order_lookup", LOOKUP), result("t1", '{"total": 79}'),
        use("t2", "issue_refund", REFUND), result("t2", '{"status": "approved"}'),
        {"role": "assistant", "content": [{"type": "text", "text": "Refunded 79 USD."}]}]}) + "\n"


def _otlp_genai() -> str:
    def attrs(**values: Any) -> list[dict[str, Any]]:
        return [{"key": k.replace("__", "."), "value": {"stringValue": v}} for k, v in values.items()]

    def span(span_id: str, name: str, start: int, parent: str = "01", **values: Any) -> dict[str, Any]:
        return {"traceId": "ab" * 16, "spanId": span_id.rjust(16, "0"), "parentSpanId": "" if span_id == "01" else
                parent.rjust(16, "0"), "name": name, "kind": 1, "startTimeUnixNano": str(1_700_000_000_000_000_000 +
                                                                                      start * 1_000_000),
                "endTimeUnixNano": str(1_700_000_000_000_000_000 + start * 1_000_000 + 500_000),
                "attributes": attrs(**values)}

    def tool(span_id: str, name: str, start: int, args: dict[str, Any]) -> dict[str, Any]:
        return span(span_id, f"execute_tool {name}", start, gen_ai__operation__name="execute_tool",
                    gen_ai__tool__name=name, gen_ai__tool__call__arguments=json.dumps(args),
                    gen_ai__tool__call__result='{"ok": true}')

    spans = [span("01", "invoke_agent support", 0, gen_ai__operation__name="invoke_agent"),
             span("02", "chat m", 1, gen_ai__operation__name="chat", gen_ai__request__model="m"),
             tool("03", "order_lookup", 2, LOOKUP),
             span("04", "chat m", 3, gen_ai__operation__name="chat", gen_ai__request__model="m"),
             tool("05", "issue_refund", 4, REFUND),
             span("06", "chat m", 5, gen_ai__operation__name="chat", gen_ai__request__model="m")]
    return json.dumps({"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"spans": spans}]}]})


def _openinference() -> str:
    def span(span_id: str, kind: str, name: str, start: int, **attributes: Any) -> dict[str, Any]:
        return {"trace_id": "cd" * 16, "span_id": span_id.rjust(16, "0"),
                "parent_span_id": None if span_id == "1" else "1".rjust(16, "0"), "name": name,
                "start_time": 1_720_000_000_000_000_000 + start * 1_000_000,
                "end_time": 1_720_000_000_000_000_000 + start * 1_000_000 + 500_000,
                "attributes": {"openinference.span.kind": kind, **attributes}}

    return json.dumps([
        span("1", "AGENT", "support", 0, **{"input.value": "Refund ORD-1 please"}),
        span("2", "LLM", "ChatCompletion", 1, **{"llm.model_name": "m"}),
        span("3", "TOOL", "order_lookup", 2, **{"tool.name": "order_lookup", "input.value": json.dumps(LOOKUP)}),
        span("4", "LLM", "ChatCompletion", 3, **{"llm.model_name": "m"}),
        span("5", "TOOL", "issue_refund", 4, **{"tool.name": "issue_refund", "input.value": json.dumps(REFUND)}),
        span("6", "LLM", "ChatCompletion", 5, **{"llm.model_name": "m"})])


def _langfuse() -> str:
    def obs(oid: str, kind: str, name: str, second: int, **fields: Any) -> dict[str, Any]:
        return {"id": oid, "traceId": "lf-1", "type": kind, "name": name,
                "startTime": f"2026-02-10T10:00:0{second}.000Z", "parentObservationId": None if oid == "a" else "a",
                **fields}

    return json.dumps({"id": "lf-1", "timestamp": "2026-02-10T10:00:00.000Z", "name": "support",
                       "input": "Refund ORD-1 please", "observations": [
                           obs("a", "AGENT", "support", 0), obs("g1", "GENERATION", "chat", 1),
                           obs("t1", "TOOL", "order_lookup", 2, input=LOOKUP), obs("g2", "GENERATION", "chat", 3),
                           obs("t2", "TOOL", "issue_refund", 4, input=REFUND), obs("g3", "GENERATION", "chat", 5)]})


def _vercel() -> str:
    def span(k: int, name: str, second: int, **attributes: Any) -> dict[str, Any]:
        return {"name": name, "spanContext": {"traceId": "ef" * 16, "spanId": f"{k:016x}"},
                "attributes": {"ai.operationId": name, "ai.telemetry.functionId": "support", "ai.model.id": "m",
                               **attributes}, "status": {"code": 0},
                "startTime": [1_770_000_000 + second, 0], "endTime": [1_770_000_000 + second, 500_000_000], "events": []}

    return json.dumps([
        span(1, "ai.generateText", 0, **{"ai.prompt": '{"prompt":"Refund ORD-1 please"}'}),
        span(2, "ai.toolCall", 2, **{"ai.toolCall.name": "order_lookup", "ai.toolCall.id": "c1",
                                     "ai.toolCall.args": json.dumps(LOOKUP)}),
        span(3, "ai.toolCall", 4, **{"ai.toolCall.name": "issue_refund", "ai.toolCall.id": "c2",
                                     "ai.toolCall.args": json.dumps(REFUND)})])


def _native() -> str:
    return json.dumps({"id": "n-1", "input": "Refund ORD-1 please", "observations": [
        {"id": "o1", "type": "GENERATION", "name": "llm"},
        {"id": "o2", "type": "TOOL", "name": "order_lookup", "input": LOOKUP},
        {"id": "o3", "type": "TOOL", "name": "issue_refund", "input": json.dumps(REFUND)}]}) + "\n"


FORMATS = {"openai-chat": ("run.jsonl", _openai_chat), "anthropic": ("run.jsonl", _anthropic),
           "otel": ("otlp.json", _otlp_genai), "openinference": ("spans.json", _openinference),
           "langfuse": ("trace.json", _langfuse), "vercel-ai": ("spans.json", _vercel), "evalkit": ("run.jsonl", _native)}
SOURCE_FORMAT = {"openinference": "otel", "vercel-ai": "otel"}

CHECKS: list[tuple[str, dict[str, Any], str]] = [
    ("trajectory-match", {"mode": "exact", "expected": ["order_lookup", "issue_refund"]}, "pass"),
    ("trajectory-match", {"mode": "exact", "expected": ["issue_refund", "order_lookup"]}, "fail"),
    ("trajectory-match", {"mode": "graded", "expected": ["order_lookup", "escalate", "issue_refund"],
                          "threshold": 0.8}, "pass"),
    ("tool-called", {"tool": "issue_refund", "args": {"equals": REFUND}}, "pass"),
    ("tool-called", {"tool": "order_lookup", "args": {"matches": {"order_id": "^ORD-2$"}}}, "fail"),
    ("tool-not-called", {"tool": "issue_refund", "args": {"subset": {"amount": 79}}}, "fail"),
    ("argument-correct", {"tool": "issue_refund", "schema": {"type": "object", "required": ["order_id", "amount"]}},
     "pass"),
    ("step-budget", {"maxToolCalls": 2}, "pass"),
    ("step-budget", {"maxToolCalls": 1}, "fail"),
    ("no-loop", {"maxRepeats": 1}, "pass"),
]


@pytest.mark.parametrize("source", list(FORMATS))
def test_the_same_run_in_every_format_gets_the_same_verdicts(tmp_path: Path, source: str) -> None:
    name, write = FORMATS[source]
    path = tmp_path / name
    path.write_text(write(), encoding="utf-8")
    assert detect_format(path) == SOURCE_FORMAT.get(source, source)
    (trace,) = load(path)
    got = [(primitive, build_check("c", primitive, params).decide(trace).result) for primitive, params, _ in CHECKS]
    assert got == [(primitive, want) for primitive, _, want in CHECKS]


FIXTURES = Path(__file__).resolve().parents[1] / "traces" / "fixtures"
CODING_AGENTS = [  # the trace tests' fixtures of coding-agent logs (shapes of public sessions; see their README)
    ("claude_code/5e55e55e-0000-4000-8000-00000000c0de.jsonl", "claude-code", ["Bash", "Task", "Edit"],
     ("Bash", {"matches": {"command": "npm test"}})),
    ("codex/rollout-2026-02-23T20-34-25-019c8bfe-0000-7000-8000-00000000c0de.jsonl", "codex",
     ["shell", "apply_patch"], ("shell", {"subset": {"command": ["npm test -- paginate"]}})),
    ("gemini_cli/session-2026-04-23T12-52-0ab84937.jsonl", "gemini-cli", ["read_file", "run_shell_command"],
     ("run_shell_command", {"equals": {"command": "npm test -- paginate"}})),
    ("inspect/2025-05-12T20-27-36-04-00_browser.json", "inspect", ["web_browser_go", "web_browser_click"],
     ("web_browser_go", {"matches": {"url": "^https://"}})),
    ("atif/trajectory.json", "atif", ["bash_command", "mark_task_complete"],
     ("bash_command", {"matches": {"keystrokes": "hello"}})),
]


@pytest.mark.parametrize(("name", "source", "steps", "call"), CODING_AGENTS, ids=[c[1] for c in CODING_AGENTS])
def test_coding_agent_sessions_are_checked_under_their_own_tool_names(name, source, steps, call):
    path = FIXTURES / name
    assert detect_format(path) == source
    (trace,) = load(path)
    assert build_check("c", "trajectory-match", {"mode": "in-order", "expected": steps}).decide(trace).result == "pass"
    assert build_check("c", "trajectory-match", {"mode": "in-order", "expected": steps[::-1]}).decide(trace).result \
        == "fail"
    tool, args = call
    assert build_check("c", "tool-called", {"tool": tool, "args": args}).decide(trace).result == "pass"
    assert build_check("c", "no-loop", {}).decide(trace).result == "pass"
