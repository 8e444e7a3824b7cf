"""What `evalkit traces import` says it kept, mapped and skipped, on chat logs shaped like real ones."""

import json

import pytest

from evalkit.cli import main
from evalkit.errors import InputError
from evalkit.traces import ImportReport, iter_traces, load
from evalkit.traces.chat_mapping import ChatMapping, load_chat_mapping


def _write_jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _leasing_like(tmp_path):
    """Like the leasing-agent export: every record's `id` is "root", one reply has a misspelt role."""
    return _write_jsonl(tmp_path / "leasing.jsonl", [
        {"lsmith_id": "t1", "id": "root", "all_responses_substantiated": True, "messages": [
            {"role": "system", "content": "You are a leasing agent."},
            {"role": "user", "content": "Do you have a pool?"},
            {"role": "asssistant", "content": "Yes, a salt water pool."}]},
        {"lsmith_id": "t2", "id": "root", "all_responses_substantiated": False, "messages": [
            {"role": "user", "content": "Rent?"},
            {"role": "assistant", "content": "$1200."}]},
    ])


def _hw5_like(tmp_path):
    """Like the recipe-bot hw5 file: the agent's own steps have the role `agent`."""
    return _write_jsonl(tmp_path / "hw5.jsonl", [
        {"conversation_id": "c1", "messages": [
            {"role": "user", "content": "A vegetarian dinner?"},
            {"role": "assistant", "content": "Let me look."},
            {"role": "agent", "content": "TOOL_CALL[SearchRecipes] 3 results"},
            {"role": "agent", "content": "TOOL_CALL[GetRecipe] tofu stir-fry"},
            {"role": "assistant", "content": "Try a tofu stir-fry."}]},
    ])


def _tau_like(tmp_path):
    """Like tau-bench results: messages under `traj`, no id, a reward per conversation."""
    def record(task_id, trial, reward):
        return {"task_id": task_id, "trial": trial, "reward": reward, "info": {"source": "user"}, "traj": [
            {"role": "system", "content": "Airline policy."},
            {"role": "user", "content": "Book me a flight."},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
                "name": "search_flights", "arguments": "{\"from\": \"JFK\"}"}}]},
            {"role": "tool", "tool_call_id": "c1", "name": "search_flights", "content": "[]"},
            {"role": "assistant", "content": "No flights."},
            {"role": "user", "content": "###STOP###"}]}
    path = tmp_path / "tau.json"
    path.write_text(json.dumps([record(0, 0, 0.0), record(0, 1, 1.0), record(1, 0, 1.0)]))
    return path


def _import(tmp_path, capsys, *args):
    out = tmp_path / "out.jsonl"
    rc = main(["traces", "import", *map(str, args), "--out", str(out)])
    captured = capsys.readouterr()
    return rc, captured.out, captured.err, out


def test_a_misspelt_role_is_kept_as_an_event_and_reported_with_the_fix(tmp_path, capsys):
    rc, out, _, written = _import(tmp_path, capsys, _leasing_like(tmp_path))
    assert rc == 0
    assert ("unknown: messages with role 'asssistant': 1, kept as EVENT "
            "(map them with --role-map asssistant=assistant)") in out
    first = load(written)[0]
    assert first.id == "t1" and first.observations  # no longer a trace with nothing in it
    event = first.observations[-1]
    assert (event.type, event.name, event.output) == ("EVENT", "asssistant", "Yes, a salt water pool.")
    assert event.metadata["role"] == "asssistant"


def test_role_map_turns_the_agent_role_into_assistant_turns_and_says_so(tmp_path, capsys):
    rc, out, _, written = _import(tmp_path, capsys, _hw5_like(tmp_path), "--role-map", "agent=assistant")
    assert rc == 0
    assert "mapped: messages with role 'agent' -> assistant: 2" in out
    assert "unknown:" not in out
    (trace,) = load(written)
    assert [o.type for o in trace.observations] == ["GENERATION"] * 4
    step = trace.observations[1]
    assert step.output["role"] == "assistant" and step.metadata == {"role": "agent"}
    assert [m["role"] for m in trace.observations[3].input] == ["user", "assistant", "assistant", "assistant"]


