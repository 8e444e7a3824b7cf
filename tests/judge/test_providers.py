"""The real openai and anthropic SDKs against loopback servers: structured output, faults, credentials."""

from __future__ import annotations

import json

import pytest

from evalkit.contracts.judge import JudgePin
from evalkit.contracts.judge_run import JudgeRunRecord
from evalkit.contracts.verdict import CriterionVerdict
from evalkit.judge.calls import RetryPolicy
from evalkit.judge.output import JUDGE_OUTPUT_SCHEMA
from evalkit.judge.providers import (
    CassetteRecorder,
    FatalError,
    MissingCredential,
    ReplayProvider,
    TransientError,
    make_provider,
)
from evalkit.judge.providers.openai import OpenAIProvider
from evalkit.judge.runner import run_judge
from tests.judge.servers import LLAMA_CPP_REFUSAL, JudgeServer, judge_prompt, on_own_loop


@pytest.fixture
def keys(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")


@pytest.fixture
def server():
    s = JudgeServer().start()
    yield s
    s.stop()



def _openai(server, **kw):
    return make_provider(JudgePin(provider="openai", model="gpt-4o-mini"), base_url=server.url + "/v1", **kw)


def _anthropic(server, **kw):
    return make_provider(JudgePin(provider="anthropic", model="claude-3-5-haiku-latest"), base_url=server.url, **kw)


class Waits:
    """An injected sleep that records each wait instead of sleeping."""

    def __init__(self):
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def _read(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_openai_asks_for_the_schema_with_response_format_json_schema(keys, server, tmp_path):
    out = tmp_path / "verdicts.jsonl"
    summary = run_judge([judge_prompt("t1", "fail"), judge_prompt("t2")], _openai(server), out=out,
                        progress=False)
    assert summary.calls == 2 and summary.verdicts == 2
    path, body = server.requests[0]
    assert path == "/v1/chat/completions"
    assert body["temperature"] == 0 and body["model"] == "gpt-4o-mini"
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["schema"] == JUDGE_OUTPUT_SCHEMA
    assert fmt["json_schema"]["strict"] is True  # J1's schema is closed, every property required
    verdicts = [CriterionVerdict.model_validate(v) for v in _read(out)]
    assert [(v.trace_id, v.result) for v in verdicts] == [("t1", "fail"), ("t2", "pass")]
    runs = [JudgeRunRecord.model_validate(r) for r in _read(tmp_path / "verdicts.runs.jsonl")]
    assert {r.structured_output for r in runs} == {"json_schema"}
    assert all(r.input_tokens and r.output_tokens == 40 and r.cost_usd for r in runs)


def test_llama_cpp_refusal_of_json_schema_steps_down_to_json_object_with_schema(keys, tmp_path):
    server = JudgeServer(llama_cpp=True).start()
    try:
        prompts = [judge_prompt(f"t{i}") for i in range(6)]
        summary = run_judge(prompts, _openai(server), out=tmp_path / "v.jsonl", concurrency=1, progress=False)
    finally:
        server.stop()
    formats = [body.get("response_format", {}).get("type") for _, body in server.requests]
    # One refusal (HTTP 500 naming response_format), then every call goes straight to json_object.
    assert formats == ["json_schema"] + ["json_object"] * 6
    # The grammar's schema: the reply schema with its free text bounded, so a small model's reply ends
    sent = server.requests[1][1]["response_format"]["schema"]
    assert all(body["response_format"]["schema"] == sent for _, body in server.requests[1:])
    assert sent["properties"]["critique"]["maxLength"] == 1000 and sent["properties"]["refs"]["maxItems"] == 4
    assert sent["properties"]["result"] == JUDGE_OUTPUT_SCHEMA["properties"]["result"]  # an enum: unbounded
    assert sent["properties"]["confidence"]["enum"] == [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    del sent["properties"]["confidence"]["enum"]
    unbounded = json.loads(json.dumps(sent).replace(', "maxLength": 1000', "").replace(', "maxLength": 240', "")
                           .replace(', "maxItems": 4', ""))
    assert unbounded == JUDGE_OUTPUT_SCHEMA
    assert "JSON Schema" in server.requests[1][1]["messages"][0]["content"]  # inline too, as a fallback
    assert summary.verdicts == 6 and summary.errors == 0
    assert summary.calls == len(server.requests) == 7 and summary.retries == {"structured-output-refused": 1}
    assert LLAMA_CPP_REFUSAL.startswith("response_format")


def test_a_plain_500_is_retried_not_taken_for_a_refusal(keys, server):
    server.faults = {"t1": ["500"]}
    provider = _openai(server)

    async def once():
        try:
            await provider.complete(list(judge_prompt("t1").messages), JUDGE_OUTPUT_SCHEMA)
        finally:
            await provider.aclose()

    with pytest.raises(TransientError) as info:
        on_own_loop(once())
    assert info.value.kind == "server"
    assert len(server.requests) == 1  # the SDK's own retries are off
    assert isinstance(provider, OpenAIProvider) and provider.mode == "json_schema"


def test_anthropic_enforces_the_schema_as_a_required_tool(keys, server, tmp_path):
    out = tmp_path / "v.jsonl"
    summary = run_judge([judge_prompt("t1", "uncertain")], _anthropic(server), out=out, progress=False)
    path, body = server.requests[0]
    assert path == "/v1/messages"
    assert body["tools"][0]["input_schema"] == JUDGE_OUTPUT_SCHEMA
    assert body["tool_choice"] == {"type": "tool", "name": body["tools"][0]["name"]}
    assert body["temperature"] == 0 and body["system"].startswith("You judge")
    [verdict] = _read(out)
    assert verdict["result"] == "uncertain" and verdict["blockedBy"]["kind"] == "normative"
    assert summary.calls == 1


@pytest.mark.parametrize("which", ["openai", "anthropic"])
def test_429_waits_retry_after_and_5xx_backs_off_with_seeded_jitter(keys, server, tmp_path, which):
    server.faults = {"t1": ["429", "500", "500"]}
    server.retry_after = "7"
    make = _openai if which == "openai" else _anthropic
    runs = []
    for attempt in range(2):
        server.attempts.clear()
        waits = Waits()
        summary = run_judge([judge_prompt("t1")], make(server), out=tmp_path / f"{attempt}.jsonl", progress=False,
                            sleep=waits, retry=RetryPolicy(seed=3))
        runs.append(waits.delays)
        assert summary.retries == {"rate-limit": 1, "server": 2} and summary.verdicts == 1
    assert runs[0][0] == 7.0  # Retry-After honoured as sent
    assert 0 <= runs[0][1] <= 1.0 and 0 <= runs[0][2] <= 2.0  # full jitter under 0.5 * 2**n
    assert runs[0] == runs[1]  # same seed, same item: same delays


@pytest.mark.slow
def test_timeout_malformed_body_and_connection_refused_are_transient(keys, server, tmp_path):
    server.faults = {"t1": ["timeout"], "t2": ["malformed"]}
    server.hang = 2.0
    provider = make_provider(JudgePin(provider="openai", model="m"), base_url=server.url + "/v1", timeout=0.5)
    waits = Waits()
    summary = run_judge([judge_prompt("t1"), judge_prompt("t2")], provider, out=tmp_path / "v.jsonl",
                        progress=False, sleep=waits)
    assert summary.retries == {"timeout": 1, "server": 1}
    assert summary.verdicts == 2 and summary.errors == 0

    dead = make_provider(JudgePin(provider="openai", model="m"), base_url="http://127.0.0.1:9/v1")
    summary = run_judge([judge_prompt("t3")], dead, out=tmp_path / "dead.jsonl", progress=False, sleep=Waits(),
                        retry=RetryPolicy(max_attempts=3))
    [run] = _read(tmp_path / "dead.runs.jsonl")
    assert summary.errors == 1 and summary.verdicts == 0 and run["attempts"] == 3
    assert run["error"].startswith("gave up after 3 calls: connection failed")
    assert (tmp_path / "dead.jsonl").read_text() == ""  # no fabricated verdict


@pytest.mark.parametrize("which", ["openai", "anthropic"])
def test_invalid_reply_is_sent_back_once_then_becomes_an_error_row(keys, server, tmp_path, which):
    server.faults = {"t1": ["bad-output"], "t2": ["not-json", "bad-output"]}
    make = _openai if which == "openai" else _anthropic
    out = tmp_path / "v.jsonl"
    summary = run_judge([judge_prompt("t1"), judge_prompt("t2")], make(server), out=out, progress=False,
                        concurrency=1)
    assert [v["traceId"] for v in _read(out)] == ["t1"]
    runs = {r["traceId"]: r for r in _read(tmp_path / "v.runs.jsonl")}
    assert runs["t1"]["attempts"] == 2 and runs["t1"]["result"] == "pass"
    assert runs["t2"]["result"] is None and runs["t2"]["error"].startswith("invalid reply after one correction")
    assert "critique" in runs["t2"]["error"]  # says which field was wrong
    correction = server.requests[1][1]["messages"][-1]["content"]
    assert correction.startswith("That reply is invalid") and "critique" in correction
    assert summary.errors == 1 and summary.retries == {"invalid-reply": 2}


def test_bad_credentials_stop_the_run(keys, server, tmp_path):
    server.faults = {f"t{i}": ["401"] for i in range(5)}
    with pytest.raises(FatalError, match="401"):
        run_judge([judge_prompt(f"t{i}") for i in range(5)], _openai(server), out=tmp_path / "v.jsonl",
                  concurrency=1, progress=False)
    assert len(server.requests) == 1  # no call after the first refusal
    assert "not run" not in (tmp_path / "v.runs.jsonl").read_text()


@pytest.mark.parametrize(("provider", "variable"), [("openai", "OPENAI_API_KEY"),
                                                    ("anthropic", "ANTHROPIC_API_KEY")])
def test_missing_key_is_one_line_naming_the_variable(monkeypatch, server, provider, variable):
    monkeypatch.delenv(variable, raising=False)
    with pytest.raises(MissingCredential) as info:
        make_provider(JudgePin(provider=provider, model="m"), base_url=server.url)
    message = str(info.value)
    assert variable in message and "\n" not in message
    assert server.requests == []


def test_cassette_recorded_live_replays_offline(keys, tmp_path):
    server = JudgeServer().start()
    cassette = tmp_path / "judge.cassette.jsonl"
    prompts = [judge_prompt("t1", "fail"), judge_prompt("t2")]
    live = run_judge(prompts, _openai(server, record=cassette), out=tmp_path / "live.jsonl", progress=False)
    server.stop()
    assert live.calls == 2 and len(cassette.read_text().splitlines()) == 2

    replay = make_provider(JudgePin(provider="replay", model="gpt-4o-mini"), cassette=cassette)
    assert isinstance(replay, ReplayProvider)
    summary = run_judge([*prompts, judge_prompt("t3")], replay, out=tmp_path / "replay.jsonl", progress=False)
    assert (tmp_path / "replay.jsonl").read_text() == (tmp_path / "live.jsonl").read_text()
    runs = {r["traceId"]: r for r in _read(tmp_path / "replay.runs.jsonl")}
    assert "no reply recorded" in runs["t3"]["error"] and summary.errors == 1
    assert isinstance(_openai(JudgeServer(), record=cassette), CassetteRecorder)
