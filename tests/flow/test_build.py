import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.contracts.flow import FlowGraph
from evalkit.contracts.trace import Trace
from evalkit.flow import build_flow_graph
from evalkit.flow.reference import plain_flow_graph


def build(trace, **options):
    """These tests pin the reference method's rules (mutagent); tests/flow/test_received.py has the default's."""
    return build_flow_graph(trace, semantics="mutagent", **options)


ORDER = "order A-2291-XK shipped"  # 23 characters: long enough to follow


def make_trace(*observations, trace_id="t1"):
    return Trace.model_validate({"id": trace_id, "observations": [
        {"id": f"o{i}", "type": "TOOL", **obs} for i, obs in enumerate(observations)]})


def edges(graph):
    validated = [(e.from_, e.to, e.slot, e.kind) for e in graph.to_graph().edges]
    assert validated == list(graph.edges)  # the light edges are the contract's, in the same order
    return validated


def unthreaded(graph):
    return [(u.node, u.name, u.slot) for u in graph.unthreaded_outputs]


def test_a_tool_result_reaching_a_later_generation_is_an_edge():
    graph = build(make_trace(
        {"name": "lookup", "input": {"q": "where"}, "output": {"status": ORDER, "code": 7}},
        {"type": "GENERATION", "name": "chat", "input": {"messages": [{"role": "tool", "content": ORDER}]}},
        {"name": "notify", "input": {"text": "nothing relevant"}},
    ))
    assert isinstance(graph.to_graph(), FlowGraph)
    assert [(n.id, n.index, n.type, n.name, n.produces, n.consumes, n.is_handoff) for n in graph.nodes] == [
        ("n0", 0, "TOOL", "lookup", ["code", "status"], ["q"], False),
        ("n1", 1, "GENERATION", "chat", [], ["messages"], False),
        ("n2", 2, "TOOL", "notify", [], ["text"], False),
    ]
    assert edges(graph) == [("n0", "n1", "status", "threaded")]
    assert graph.unthreaded_outputs == []


def test_an_object_value_threads_whatever_the_order_of_its_keys():
    produced = {"customer": {"tier": "gold", "id": "C-1", "address": {"zip": "75001", "city": "Paris"}}}
    consumed = {"context": {"address": {"city": "Paris", "zip": "75001"}, "id": "C-1", "tier": "gold"}}
    graph = build(make_trace({"name": "crm", "output": produced},
                                        {"name": "mail", "input": consumed}))
    assert edges(graph) == [("n0", "n1", "customer", "threaded")]


def test_a_nested_value_must_appear_whole():
    produced = {"row": {"a": "first part", "b": "second part"}}
    graph = build(make_trace({"name": "db", "output": produced},
                                        {"name": "use", "input": {"only": {"a": "first part"}}}))
    assert edges(graph) == []
    assert unthreaded(graph) == [("n0", "db", "row")]


def test_unicode_values_are_matched_as_written_not_escaped():
    city = "Zürich → 東京 🚀 café"
    graph = build(make_trace(
        {"name": "geo", "output": {"route": city, "meta": {"label": "näive ünïcode"}}},
        {"name": "plan", "input": {"trip": f"from {city} tomorrow", "labels": [{"label": "näive ünïcode"}]}},
    ))
    assert edges(graph) == [("n0", "n1", "meta", "threaded"), ("n0", "n1", "route", "threaded")]


def test_a_value_seen_several_times_gives_one_edge_per_consumer_and_per_producer_slot():
    graph = build(make_trace(
        {"name": "a", "output": {"x": ORDER, "y": ORDER}},
        {"name": "b", "output": ORDER, "input": f"{ORDER} and again {ORDER}"},
        {"name": "c", "input": {"list": [ORDER, ORDER]}},
    ))
    assert edges(graph) == [
        ("n0", "n1", "x", "threaded"), ("n0", "n2", "x", "threaded"),
        ("n0", "n1", "y", "threaded"), ("n0", "n2", "y", "threaded"),
        ("n1", "n2", "_value", "threaded"),
    ]