def test_without_a_role_map_every_agent_message_is_counted(tmp_path, capsys):
    _, out, _, written = _import(tmp_path, capsys, _hw5_like(tmp_path))
    assert "unknown: messages with role 'agent': 2, kept as EVENT (map them with --role-map agent=assistant)" in out
    assert [o.type for o in load(written)[0].observations] == ["GENERATION", "EVENT", "EVENT", "GENERATION"]


def test_tau_bench_records_import_with_composite_ids_and_the_reward_kept(tmp_path, capsys):
    rc, out, _, written = _import(tmp_path, capsys, _tau_like(tmp_path), "--messages-key", "traj",
                                  "--id-key", "task_id,trial", "--keep", "reward,task_id,trial")
    assert rc == 0 and "imported 3 traces" in out
    traces = load(written)
    assert [t.id for t in traces] == ["0/0", "0/1", "1/0"]
    assert [t.metadata["reward"] for t in traces] == [0.0, 1.0, 1.0]
    assert set(traces[0].metadata) == {"reward", "task_id", "trial", "source"}  # `info` not kept
    tool = traces[0].observations[1]
    assert (tool.type, tool.input, tool.output) == ("TOOL", {"from": "JFK"}, [])
    stop = traces[0].observations[-1]
    assert (stop.type, stop.name, stop.output) == ("EVENT", "user", "###STOP###")
    assert "kept as EVENT: user messages no assistant turn follows: 3" in out


def test_a_mapping_file_does_the_same_as_the_options(tmp_path, capsys):
    mapping = tmp_path / "tau.yaml"
    mapping.write_text("messages_key: traj\nid_key: [task_id, trial]\nkeep: [reward]\n")
    rc, _, _, written = _import(tmp_path, capsys, _tau_like(tmp_path), "--mapping", mapping)
    assert rc == 0
    traces = load(written)
    assert traces[1].id == "0/1" and traces[1].metadata == {"reward": 1.0, "source": "openai-chat"}


def test_a_mapping_file_with_an_unknown_key_is_refused_by_name(tmp_path):
    mapping = tmp_path / "m.yaml"
    mapping.write_text("messages_key: traj\nids: task_id\n")
    with pytest.raises(InputError, match="m.yaml: ids: unknown key"):
        load_chat_mapping(mapping)


def test_records_with_their_messages_under_another_key_are_read_from_it_and_the_report_says_so(tmp_path, capsys):
    rc, out, _, written = _import(tmp_path, capsys, _tau_like(tmp_path))
    assert rc == 0 and "imported 3 traces" in out
    assert "their chat messages were found under 'traj' and read from there (pass --messages-key traj" in out
    explicit = tmp_path / "explicit.jsonl"
    assert main(["traces", "import", str(_tau_like(tmp_path)), "--messages-key", "traj",
                 "--out", str(explicit)]) == 0
    assert written.read_bytes() == explicit.read_bytes()


def test_a_messages_key_the_user_gave_is_not_second_guessed(tmp_path, capsys):
    rc, _, err, written = _import(tmp_path, capsys, _tau_like(tmp_path), "--messages-key", "turns")
    assert rc == 1 and not written.exists()
    assert "its chat messages are under 'traj': pass --messages-key traj" in err


def test_a_forced_format_does_not_look_for_messages_under_another_key(tmp_path, capsys):
    rc, _, err, written = _import(tmp_path, capsys, _tau_like(tmp_path), "--format", "openai-chat")
    assert rc == 1 and not written.exists()
    assert "not in the 'openai-chat' format given by --format" in err


