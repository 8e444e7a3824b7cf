"""Anthropic Messages API logs: cassettes, request/response pairs and message lists."""

import json

import pytest

from evalkit.errors import InputError
from evalkit.traces import detect_format, load
from evalkit.traces.report import ImportReport

USER_RATE = {"role": "user", "content": [{"type": "text", "text": "USD to EUR?"}]}
USER_STOCK = {"role": "user", "content": [{"type": "text", "text": "AAPL price?"}]}


def _reply(msg_id, *blocks, inp=100, out=20):
    return {"id": msg_id, "type": "message", "role": "assistant", "model": "claude-test",
            "content": list(blocks), "stop_reason": "tool_use" if any(b["type"] == "tool_use" for b in blocks)
            else "end_turn",
            "usage": {"input_tokens": inp, "output_tokens": out, "cache_read_input_tokens": 0,
                      "cache_creation": {"ephemeral_5m_input_tokens": 0}}}


def _text(text):
    return {"type": "text", "text": text}


def _use(call_id, name, **args):
    return {"type": "tool_use", "id": call_id, "name": name, "input": args, "caller": {"type": "direct"}}


def _result(call_id, text, is_error=False):
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "is_error": is_error,
                                         "content": [_text(text)]}]}


def _interaction(messages, reply):
    return {"request": {"method": "POST", "uri": "https://api.anthropic.com/v1/messages",
                        "headers": {"x-api-key": ["REDACTED"]},
                        "parsed_body": {"model": "claude-test", "max_tokens": 1024, "messages": messages,
                                        "tools": [{"name": "lookup"}]}},
            "response": {"status": {"code": 200, "message": "OK"}, "headers": {"date": ["x"]},
                         "parsed_body": reply}}


def _cassette():
    """Two conversations, their calls interleaved: rate (2 calls) and stock (3 calls, one failed tool)."""
    rate1 = _reply("msg_r1", _text("Looking it up."), _use("toolu_r", "get_rate", pair="USDEUR"))
    rate_turn = {"role": "assistant", "content": rate1["content"]}
    stock1 = _reply("msg_s1", _use("toolu_s1", "stock", ticker="AAPL"))
    stock_turn1 = {"role": "assistant", "content": stock1["content"]}
    stock2 = _reply("msg_s2", _text("Retrying."), _use("toolu_s2", "stock", symbol="AAPL"))
    stock_turn2 = {"role": "assistant", "content": stock2["content"]}
    stock_msgs = [USER_STOCK, stock_turn1, _result("toolu_s1", "missing field symbol", is_error=True)]
    return {"version": 1, "interactions": [
        _interaction([USER_RATE], rate1),
        _interaction([USER_STOCK], stock1),
        _interaction([USER_RATE, rate_turn, _result("toolu_r", "1 USD = 0.92 EUR")],
                     _reply("msg_r2", _text("It is 0.92."), inp=150, out=10)),
        _interaction(stock_msgs, stock2),
        _interaction([*stock_msgs, stock_turn2, _result("toolu_s2", '{"price": 150}')],
                     _reply("msg_s3", _text("$150."))),
    ]}


def test_a_cassette_is_grouped_into_conversations_by_shared_message_prefix(tmp_path):
    path = tmp_path / "cassette.json"
    path.write_text(json.dumps(_cassette()))
    assert detect_format(path) == "anthropic"
    rate, stock = load(path)
    assert (rate.id, stock.id) == ("msg_r1", "msg_s1")  # each conversation's first response id
    assert [(o.type, o.id) for o in rate.observations] == [
        ("GENERATION", "msg_r1"), ("TOOL", "toolu_r"), ("GENERATION", "msg_r2")]
    assert [o.id for o in stock.observations] == ["msg_s1", "toolu_s1", "msg_s2", "toolu_s2", "msg_s3"]
    assert rate.input == "USD to EUR?" and rate.output == "It is 0.92."
    assert rate.metadata["calls"] == 2


