"""Failure-driven sampling reads the outcome the traces record, and an empty sample is an error."""

from __future__ import annotations

import json

import pytest
from analysis_builders import make_trace

from evalkit.analysis import Outcome, detect_outcome, parse_outcome, sample_traces
from evalkit.cli.main import main
from evalkit.errors import InputError
from evalkit.traces import write_jsonl


def _tau_bench(rewards: list[float]) -> list:
    """tau-bench's shape: a reward per conversation in metadata, and nothing else that fails."""
    return [make_trace(f"task-{i}", metadata={"reward": r, "info": {"reward_info": {"reward": r}}})
            for i, r in enumerate(rewards)]


def test_a_reward_below_one_is_a_failure_to_sample_first():
    traces = _tau_bench([1.0, 0.0, 1.0, 0.0, 0.0, 1.0])
    picked = sample_traces(traces, 10, "failure-driven", outcome=parse_outcome("reward<1"))
    assert sorted(t.id for t in picked) == ["task-1", "task-3", "task-4"]


def test_the_outcome_is_found_in_the_metadata_graded_sources_write():
    assert detect_outcome(_tau_bench([1.0, 0.0])) == Outcome("reward", "<", 1)
    assert detect_outcome([make_trace("a", metadata={"success": True}), make_trace("b", metadata={})]) == (
        Outcome("success", "==", False))
    inspect = [make_trace(f"s{i}", metadata={"scores": {"includes": {"value": v}}}) for i, v in enumerate("CIC")]
    outcome = detect_outcome(inspect)
    assert outcome.describe() == "scores.includes.value!=C"
    assert [t.id for t in inspect if outcome.failed(t)] == ["s1"]
    assert detect_outcome([make_trace("x", metadata={"reward": 7})]) is None  # not a 0..1 reward: not guessed


@pytest.mark.parametrize(("text", "outcome"), [
    ("reward<1", Outcome("reward", "<", 1)), ("success=false", Outcome("success", "==", False)),
    ("scores.includes.value != C", Outcome("scores.includes.value", "!=", "C")),
])
def test_an_outcome_is_written_field_operator_value(text, outcome):
    assert parse_outcome(text) == outcome


def test_a_malformed_outcome_says_how_to_write_one():
    with pytest.raises(InputError, match="write FIELD OP VALUE with a metadata field, e.g. reward<1"):
        parse_outcome("reward is low")


def test_a_sample_with_nothing_to_find_is_an_error_saying_what_was_read():
    with pytest.raises(InputError, match="no trace of 3 shows a failure to sample: no error or warning level, "
                                         "no failed tool, no failing outcome"):
        sample_traces(_tau_bench([1.0, 1.0, 1.0]), 5, "failure-driven", outcome=parse_outcome("reward<1"))


def test_the_command_finds_the_outcome_says_so_and_fails_on_an_empty_sample(tmp_path, capsys):
    src = tmp_path / "tau.jsonl"
    write_jsonl(_tau_bench([1.0, 0.0, 0.0, 1.0]), src)
    out = tmp_path / "picked.jsonl"
    assert main(["sample", str(src), "--n", "5", "--strategy", "failure-driven", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "outcome: reward<1 (recorded in the traces' metadata" in captured.err
    assert "sampled 2 of 4 traces" in captured.out
    assert sorted(json.loads(line)["id"] for line in out.read_text().splitlines()) == ["task-1", "task-2"]
    code = main(["sample", str(src), "--n", "5", "--strategy", "failure-driven", "--outcome", "reward<0",
                 "--out", str(tmp_path / "none.jsonl")])
    assert code == 1 and "no trace of 4 shows a failure to sample" in capsys.readouterr().err
    assert not (tmp_path / "none.jsonl").exists()
