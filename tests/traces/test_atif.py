"""ATIF trajectories: agent steps as generations, tool calls with their results, subagents nested."""

import shutil
from pathlib import Path

from evalkit.traces import ImportReport, detect_format, load

FIXTURE = Path(__file__).parent / "fixtures" / "atif"


def test_a_trajectory_is_sniffed_and_becomes_one_trace():
    path = FIXTURE / "trajectory.json"
    assert detect_format(path) == "atif"
    (trace,) = load(path)
    assert (trace.id, trace.name) == ("hello-world-trial-1", "terminus-2")
    assert trace.input == 'Create a file called hello.txt with "Hello, world!" as the content.'
    assert trace.output == "The file has the right content."
    assert trace.metadata["final_metrics"]["total_steps"] == 6
    assert trace.metadata["stepRewards"] == {"6": 1.0}  # an outcome: trace metadata, where the guard looks


def test_agent_steps_are_generations_sent_the_conversation_before_them():
    report = ImportReport()
    (trace,) = load(FIXTURE / "trajectory.json", report=report)
    gens = [o for o in trace.observations if o.type == "GENERATION" and o.parent_id is None]
    assert [g.id for g in gens] == ["step-3", "step-5", "step-6"]
    first = gens[0]
    assert first.usage == {"input": 682, "output": 60, "cache_read_input": 0, "total": 742}
    assert first.output["reasoning_content"].startswith("The file does not exist yet")
    assert [m["role"] for m in first.input] == ["system", "user"]
    assert [m["role"] for m in gens[1].input] == ["system", "user", "assistant", "tool", "system"]
    assert "prompt_token_ids" not in (first.metadata or {})
    assert report.skips["token ids and log probabilities of agent steps (RL training data)"] == 1


def test_tool_calls_take_named_and_lone_unnamed_results():
    (trace,) = load(FIXTURE / "trajectory.json")
    by_id = {o.id: o for o in trace.observations}
    assert by_id["call_0_1"].output.startswith("New Terminal Output")  # the step's one unnamed result
    assert (by_id["call_1_1"].output, by_id["call_1_2"].parent_id) == ("Hello, world!\n", "step-5")
    assert by_id["call_2_task_complete"].type == "TOOL" and not by_id["call_2_task_complete"].has_output


def test_a_subagent_trajectory_beside_the_file_nests_under_its_hand_off(tmp_path):
    (trace,) = load(FIXTURE / "trajectory.json")
    agent = next(o for o in trace.observations if o.type == "AGENT")
    assert (agent.name, agent.parent_id) == ("terminus-2-summarization-summary", "step-4")
    inner = [o for o in trace.observations if o.parent_id == agent.id]
    assert [o.type for o in inner] == ["GENERATION"] and inner[0].usage["input"] == 400
    shutil.copy(FIXTURE / "trajectory.json", tmp_path / "trajectory.json")
    report = ImportReport()
    (alone,) = load(tmp_path / "trajectory.json", report=report)
    assert any("subagent trajectory 'hello-world-trial-1-summarization-1-summary'" in w for w in report.warnings)
    assert next(o for o in alone.observations if o.type == "AGENT").metadata["ref"]["trajectory_path"] == (
        "trajectory.summarization-1-summary.json")