def test_a_missing_id_field_names_the_record_and_field(tmp_path, capsys):
    rc, _, err, _ = _import(tmp_path, capsys, _tau_like(tmp_path), "--messages-key", "traj",
                            "--id-key", "task_id,run")
    assert rc == 1 and "tau.json: [0].run: id field named by --id-key is missing" in err


def test_an_empty_file_warns_exits_1_and_writes_nothing_unless_allowed(tmp_path, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    rc, _, err, written = _import(tmp_path, capsys, empty)
    assert rc == 1 and not written.exists()
    assert "empty.jsonl: empty file, no trace records" in err and "--allow-empty" in err
    rc, out, _, written = _import(tmp_path, capsys, empty, "--allow-empty")
    assert rc == 0 and written.exists() and "imported 0 traces" in out


def test_a_forced_format_that_does_not_fit_fails_instead_of_relabelling(tmp_path, capsys):
    rc, _, err, written = _import(tmp_path, capsys, _hw5_like(tmp_path), "--format", "langfuse")
    assert rc == 1 and not written.exists()
    assert "hw5.jsonl:1: record is not in the 'langfuse' format given by --format (it looks like 'openai-chat')" in err


def test_a_forced_format_checks_every_record_not_only_the_first(tmp_path, capsys):
    path = _write_jsonl(tmp_path / "mixed.jsonl", [
        {"conversation_id": "a", "messages": [{"role": "user", "content": "hi"}]},
        {"id": "b", "observations": [{"id": "x", "type": "SPAN"}]}])
    rc, _, err, _ = _import(tmp_path, capsys, path, "--format", "openai-chat")
    assert rc == 1 and "mixed.jsonl:2: record is not in the 'openai-chat' format" in err
    rc, out, err, written = _import(tmp_path, capsys, path, "--format", "openai-chat", "--skip-invalid")
    assert rc == 0 and [t.id for t in load(written)] == ["a"]
    assert "skipped: invalid records: 1 (written to" in out


def test_the_report_is_printable_as_json(tmp_path, capsys):
    rc, out, _, _ = _import(tmp_path, capsys, _hw5_like(tmp_path), "--json")
    report = json.loads(out)
    assert rc == 0 and report["traces"] == 1 and report["observations"] == 4
    assert report["keptUnknown"] == [{"count": 2, "hint": "map them with --role-map agent=assistant",
                                      "keptAs": "EVENT", "what": "messages with role 'agent'"}]


def test_the_library_fills_a_report_and_reads_without_one(tmp_path):
    path = _hw5_like(tmp_path)
    report = ImportReport()
    traces = list(iter_traces(path, report=report, mapping=ChatMapping(role_map={"agent": "assistant"})))
    assert report.traces == 1 and report.observations == 4 and report.by_type == {"GENERATION": 4}
    assert report.mappings == {("messages with role 'agent'", "assistant"): 2}
    assert not report.has_losses
    assert [o.type for o in load(path)[0].observations] != [o.type for o in traces[0].observations]


def test_traces_left_with_no_observations_are_named(tmp_path, capsys):
    path = _write_jsonl(tmp_path / "native.jsonl", [{"id": "empty-one", "observations": []},
                                                    {"id": "full", "observations": [{"id": "x", "type": "SPAN"}]}])
    rc, out, _, _ = _import(tmp_path, capsys, path)
    assert rc == 0 and "empty: 1 trace with no observations: empty-one" in out


def test_repeated_ids_are_numbered_when_records_are_read_one_by_one(tmp_path, capsys):
    path = _write_jsonl(tmp_path / "roots.jsonl", [
        {"id": "root", "messages": [{"role": "user", "content": "a"}]},
        {"id": "root", "messages": "not a list"},
        {"id": "root", "messages": [{"role": "user", "content": "b"}]}])
    rc, out, _, written = _import(tmp_path, capsys, path, "--format", "openai-chat", "--skip-invalid")
    assert rc == 0 and [t.id for t in load(written)] == ["root", "root#2"]
    assert "skipped: invalid records: 1" in out
