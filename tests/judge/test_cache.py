"""The judge cache: a rerun reaches no server and writes the same bytes; errors are never cached."""

from __future__ import annotations

import json

import pytest

from evalkit.contracts.judge import JudgePin
from evalkit.errors import InputError
from evalkit.judge.cache import CachedReply, JudgeCache, cache_key
from evalkit.judge.providers import ScriptedProvider, make_provider
from evalkit.judge.runner import run_judge
from tests.judge.servers import JudgeServer, judge_output, judge_prompt


def test_rerun_with_the_cache_makes_no_request_and_writes_identical_verdicts(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server = JudgeServer().start()
    try:
        prompts = [judge_prompt(f"t{i}", "fail" if i % 4 == 0 else "pass") for i in range(40)]
        pin = JudgePin(provider="openai", model="gpt-4o-mini")
        first = run_judge(prompts, make_provider(pin, base_url=server.url + "/v1"), out=tmp_path / "a" / "v.jsonl",
                          cache=JudgeCache(tmp_path / "judge.sqlite"), repeats=2, progress=False)
        requests = len(server.requests)
        assert first.calls == requests == 80
        # A fresh output folder (no journal to resume from): only the cache can answer.
        again = run_judge(prompts, make_provider(pin, base_url=server.url + "/v1"), out=tmp_path / "b" / "v.jsonl",
                          cache=JudgeCache(tmp_path / "judge.sqlite"), repeats=2, progress=False)
    finally:
        server.stop()
    assert len(server.requests) == requests  # zero requests reached the server
    assert again.calls == 0 and again.cache_hits == 80
    assert again.cost_usd == 0 and first.cost_usd > 0
    for name in ("v.jsonl", "v.repeats.jsonl"):
        assert (tmp_path / "b" / name).read_bytes() == (tmp_path / "a" / name).read_bytes()
    runs = [json.loads(line) for line in (tmp_path / "b" / "v.runs.jsonl").read_text().splitlines()]
    assert all(r["cached"] and r["attempts"] == 0 and r["costUsd"] for r in runs)


def test_a_deterministic_error_is_cached_and_asked_again_only_with_retry_errors(tmp_path):
    """A reply still invalid after the correction fails the same way at temperature 0: a rerun does not pay
    for it again, unless told to; a transient error is never cached."""
    replies = {"t1": json.dumps(judge_output("pass", "t1")), "t2": "not json", "t3": "not json"}
    script = lambda messages, schema, i: replies[messages[1]["content"].split("item=")[1].split()[0]]  # noqa: E731
    cache = JudgeCache(tmp_path / "c.sqlite")
    prompts = [judge_prompt("t1"), judge_prompt("t2")]
    first = run_judge(prompts, ScriptedProvider(script), out=tmp_path / "1.jsonl", cache=cache, progress=False)
    assert len(cache) == 2 and first.errors == 1
    replies["t2"] = json.dumps(judge_output("fail", "t2"))
    provider = ScriptedProvider(script)
    summary = run_judge(prompts, provider, out=tmp_path / "2.jsonl", cache=cache, progress=False)
    assert provider.calls == [] and summary.cache_hits == 2 and summary.verdicts == 1 and summary.errors == 1
    assert summary.kept_errors == 1 and "1 kept from an earlier run" in summary.describe()
    runs = [json.loads(line) for line in (tmp_path / "2.runs.jsonl").read_text().splitlines()]
    assert runs[1]["error"].startswith("invalid reply after one correction") and runs[1]["cached"]
    again = run_judge(prompts, ScriptedProvider(script), out=tmp_path / "3.jsonl", cache=cache, progress=False,
                      retry_errors=True)
    assert again.verdicts == 2 and again.errors == 0 and again.calls == 1


def test_key_depends_on_provider_model_temperature_prompt_and_repeat():
    base = ("openai", "gpt-4o-mini", 0.0, "sha256:aa", 0)
    keys = {cache_key(*base)}
    for i, other in enumerate(["anthropic", "gpt-4o", 0.5, "sha256:bb", 1]):
        changed = list(base)
        changed[i] = other
        keys.add(cache_key(*changed))
    assert len(keys) == 6
    assert cache_key(*base) == cache_key("openai", "gpt-4o-mini", 0, "sha256:aa", 0)


def test_cache_survives_reopening_and_refuses_other_files(tmp_path):
    cache = JudgeCache(tmp_path / "c.sqlite")
    cache.put(b"k", CachedReply('{"result":"pass"}', 10, 2, None, "json_schema"))
    assert cache.get(b"k") is None  # not committed yet
    cache.close()
    assert JudgeCache(tmp_path / "c.sqlite").get(b"k") == CachedReply('{"result":"pass"}', 10, 2, None, "json_schema")
    bogus = tmp_path / "notes.sqlite"
    bogus.write_text("these are my notes, not a database\n" * 100)
    with pytest.raises(InputError, match="notes.sqlite: not a judge cache"):
        JudgeCache(bogus)
