import argparse
import json

import pytest

from evalkit.cli.flow import add_flow_parser
from evalkit.contracts.trace import Trace
from evalkit.errors import InputError
from evalkit.flow.files import read_flow_graphs
from evalkit.traces import write_jsonl

ORDER = "order A-2291-XK shipped"
BRIEF = "research brief for A-2291"


def run(argv):
    parser = argparse.ArgumentParser(prog="evalkit")
    add_flow_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    return args.func(args)


def agent_trace(trace_id, *, brief_reaches_researcher=True):
    return Trace.model_validate({"id": trace_id, "observations": [
        {"id": "g", "type": "GENERATION", "name": "chat", "output": {"plan": ORDER}},
        {"id": "d", "type": "TOOL", "name": "delegate", "input": {"q": ORDER}, "output": {"brief": BRIEF}},
        {"id": "r", "type": "AGENT", "name": "researcher",
         "input": {"brief": BRIEF if brief_reaches_researcher else "no context at all"}},
    ]})


@pytest.fixture
def traces_file(tmp_path):
    path = tmp_path / "traces.jsonl"
    write_jsonl([agent_trace("t1"), agent_trace("t2", brief_reaches_researcher=False)], path)
    return path


def test_build_writes_one_graph_per_trace(tmp_path, traces_file, capsys):
    out = tmp_path / "graphs.jsonl"
    assert run(["flow", "build", str(traces_file), "--out", str(out), "--dispatch", "delegate"]) == 0
    assert "built 2 flow graphs (3 edges, 1 unthreaded output, 0 terminal (end products, not dropped))" \
        in capsys.readouterr().out
    graphs = list(read_flow_graphs(out))
    assert [g.trace_id for g in graphs] == ["t1", "t2"]
    assert [(e.from_, e.to, e.kind) for e in graphs[0].edges] == [
        ("n0", "n1", "threaded"), ("n1", "n2", "handoff")]
    assert not (tmp_path / "graphs.diff.jsonl").exists()


def test_build_with_expected_flow_prints_and_writes_the_diff(tmp_path, traces_file, capsys):
    expected = tmp_path / "expected-flow.json"
    expected.write_text(json.dumps({"dispatchToolNames": ["delegate"], "expectedUiSlots": [], "edges": [
        {"fromTool": "chat", "toTool": "delegate", "slot": "plan"},
        {"fromTool": "delegate", "toTool": "researcher"}]}))
    out = tmp_path / "graphs.jsonl"
    assert run(["flow", "build", str(traces_file), "--out", str(out), "--expected", str(expected)]) == 0
    printed = capsys.readouterr().out
    assert "expected flow: 2 edges; 1 of 2 traces show every edge that applies to them" in printed
    assert "2/2       chat -> delegate [plan]" in printed
    assert "1/2       delegate -> researcher" in printed
    diffs = [json.loads(line) for line in (tmp_path / "graphs.diff.jsonl").read_text().splitlines()]
    assert [d["traceId"] for d in diffs] == ["t1", "t2"]
    assert diffs[1]["missing"] == [{"fromTool": "delegate", "toTool": "researcher"}]
    # The expected flow's dispatch tools mark handoffs without --dispatch.
    assert list(read_flow_graphs(out))[0].edges[1].kind == "handoff"


def test_bad_output_name_and_bad_expected_flow_are_input_errors(tmp_path, traces_file):
    with pytest.raises(InputError, match="must end in .jsonl"):
        run(["flow", "build", str(traces_file), "--out", str(tmp_path / "graphs.json")])
    expected = tmp_path / "expected-flow.json"
    expected.write_text(json.dumps({"dispatchToolNames": [], "expectedUiSlots": [],
                                    "edges": [{"fromTool": ""}]}))
    with pytest.raises(InputError) as err:
        run(["flow", "build", str(traces_file), "--out", str(tmp_path / "g.jsonl"),
             "--expected", str(expected)])
    assert err.value.file == str(expected) and err.value.path.startswith("edges[0]")
    assert not (tmp_path / "g.jsonl").exists()


def test_semantics_chooses_between_the_received_text_and_the_reference_method(tmp_path, capsys):
    reply = 'Sure!\nWe have "11 AM" tomorrow.'
    path = tmp_path / "chat.jsonl"
    write_jsonl([Trace.model_validate({"id": "c1", "observations": [
        {"id": "a", "type": "GENERATION", "name": "assistant", "input": [{"role": "user", "content": "11 AM?"}],
         "output": {"role": "assistant", "content": reply}},
        {"id": "b", "type": "GENERATION", "name": "assistant",
         "input": [{"role": "assistant", "content": reply}, {"role": "user", "content": "book it"}],
         "output": {"role": "assistant", "content": "Booked for tomorrow."}}]})], path)
    assert run(["flow", "build", str(path), "--out", str(tmp_path / "r.jsonl")]) == 0
    assert "(1 edges, 0 unthreaded outputs, 1 terminal (end products, not dropped))" in capsys.readouterr().out
    assert run(["flow", "build", str(path), "--out", str(tmp_path / "m.jsonl"), "--semantics", "mutagent"]) == 0
    assert "(0 edges, 2 unthreaded outputs) into" in capsys.readouterr().out
    assert "terminalOutputs" not in (tmp_path / "m.jsonl").read_text()
