import pytest

from evalkit.contracts.trace import Trace
from evalkit.flow import NamedEdge, build_flow_graph, flow_variance

VALUE_A = "value A long enough"
VALUE_B = "value B long enough"


def make_trace(trace_id, reaches):
    """p produces a and b; consumers named in `reaches` get them."""
    obs = [{"name": "p", "output": {"a": VALUE_A, "b": VALUE_B}}]
    for name, text in reaches:
        obs.append({"name": name, "input": text})
    return Trace.model_validate({"id": trace_id, "observations": [
        {"id": f"o{i}", "type": "TOOL", **o} for i, o in enumerate(obs)]})


def test_edge_shares_modal_flow_and_distances():
    graphs = [build_flow_graph(make_trace(t, r)) for t, r in [
        ("t1", [("q", VALUE_A)]),
        ("t2", [("q", VALUE_A)]),
        ("t3", [("q", VALUE_A), ("r", VALUE_B)]),
        ("t4", [("r", VALUE_B)]),
    ]]
    variance = flow_variance(graphs)
    qa, rb = NamedEdge("p", "q", "a"), NamedEdge("p", "r", "b")
    assert variance.traces == 4
    assert [(s.edge, s.traces, s.share) for s in variance.edges] == [(qa, 3, 0.75), (rb, 2, 0.5)]
    assert variance.modal == [qa, rb]  # 2 of 4 is exactly the 0.5 threshold
    by_trace = {d.trace_id: d for d in variance.per_trace}
    assert by_trace["t3"].distance == 0.0 and by_trace["t3"].missing == []
    assert by_trace["t1"].missing == [rb] and by_trace["t1"].distance == pytest.approx(0.5)
    assert by_trace["t4"].missing == [qa]

    strict = flow_variance(graphs, min_support=0.75)
    assert strict.modal == [qa]
    assert {d.trace_id: d.distance for d in strict.per_trace} == {"t1": 0.0, "t2": 0.0, "t3": 0.5, "t4": 1.0}
    assert [d.extra for d in strict.per_trace if d.trace_id == "t3"] == [[rb]]


def test_frames_for_charts():
    graphs = [build_flow_graph(make_trace("t1", [("q", VALUE_A)])), build_flow_graph(make_trace("t2", []))]
    variance = flow_variance(graphs)
    edges = variance.edge_frame()
    assert edges.columns == ["from", "to", "slot", "traces", "share", "modal"]
    assert edges.row(0) == ("p", "q", "a", 1, 0.5, True)
    assert variance.trace_frame().to_dicts() == [
        {"trace_id": "t1", "missing": 0, "extra": 0, "distance": 0.0},
        {"trace_id": "t2", "missing": 1, "extra": 0, "distance": 1.0},
    ]


def test_no_edges_anywhere_is_no_variance():
    variance = flow_variance([build_flow_graph(make_trace("t1", []))])
    assert variance.modal == [] and variance.per_trace[0].distance == 0.0
    assert variance.edge_frame().height == 0
