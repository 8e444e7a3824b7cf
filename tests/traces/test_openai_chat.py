from pathlib import Path

from evalkit.traces import detect_format, load

FIXTURES = Path(__file__).parent / "fixtures"


def test_each_record_is_a_trace_with_generations_and_tool_calls():
    first, second = load(FIXTURES / "chat_logs.jsonl")
    assert detect_format(FIXTURES / "chat_logs.jsonl") == "openai-chat"
    assert first.id == "chat-1"
    assert [(o.type, o.name) for o in first.observations] == [
        ("GENERATION", "assistant"), ("TOOL", "lookup_order"), ("TOOL", "lookup_customer"),
        ("GENERATION", "assistant")]
    gen, lookup, customer, final = first.observations
    assert gen.model == "gpt-4o"
    assert [m["role"] for m in gen.input] == ["system", "user"]  # the conversation so far
    assert lookup.input == {"order_id": "123"}
    assert lookup.output == {"status": "shipped", "eta": "2026-03-01"}
    assert lookup.parent_id == gen.id
    assert customer.has_input and not customer.has_output  # called, never answered
    assert len(final.input) == 4
    assert first.input == "Where is order 123?"
    assert first.output == "Order 123 has shipped; ETA 1 March."


def test_other_record_fields_go_to_trace_metadata():
    first, _ = load(FIXTURES / "chat_logs.jsonl")
    assert first.metadata["customer"] == "acme"
    assert first.metadata["tools"][0]["function"]["name"] == "lookup_order"
    assert "messages" not in first.metadata


def test_a_tool_message_without_a_call_is_still_a_tool_observation():
    _, second = load(FIXTURES / "chat_logs.jsonl")
    tool = next(o for o in second.observations if o.type == "TOOL")
    assert tool.name == "crm" and tool.output == "customer: new" and not tool.has_input


def test_repeated_record_ids_do_not_collide(tmp_path):
    path = tmp_path / "logs.json"
    path.write_text('[{"id": "root", "messages": [{"role": "user", "content": "a"}]},'
                    ' {"id": "root", "messages": [{"role": "user", "content": "b"}]}]')
    assert [t.id for t in load(path)] == ["root", "root#2"]
