"""The conversation of a trace as the review page shows it: each message once, in the order it happened."""

from __future__ import annotations

import json
import re

from analysis_builders import make_trace
from chat_builders import SYSTEM, openai_chat_trace

from evalkit.analysis import render_review
from evalkit.analysis.transcript import transcript
from evalkit.contracts.trace import Observation, Trace


def _lines(messages) -> list[tuple]:
    return [(m["role"], m.get("content"), m["obs"]) for m in messages]


def test_openai_chat_history_is_shown_once_with_tool_calls_and_results_in_order():
    messages = transcript(openai_chat_trace())
    assert _lines(messages) == [
        ("system", SYSTEM, "g1"),
        ("user", "Any 1 bedroom lofts?", "g1"),
        ("assistant", None, "g1"),
        ("tool", {"units": [{"beds": 1, "rent": 2254}]}, "t1"),  # the TOOL observation, not its JSON text copy
        ("assistant", "Yes: a 1 bedroom at $2254 a month.", "g2"),
        ("user", "Can I tour it Friday?", "g3"),
        ("assistant", "Friday works: you are booked at 10am.", "g3"),
    ]
    assert messages[2]["toolCalls"] == [{"id": "call_1", "name": "get_availability", "arguments": {"beds": 1}}]
    assert "arguments" not in messages[3]  # the call above already shows them
    assert messages[3]["name"] == "get_availability"


def test_a_failed_tool_keeps_its_error_and_a_tool_without_a_call_shows_its_arguments():
    messages = transcript(openai_chat_trace(tool_error=True))
    failed = next(m for m in messages if m["obs"] == "t1")
    assert (failed["level"], failed["statusMessage"]) == ("ERROR", "availability service timed out")
    lonely = Trace(id="x", observations=[
        Observation(id="g", type="GENERATION", input="find flights", output="searching"),
        Observation(id="t", type="TOOL", name="search", input={"to": "SFO"}, output=["UA1"])])
    assert transcript(lonely)[-1] == {"role": "tool", "name": "search", "arguments": {"to": "SFO"},
                                      "content": ["UA1"], "obs": "t"}


def test_a_user_turn_logged_only_after_a_tool_ran_comes_before_the_tool_result():
    # The agent logs the user's words only in the next model call's input, after the tool observation.
    trace = Trace(id="v", observations=[
        Observation(id="g1", type="GENERATION", input=[{"role": "system", "content": "s"}],
                    output={"role": "assistant", "content": "Hi, how can I help?"}),
        Observation(id="t1", type="TOOL", name="tool", output={"rooms": 3}),
        Observation(id="g2", type="GENERATION", input=[
            {"role": "system", "content": "s"}, {"role": "assistant", "content": "Hi, how can I help?"},
            {"role": "user", "content": "Rooms?"}, {"role": "tool", "content": '{"rooms":3}'}],
            output={"role": "assistant", "content": "Three."})])
    assert [(m["role"], m["obs"]) for m in transcript(trace)] == [
        ("system", "g1"), ("assistant", "g1"), ("user", "g2"), ("tool", "t1"), ("assistant", "g2")]


def test_the_same_words_said_twice_are_two_messages():
    said = [{"role": "user", "content": "yes"}, {"role": "assistant", "content": "Sure?"}]
    trace = Trace(id="y", observations=[
        Observation(id="g1", type="GENERATION", input=said[:1], output=said[1]),
        Observation(id="g2", type="GENERATION", input=[*said, said[0]], output={"role": "assistant", "content": "Done."})])
    assert [m.get("content") for m in transcript(trace)] == ["yes", "Sure?", "yes", "Done."]


def test_anthropic_content_blocks_and_plain_strings():
    ask = {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]}
    use = {"role": "assistant", "content": [{"type": "text", "text": "Checking."},
                                            {"type": "tool_use", "id": "tu1", "name": "weather", "input": {"city": "Paris"}}]}
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu1",
                                           "content": [{"type": "text", "text": "18C, sunny"}]}]}
    trace = Trace(id="a", output="18C and sunny.", observations=[
        Observation(id="g1", type="GENERATION", input={"system": "Be brief.", "messages": [ask]}, output=use),
        Observation(id="g2", type="GENERATION", input={"system": "Be brief.", "messages": [ask, use, result]},
                    output={"content": [{"type": "text", "text": "18C and sunny."}], "role": "assistant"})])
    messages = transcript(trace)
    assert _lines(messages) == [("system", "Be brief.", "g1"), ("user", "Weather in Paris?", "g1"),
                                ("assistant", "Checking.", "g1"), ("tool", "18C, sunny", "g2"),
                                ("assistant", "18C and sunny.", "g2")]
    assert messages[2]["toolCalls"] == [{"id": "tu1", "name": "weather", "arguments": {"city": "Paris"}}]
    assert messages[3]["toolCallId"] == "tu1"
    plain = Trace(id="p", observations=[Observation(id="g", type="GENERATION", input="hello", output="hi there")])
    assert _lines(transcript(plain)) == [("user", "hello", "g"), ("assistant", "hi there", "g")]


