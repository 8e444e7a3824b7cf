"""Inspect AI logs, .json and zipped .eval: a trace per sample, outcomes in metadata, grading left out."""

import json
import zipfile
from pathlib import Path

import pytest

from evalkit.errors import InputError
from evalkit.traces import ImportReport, detect_format, load

FIXTURE = Path(__file__).parent / "fixtures" / "inspect" / "2025-05-12T20-27-36-04-00_browser.json"


def _zipped(tmp_path: Path) -> Path:
    """The fixture as Inspect writes a .eval log: header.json and one document per sample."""
    log = json.loads(FIXTURE.read_text())
    samples = log.pop("samples")
    path = tmp_path / "2025-05-12T20-27-36-04-00_browser.eval"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("_journal/start.json", json.dumps({"version": 2}))
        for sample in samples:
            archive.writestr(f"samples/{sample['id']}_epoch_{sample['epoch']}.json", json.dumps(sample))
        archive.writestr("header.json", json.dumps(log))
    return path


def test_json_and_zipped_logs_are_sniffed_and_give_the_same_traces(tmp_path):
    assert detect_format(FIXTURE) == detect_format(_zipped(tmp_path)) == "inspect"
    assert load(FIXTURE) == load(_zipped(tmp_path))
    (trace,) = load(FIXTURE)
    assert (trace.id, trace.name) == ("f9WtbTGs/1/1", "browser")
    assert trace.input == "What does the page at www.example.org say it is for?"  # the attachment, resolved
    assert trace.output == "The Example Domain page says it is for use in documentation examples."


def test_the_sample_s_scores_and_target_go_to_trace_metadata():
    (trace,) = load(FIXTURE)
    assert trace.metadata["scores"] == {"model_graded_fact": {"value": "C", "answer": "documentation examples",
                                                              "explanation": "GRADE: C"}}
    assert trace.metadata["target"] == "documentation" and trace.metadata["difficulty"] == "easy"
    assert (trace.metadata["task"], trace.metadata["model"], trace.metadata["source"]) == (
        "browser", "openai/gpt-4o-mini", "inspect")


def test_grading_is_left_out_of_the_observations_and_counted():
    report = ImportReport()
    (trace,) = load(FIXTURE, report=report)
    assert "GRADE" not in json.dumps([o.to_json_obj() for o in trace.observations])
    assert report.skips["scorer spans (how the sample was graded, the grader's model calls included; its scores "
                        "are in trace metadata)"] == 1
    assert report.skips["state and store diffs (the messages and tool events show what changed)"] == 1


def test_model_events_are_generations_and_tool_events_tools_under_their_caller():
    (trace,) = load(FIXTURE)
    by_id = {o.id: o for o in trace.observations}
    gens = [o for o in trace.observations if o.type == "GENERATION"]
    assert len(gens) == 3 and all(g.parent_id == "s-solve" for g in gens)
    assert gens[0].usage == {"input": 1124, "output": 23, "cache_read_input": 0, "reasoning": 0, "total": 1147}
    assert gens[0].model == "gpt-4o-mini-2024-07-18" and gens[0].output["tool_calls"][0]["id"] == "call_go"
    assert gens[0].end_time == "2025-05-12T20:27:39.562000-04:00"  # start + output.time
    assert gens[1].input[2]["content"].startswith('[12] heading "Example Domain"')  # attachment resolved
    go, click = by_id["call_go"], by_id["call_click"]
    assert (go.type, go.parent_id, go.level) == ("TOOL", gens[0].id, None)
    assert go.output.endswith("documentation examples.\"")
    assert (click.parent_id, click.level, click.status_message) == (gens[1].id, "ERROR",
                                                                    "element 151 is not on the page")
    assert by_id["s-solve"].type == "CHAIN" and by_id["s-init"].type == "SPAN"
    sandbox = next(o for o in trace.observations if o.type == "EVENT")
    assert (sandbox.name, sandbox.parent_id) == ("sandbox.exec", "s-solve")


def test_a_log_without_samples_is_an_empty_source(tmp_path):
    log = json.loads(FIXTURE.read_text())
    log["samples"], log["status"] = [], "cancelled"
    path = tmp_path / "no-samples.json"
    path.write_text(json.dumps(log))
    report = ImportReport()
    assert load(path, report=report) == []
    assert report.empty_files == [str(path)]


def test_a_broken_zipped_log_is_an_error_naming_the_member(tmp_path):
    path = tmp_path / "broken.eval"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("header.json", FIXTURE.read_text())
        archive.writestr("samples/1_epoch_1.json", "{not json")
    with pytest.raises(InputError) as err:
        load(path)
    assert f"{path}!samples/1_epoch_1.json" in err.value.render()
