"""The default semantics: a value threads when the consumer received it, and end products are terminal.

Chat-shaped traces as the OpenAI-chat importer writes them: each model call's input is the list of
messages so far; a tool's result is a string (or, when it was JSON text, the object read from it).
"""

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.contracts.trace import Trace
from evalkit.flow import build_flow_graph, read_flow_graphs, write_flow_graphs
from evalkit.flow.reference import plain_flow_graph

SYSTEM = {"role": "system", "content": "You are Emma, a leasing assistant at The Riverside."}
USER = {"role": "user", "content": "Can I tour tomorrow at 11?"}
REPLY = 'Sure!\nWe have "11 AM" tomorrow.\nShall I book it?'  # a newline and quotes: escaped in JSON
SLOTS = {"available": [{"date": "01/21/2025", "time": "11:00 AM"}, {"date": "01/21/2025", "time": "12:00 PM"}]}
SLOTS_TEXT = '{"available": [{"time": "11:00 AM", "date": "01/21/2025"}, {"time": "12:00 PM", "date": "01/21/2025"}]}'


def chat_trace(*observations, trace_id="t1", output=None):
    return Trace.model_validate({"id": trace_id, "output": output, "observations": [
        {"id": f"o{i}", **obs} for i, obs in enumerate(observations)]})


def generation(messages, content):
    return {"type": "GENERATION", "name": "assistant", "input": messages,
            "output": {"role": "assistant", "content": content}}


def edges(flow):
    return [(source, target, slot) for source, target, slot, _ in flow.edges]


def outputs(listed):
    return [(u.node, u.slot) for u in listed]


def test_a_reply_with_newlines_and_quotes_reaches_the_next_call():
    trace = chat_trace(generation([SYSTEM, USER], REPLY),
                       generation([SYSTEM, USER, {"role": "assistant", "content": REPLY},
                                   {"role": "user", "content": "yes please"}], "Booked for you."))
    assert edges(build_flow_graph(trace)) == [("n0", "n1", "content")]
    # The reference method looks for the reply in the input's JSON text, where it is escaped.
    mutagent = build_flow_graph(trace, semantics="mutagent")
    assert edges(mutagent) == []
    assert outputs(mutagent.unthreaded_outputs) == [("n0", "content"), ("n1", "content")]


@pytest.mark.parametrize("tool_output", [SLOTS, SLOTS_TEXT], ids=["parsed at import", "kept as text"])
def test_a_tool_result_that_was_json_text_reaches_the_next_call(tool_output):
    trace = chat_trace(generation([SYSTEM, USER], "Let me check the calendar."),
                       {"type": "TOOL", "name": "get_tour_slots", "output": tool_output},
                       generation([SYSTEM, USER, {"role": "assistant", "content": "Let me check the calendar."},
                                   {"role": "tool", "content": SLOTS_TEXT}], "11 AM is free."))
    flow = build_flow_graph(trace)
    assert ("n1", "n2", "available" if tool_output is SLOTS else "_value") in edges(flow)
    assert flow.unthreaded_outputs == []
    assert [e for e in edges(build_flow_graph(trace, semantics="mutagent")) if e[0] == "n1"] == []


def test_a_reply_recorded_with_metadata_reaches_the_next_call_by_its_text():
    # OpenTelemetry GenAI: the output message has a finish_reason the history message does not.
    answer = "AMZN trades at $240.98 today."
    out = [{"role": "assistant", "finish_reason": "stop", "parts": [{"type": "text", "content": answer}]}]
    history = [{"role": "user", "parts": [{"type": "text", "content": "AMZN?"}]},
               {"role": "assistant", "parts": [{"type": "text", "content": answer}]}]
    trace = chat_trace({"type": "GENERATION", "name": "chat", "input": history[:1], "output": out},
                       {"type": "GENERATION", "name": "chat", "input": history, "output": out})
    assert edges(build_flow_graph(trace)) == [("n0", "n1", "_value")]
    assert edges(build_flow_graph(trace, semantics="mutagent")) == []


def test_a_record_is_not_passed_on_because_one_of_its_fields_turns_up_elsewhere():
    items = {"items": [{"name": "hiking backpack", "sku": "SKU-50505"}, {"name": "running shoes", "sku": "SKU-62730"}]}
    trace = chat_trace({"type": "TOOL", "name": "order_lookup", "output": items},
                       generation([{"role": "user", "content": "The hiking backpack broke."}], "Sorry to hear that!"))
    flow = build_flow_graph(trace)
    assert edges(flow) == [] and outputs(flow.unthreaded_outputs) == [("n0", "items")]


def test_a_final_answer_written_as_json_text_twice_is_still_the_traces_answer():
    reply = {"content": [{"type": "text", "text": "Berlin is cloudy, New York sunny."}]}
    trace = chat_trace({"type": "SPAN", "name": "conversation", "output": reply},
                       generation([USER], "Let me look that up."),
                       output=json.dumps(json.dumps(reply)))
    flow = build_flow_graph(trace)
    assert outputs(flow.terminal_outputs) == [("n0", "content"), ("n1", "content")]