def test_otel_genai_parts_and_a_final_answer_the_calls_do_not_hold():
    trace = Trace(id="o", output={"answer": "Booked."}, observations=[
        Observation(id="g", type="GENERATION", input=[{"role": "user", "parts": [{"type": "text", "content": "Book it"}]}],
                    output=[{"role": "assistant", "parts": [
                        {"type": "tool_call", "id": "c1", "name": "book", "arguments": {"unit": 4}}]}]),
        Observation(id="t", type="TOOL", name="book", input={"unit": 4}, output="ok")])
    messages = transcript(trace)
    assert [(m["role"], m.get("content")) for m in messages] == [
        ("user", "Book it"), ("assistant", None), ("tool", "ok"), ("assistant", "Booked.")]
    assert messages[-1]["final"] is True and messages[-1]["obs"] is None
    assert "arguments" not in messages[2]


def test_a_span_tree_without_chat_messages_has_no_transcript_on_the_page():
    spans = Trace(id="s", input={"query": "q"}, observations=[
        Observation(id="root", type="SPAN", name="run", input={"args": ["x"]}),
        Observation(id="llm", type="GENERATION", parent_id="root", input={"temperature": 0.2}, output={"tokens": 9})])
    assert transcript(spans) is None
    html = render_review([spans, openai_chat_trace()])
    data = json.loads(re.search(r'<script id="review-data" type="application/json">(.*?)</script>', html, re.S)[1])
    assert data["traces"][0]["transcript"] is None
    assert len(data["traces"][1]["transcript"]) == 7
    # The support-style builder: a chat plan call, then a respond call whose output is not a chat message.
    assert transcript(make_trace("m", answer="It shipped."))[-1] == {
        "role": "assistant", "content": "It shipped.", "final": True, "obs": None}


def test_a_last_user_message_kept_as_an_event_and_tool_results_matched_by_call_id():
    call = {"id": "c7", "type": "function", "function": {"name": "book", "arguments": '{"seat": "12A"}'}}
    trace = Trace(id="e", observations=[
        Observation(id="g1", type="GENERATION", input=[{"role": "user", "content": "Book 12A"}],
                    output={"role": "assistant", "content": None, "tool_calls": [call]}),
        Observation(id="t1", type="TOOL", name="book", input={"seat": "12A"}, output="booked",
                    metadata={"toolCallId": "c7"}),
        Observation(id="t2", type="TOOL", name="book", input={"seat": "14C"}, output="booked too",
                    metadata={"toolCallId": "c8"}),  # no call in the transcript asked for this one
        Observation(id="g2", type="GENERATION", input=[
            {"role": "user", "content": "Book 12A"}, {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c7", "content": "booked"}],
            output={"role": "assistant", "content": "Done: 12A."}),
        Observation(id="u", type="EVENT", name="user", output="Thanks! ###STOP###", metadata={"role": "user"})])
    messages = transcript(trace)
    assert [(m["role"], m.get("content"), m["obs"]) for m in messages] == [
        ("user", "Book 12A", "g1"), ("assistant", None, "g1"), ("tool", "booked", "t1"),
        ("tool", "booked too", "t2"), ("assistant", "Done: 12A.", "g2"), ("user", "Thanks! ###STOP###", "u")]
    assert "arguments" not in messages[2] and messages[2]["toolCallId"] == "c7"
    assert messages[3]["arguments"] == {"seat": "14C"}


def test_messages_kept_as_json_text_openai_responses_items_and_mcp_tool_results():
    ask = {"content": "Weather in Tokyo?", "role": "user"}
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_9", "name": "get_weather",
            "arguments": '{"city": "Tokyo"}'}
    trace = Trace(id="r", output=json.dumps(json.dumps({"role": "assistant", "content": "Sunny in Tokyo."})),
                  observations=[
        Observation(id="g1", type="GENERATION", input=json.dumps([ask]),
                    output=json.dumps({"id": "resp_1", "output": [call]})),
        Observation(id="t1", type="TOOL", name="get_weather", input={"city": "Tokyo"},
                    output=json.dumps({"content": [{"type": "text", "text": "sunny"}]})),
        Observation(id="g2", type="GENERATION",
                    input=[ask, call, {"type": "function_call_output", "call_id": "call_9", "output": "sunny"}],
                    output={"id": "resp_2", "output": [{"type": "message", "role": "assistant", "content": [
                        {"type": "output_text", "text": "Sunny in Tokyo."}]}]})])
    messages = transcript(trace)
    assert [(m["role"], m.get("content"), m["obs"]) for m in messages] == [
        ("user", "Weather in Tokyo?", "g1"), ("assistant", None, "g1"), ("tool", "sunny", "t1"),
        ("assistant", "Sunny in Tokyo.", "g2")]  # the final answer, twice JSON-encoded, is this message
    assert messages[1]["toolCalls"] == [{"name": "get_weather", "arguments": {"city": "Tokyo"}, "id": "call_9"}]
    assert "arguments" not in messages[2]
