"""The judge bias audit: position swap, verbosity, same-family warning, and the LLMBar pairwise reader."""

from __future__ import annotations

import json

import pytest

from evalkit.errors import InputError
from evalkit.judge.audit import (
    PairwiseJudgment,
    model_family,
    pairwise_verbosity,
    read_llmbar_pairwise,
    same_family_warning,
    swap_audit,
    verbosity_audit,
)


def _pair(i: int, label: int | None, winner: int | None, swapped: int | None, long_first: bool = True):
    a, b = ("a long detailed answer", "short") if long_first else ("short", "a long detailed answer")
    return PairwiseJudgment(str(i), "q", a, b, label, winner, swapped)


def test_a_judge_that_always_prefers_the_first_answer_flips_on_every_pair():
    # With output_1 first it picks 1; with output_2 first it picks 2 (mapped back): the first shown wins.
    pairs = [_pair(i, label=1 + i % 2, winner=1, swapped=2) for i in range(20)]
    audit = swap_audit(pairs)
    assert audit.pairs == 20 and audit.consistent == 0 and audit.flip_rate == 1.0
    assert audit.first_wins == 40 and audit.first_win_share == 1.0 and audit.first_wins_both_orders == 20
    assert audit.first_wins_p == pytest.approx(2 / 2 ** 40)
    assert (audit.right_in_order, audit.right_swapped, audit.right_both) == (10, 10, 0)


def test_a_position_fair_judge_is_consistent_and_undecided_pairs_are_counted():
    pairs = [_pair(i, label=1, winner=1, swapped=1) for i in range(6)] + [_pair(9, 1, None, 1)]
    audit = swap_audit(pairs)
    assert (audit.pairs, audit.undecided, audit.consistent, audit.flip_rate) == (6, 1, 6, 0.0)
    assert audit.first_win_share == 0.5 and audit.first_wins_p == 1.0 and audit.right_both == 6


def test_verbosity_audit_finds_a_judge_that_passes_only_long_answers():
    lengths = [10, 12, 15, 18, 20, 300, 320, 350, 400, 410]
    passed = [False] * 5 + [True] * 5
    audit = verbosity_audit(lengths, passed, permutations=2000, seed=1)
    assert audit.point_biserial > 0.9 and audit.longer_passes == 1.0
    # 10 choose 5 = 252 labelings; two (this one and its mirror) are as extreme: p close to 2/252
    assert audit.p_value == pytest.approx(2 / 252, abs=0.006)
    assert audit == verbosity_audit(lengths, passed, permutations=2000, seed=1)


def test_verbosity_audit_without_association_or_without_a_class():
    lengths = [10, 400, 12, 350, 15, 320, 18, 300]
    passed = [True, True, False, False, True, True, False, False]
    audit = verbosity_audit(lengths, passed, permutations=2000)
    assert abs(audit.point_biserial) < 0.1 and audit.p_value > 0.5 and audit.longer_passes == 0.5
    assert verbosity_audit([1, 2], [True, True]).p_value is None
    with pytest.raises(InputError, match="differ in length"):
        verbosity_audit([1, 2], [True])


def test_pairwise_verbosity_compares_the_judge_with_the_humans_on_the_same_pairs():
    # The judge always picks the longer answer; the humans do so on half of the pairs.
    pairs = [_pair(i, label=1 if i % 2 else 2, winner=1, swapped=1) for i in range(20)]
    v = pairwise_verbosity(pairs)
    assert (v.pairs, v.judge_longer, v.human_longer) == (20, 20, 10)
    assert v.p_value == pytest.approx(2 / 1024)  # 10 discordant pairs, all one way


@pytest.mark.parametrize(("judge", "agent", "family"), [
    ("gpt-4o-2024-08-06", "o3-mini", "openai"),
    ("openai/gpt-4.1", "gpt-4o", "openai"),
    ("claude-3-5-sonnet-20241022", "bedrock:anthropic.claude-3-haiku", "anthropic"),
    ("gemini-1.5-pro", "models/gemini-2.0-flash", "google"),
    ("meta-llama/Llama-3.1-70B", "llama3:8b", "meta"),
    ("Qwen2.5-72B-Instruct", "qwq-32b", "qwen"),
])
def test_same_family_warning(judge, agent, family):
    assert model_family(judge) == family
    assert family in same_family_warning(judge, agent)


def test_no_warning_across_families_or_for_unknown_models():
    assert same_family_warning("gpt-4o", "claude-3-opus") is None
    assert same_family_warning("my-finetune", "my-finetune") is None
    assert model_family("phi-3-mini") == "microsoft" and model_family("photon-1") is None
    assert model_family("o1") == "openai" and model_family("solo1-7b") is None


def _llmbar_record(label, w, ws, text_a="Output (a)", text_b="Output (b)"):
    return {"input": "Write a haiku.", "output_1": "one answer", "output_2": "another, longer answer",
            "label": label, "results": [{"swap = False": {"completion": [text_a, "stop"], "winner": w},
                                         "swap = True": {"completion": [text_b, "stop"], "winner": ws}}]}


def test_llmbar_reader_on_a_hand_written_file(tmp_path):
    path = tmp_path / "result.json"
    path.write_text(json.dumps([_llmbar_record(1, "1", "1"), _llmbar_record(2, "1", "2", text_b="Output (a)"),
                                _llmbar_record(2, "2", None)]))
    pairs = read_llmbar_pairwise(path)
    assert [(p.pair_id, p.label, p.winner, p.winner_swapped) for p in pairs] == [
        ("1", 1, 1, 1), ("2", 2, 1, 2), ("3", 2, 2, None)]
    assert pairs[0].instruction == "Write a haiku." and pairs[0].output_2 == "another, longer answer"
    audit = swap_audit(pairs)
    assert (audit.pairs, audit.undecided, audit.consistent, audit.first_wins_both_orders) == (2, 1, 1, 1)
    assert (audit.right_in_order, audit.right_swapped, audit.right_both) == (1, 2, 1)


@pytest.mark.parametrize(("record", "where"), [
    ({**_llmbar_record(1, "1", "1"), "label": "1"}, r"\[1\].label"),
    ({**_llmbar_record(1, "1", "1"), "output_2": None}, r"\[1\].output_2"),
    ({**_llmbar_record(1, "1", "1"), "results": [{"swap = False": {"winner": "1"}}]}, r"\[1\].results\[0\].swap = True"),
    ({**_llmbar_record(1, "1", "1"), "results": []}, r"\[1\].results"),
    (_llmbar_record(1, "1", 3.5), r"\[1\].results\[0\].swap = True.winner"),
])
def test_llmbar_reader_names_the_record_and_field_of_bad_input(tmp_path, record, where):
    path = tmp_path / "result.json"
    path.write_text(json.dumps([_llmbar_record(1, "1", "1"), record]))
    with pytest.raises(InputError, match=where) as err:
        read_llmbar_pairwise(path)
    assert str(path) in str(err.value)
