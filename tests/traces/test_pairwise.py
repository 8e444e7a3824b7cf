"""Pairwise judge results (LLMBar, MT-Bench): each comparison a trace of two answers to one prompt."""

import json
from pathlib import Path

from evalkit.cli import main
from evalkit.traces import load

PAIRWISE = [{"input": "Write a poem.", "output_1": "Roses...", "output_2": "Violets...", "label": 1,
             "results": [{"swap = False": {"completion": ["Output (a)", "stop"], "winner": "1"}}]}]


def test_pairwise_judge_results_import_as_two_answers_to_one_prompt(tmp_path):
    """LLMBar's result.json was refused as 'not agent traces'; each comparison is now a trace whose two
    answers a reviewer can read side by side, the preference and the judges' verdicts kept as metadata."""
    path = tmp_path / "result.json"
    path.write_text(json.dumps(PAIRWISE))
    [trace] = load(path)
    assert trace.input == "Write a poem." and trace.output is None  # neither answer is the agent's
    assert [(o.id, o.name, o.type, o.output["content"]) for o in trace.observations] == [
        ("m1", "output_1", "GENERATION", "Roses..."), ("m2", "output_2", "GENERATION", "Violets...")]
    assert trace.metadata["label"] == 1 and trace.metadata["source"] == "pairwise"
    assert "results" in trace.metadata


def test_the_cli_imports_them_and_says_what_it_read(tmp_path, capsys):
    path = tmp_path / "result.json"
    path.write_text(json.dumps(PAIRWISE))
    assert main(["traces", "import", str(path), "--out", str(tmp_path / "out.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "imported 1 trace" in out and "answer m2 (a GENERATION named output_2)" in out


def test_an_llmbar_result_file_imports_every_comparison_with_its_preference_and_verdicts():
    traces = load(Path(__file__).parent / "fixtures" / "pairwise" / "result.json")
    assert [t.id for t in traces] == ["record-0", "record-1"]
    assert traces[1].input.startswith("Write a haiku") and "\n\n" in traces[1].input
    assert traces[1].observations[1].output["content"].startswith("Soft rain")
    assert [t.metadata["label"] for t in traces] == [1, 2]
    assert traces[1].metadata["results"][0]["swap = True"]["winner"] == "2"
