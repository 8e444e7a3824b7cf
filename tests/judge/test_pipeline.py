"""The runner's critical path: the next request goes out before the last reply is stored, request bodies
are rendered ahead, and the ``http`` transport's sockets are opened before the first calls need them."""

from __future__ import annotations

import asyncio
import json

import pytest

from evalkit.contracts.judge import JudgePin
from evalkit.judge.providers import ScriptedProvider, make_provider
from evalkit.judge.providers.raw_http import JSONPoster
from evalkit.judge.runner import run_judge
from tests.judge.servers import JudgeServer, judge_output, judge_prompt, on_own_loop

TRICKY = ["plain", "naïve café — ünïcödé", "line\u2028separator", 'quotes " and \\ backslash', "tab\tcontrol\x01",
          "emoji 🧪 astral"]


@pytest.fixture
def keys(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")


def _reply(messages, schema, index):
    text = messages[1]["content"]
    return json.dumps(judge_output(text.split("expect=")[1].split()[0], "x"))


class _InFlight(ScriptedProvider):
    """The scripted judge, its call in flight for a moment (as over HTTP) after the prompt is sent."""

    async def complete(self, messages, schema):  # type: ignore[no-untyped-def]
        reply = await super().complete(messages, schema)
        await asyncio.sleep(0.001)
        return reply


def test_the_next_call_starts_before_the_last_reply_is_stored(tmp_path):
    provider = _InFlight(_reply)
    calls_made_when_stored: dict[str, int] = {}

    def verify(prompt, verdict):  # runs when a reply is stored
        calls_made_when_stored[prompt.trace_id] = len(provider.calls)
        return verdict

    prompts = [judge_prompt(f"t{i}") for i in range(5)]
    summary = run_judge(prompts, provider, out=tmp_path / "v.jsonl", concurrency=1, verify=verify, progress=False)
    assert summary.verdicts == 5
    # One slot: when t0's reply is stored, t1 has been sent already; the last reply is stored after the loop.
    assert calls_made_when_stored == {"t0": 2, "t1": 3, "t2": 4, "t3": 5, "t4": 5}
    assert [json.loads(line)["traceId"] for line in (tmp_path / "v.jsonl").read_text().splitlines()] == \
        [f"t{i}" for i in range(5)]


@pytest.mark.parametrize("llama_cpp", [False, True])
def test_bodies_rendered_ahead_are_the_bytes_the_sdk_sends(keys, tmp_path, llama_cpp):
    """Through the runner (bodies rendered ahead), the http transport still sends the SDK's bytes; after a
    llama.cpp-style refusal of json_schema, bodies rendered for it are rendered again for json_object."""
    prompts = []
    for i, text in enumerate(TRICKY):
        prompt = judge_prompt(f"t{i}")
        messages = (prompt.messages[0], {"role": "user", "content": f"{prompt.messages[1]['content']} {text}"})
        prompts.append(prompt._replace(messages=messages))
    bodies = {}
    for transport in ("sdk", "http"):
        server = JudgeServer(llama_cpp=llama_cpp).start()
        try:
            provider = make_provider(JudgePin(provider="openai", model="m", transport=transport),
                                     base_url=server.url + "/v1")
            summary = run_judge(prompts, provider, out=tmp_path / transport / "v.jsonl", concurrency=1,
                                progress=False)
        finally:
            server.stop()
        assert summary.verdicts == len(TRICKY) and summary.errors == 0
        bodies[transport] = [body for _, body in server.raw_requests]
    assert bodies["http"] == bodies["sdk"]
    formats = [json.loads(body)["response_format"]["type"] for body in bodies["http"]]
    assert formats == (["json_schema", *["json_object"] * len(TRICKY)] if llama_cpp
                       else ["json_schema"] * len(TRICKY))


def test_the_pool_opens_a_socket_per_slot_once_and_reuses_it(keys, tmp_path):
    server = JudgeServer(latency=0.01).start()
    try:
        provider = make_provider(JudgePin(provider="openai", model="m", transport="http"),
                                 base_url=server.url + "/v1")
        summary = run_judge([judge_prompt(f"t{i}") for i in range(40)], provider, out=tmp_path / "v.jsonl",
                            concurrency=8, progress=False)
    finally:
        server.stop()
    assert summary.verdicts == 40 and summary.calls == 40
    assert server.connections == 8  # one per slot, kept for its later calls


def test_posts_wait_for_sockets_opening_ahead_and_a_failed_one_is_reported_by_its_post(keys):
    async def main():
        server = JudgeServer().start()
        try:
            poster = JSONPoster(server.url + "/v1", headers={"Content-Type": "application/json"}, timeout=5)
            poster.preconnect(3)
            body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "item=t1"}]}).encode()
            replies = await asyncio.gather(*(poster.post("/chat/completions", body) for _ in range(3)))
            await poster.aclose()
        finally:
            server.stop()
        assert [r.status for r in replies] == [200] * 3
        assert server.connections == 3

        # Nothing listens: the sockets opened ahead fail quietly; the post that needs one reports the failure.
        dead = JSONPoster(f"http://127.0.0.1:{server.port}/v1", headers={}, timeout=2)
        dead.preconnect(2)
        with pytest.raises(Exception, match="connection failed"):
            await dead.post("/chat/completions", b"{}")
        await dead.aclose()

    on_own_loop(main())


def test_messages_written_by_orjson_are_the_bytes_json_writes():
    from evalkit.judge.providers.openai import _dumps, _dumps_messages

    texts = ["".join(chr(c) for c in range(0x80)), *TRICKY, "\ufeff\U0010ffff/\\u0000", ""]
    for text in texts:
        messages = [{"role": "system", "content": text}, {"role": "user", "content": text[::-1]}]
        assert _dumps_messages(messages) == _dumps(messages)
    odd = [{"role": "user", "content": "x", "name": None}]  # not all strings: json's own path
    assert _dumps_messages(odd) == _dumps(odd)


def test_run_coroutine_works_where_an_event_loop_already_runs():
    """A Jupyter cell, or the test session's Playwright browser: asyncio.run refuses there, the runner does not."""
    from evalkit.judge import run_coroutine

    async def answer() -> int:
        await asyncio.sleep(0)
        return 42

    async def inside_a_running_loop() -> int:
        with pytest.raises(RuntimeError, match="running event loop"):
            asyncio.run(answer_never_awaited := answer())
        answer_never_awaited.close()
        return run_coroutine(answer())

    assert run_coroutine(answer()) == 42
    assert on_own_loop(inside_a_running_loop()) == 42