def test_a_value_in_its_own_producers_input_is_no_edge():
    graph = build(make_trace(
        {"name": "echo", "input": {"say": ORDER}, "output": {"said": ORDER}},
        {"name": "later", "input": "unrelated input text"},
    ))
    assert edges(graph) == []
    assert unthreaded(graph) == [("n0", "echo", "said")]


def test_values_shorter_than_min_thread_len_are_ignored_entirely():
    trace = make_trace(
        {"name": "p", "output": {"short": "ok done", "eleven": "abcdefghijk", "twelve": "abcdefghijkl",
                                 "padded": "   tiny   ", "number": 42}},
        {"name": "q", "input": "ok done abcdefghijk abcdefghijkl tiny 42"},
    )
    graph = build(trace)
    assert edges(graph) == [("n0", "n1", "twelve", "threaded")]
    assert unthreaded(graph) == []
    assert edges(build(trace, min_thread_len=2)) == [
        ("n0", "n1", s, "threaded") for s in ("eleven", "number", "padded", "short", "twelve")]
    with pytest.raises(ValueError, match="min_thread_len"):
        build(trace, min_thread_len=0)


def test_values_are_trimmed_before_matching():
    graph = build(make_trace({"name": "p", "output": "\n  " + ORDER + "  \n"},
                                        {"name": "q", "input": f"[{ORDER}]"}))
    assert edges(graph) == [("n0", "n1", "_value", "threaded")]


def test_dispatch_tools_make_handoff_nodes_and_edges():
    brief = "Research the refund policy for A-2291"
    trace = make_trace(
        {"type": "GENERATION", "name": "chat", "output": {"plan": "delegate the refund question"}},
        {"name": "delegate", "input": {"task": "delegate the refund question"}, "output": {"brief": brief}},
        {"type": "AGENT", "name": "researcher", "input": {"brief": brief}},
    )
    graph = build(trace, dispatch_tool_names=["delegate"])
    assert [n.is_handoff for n in graph.nodes] == [False, True, False]
    assert edges(graph) == [("n0", "n1", "plan", "threaded"), ("n1", "n2", "brief", "handoff")]
    assert all(kind == "threaded" for *_, kind in edges(build(trace)))


def test_primitive_and_array_payloads_are_one_slot():
    graph = build(make_trace(
        {"name": "list", "input": ["a", "b"], "output": ["first item", "second item"]},
        {"name": "text", "input": 'items: ["first item","second item"]', "output": 1234567890123456},
        {"name": "num", "input": {"n": 1234567890123456}},
    ))
    assert [(n.produces, n.consumes) for n in graph.nodes] == [
        (["_value"], ["_text"]), (["_value"], ["_text"]), ([], ["n"])]
    assert edges(graph) == [("n0", "n1", "_value", "threaded"), ("n1", "n2", "_value", "threaded")]


def test_absent_and_null_payloads_have_no_slots_and_names_default_to_empty():
    graph = build(make_trace({"type": "SPAN"}, {"type": "EVENT", "input": None, "output": None}))
    assert [(n.name, n.produces, n.consumes) for n in graph.nodes] == [("", [], []), ("", [], [])]


def test_a_string_input_is_matched_raw_and_an_object_input_as_json():
    quoted = 'he said "refund it now"'
    graph = build(make_trace(
        {"name": "p", "output": {"quote": quoted}},
        {"name": "raw", "input": f"transcript: {quoted}"},
        {"name": "json", "input": {"transcript": quoted}},  # the quotes are escaped in its JSON
    ))
    assert edges(graph) == [("n0", "n1", "quote", "threaded")]


def test_edges_are_ordered_by_producer_then_slot_then_consumer():
    v1, v2 = "value number one!", "value number two!"
    graph = build(make_trace(
        {"name": "p0", "output": {"zeta": v1, "alpha": v2}},
        {"name": "p1", "input": f"{v1} {v2}", "output": {"m": v1}},
        {"name": "c", "input": f"{v2} {v1}"},
    ))
    assert edges(graph) == [
        ("n0", "n1", "alpha", "threaded"), ("n0", "n2", "alpha", "threaded"),
        ("n0", "n1", "zeta", "threaded"), ("n0", "n2", "zeta", "threaded"),
        ("n1", "n2", "m", "threaded"),
    ]


