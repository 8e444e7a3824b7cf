"""``evalkit tree check TREE TRACES``: per node, expected vs observed decisions; unmapped nodes not checked."""

from __future__ import annotations

import json

from evalkit.cli.main import main
from evalkit.io import canonical_line

from .tree_fixtures import traces_for_tree, tree_obj


def _files(tmp_path):
    tree, traces = tmp_path / "tree.json", tmp_path / "traces.jsonl"
    tree.write_text(json.dumps(tree_obj()))
    traces.write_text("".join(canonical_line(t.to_json_obj()) for t in traces_for_tree()))
    return str(tree), str(traces)


def test_tree_check_prints_each_node_and_lists_the_judge_track_node_as_not_checked(tmp_path, capsys):
    tree, traces = _files(tmp_path)
    assert main(["tree", "check", tree, traces]) == 0
    out = capsys.readouterr().out
    assert "4 traces, 2 nodes (1 compared by code, 1 not checked)" in out
    assert "  s-status: match 1, mismatch 1" in out and "  mismatch t3 (s-status): has 'kb_search'" in out
    assert "node n-escalate" in out and "  not checked on 4 trace(s)" in out
    assert "match" not in out.split("node n-escalate")[1].split("fork")[0]    # never counted as a match
    assert main(["tree", "check", tree, traces, "--gate"]) == 3


def test_tree_check_json_has_every_mismatch_and_fork(tmp_path, capsys):
    tree, traces = _files(tmp_path)
    assert main(["tree", "check", tree, traces, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    nodes = {n["nodeId"]: n for n in data["nodes"]}
    assert nodes["n-escalate"]["checkedBy"] == "none" and nodes["n-escalate"]["scenarios"] == {
        "(none)": {"judge-skipped": 4}}
    assert [m["traceId"] for m in nodes["n-route"]["mismatches"]] == ["t3"]
    assert any(f["dead"] for f in data["forks"])
    assert main(["tree", "check", tree, str(tmp_path / "nope.jsonl")]) == 1
