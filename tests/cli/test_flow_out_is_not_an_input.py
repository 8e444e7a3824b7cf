"""``evalkit flow build`` refuses an output that is one of its inputs (the traces, or the expected flow)."""

from __future__ import annotations

from evalkit.cli import main
from evalkit.contracts.trace import Trace
from evalkit.traces import write_jsonl


def _traces(path):
    trace = Trace.model_validate({"id": "t1", "observations": [
        {"id": "a", "type": "TOOL", "name": "lookup", "output": {"order": "order A-2291-XK shipped"}},
        {"id": "b", "type": "GENERATION", "name": "reply", "input": {"q": "order A-2291-XK shipped"}}]})
    write_jsonl([trace], path)
    return path


def test_flow_build_refuses_to_write_its_graphs_over_the_traces(tmp_path, capsys):
    traces = _traces(tmp_path / "in.jsonl")
    other = _traces(tmp_path / "other.jsonl")
    before = traces.read_bytes()
    assert main(["flow", "build", str(other), str(traces), "--out", str(traces)]) == 1
    err = capsys.readouterr().err
    assert f"error: {traces}: --out ({traces}) is also the input TRACES ({traces})" in err
    assert traces.read_bytes() == before
    # a different output still builds
    assert main(["flow", "build", str(traces), "--out", str(tmp_path / "graphs.jsonl")]) == 0
    assert (tmp_path / "graphs.jsonl").read_text(encoding="utf-8").count("\n") == 1


def test_flow_build_refuses_a_diff_file_that_is_an_input(tmp_path, capsys):
    traces = _traces(tmp_path / "g.diff.jsonl")  # OUT.diff.jsonl for --out g.jsonl
    expected = tmp_path / "expected.yaml"
    expected.write_text("edges:\n- {from: lookup, to: reply}\n", encoding="utf-8")
    before = traces.read_bytes()
    assert main(["flow", "build", str(traces), "--expected", str(expected), "--out", str(tmp_path / "g.jsonl")]) == 1
    assert f"the diff file (OUT.diff.jsonl) ({traces}) is also the input TRACES ({traces})" in capsys.readouterr().err
    assert traces.read_bytes() == before and not (tmp_path / "g.jsonl").exists()
