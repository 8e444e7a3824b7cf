import pytest

from evalkit.contracts.flow import ExpectedEdge, ExpectedFlow
from evalkit.contracts.trace import Trace
from evalkit.flow import NamedEdge, build_flow_graph, diff_expected_flow, infer_expected_flow

ORDER = "order A-2291-XK shipped"
REFUND = "refund R-88120 approved"


def make_trace(trace_id, *observations):
    return Trace.model_validate({"id": trace_id, "observations": [
        {"id": f"o{i}", "type": "TOOL", **obs} for i, obs in enumerate(observations)]})


def support_trace(trace_id, *, refund_reaches_reply=True, extra=False):
    """lookup -> refund -> reply, the refund sometimes dropped before the reply."""
    obs = [
        {"name": "lookup", "output": {"order": ORDER}},
        {"name": "refund", "input": {"order": ORDER}, "output": {"receipt": REFUND}},
        {"type": "GENERATION", "name": "reply",
         "input": {"order": ORDER, "receipt": REFUND if refund_reaches_reply else "missing"}},
    ]
    if extra:
        obs.append({"name": "audit", "input": f"log {ORDER}"})
    return make_trace(trace_id, *obs)


EXPECTED = ExpectedFlow(dispatch_tool_names=[], expected_ui_slots=[], edges=[
    ExpectedEdge(from_tool="lookup", to_tool="refund", slot="order"),
    ExpectedEdge(from_tool="refund", to_tool="reply"),
    ExpectedEdge(from_tool="lookup", to_tool="reply", slot="wrong_slot"),
])


def test_diff_by_names_and_by_slot_when_named():
    diff = diff_expected_flow(build_flow_graph(support_trace("t1", extra=True)), EXPECTED)
    assert diff.trace_id == "t1"
    assert diff.satisfied == EXPECTED.edges[:2]
    assert diff.missing == [EXPECTED.edges[2]]
    assert diff.unexpected == [NamedEdge("lookup", "audit", "order"), NamedEdge("lookup", "reply", "order")]


def test_a_dropped_value_is_a_missing_edge():
    diff = diff_expected_flow(build_flow_graph(support_trace("t2", refund_reaches_reply=False)), EXPECTED)
    assert [(e.from_tool, e.to_tool) for e in diff.missing] == [("refund", "reply"), ("lookup", "reply")]
    assert diff.to_json_obj()["missing"][0] == {"fromTool": "refund", "toTool": "reply"}
    assert diff.to_json_obj()["unexpected"] == [{"fromTool": "lookup", "toTool": "reply", "slot": "order"}]


def test_built_and_read_graphs_diff_the_same():
    trace = support_trace("t3", extra=True)
    built, validated = build_flow_graph(trace), build_flow_graph(trace)
    assert diff_expected_flow(built, EXPECTED) == diff_expected_flow(validated, EXPECTED)


def test_infer_keeps_the_modal_flow_not_the_union():
    graphs = [build_flow_graph(support_trace("a")), build_flow_graph(support_trace("b")),
              build_flow_graph(support_trace("c", refund_reaches_reply=False, extra=True))]
    inferred = infer_expected_flow(graphs)
    assert [(e.from_tool, e.to_tool, e.slot) for e in inferred.edges] == [
        ("lookup", "refund", "order"), ("lookup", "reply", "order"), ("refund", "reply", "receipt")]
    union = infer_expected_flow(graphs, min_support=0.3)
    assert ("lookup", "audit", "order") in [(e.from_tool, e.to_tool, e.slot) for e in union.edges]
    everywhere = infer_expected_flow(graphs, min_support=1.0)
    assert ("refund", "reply", "receipt") not in [(e.from_tool, e.to_tool, e.slot) for e in everywhere.edges]
    assert all(not diff_expected_flow(g, everywhere).missing for g in graphs)


def test_infer_carries_dispatch_tools_and_leaves_out_unnamed_nodes():
    trace = make_trace("d", {"name": "delegate", "output": {"brief": ORDER}},
                       {"type": "AGENT", "input": ORDER}, {"name": "sub", "input": ORDER})
    inferred = infer_expected_flow([build_flow_graph(trace, dispatch_tool_names=["delegate"])])
    assert inferred.dispatch_tool_names == ["delegate"]
    assert [(e.from_tool, e.to_tool) for e in inferred.edges] == [("delegate", "sub")]
    assert infer_expected_flow([]).edges == []


def test_min_support_must_be_a_share():
    for bad in (0, -0.1, 1.5):
        with pytest.raises(ValueError, match="min_support"):
            infer_expected_flow([], min_support=bad)


def test_an_edge_whose_producer_never_ran_is_not_applicable_rather_than_missing():
    from evalkit.contracts.flow import ExpectedFlow
    from evalkit.contracts.trace import Observation, Trace
    from evalkit.flow import build_flow_graph, diff_expected_flow

    trace = Trace(id="t", observations=[
        Observation(id="a", type="TOOL", name="kb_search", output={"articles": "refunds within 30 days"}),
        Observation(id="b", type="GENERATION", name="respond", input="nothing from the tool here")])
    expected = ExpectedFlow.model_validate({"dispatchToolNames": [], "expectedUiSlots": [], "edges": [
        {"fromTool": "kb_search", "toTool": "respond"}, {"fromTool": "order_lookup", "toTool": "respond"}]})
    diff = diff_expected_flow(build_flow_graph(trace), expected)
    assert [e.from_tool for e in diff.missing] == ["kb_search"]
    assert [e.from_tool for e in diff.not_applicable] == ["order_lookup"]
    assert diff.to_json_obj()["notApplicable"] == [{"fromTool": "order_lookup", "toTool": "respond"}]
