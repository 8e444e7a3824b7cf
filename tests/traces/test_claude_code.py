"""Claude Code session files: one trace per session, replies joined, tools and subagents nested."""

import json
import shutil
from pathlib import Path

from evalkit.traces import ImportReport, detect_format, load

FIXTURE = Path(__file__).parent / "fixtures" / "claude_code"
SESSION = "5e55e55e-0000-4000-8000-00000000c0de"


def _session(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURE, tmp_path / "project")
    return tmp_path / "project" / f"{SESSION}.jsonl"


def test_a_session_file_is_sniffed_and_becomes_one_trace_of_its_session(tmp_path):
    path = _session(tmp_path)
    assert detect_format(path) == "claude-code"
    (trace,) = load(path)
    assert trace.id == SESSION
    assert trace.input == "The pagination test fails: find out why and fix it."
    assert trace.output == "Fixed: the slice end no longer adds 1, so a page holds perPage items."
    assert trace.metadata == {"sessionId": SESSION, "cwd": "/home/dev/shop", "gitBranch": "main", "version": "2.1.39",
                              "slug": "quiet-blue-river", "source": "claude-code"}


def test_the_lines_of_one_reply_are_one_generation_whose_usage_counts_once(tmp_path):
    report = ImportReport()
    (trace,) = load(_session(tmp_path), report=report)
    gens = [o for o in trace.observations if o.type == "GENERATION"]
    assert [g.id for g in gens] == ["msg_01A", "msg_01B", "msg_01C", "msg_01D", "msg_01S", "msg_01T"]
    first = gens[0]
    assert [b["type"] for b in first.output] == ["thinking", "text", "tool_use"]
    assert first.usage == {"input": 3, "output": 41, "cache_read_input": 9000, "cache_creation_input": 1200,
                           "total": 44}
    assert (first.start_time, first.end_time) == ("2026-02-12T10:00:00.000Z", "2026-02-12T10:00:06.000Z")
    assert first.model == "claude-opus-4-6" and first.input == [
        {"role": "user", "content": "The pagination test fails: find out why and fix it."}]
    assert ("assistant lines of one API reply (same message id) joined into one GENERATION",
            "part of the GENERATION") in report.notes


def test_a_generation_is_sent_the_conversation_before_it(tmp_path):
    (trace,) = load(_session(tmp_path))
    last = next(o for o in trace.observations if o.id == "msg_01D")
    roles = [m["role"] for m in last.input]
    assert roles == ["user", "assistant", "user", "assistant", "user", "assistant", "user"]
    assert last.input[1]["content"][2]["name"] == "Bash"  # the whole first reply, once


def test_thinking_is_kept_and_its_signature_is_left_out_with_its_length(tmp_path):
    report = ImportReport()
    (trace,) = load(_session(tmp_path), report=report)
    thinking = next(o for o in trace.observations if o.id == "msg_01A").output[0]
    assert thinking["thinking"].startswith("I should look at the test first")
    assert thinking["signature"] == "[1,415 characters left out]"
    assert report.skips["opaque reasoning signatures (encrypted, unreadable; replaced by a note of their length)"] == 1
    assert "x" * 100 not in json.dumps(trace.to_json_obj())


def test_tools_take_their_results_and_a_failed_one_is_an_error(tmp_path):
    (trace,) = load(_session(tmp_path))
    bash = next(o for o in trace.observations if o.id == "toolu_01bash")
    assert (bash.type, bash.name, bash.parent_id) == ("TOOL", "Bash", "msg_01A")
    assert bash.input == {"command": "npm test -- paginate", "description": "Run the pagination test"}
    assert bash.level == "ERROR" and bash.output.startswith("Exit code 1")
    assert bash.end_time == "2026-02-12T10:00:09.000Z"
    edit = next(o for o in trace.observations if o.id == "toolu_01edit")
    assert edit.level is None
    # The short fields of toolUseResult are kept; the copy of the whole file is not.
    assert edit.metadata["toolUseResult"] == {"filePath": "/home/dev/shop/src/paginate.js", "oldString": "+ 1;",
                                              "newString": ";", "userModified": False}


def test_a_subagent_nests_under_the_task_call_that_started_it(tmp_path):
    (trace,) = load(_session(tmp_path))
    by_id = {o.id: o for o in trace.observations}
    agent = by_id["agent-b7c1d2e"]
    assert (agent.type, agent.name, agent.parent_id) == ("AGENT", "Explore", "toolu_01task")
    assert agent.input["prompt"] == "Find where paginate() computes its slice end."
    assert [by_id["msg_01S"].parent_id, by_id["toolu_01grep"].parent_id] == ["agent-b7c1d2e", "msg_01S"]
    assert by_id["msg_01S"].model == "claude-haiku-4-5"
    assert by_id["toolu_01task"].metadata["toolUseResult"]["agentId"] == "b7c1d2e"


def test_without_its_folder_a_session_says_which_subagents_are_missing(tmp_path):
    path = _session(tmp_path)
    shutil.rmtree(path.with_suffix(""))
    report = ImportReport()
    (trace,) = load(path, report=report)
    assert not any(o.type == "AGENT" for o in trace.observations)
    assert any("subagent session(s) the Task calls started are not in the trace" in w for w in report.warnings)


def test_sidechain_lines_of_an_older_session_nest_under_the_matching_task_call(tmp_path):
    path = _session(tmp_path)
    sub = (path.with_suffix("") / "subagents" / "agent-b7c1d2e.jsonl").read_text().splitlines()
    shutil.rmtree(path.with_suffix(""))
    inline = [json.dumps({k: v for k, v in json.loads(line).items() if k != "agentId"}) for line in sub]
    path.write_text(path.read_text() + "\n".join(inline) + "\n")
    (trace,) = load(path)
    agent = next(o for o in trace.observations if o.type == "AGENT")
    assert (agent.id, agent.parent_id) == ("agent-sidechain-1", "toolu_01task")
    assert next(o for o in trace.observations if o.id == "msg_01S").parent_id == agent.id


def test_bookkeeping_is_counted_and_a_last_prompt_nobody_answered_is_an_event(tmp_path):
    report = ImportReport()
    (trace,) = load(_session(tmp_path), report=report)
    assert report.skips["progress lines (streamed partial output and hook runs; the tool results repeat what "
                        "matters)"] == 2
    assert report.skips["file-history snapshots (Claude Code's undo copies of edited files)"] == 1
    events = [(o.name, o.output) for o in trace.observations if o.type == "EVENT"]
    assert events == [("turn_duration", None), ("user", "Thanks, commit it.")]


def test_a_subagent_file_read_alone_is_a_trace_of_its_own(tmp_path):
    path = _session(tmp_path).with_suffix("") / "subagents" / "agent-b7c1d2e.jsonl"
    (trace,) = load(path)
    assert trace.id == f"{SESSION}/agent-b7c1d2e"
    assert [o.type for o in trace.observations] == ["GENERATION", "TOOL", "GENERATION"]
