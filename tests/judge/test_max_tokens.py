"""The reply's token cap: pinned in the spec, sent by both providers, part of the cache key."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from evalkit.contracts.judge import JudgePin
from evalkit.judge.cache import JudgeCache, cache_key
from evalkit.judge.providers import DEFAULT_MAX_TOKENS, make_provider
from evalkit.judge.runner import run_judge
from tests.judge.servers import JudgeServer, judge_prompt


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    s = JudgeServer().start()
    yield s
    s.stop()


def _judge(server, tmp_path, name, pin, cache=None):
    url = server.url + ("/v1" if pin.provider == "openai" else "")
    return run_judge([judge_prompt("t1"), judge_prompt("t2", "fail")], make_provider(pin, base_url=url),
                     out=tmp_path / name / "v.jsonl", cache=cache, progress=False)


@pytest.mark.parametrize(("provider", "transport"), [("openai", "sdk"), ("openai", "http"), ("anthropic", "sdk")])
def test_both_providers_send_the_pinned_cap_and_a_default_when_none_is_pinned(server, tmp_path, provider,
                                                                              transport):
    _judge(server, tmp_path, "default", JudgePin(provider=provider, model="m", transport=transport))
    _judge(server, tmp_path, "pinned", JudgePin(provider=provider, model="m", transport=transport, max_tokens=300))
    caps = [body["max_tokens"] for _, body in server.requests]
    assert caps == [DEFAULT_MAX_TOKENS] * 2 + [300] * 2
    assert DEFAULT_MAX_TOKENS == 1024 == JudgePin(provider="openai", model="m").max_tokens


def test_the_cap_is_read_from_a_spec_file_and_must_be_positive():
    pin = JudgePin.model_validate({"provider": "openai", "model": "m", "maxTokens": 2048})
    assert pin.max_tokens == 2048 and pin.to_json_obj()["maxTokens"] == 2048
    with pytest.raises(ValidationError, match="max_tokens|maxTokens"):
        JudgePin.model_validate({"provider": "openai", "model": "m", "maxTokens": 0})


def test_a_different_cap_is_a_different_cache_entry(server, tmp_path):
    cache = JudgeCache(tmp_path / "judge.sqlite")
    first = _judge(server, tmp_path, "a", JudgePin(provider="openai", model="m", max_tokens=300), cache)
    same = _judge(server, tmp_path, "b", JudgePin(provider="openai", model="m", max_tokens=300), cache)
    other = _judge(server, tmp_path, "c", JudgePin(provider="openai", model="m", max_tokens=301), cache)
    assert (first.calls, same.calls, same.cache_hits, other.calls) == (2, 0, 2, 2)
    assert len(server.requests) == 4
    base = ("openai", "m", 0.0, "sha256:aa", 0)
    assert len({cache_key(*base), cache_key(*base, 300), cache_key(*base, 301)}) == 3


def test_judge_run_sends_the_spec_pins_cap_over_its_transport(server, tmp_path):
    from evalkit.cli.main import main
    from tests.judge.traces import leasing_trace, write_jsonl

    traces = write_jsonl(tmp_path / "traces.jsonl", [leasing_trace(f"t{i}").to_json_obj() for i in range(3)])
    spec = tmp_path / "judges.yaml"
    spec.write_text("id: pet-fee-grounded\ncriterion: Every fee stated is backed by a tool output.\n"
                    "pass: Every fee appears in a tool output.\nfail: A fee appears in no tool output.\n"
                    f"judge:\n  provider: openai\n  model: local-model\n  baseUrl: {server.url}/v1\n"
                    "  maxTokens: 256\n  transport: http\n", encoding="utf-8")
    code = main(["judge", "run", "--spec", str(spec), "--traces", str(traces), "--out", str(tmp_path / "v.jsonl"),
                 "--no-progress"])
    assert code == 0
    assert [body["max_tokens"] for _, body in server.requests] == [256] * 3
    heads = [head.decode("latin-1").lower() for head, _ in server.raw_requests]
    assert all("user-agent: evalkit/" in head for head in heads)  # sent by the raw transport, not the SDK
