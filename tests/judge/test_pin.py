"""Which judge a run uses (:func:`evalkit.judge.choose_pin`): the flags, else the specs' one pin."""

from __future__ import annotations

import pytest

from evalkit.errors import InputError
from evalkit.judge import choose_pin
from tests.judge.traces import spec

LOCAL = {"provider": "openai", "model": "smollm2", "baseUrl": "http://127.0.0.1:8080/v1", "maxTokens": 256,
         "transport": "http"}


def test_the_specs_pin_is_used_whole_when_no_flag_is_given() -> None:
    pin = choose_pin([spec(judge=LOCAL), spec(id="other", judge=LOCAL)])
    assert (pin.provider, pin.model, pin.base_url, pin.max_tokens, pin.transport) == \
        ("openai", "smollm2", "http://127.0.0.1:8080/v1", 256, "http")


def test_a_flag_overrides_one_field_of_the_pin_and_keeps_the_others() -> None:
    pin = choose_pin([spec(judge=LOCAL)], model="qwen", max_tokens=64)
    assert (pin.provider, pin.model, pin.base_url, pin.max_tokens, pin.transport) == \
        ("openai", "qwen", "http://127.0.0.1:8080/v1", 64, "http")


def test_another_provider_takes_nothing_of_the_pin() -> None:
    """A pin's model, server, cap and transport belong to its provider: anthropic gets none of them."""
    with pytest.raises(InputError, match="no model named for the anthropic judge: pass --model"):
        choose_pin([spec(judge=LOCAL)], provider="anthropic")
    pin = choose_pin([spec(judge=LOCAL)], provider="anthropic", model="claude-x")
    assert (pin.model, pin.base_url, pin.max_tokens, pin.transport) == ("claude-x", None, 1024, "sdk")


def test_specs_pinning_different_judges_need_provider_and_model() -> None:
    specs = [spec(judge=LOCAL), spec(id="other", judge={"provider": "anthropic", "model": "claude-x"})]
    with pytest.raises(InputError, match=r"the specs pin 2 different judges \(claude-x, smollm2\)") as info:
        choose_pin(specs, model="m")
    assert info.value.path == "--spec"
    assert choose_pin(specs, provider="openai", model="m").model == "m"


def test_no_judge_at_all_says_what_to_pass() -> None:
    with pytest.raises(InputError, match="no judge named: pass --provider") as info:
        choose_pin([spec()])
    assert info.value.path == "--provider"


def test_replay_needs_no_model_and_takes_the_cassettes_one() -> None:
    assert choose_pin([spec()], provider="replay").model == "*"


def test_a_cap_below_one_and_http_for_anthropic_are_refused() -> None:
    with pytest.raises(InputError, match="the reply's token cap must be at least 1, not 0"):
        choose_pin([spec()], provider="openai", model="m", max_tokens=0)
    with pytest.raises(InputError, match="transport http is for the openai provider only, not anthropic"):
        choose_pin([spec()], provider="anthropic", model="m", transport="http")
    assert choose_pin([spec()], provider="anthropic", model="m", transport="sdk").transport == "sdk"