def test_the_final_answer_and_a_one_call_trace_are_terminal_not_dropped():
    one_call = build_flow_graph(chat_trace(generation([SYSTEM, USER], "Yes, 11 AM tomorrow works.")))
    assert one_call.unthreaded_outputs == []
    assert outputs(one_call.terminal_outputs) == [("n0", "content")]
    assert outputs(build_flow_graph(chat_trace(generation([SYSTEM, USER], "Yes, 11 AM tomorrow works.")),
                                    semantics="mutagent").unthreaded_outputs) == [("n0", "content")]


def test_a_value_that_a_later_call_did_not_receive_is_still_dropped():
    trace = chat_trace(generation([SYSTEM, USER], "Let me check the calendar."),
                       {"type": "TOOL", "name": "get_tour_slots", "output": SLOTS_TEXT},
                       generation([SYSTEM, USER], "I could not check the calendar."),  # the result never arrived
                       {"type": "TOOL", "name": "log_call", "output": "call summary written to CRM"})
    flow = build_flow_graph(trace)
    assert outputs(flow.unthreaded_outputs) == [("n0", "content"), ("n1", "_value")]
    # After the last call that took input nothing could be passed on: the answer and the log are terminal.
    assert outputs(flow.terminal_outputs) == [("n2", "content"), ("n3", "_value")]


def test_a_value_in_the_traces_own_output_went_to_the_user():
    trace = chat_trace({"type": "AGENT", "name": "root", "output": "Your tour is booked for 11 AM."},
                       generation([SYSTEM, USER], "Your tour is booked for 11 AM."),
                       {"type": "TOOL", "name": "audit", "input": {"event": "call ended"}},
                       output="Your tour is booked for 11 AM.")
    flow = build_flow_graph(trace)
    assert flow.unthreaded_outputs == []
    assert outputs(flow.terminal_outputs) == [("n0", "_value"), ("n1", "content")]


def test_terminal_outputs_are_written_and_read_back_and_absent_from_reference_graphs(tmp_path):
    trace = chat_trace(generation([SYSTEM, USER], "Yes, 11 AM tomorrow works."))
    path = tmp_path / "graphs.jsonl"
    write_flow_graphs([build_flow_graph(trace)], path)
    (graph,) = read_flow_graphs(path)
    assert outputs(graph.terminal_outputs) == [("n0", "content")] and graph.unthreaded_outputs == []
    assert "terminalOutputs" not in build_flow_graph(trace, semantics="mutagent").to_json_obj()


def test_an_unknown_semantics_is_refused():
    with pytest.raises(ValueError, match="received, mutagent"):
        build_flow_graph(chat_trace(), semantics="substring")


# --- against the plain algorithm ------------------------------------------------------------------

WORDS = ['say "hi"', "line one\nline two", "gamma delta", "épsilon", '{"k": "json text value"}', "[1, 2]",
         "{not json", "ORD-1001", "x", json.dumps('{"k": ["json text, twice"]}'), '"a quoted string"']
leaf = st.sampled_from(WORDS) | st.integers(-5, 5) | st.sampled_from([None, True, 0.5])
payload = st.recursive(
    leaf, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.sampled_from("abk"), c, max_size=3),
    max_leaves=8)
observation = st.fixed_dictionaries(
    {"type": st.sampled_from(["TOOL", "GENERATION", "AGENT"])},
    optional={"name": st.sampled_from(["search", "chat", "delegate"]), "input": payload, "output": payload})


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(observation, max_size=8), st.integers(1, 14), payload)
def test_same_graph_as_the_plain_algorithm(observations, min_len, answer):
    trace = chat_trace(*observations, output=answer)
    expected = plain_flow_graph(trace, dispatch_tool_names=["delegate"], min_thread_len=min_len, semantics="received")
    flow = build_flow_graph(trace, dispatch_tool_names=["delegate"], min_thread_len=min_len)
    assert flow.to_json_obj() == expected


@pytest.mark.parametrize("seed", range(3))
def test_same_graph_as_the_plain_algorithm_on_long_chats(seed):
    rng = random.Random(seed)
    messages, observations = [SYSTEM, USER], []
    for step in range(40):
        reply = f'Step {step}: "{rng.choice(WORDS)}"\n{rng.choice(WORDS)} ' + "context " * 300
        observations.append(generation(list(messages), reply))
        messages.append({"role": "assistant", "content": reply})
        result = {"id": f"R-{rng.randrange(10**6):06d}-{step}", "rows": [rng.choice(WORDS) for _ in range(3)]}
        observations.append({"type": "TOOL", "name": "search", "output": result})
        if rng.random() < 0.7:  # sometimes the result never reaches the conversation
            messages.append({"role": "tool", "content": json.dumps(result, indent=rng.choice([None, 2]))})
    trace = chat_trace(*observations, trace_id=f"long-{seed}")
    assert build_flow_graph(trace).to_json_obj() == plain_flow_graph(trace, semantics="received")
