"""Gemini CLI sessions, as one JSON document or as JSONL: a generation per reply, its tool calls as TOOLs."""

import json
from pathlib import Path

from evalkit.traces import ImportReport, detect_format, load

FIXTURE = next((Path(__file__).parent / "fixtures" / "gemini_cli").glob("session-*.jsonl"))
SESSION = "0ab84937-0000-4000-8000-00000000c0de"


def _as_document(tmp_path: Path) -> Path:
    """The same session in the older single-document form: the header with the messages, each once."""
    header, messages = {}, {}
    for line in FIXTURE.read_text().splitlines():
        value = json.loads(line)
        if "sessionId" in value:
            header = value
        elif "$set" in value:
            header.update(value["$set"])
        else:
            messages[value["id"]] = value
    path = tmp_path / "session-2026-04-23T12-52-0ab84937.json"
    path.write_text(json.dumps({**header, "messages": list(messages.values())}))
    return path


def test_both_forms_are_sniffed_and_give_the_same_trace(tmp_path):
    assert detect_format(FIXTURE) == detect_format(_as_document(tmp_path)) == "gemini-cli"
    (jsonl,) = load(FIXTURE)
    (document,) = load(_as_document(tmp_path))
    assert jsonl == document
    assert jsonl.id == SESSION and jsonl.metadata["source"] == "gemini-cli"
    assert jsonl.metadata["lastUpdated"] == "2026-04-23T12:54:16.106Z"
    assert (jsonl.input, jsonl.output) == ("Why does the pagination test fail?",
                                           "The slice end adds 1 (src/paginate.js line 3), so a page holds 11 items.")


def test_a_message_written_again_replaces_its_first_copy(tmp_path):
    report = ImportReport()
    (trace,) = load(FIXTURE, report=report)
    assert [o.id for o in trace.observations if o.type == "GENERATION"] == ["m-gem-1", "m-gem-2"]
    assert report.notes[("messages written again as their tool calls finished", "the later copy")] == 1


def test_each_reply_is_a_generation_with_its_tokens_thoughts_and_calls():
    (trace,) = load(FIXTURE)
    first = next(o for o in trace.observations if o.id == "m-gem-1")
    assert first.model == "gemini-3-flash-preview"
    assert first.usage == {"input": 13906, "output": 185, "cache_read_input": 0, "reasoning": 306, "tool": 0,
                           "total": 14397}
    assert first.input == [{"role": "user", "parts": [{"text": "Why does the pagination test fail?"}]}]
    parts = first.output["parts"]
    assert parts[0] == {"thought": True, "text": "Reading the test: I will read the test and the code it covers."}
    assert [p["functionCall"]["name"] for p in parts[1:]] == ["read_file", "run_shell_command"]
    second = next(o for o in trace.observations if o.id == "m-gem-2")
    # Sent the conversation: the question, the first reply and the two function responses.
    assert [m["role"] for m in second.input] == ["user", "model", "user"]
    assert len(second.input[2]["parts"]) == 2


def test_tool_calls_are_tools_and_a_failed_one_is_an_error():
    report = ImportReport()
    (trace,) = load(FIXTURE, report=report)
    read = next(o for o in trace.observations if o.id == "b5qo7ls5")
    assert (read.type, read.name, read.parent_id, read.level) == ("TOOL", "read_file", "m-gem-1", None)
    assert read.output == "expect(page(items, 0, 10)).toHaveLength(10);"
    shell = next(o for o in trace.observations if o.id == "aao1q07o")
    assert shell.level == "ERROR"
    assert shell.status_message == "Command exited with code 1: expected 10 items, got 11"
    assert "resultDisplay" not in shell.metadata
    assert report.skips["long resultDisplay of tool calls (what the terminal showed; the response holds the "
                        "result)"] == 1


def test_info_messages_and_an_unanswered_prompt_are_events():
    (trace,) = load(FIXTURE)
    events = [(o.name, o.output) for o in trace.observations if o.type == "EVENT"]
    assert events == [("info", "Empty GEMINI.md created. Now analyzing the project to populate it."),
                      ("user", "Fix it.")]