def test_calls_become_generations_and_tool_use_blocks_tools_with_results(tmp_path):
    path = tmp_path / "cassette.json"
    path.write_text(json.dumps(_cassette()))
    rate, stock = load(path)
    gen, tool, final = rate.observations
    assert gen.model == "claude-test"
    assert gen.input == [USER_RATE]  # the request's messages
    assert gen.output[1]["type"] == "tool_use"  # the response content
    assert gen.usage == {"input": 100, "output": 20, "cache_read_input": 0, "total": 120}
    assert gen.metadata["response"]["stop_reason"] == "tool_use"
    assert gen.metadata["http"]["status"] == {"code": 200, "message": "OK"}
    assert len(final.input) == 3 and final.usage["total"] == 160
    assert tool.name == "get_rate" and tool.parent_id == "msg_r1"
    assert tool.input == {"pair": "USDEUR"}
    assert tool.output == "1 USD = 0.92 EUR"
    assert tool.level is None
    failed, retried = (o for o in stock.observations if o.type == "TOOL")
    assert failed.level == "ERROR" and failed.status_message == "missing field symbol"
    assert retried.level is None and retried.output == {"price": 150}  # JSON text parsed


def test_the_report_counts_left_out_headers(tmp_path):
    path = tmp_path / "cassette.json"
    path.write_text(json.dumps(_cassette()))
    report = ImportReport()
    load(path, report=report)
    assert report.skips == {"HTTP headers of recorded API calls (transport detail, may hold secrets)": 5}
    assert report.traces == 2 and report.by_type == {"GENERATION": 5, "TOOL": 3}


def test_pair_records_in_jsonl_are_grouped_too(tmp_path):
    cassette = _cassette()["interactions"]
    path = tmp_path / "pairs.jsonl"
    # Bodies given directly (no parsed_body), as a proxy log would write them.
    path.write_text("".join(json.dumps({"request": i["request"]["parsed_body"],
                                        "response": i["response"]["parsed_body"]}) + "\n"
                            for i in cassette))
    traces = load(path)
    assert [len(t.observations) for t in traces] == [3, 5]
    assert traces[1].metadata["firstRecord"] == 2  # line of the conversation's first call


def test_a_message_list_with_anthropic_blocks_is_one_trace(tmp_path):
    record = {"id": "conv-7", "system": "Be brief.", "model": "claude-test", "messages": [
        USER_RATE,
        {"role": "assistant", "content": [_use("toolu_a", "get_rate", pair="USDEUR")]},
        _result("toolu_a", "boom", is_error=True),
        {"role": "assistant", "content": [_text("Sorry, it failed."), {"type": "citation_v9", "x": 1}]},
    ]}
    path = tmp_path / "messages.jsonl"
    path.write_text(json.dumps(record) + "\n")
    assert detect_format(path) == "anthropic"
    report = ImportReport()
    (trace,) = load(path, report=report)
    assert trace.id == "conv-7"
    assert [o.type for o in trace.observations] == ["GENERATION", "TOOL", "GENERATION"]
    first, tool, last = trace.observations
    assert first.input == [USER_RATE] and first.metadata["system"] == "Be brief."
    assert tool.level == "ERROR" and tool.output == "boom"
    assert len(last.input) == 3
    # An unknown block type is kept in the payload and counted, never dropped silently.
    assert last.output[1] == {"type": "citation_v9", "x": 1}
    assert report.unknown == {("content blocks of type 'citation_v9'", "part of the message payload"): 1}


def test_a_result_without_its_call_is_still_a_tool(tmp_path):
    record = {"messages": [
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_old", "content": "42"}]},
        {"role": "assistant", "content": "The answer is 42."}]}
    path = tmp_path / "m.jsonl"
    path.write_text(json.dumps(record) + "\n")
    report = ImportReport()
    (trace,) = load(path, "anthropic", report=report)
    orphan = next(o for o in trace.observations if o.type == "TOOL")
    assert orphan.output == "42"
    assert not orphan.has_input
    assert report.unknown[("tool_result blocks whose tool_use is not in the file", "TOOL with no input")] == 1


def test_plain_openai_style_chat_is_not_taken_for_anthropic(tmp_path):
    path = tmp_path / "chat.jsonl"
    path.write_text(json.dumps({"messages": [{"role": "system", "content": "x"}, {"role": "user", "content": "hi"},
                                             {"role": "assistant", "content": "hello"}]}) + "\n")
    assert detect_format(path) == "openai-chat"


def test_a_pair_without_response_content_names_the_interaction(tmp_path):
    cassette = _cassette()
    cassette["interactions"][1]["response"] = {"status": {"code": 529, "message": "Overloaded"},
                                               "parsed_body": {"type": "error", "error": {}}}
    path = tmp_path / "cassette.json"
    path.write_text(json.dumps(cassette))
    with pytest.raises(InputError, match=r"interactions\[1\]\.response: response has no content \(status"):
        load(path)
