import json

import pytest

from evalkit.contracts.trace import Trace
from evalkit.errors import InputError
from evalkit.flow import build_flow_graph, flow_graph_line, read_flow_graphs, write_flow_graphs
from evalkit.io.canonical import canonical_line


def make_trace(trace_id):
    return Trace.model_validate({"id": trace_id, "observations": [
        {"id": "a", "type": "TOOL", "name": "lookup ☕ \u2028", "output": {"é": "a value with ünïcode"}},
        {"id": "b", "type": "GENERATION", "input": "a value with ünïcode"},
    ]})


def test_lines_are_canonical_json(tmp_path):
    flow = build_flow_graph(make_trace("t1"))
    assert flow_graph_line(flow) == canonical_line(flow.to_graph().to_json_obj())
    assert flow_graph_line(flow.to_graph()) == flow_graph_line(flow)


def test_write_then_read_round_trips(tmp_path):
    path = tmp_path / "graphs.jsonl"
    flows = [build_flow_graph(make_trace("t1")), build_flow_graph(make_trace("t2"))]
    assert write_flow_graphs(flows, path) == 2
    graphs = list(read_flow_graphs(path))
    assert [g.to_json_obj() for g in graphs] == [f.to_json_obj() for f in flows]
    assert path.read_text(encoding="utf-8") == "".join(flow_graph_line(g) for g in graphs)


def test_a_bad_graph_is_located(tmp_path):
    path = tmp_path / "graphs.jsonl"
    good = flow_graph_line(build_flow_graph(make_trace("t1")))
    bad = json.loads(good)
    bad["edges"][0]["kind"] = "teleported"
    path.write_text(good + json.dumps(bad) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        list(read_flow_graphs(path))
    assert err.value.line == 2 and err.value.path == "edges[0].kind"
