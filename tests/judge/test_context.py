"""A judge prompt longer than the judge model's context window is said before any call."""

from __future__ import annotations

import yaml

from evalkit.cli.main import main
from evalkit.judge import build_prompts, context_tokens, oversized_prompts
from tests.judge.traces import leasing_trace, spec, write_jsonl

LONG_REPLY = "The pet fee is 300 dollars per pet. " * 20_000  # about 180,000 tokens rendered


def test_a_prompt_past_the_window_of_the_model_is_named_with_its_size():
    prompts = build_prompts(spec(), [leasing_trace("short"), leasing_trace("long", reply=LONG_REPLY)])
    (warning,) = oversized_prompts(prompts, "gpt-4o-2024-08-06")
    assert warning.startswith("the all_responses_substantiated prompt for trace long is about ")
    assert "more than gpt-4o-2024-08-06's context window of 128,000" in warning
    assert oversized_prompts(prompts, "gpt-4.1-mini") == []  # a million tokens hold it
    assert oversized_prompts(prompts, "some-local-model") == []  # a window we do not know is not guessed


def test_windows_are_known_by_model_family_whatever_the_provider_prefix():
    assert context_tokens("openai/gpt-4o-mini") == 128_000
    assert context_tokens("claude-sonnet-4-5") == 200_000
    assert context_tokens("smollm2-135m") == 8_192
    assert context_tokens(None) is None


def test_judge_prompt_warns_of_a_trace_too_long_for_the_pinned_model(tmp_path, capsys):
    traces = write_jsonl(tmp_path / "traces.jsonl", [leasing_trace("long", reply=LONG_REPLY).to_json_obj()])
    specs = tmp_path / "judges.yaml"
    specs.write_text(yaml.safe_dump({**spec().to_json_obj(), "judge": {"provider": "openai", "model": "gpt-4o"}}))
    assert main(["judge", "prompt", "--spec", str(specs), "--trace", "long", "--traces", str(traces)]) == 0
    assert "warning: the all_responses_substantiated prompt for trace long is about" in capsys.readouterr().err
