"""Single-turn records (a prompt and a response per record, as CSV or JSON) import as one-turn traces."""

import csv
import json

import pytest

from evalkit.cli import main
from evalkit.errors import InputError
from evalkit.traces import ImportReport, load
from evalkit.traces.formats import detect_format

RESPONSE = "Try a **quinoa salad**.\n\n### Ingredients:\n- 1 cup quinoa, \"rinsed\"\n- 2 cups water"
ROWS = [
    {"query": "Gluten-light recipe?", "dietary_restriction": "gluten-free", "response": RESPONSE,
     "trace_id": "48_3", "query_id": "48", "label": "FAIL", "reasoning": "Not strictly gluten-free."},
    {"query": "Vegan dessert", "dietary_restriction": "vegan", "response": "Coconut sorbet.",
     "trace_id": "12_1", "query_id": "12", "label": "PASS", "reasoning": "No animal products."},
]


def _csv(path, rows, header=None):
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(header or list(rows[0]))
        for row in rows:
            writer.writerow(row.values() if isinstance(row, dict) else row)
    return path


def test_records_become_one_turn_traces_with_their_other_fields_kept(tmp_path):
    path = tmp_path / "labeled.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    report = ImportReport()
    first, second = load(path, report=report)
    assert detect_format(path) == "single-turn" and report.by_format == {"single-turn": 2}
    assert (first.id, first.input, first.output) == ("48_3", "Gluten-light recipe?", RESPONSE)
    (generation,) = first.observations
    assert generation.type == "GENERATION"
    assert generation.input == [{"role": "user", "content": "Gluten-light recipe?"}]
    assert generation.output == {"role": "assistant", "content": RESPONSE}
    assert first.metadata == {"dietary_restriction": "gluten-free", "trace_id": "48_3", "query_id": "48",
                              "label": "FAIL", "reasoning": "Not strictly gluten-free.", "source": "single-turn"}
    assert second.id == "12_1" and second.metadata["label"] == "PASS"
    assert report.mappings == {("field 'query'", "the prompt (trace input, user message)"): 2,
                               ("field 'response'", "the response (trace output, assistant message)"): 2}


def test_a_csv_file_reads_as_the_same_records_with_each_row_s_first_line(tmp_path):
    as_csv = _csv(tmp_path / "labeled.csv", ROWS)
    as_jsonl = tmp_path / "labeled.jsonl"
    as_jsonl.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    assert [t.model_dump() for t in load(as_csv)] == [t.model_dump() for t in load(as_jsonl)]
    bad = _csv(tmp_path / "bad.csv", [*ROWS, ["only", "three", "fields"]])
    with pytest.raises(InputError, match=r"bad\.csv:8: 3 fields, the header has 7"):  # row 1 spans lines 2-6
        load(bad)


def test_a_csv_header_naming_a_column_twice_is_refused_rather_than_losing_a_cell(tmp_path):
    path = _csv(tmp_path / "twice.csv", [["q", "r", "FAIL", "PASS"]], header=["query", "response", "label", "label"])
    with pytest.raises(InputError, match=r"twice\.csv:1: column 'label' appears more than once in the header"):
        load(path)


def test_without_an_id_field_the_trace_is_named_by_its_line_and_repeats_are_numbered(tmp_path):
    path = tmp_path / "qa.jsonl"
    path.write_text('{"question": "2+2?", "answer": "4"}\n\n{"question": "3+3?", "answer": "6", "id": "q"}\n'
                    '{"question": "3+3?", "answer": "six", "id": "q"}\n')
    assert [t.id for t in load(path)] == ["record-1", "q", "q#2"]


def test_a_chat_record_with_a_prompt_field_is_still_a_chat(tmp_path):
    path = tmp_path / "chat.jsonl"
    path.write_text(json.dumps({"query": "hi", "response": "hello", "messages": [
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}) + "\n")
    assert detect_format(path) == "openai-chat"


@pytest.mark.parametrize("record", [{"query": "q"}, {"query": "q", "response": None},
                                    {"query": ["q"], "response": "r"}])
def test_a_record_without_a_prompt_and_a_response_of_text_is_not_this_format(tmp_path, record):
    path = tmp_path / "x.jsonl"
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(InputError, match="cannot tell the trace format"):
        load(path)


def test_a_later_record_missing_its_response_is_named_by_line_and_skippable(tmp_path, capsys):
    path = tmp_path / "qa.jsonl"
    path.write_text('{"query": "a", "response": "b"}\n{"query": "c"}\n{"query": "d", "response": "e"}\n')
    with pytest.raises(InputError, match=r"qa\.jsonl:2: expected a record with a prompt field .* both text"):
        load(path)
    out = tmp_path / "out.jsonl"
    assert main(["traces", "import", str(path), "--out", str(out), "--skip-invalid"]) == 0
    assert [t.input for t in load(out)] == ["a", "d"]
    assert "invalid records: 1 (written to" in capsys.readouterr().out
    assert json.loads((tmp_path / "out.jsonl.quarantine.jsonl").read_text())["record"] == {"query": "c"}


def test_the_cli_keeps_only_the_fields_asked_for(tmp_path, capsys):
    src = _csv(tmp_path / "labeled.csv", ROWS)
    out = tmp_path / "traces.jsonl"
    assert main(["traces", "import", str(src), "--out", str(out), "--keep", "label,reasoning"]) == 0
    assert "imported 2 traces" in capsys.readouterr().out
    assert [t.metadata for t in load(out)] == [
        {"label": "FAIL", "reasoning": "Not strictly gluten-free.", "source": "single-turn"},
        {"label": "PASS", "reasoning": "No animal products.", "source": "single-turn"}]


def test_stats_of_untimed_traces_say_so_instead_of_an_empty_latency_table(tmp_path, capsys):
    src = _csv(tmp_path / "labeled.csv", ROWS)
    assert main(["traces", "stats", str(src)]) == 0
    out = capsys.readouterr().out
    assert "2 traces, 2 observations" in out and "latency: no observation has both a start and an end time" in out
    assert "p50" not in out
