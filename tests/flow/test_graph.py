import networkx as nx
import pytest

from evalkit.contracts.flow import FlowGraph
from evalkit.contracts.trace import Trace
from evalkit.flow import aggregate_graph, build_flow_graph, time_layout, to_networkx

ORDER = "order A-2291-XK shipped"
BRIEF = "research brief for A-2291"


def make_trace(trace_id, *observations):
    return Trace.model_validate({"id": trace_id, "observations": [
        {"id": f"o{i}", "type": "TOOL", **obs} for i, obs in enumerate(observations)]})


def agent_trace(trace_id, *, with_audit=False):
    obs = [
        {"type": "GENERATION", "name": "chat", "output": {"plan": ORDER, "note": "never used again"}},
        {"name": "delegate", "input": {"q": ORDER}, "output": {"brief": BRIEF}},
        {"type": "AGENT", "name": "researcher", "input": {"brief": BRIEF, "order": ORDER}},
    ]
    if with_audit:
        obs.append({"name": "audit", "input": ORDER})
    return make_trace(trace_id, *obs)


def test_to_networkx_keeps_nodes_edges_and_unthreaded_outputs():
    g = to_networkx(build_flow_graph(agent_trace("t1"), dispatch_tool_names=["delegate"]))
    assert isinstance(g, nx.MultiDiGraph) and g.graph == {"trace_id": "t1", "kind": "trace"}
    assert list(g.nodes) == ["n0", "n1", "n2"]
    assert g.nodes["n0"]["unthreaded"] == ["note"] and g.nodes["n0"]["produces"] == ["note", "plan"]
    assert g.nodes["n1"]["is_handoff"] and g.nodes["n2"]["type"] == "AGENT"
    assert sorted(g.edges(keys=True, data="kind")) == [
        ("n0", "n1", "plan", "threaded"), ("n0", "n2", "plan", "threaded"), ("n1", "n2", "brief", "handoff")]


def test_built_and_validated_graphs_give_the_same_networkx_graph():
    trace = agent_trace("t1", with_audit=True)
    a, b = to_networkx(build_flow_graph(trace)), to_networkx(build_flow_graph(trace))
    assert nx.utils.graphs_equal(a, b)


def test_an_edge_to_an_unknown_node_is_an_error():
    graph = FlowGraph.model_validate({"traceId": "t", "nodes": [], "edges": [
        {"from": "n0", "to": "n1", "slot": "s", "kind": "threaded"}], "unthreadedOutputs": []})
    with pytest.raises(ValueError, match=r"edges\[0\]: node 'n0'"):
        to_networkx(graph)


def test_aggregate_counts_traces_per_name_and_edge():
    graphs = [build_flow_graph(agent_trace("t1", with_audit=True), dispatch_tool_names=["delegate"]),
              build_flow_graph(agent_trace("t2"), dispatch_tool_names=["delegate"])]
    g = aggregate_graph(graphs)
    assert g.graph == {"traces": 2, "kind": "aggregate", "grouped": 0}
    assert sorted(g.nodes) == ["audit", "chat", "delegate", "researcher"]
    assert g.nodes["audit"]["traces"] == 1 and g.nodes["chat"]["traces"] == 2
    assert g.nodes["chat"]["unthreaded"] == 2 and g.nodes["delegate"]["is_handoff"]
    assert g.nodes["chat"]["position"] == 0.0
    assert g.nodes["researcher"]["position"] == pytest.approx((2 / 3 + 1) / 2)  # last of 4, last of 3
    assert g.edges["chat", "delegate"] == {"weight": 2, "share": 1.0, "slots": {"plan": 2},
                                           "kind": "threaded"}
    assert g.edges["chat", "audit"]["weight"] == 1 and g.edges["chat", "audit"]["share"] == 0.5
    assert g.edges["delegate", "researcher"]["kind"] == "handoff"


def test_time_layout_reads_left_to_right_with_a_lane_per_name():
    trace = make_trace("t", {"name": "chat", "output": ORDER},
                       {"name": "tool", "input": ORDER, "output": ORDER}, {"name": "chat", "input": ORDER})
    pos = time_layout(to_networkx(build_flow_graph(trace)))
    assert pos == {"n0": (0.0, 0.0), "n1": (1.0, -1.0), "n2": (2.0, 0.0)}
    agg = time_layout(aggregate_graph([build_flow_graph(trace)]))
    assert agg["chat"][0] < agg["tool"][0]
    assert agg["chat"][1] != agg["tool"][1]


def test_an_aggregate_of_fifty_names_keeps_the_commonest_and_groups_the_rest():
    # 50 tools: tool0 runs in every trace, tool<k> in fewer; each feeds a reply.
    graphs = []
    for t in range(10):
        obs = [{"name": f"tool{k}", "output": {"r": f"result of tool {k} in trace {t}"}}
               for k in range(50) if k < 5 or k % 10 == t]
        obs.append({"type": "GENERATION", "name": "reply", "input": " ".join(o["output"]["r"] for o in obs)})
        graphs.append(build_flow_graph(make_trace(f"t{t}", *obs)))
    full = aggregate_graph(graphs)
    assert full.number_of_nodes() == 51 and full.graph["grouped"] == 0
    g = aggregate_graph(graphs, max_names=15)
    other = "(other: 37 names)"
    assert g.number_of_nodes() == 15 and g.graph["grouped"] == 37
    assert {f"tool{k}" for k in range(5)} | {"reply", other} <= set(g.nodes)
    # A trace counts once for the group, however many of its names it ran.
    assert g.nodes[other]["names"] == 37 and g.nodes[other]["traces"] == 10
    assert g.edges[other, "reply"]["weight"] == 10 and g.edges["tool0", "reply"]["weight"] == 10
    assert aggregate_graph(graphs, max_names=60).number_of_nodes() == 51
    with pytest.raises(ValueError, match="max_names"):
        aggregate_graph(graphs, max_names=0)
