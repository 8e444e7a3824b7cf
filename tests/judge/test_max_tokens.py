"""The reply's token cap: pinned in the spec, sent by both providers, part of the cache key."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from evalkit.contracts.judge import JudgePin
from evalkit.judge.cache import JudgeCache, cache_key
from evalkit.judge.providers import DEFAULT_MAX_TOKENS, make_provider
from evalkit.judge.runner import run_judge
from tests.judge.servers import JudgeServer, judge_output, judge_prompt, on_own_loop


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


@pytest.mark.slow
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


def test_the_journal_pins_the_cap_and_a_resume_with_another_cap_is_refused(server, tmp_path):
    from evalkit.errors import InputError

    out = tmp_path / "v.jsonl"
    pin = JudgePin(provider="openai", model="m", transport="http", max_tokens=300)
    url = server.url + "/v1"
    run_judge([judge_prompt("t1")], make_provider(pin, base_url=url), out=out, progress=False)
    header = json.loads((tmp_path / "v.journal.jsonl").read_text().splitlines()[0])
    assert header == {"judgeJournal": {"maxTokens": 300, "model": "m", "provider": "openai", "temperature": 0.0}}
    with pytest.raises(InputError, match=r"maxTokens 300 in the journal, 301 now.*--max-tokens") as caught:
        run_judge([judge_prompt("t1")], make_provider(pin.model_copy(update={"max_tokens": 301}), base_url=url),
                  out=out, progress=False)
    assert caught.value.file == str(tmp_path / "v.journal.jsonl") and caught.value.line == 1
    assert len(server.requests) == 1  # refused before any call
    same = run_judge([judge_prompt("t1")], make_provider(pin, base_url=url), out=out, progress=False)
    assert same.resumed == 1 and len(server.requests) == 1


def test_a_journal_from_before_the_cap_was_recorded_resumes_at_the_default_cap_only(server, tmp_path):
    from evalkit.errors import InputError

    out, journal = tmp_path / "v.jsonl", tmp_path / "v.journal.jsonl"
    url = server.url + "/v1"
    pin = JudgePin(provider="openai", model="m", transport="http")
    run_judge([judge_prompt("t1")], make_provider(pin, base_url=url), out=out, progress=False)
    lines = journal.read_text().splitlines(keepends=True)
    journal.write_text(lines[0].replace('"maxTokens":1024,', "") + "".join(lines[1:]))  # as written before
    assert "maxTokens" not in journal.read_text().splitlines()[0]
    assert run_judge([judge_prompt("t1")], make_provider(pin, base_url=url), out=out, progress=False).resumed == 1
    with pytest.raises(InputError, match="maxTokens 'not recorded' in the journal, 300 now"):
        run_judge([judge_prompt("t1")], make_provider(pin.model_copy(update={"max_tokens": 300}), base_url=url),
                  out=out, progress=False)
    assert len(server.requests) == 1


def _spec_and_traces(tmp_path, pin_yaml=""):
    from tests.judge.traces import leasing_trace, write_jsonl

    traces = write_jsonl(tmp_path / "traces.jsonl", [leasing_trace(f"t{i}").to_json_obj() for i in range(3)])
    spec = tmp_path / "judges.yaml"
    spec.write_text("id: pet-fee-grounded\ncriterion: Every fee stated is backed by a tool output.\n"
                    "pass: Every fee appears in a tool output.\nfail: A fee appears in no tool output.\n" + pin_yaml,
                    encoding="utf-8")
    return spec, traces


def test_max_tokens_and_transport_flags_override_the_spec_pin(server, tmp_path, capsys):
    from evalkit.cli.main import main

    spec, traces = _spec_and_traces(tmp_path, f"judge:\n  provider: openai\n  model: local-model\n"
                                              f"  baseUrl: {server.url}/v1\n  maxTokens: 256\n  transport: sdk\n")
    args = ["judge", "run", "--spec", str(spec), "--traces", str(traces), "--no-progress"]
    assert main([*args, "--out", str(tmp_path / "a" / "v.jsonl"), "--max-tokens", "77", "--transport", "http"]) == 0
    assert [body["max_tokens"] for _, body in server.requests] == [77] * 3
    assert all(b"user-agent: evalkit/" in head.lower() for head, _ in server.raw_requests)  # the raw transport
    assert main([*args, "--out", str(tmp_path / "b" / "v.jsonl")]) == 0  # the pin again: 256, the SDK
    assert [body["max_tokens"] for _, body in server.requests[3:]] == [256] * 3
    assert not any(b"user-agent: evalkit/" in head.lower() for head, _ in server.raw_requests[3:])
    assert main([*args, "--out", str(tmp_path / "c" / "v.jsonl"), "--max-tokens", "0"]) == 1
    assert "--max-tokens: the reply's token cap must be at least 1, not 0" in capsys.readouterr().err
    assert main([*args, "--out", str(tmp_path / "d" / "v.jsonl"), "--provider", "anthropic", "--model", "c",
                 "--transport", "http"]) == 1
    assert "--transport: transport http is for the openai provider only, not anthropic" in capsys.readouterr().err
    assert len(server.requests) == 6


def test_the_help_explains_both_flags(capsys):
    from evalkit.cli.main import main

    with pytest.raises(SystemExit):
        main(["judge", "run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--max-tokens N the reply's token cap" in text and "default 1024" in text
    assert "--transport {sdk,http}" in text and "http:// servers only" in text


def test_a_cassette_replays_only_at_the_cap_it_was_recorded_with(server, tmp_path):
    from evalkit.judge import request_key
    from evalkit.judge.providers.replay import ReplayProvider

    cassette = tmp_path / "cassette.jsonl"
    live = make_provider(JudgePin(provider="openai", model="m", max_tokens=300), base_url=server.url + "/v1",
                         record=cassette)
    run_judge([judge_prompt("t1"), judge_prompt("t2", "fail")], live, out=tmp_path / "live" / "v.jsonl",
              progress=False)
    assert [json.loads(line)["request"]["maxTokens"] for line in cassette.read_text().splitlines()] == [300, 300]

    def replay(name, cap):
        provider = make_provider(JudgePin(provider="replay", model="m", max_tokens=cap), cassette=cassette)
        return run_judge([judge_prompt("t1"), judge_prompt("t2", "fail")], provider,
                         out=tmp_path / name / "v.jsonl", progress=False)

    assert replay("same", 300).errors == 0
    assert (tmp_path / "same" / "v.jsonl").read_bytes() == (tmp_path / "live" / "v.jsonl").read_bytes()
    other = replay("default", DEFAULT_MAX_TOKENS)
    assert other.errors == 2 and other.verdicts == 0
    assert "no reply recorded for this prompt with model m" in (tmp_path / "default" / "v.runs.jsonl").read_text()
    # The default cap is left out of the key: cassettes keyed before the cap was (the sample's) still replay.
    prompt = judge_prompt("t1")
    messages, schema = list(prompt.messages), prompt.schema
    assert request_key("m", 0.0, messages, schema) == request_key("m", 0.0, messages, schema, DEFAULT_MAX_TOKENS)
    assert request_key("m", 0.0, messages, schema) != request_key("m", 0.0, messages, schema, 300)
    compact = tmp_path / "compact.jsonl"
    compact.write_text(json.dumps({"key": request_key("m", 0.0, messages, schema), "model": "m",
                                   "reply": {"text": json.dumps(judge_output("pass", "t1"))}}) + "\n")
    assert on_own_loop(ReplayProvider(compact, max_tokens=DEFAULT_MAX_TOKENS).complete(messages, schema)).text