def test_json_text_follows_json_dumps_where_orjson_differs():
    # Values that are written the way json.dumps writes the consumer's input; orjson would write
    # 0.00001, null and fail on the big integer.
    trace = make_trace(
        {"name": "p", "output": {"small": '"p":1e-05,"tag":"abcdef"', "nan": '"s":NaN,"tag":"abcdef"',
                                 "big": '{"n":1180591620717411303424}'}},
        {"name": "c1", "input": {"tag": "abcdef", "p": 1e-05}},
        {"name": "c2", "input": {"tag": "abcdef", "s": float("nan")}},
        {"name": "c3", "input": [{"n": 2**70}]},
    )
    assert edges(build(trace)) == [
        ("n0", "n3", "big", "threaded"), ("n0", "n2", "nan", "threaded"), ("n0", "n1", "small", "threaded")]


def test_flow_reads_like_the_graph_it_converts_to():
    trace = make_trace({"name": "a", "output": {"x": ORDER}}, {"name": "b", "input": ORDER, "output": ORDER})
    flow = build(trace)
    graph = flow.to_graph()
    assert flow.edges == [(e.from_, e.to, e.slot, e.kind) for e in graph.edges]
    assert flow.edge_count == 1
    assert flow.unthreaded_outputs == graph.unthreaded_outputs
    assert flow.to_json_obj() == graph.to_json_obj()


# --- against the plain algorithm ------------------------------------------------------------------

WORDS = ["alpha beta", "gamma", "delta-7", "épsilon", "ζeta", "42", "ORD-1001", "x"]
leaf = st.sampled_from(WORDS) | st.integers(-5, 5) | st.sampled_from([None, True, 0.5, 1e-05])
payload = st.recursive(
    leaf, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.sampled_from("abc"), c, max_size=3),
    max_leaves=8)
observation = st.fixed_dictionaries(
    {"type": st.sampled_from(["TOOL", "GENERATION", "AGENT"])},
    optional={"name": st.sampled_from(["search", "chat", "delegate"]), "input": payload, "output": payload})


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(observation, max_size=8), st.integers(1, 14))
def test_same_graph_as_the_plain_algorithm(observations, min_len):
    trace = make_trace(*observations)
    expected = plain_flow_graph(trace, dispatch_tool_names=["delegate"], min_thread_len=min_len)
    flow = build(trace, dispatch_tool_names=["delegate"], min_thread_len=min_len)
    assert flow.to_json_obj() == expected


def long_context_trace(steps, seed):
    """A model loop whose inputs carry the conversation so far (exercises prefix reuse)."""
    rng = random.Random(seed)
    messages = [{"role": "system", "content": "You are a careful agent. " * 120}]
    observations = []
    for step in range(steps):
        reply = f"step {step}: " + " ".join(rng.choice(WORDS) for _ in range(6))
        observations.append({"type": "GENERATION", "name": "chat", "output": {"content": reply},
                             "input": {"messages": list(messages), "stop": None}})
        messages.append({"role": "assistant", "content": reply})
        result = {"id": f"R-{rng.randrange(10**6):06d}-{step}", "rows": [rng.choice(WORDS) for _ in range(3)],
                  "score": rng.choice([0.25, 3e-05, 1e-07])}
        observations.append({"name": rng.choice(["search", "delegate"]), "input": {"q": reply[-20:]},
                             "output": result})
        if rng.random() < 0.7:  # sometimes the result is dropped from the conversation
            messages.append({"role": "tool", "content": result})
    return make_trace(*observations, trace_id=f"long-{seed}")


@pytest.mark.parametrize("seed", range(4))
def test_same_graph_as_the_plain_algorithm_on_long_conversations(seed):
    trace = long_context_trace(40, seed)
    expected = plain_flow_graph(trace, dispatch_tool_names=["delegate"])
    flow = build(trace, dispatch_tool_names=["delegate"])
    assert flow.to_json_obj() == expected
    assert flow.edge_count > 100 and flow.unthreaded_outputs
