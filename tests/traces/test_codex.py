"""OpenAI Codex CLI rollouts: one trace per file, the model's items between inputs one generation."""

from pathlib import Path

from evalkit.traces import ImportReport, detect_format, load

FIXTURE = next((Path(__file__).parent / "fixtures" / "codex").glob("rollout-*.jsonl"))
SESSION = "019c8bfe-0000-7000-8000-00000000c0de"


def test_a_rollout_is_sniffed_and_becomes_one_trace_of_its_session():
    assert detect_format(FIXTURE) == "codex"
    (trace,) = load(FIXTURE)
    assert trace.id == SESSION
    assert (trace.input, trace.output) == ("Why does the pagination test fail?",
                                           "The slice end added 1; fixed in src/paginate.js.")
    assert trace.metadata["instructions"] == "You are Codex, a coding agent. Be concise."
    assert trace.metadata["source"] == "codex" and trace.metadata["cli_version"] == "0.104.0"


def test_the_items_between_two_inputs_are_one_generation_with_the_history_as_input():
    (trace,) = load(FIXTURE)
    gens = [o for o in trace.observations if o.type == "GENERATION"]
    assert [[item["type"] for item in g.output] for g in gens] == [
        ["reasoning", "message", "function_call"], ["custom_tool_call"], ["message"]]
    assert all(g.model == "gpt-5.3-codex" for g in gens)
    first, last = gens[0], gens[-1]
    assert [m.get("role", m["type"]) for m in first.input] == ["developer", "user", "user"]
    assert len(last.input) == len(first.input) + len(first.output) + 1 + 1 + 1  # + output, patch call, its output


def test_each_model_call_counts_its_tokens_once_though_the_cli_writes_each_count_twice():
    report = ImportReport()
    (trace,) = load(FIXTURE, report=report)
    usages = [o.usage for o in trace.observations if o.type == "GENERATION"]
    assert [u["input"] for u in usages] == [12000, 12400, 12600]
    assert usages[0] == {"input": 12000, "cache_read_input": 3456, "output": 204, "reasoning": 124, "total": 12204}
    assert report.skips["token counts repeating the previous total (the CLI writes each count twice; counted once)"] == 2


def test_calls_take_their_outputs_and_a_non_zero_exit_code_is_an_error():
    (trace,) = load(FIXTURE)
    run = next(o for o in trace.observations if o.id == "call_run1")
    assert (run.type, run.name, run.parent_id) == ("TOOL", "shell", "generation-1")
    assert run.input == {"command": ["bash", "-lc", "npm test -- paginate"]}
    assert (run.level, run.status_message) == ("ERROR", "exit code 1")
    patch = next(o for o in trace.observations if o.id == "call_patch1")
    assert patch.name == "apply_patch" and patch.level is None
    assert patch.output["output"].startswith("Success.")


def test_reasoning_is_kept_and_its_encrypted_content_left_out():
    report = ImportReport()
    (trace,) = load(FIXTURE, report=report)
    reasoning = next(o for o in trace.observations if o.type == "GENERATION").output[0]
    assert reasoning["summary"][0]["text"] == "**Running the test**"
    assert reasoning["encrypted_content"] == "[1,764 characters left out]"
    assert report.skips["event_msg copies of messages the response items hold"] == 4


def test_task_start_and_end_are_events():
    (trace,) = load(FIXTURE)
    assert [o.name for o in trace.observations if o.type == "EVENT"] == ["task_started", "task_complete"]
